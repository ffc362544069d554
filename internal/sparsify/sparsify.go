// Package sparsify implements the paper's sparse estimator T_α
// (eq. (sparse_estimator)): keep an entry iff its magnitude is among the
// k largest of its row and among the k' largest of its column.
package sparsify

import (
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/observed"
)

// Sparse is a CSR matrix; the entries of row i are ColIdx[RowPtr[i]:RowPtr[i+1]]
// (increasing) with values Val[RowPtr[i]:RowPtr[i+1]].
type Sparse struct {
	Rows, Cols int
	RowPtr     []int
	ColIdx     []int32
	Val        []float64
}

// Count returns ⌊frac·n⌋ clamped to [0, n], the number of entries T keeps
// in a line of length n for the fraction frac (α, γα, 2pα, …).
func Count(frac float64, n int) int {
	panic("sparsify: not implemented yet")
}

// Dense computes T for dense matrices, reusing its workspace across calls.
type Dense struct{}

// NewDense returns a Dense for rows×cols matrices using workers goroutines.
func NewDense(rows, cols, workers int) *Dense { panic("sparsify: not implemented yet") }

// Apply computes T(A) into out (whose slices are reused).
func (d *Dense) Apply(a blas64.General, kRow, kCol int, out *Sparse) error {
	panic("sparsify: not implemented yet")
}

// Observed computes T on Π_Φ(A) for the observed set of m.
type Observed struct{}

// NewObserved returns an Observed for the pattern of m.
func NewObserved(m *observed.Matrix, workers int) *Observed { panic("sparsify: not implemented yet") }

// Apply sets keep[q] for the CSR positions q of m whose value vals[q] is kept.
func (o *Observed) Apply(vals []float64, kRow, kCol int, keep []bool) error {
	panic("sparsify: not implemented yet")
}
