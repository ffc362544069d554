package ratings

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

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

// ErrClip is a rating scale that is not "lo:hi" with finite lo < hi.
var ErrClip = errors.New("ratings: the rating scale must be lo:hi with finite numbers lo < hi, e.g. 1:5")

// ParseClip parses a rating scale "lo:hi" for Options.Clip.
func ParseClip(s string) (*[2]float64, error) {
	lo, hi, ok := strings.Cut(s, ":")
	var c [2]float64
	var err1, err2 error
	if ok {
		c[0], err1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
		c[1], err2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
	}
	if !ok || err1 != nil || err2 != nil || !(c[0] < c[1]) || math.IsInf(c[0], 0) || math.IsInf(c[1], 0) {
		return nil, fmt.Errorf("%w; got %q", ErrClip, s)
	}
	return &c, nil
}

// ErrNoIDs: a list of ids (ReadIDs) holds none.
var ErrNoIDs = errors.New("ratings: the file lists no id")

// ReadIDs reads the ids of a file, one a line (surrounding white space
// trimmed; blank lines and lines starting with '#' skipped), with the
// 1-based line of each: the users of Predictor.TopN.
func ReadIDs(path string) (ids []string, lines []int, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		id := strings.TrimSpace(sc.Text())
		if id == "" || strings.HasPrefix(id, "#") {
			continue
		}
		ids, lines = append(ids, id), append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNoIDs)
	}
	return ids, lines, nil
}
