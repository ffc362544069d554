package ratings

import (
	"fmt"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/load"
)

// BytesPerRating is the memory a rating takes from reading to the fitted
// model: its ids and triplet, the observed matrix in both orders, and the
// solver's values on Φ (a rough budget, measured on MovieLens).
const BytesPerRating = 150

// ReadFile reads a ratings file of row-id column-id value triplets
// (triples.ReadFile) for Fit: it must be readable (load.CheckReadable),
// rate each (row, column) pair once, and fit in available bytes with
// BytesPerRating per rating.
func ReadFile(path string, opt triples.Options, available float64) (*triples.Ratings, error) {
	if err := load.CheckReadable(path); err != nil {
		return nil, err
	}
	r, err := triples.ReadFile(path, opt)
	if err != nil {
		return nil, err
	}
	if err := r.CheckDuplicates(path); err != nil {
		return nil, err
	}
	if need := BytesPerRating * float64(r.Len()); need > available {
		return nil, &load.MemoryError{File: path, What: fmt.Sprintf("%d ratings", r.Len()), Need: need, Available: available}
	}
	return r, nil
}
