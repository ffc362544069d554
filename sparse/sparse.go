// Package sparse holds the two sparse matrices of rpca's contract:
// Observed, the observed entries of a partially observed Y (a missing
// entry is unknown), and Matrix, a sparse matrix in compressed sparse row
// form, the part S of an answer (an entry not listed is zero). Package
// rpca names them Observed and Sparse.
package sparse

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/access"
	"github.com/rpca-gd/rpca/internal/errs"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// The method packages reach the storage of an Observed through
// internal/access.
func init() {
	access.ObservedMatrix = func(o any) *observed.Matrix { return o.(*Observed).m }
}

// Observed is a partially observed matrix: the set Φ of observed positions
// (i, j) with their values. An observed value of exactly 0 is an
// observation, not a missing entry. Build one with [NewObserved] or
// [SampleDense]; it is immutable afterwards and safe for concurrent reads.
// (A [Matrix], the output type, reads an entry it does not list as 0.)
type Observed struct {
	m *observed.Matrix
	p float64 // the probability of the Sampling that drew it, or 0
}

// NewObserved builds an observed matrix of size d1×d2 from triplets
// (rows[k], cols[k], vals[k]). The triplets may come in any order.
// Duplicate positions, indices out of range, mismatched slice lengths and
// non-finite values are errors.
//
// Sizes are checked before anything is allocated: a size with far more
// rows and columns than entries (d1 + d2 > 2·len(vals) + 2^20) is refused,
// since nearly all its lines would be empty and their index arrays alone
// could exhaust memory (NewObserved(1e9, 1e9, …) with a few entries).
func NewObserved(d1, d2 int, rows, cols []int, vals []float64) (*Observed, error) {
	if d1 <= 0 || d2 <= 0 {
		return nil, errs.Input(fmt.Errorf("rpca: matrix size %d×%d must be positive", d1, d2))
	}
	if len(rows) != len(vals) || len(cols) != len(vals) {
		return nil, errs.Input(fmt.Errorf("rpca: %d row indices, %d column indices and %d values; want equal counts", len(rows), len(cols), len(vals)))
	}
	if float64(d1)+float64(d2) > 2*float64(len(vals))+(1<<20) {
		return nil, errs.Input(fmt.Errorf("rpca: a %d×%d matrix with only %d observed entries: nearly every row and column would be empty (at least one entry per row and column is needed)", d1, d2, len(vals)))
	}
	m, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		return nil, errs.Input(fmt.Errorf("rpca: %w", err))
	}
	return &Observed{m: m}, nil
}

// Sampling is the paper's observation model (eq. (Y)): every entry is
// observed independently with probability P ∈ (0, 1], the draws keyed by
// Seed. It is the project's one sampler: the file loader (rpca decompose
// --p), the synthetic generator, the video and the experiments draw the
// same entries for the same P and Seed, whatever the order in which rows
// are read.
type Sampling struct {
	P    float64
	Seed uint64
	// Cover adds one random entry to every row and column the draw left
	// empty: Algorithm 2 cannot recover a row or column it never sees.
	Cover bool
}

// Dense observes the entries of y under s. It is the subsampling trick of
// Section 4.2 for fully observed data.
func (s Sampling) Dense(y *mat.Dense) (*Observed, error) {
	if y == nil {
		return nil, errs.Input(errors.New("rpca: sampling a nil matrix"))
	}
	m, err := observed.SampleDense(y.RawMatrix(), s.P, s.Seed, s.Cover)
	if err != nil {
		return nil, errs.Input(fmt.Errorf("rpca: %w", err))
	}
	return &Observed{m: m, p: s.P}, nil
}

// SampleDense is Sampling{P: p, Seed: seed}.Dense(y).
func SampleDense(y *mat.Dense, p float64, seed uint64) (*Observed, error) {
	return Sampling{P: p, Seed: seed}.Dense(y)
}

// Dims returns the size d1×d2 of the underlying matrix (0×0 for nil or a
// zero value).
func (o *Observed) Dims() (d1, d2 int) {
	if o == nil || o.m == nil {
		return 0, 0
	}
	return o.m.Rows, o.m.Cols
}

// empty reports whether o is nil or a zero value (built by neither
// NewObserved nor a sampler): such an Observed behaves as a 0×0 matrix
// with nothing observed.
func (o *Observed) empty() bool { return o == nil || o.m == nil }

// Len returns |Φ|, the number of observed entries (0 for nil or a zero
// value).
func (o *Observed) Len() int {
	if o.empty() {
		return 0
	}
	return o.m.NNZ()
}

// NNZ is Len, so that an Observed can be written like a Matrix (both have
// Dims, NNZ and Do).
func (o *Observed) NNZ() int { return o.Len() }

// Rate returns |Φ|/(d1·d2), the empirical sampling rate p (0 for nil or a
// zero value).
func (o *Observed) Rate() float64 {
	if o.empty() {
		return 0
	}
	return float64(o.m.NNZ()) / (float64(o.m.Rows) * float64(o.m.Cols))
}

// Probability returns the probability P with which each entry was
// observed when a [Sampling] drew o (the paper's p, which the methods
// then use), and 0 when o was built from given entries, whose rate only
// [Observed.Rate] estimates. Cover's few added entries do not change it.
func (o *Observed) Probability() float64 {
	if o.empty() {
		return 0
	}
	return o.p
}

// WithValues returns an Observed with o's positions (and its
// Probability) and the values vals, given in o's row-major order; it
// takes vals over. An empty o, a length other than o.Len() and a value
// that is not finite are bad-input errors, as they are for NewObserved.
func (o *Observed) WithValues(vals []float64) (*Observed, error) {
	switch {
	case o.empty():
		return nil, errs.Input(errors.New("rpca: WithValues on an empty Observed"))
	case o.Len() != len(vals):
		return nil, errs.Input(fmt.Errorf("rpca: %d values for %d observed entries", len(vals), o.Len()))
	case !kernels.AllFinite(vals):
		return nil, errs.Input(errors.New("rpca: WithValues given a value that is not finite"))
	}
	m := *o.m
	m.Val = vals
	return &Observed{m: &m, p: o.p}, nil
}

// Do calls fn for every observed entry in row-major order (none for nil
// or a zero value).
func (o *Observed) Do(fn func(i, j int, v float64)) {
	if o.empty() {
		return
	}
	m := o.m
	for i := 0; i < m.Rows; i++ {
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			fn(i, int(m.ColIdx[k]), m.Val[k])
		}
	}
}

// NewObservedCSR builds an observed matrix of size d1×d2 from compressed
// sparse row arrays: the entries of row i are at columns
// colIdx[rowPtr[i]:rowPtr[i+1]], strictly increasing, with values
// vals[rowPtr[i]:rowPtr[i+1]]. It checks the arrays in O(|Φ|) (sizes,
// order, ranges, finite values) and takes ownership of them: the caller
// must not modify them afterwards. It is the fast path for generators
// and loaders that produce rows in order; [NewObserved] takes triplets in
// any order.
func NewObservedCSR(d1, d2 int, rowPtr []int, colIdx []int32, vals []float64) (*Observed, error) {
	if d1 <= 0 || d2 <= 0 {
		return nil, errs.Input(fmt.Errorf("rpca: matrix size %d×%d must be positive", d1, d2))
	}
	m, err := observed.FromCSR(d1, d2, rowPtr, colIdx, vals)
	if err != nil {
		return nil, errs.Input(fmt.Errorf("rpca: %w", err))
	}
	return &Observed{m: m}, nil
}

// CSR returns the compressed sparse row arrays of o (see
// [NewObservedCSR]). They are o's own storage, returned for reading: they
// must not be modified. Nil or a zero value gives nil slices.
func (o *Observed) CSR() (rowPtr []int, colIdx []int32, vals []float64) {
	if o.empty() {
		return nil, nil, nil
	}
	return o.m.RowPtr, o.m.ColIdx, o.m.Val
}

// Row returns the column indices and values of the observed entries of
// row i, for reading only; nil slices for nil, a zero value, or a row
// outside the matrix.
func (o *Observed) Row(i int) (cols []int32, vals []float64) {
	if o.empty() || i < 0 || i >= o.m.Rows {
		return nil, nil
	}
	return o.m.Row(i)
}

// Matrix is a d1×d2 sparse matrix in compressed sparse row form: the
// entries of row i are ColIdx[RowPtr[i]:RowPtr[i+1]] (increasing) with values
// Val[RowPtr[i]:RowPtr[i+1]].
//
// Matrix is the output type (the part S of a result): an entry it does
// not list is zero. A partially observed input is an [Observed], whose
// missing entries are unknown, not zero, and which also keeps the column
// index Algorithm 2 needs. The two readings of "not listed" are why they
// are two types: one cannot be passed for the other. Both have Dims, NNZ
// and Do, and write out the same way.
type Matrix struct {
	Rows, Cols int
	RowPtr     []int   // length Rows+1
	ColIdx     []int32 // length NNZ
	Val        []float64
}

// NNZ returns the number of stored entries (0 for nil).
func (s *Matrix) NNZ() int {
	if s == nil {
		return 0
	}
	return len(s.Val)
}

// Dims returns the matrix size (0×0 for nil).
func (s *Matrix) Dims() (r, c int) {
	if s == nil {
		return 0, 0
	}
	return s.Rows, s.Cols
}

// At returns entry (i, j), 0 when it is not stored. A nil Sparse, or one
// without row pointers (the zero value), stores nothing and gives 0; an
// index outside a non-empty matrix panics, as in gonum's mat.
func (s *Matrix) At(i, j int) float64 {
	if s == nil || len(s.RowPtr) == 0 {
		return 0
	}
	if i < 0 || i >= s.Rows || j < 0 || j >= s.Cols || i+1 >= len(s.RowPtr) {
		panic(fmt.Sprintf("rpca: Sparse.At(%d, %d) outside the %d×%d matrix", i, j, s.Rows, s.Cols))
	}
	lo, hi := s.RowPtr[i], s.RowPtr[i+1]
	for lo < hi { // binary search in the sorted column indices of row i
		mid := int(uint(lo+hi) >> 1)
		c := int(s.ColIdx[mid])
		switch {
		case c == j:
			return s.Val[mid]
		case c < j:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0
}

// Do calls fn for every stored entry in row-major order (none for nil or
// the zero value).
func (s *Matrix) Do(fn func(i, j int, v float64)) {
	if s != nil {
		s.DoRows(0, s.Rows, fn)
	}
}

// DoRows calls fn for every stored entry of rows lo, …, hi−1, in row
// order and, within a row, in stored order (a range of what Do lists).
func (s *Matrix) DoRows(lo, hi int, fn func(i, j int, v float64)) {
	if s == nil || len(s.RowPtr) < s.Rows+1 {
		return
	}
	for i := max(lo, 0); i < min(hi, s.Rows); i++ {
		for k := s.RowPtr[i]; k < s.RowPtr[i+1]; k++ {
			fn(i, int(s.ColIdx[k]), s.Val[k])
		}
	}
}

// ToDense forms the d1×d2 dense matrix (an empty mat.Dense for nil or a
// 0×0 Matrix).
func (s *Matrix) ToDense() *mat.Dense {
	if s == nil || s.Rows <= 0 || s.Cols <= 0 {
		return &mat.Dense{}
	}
	m := mat.NewDense(s.Rows, s.Cols, nil)
	s.Do(func(i, j int, v float64) { m.Set(i, j, v) })
	return m
}

// Where returns the entries of the row-major rows×cols matrix data
// (row stride stride) for which keep is true, as a Matrix: what a method
// keeps of a dense residual as its sparse part.
func Where(rows, cols int, data []float64, stride int, keep func(x float64) bool) *Matrix {
	sp := &Matrix{Rows: rows, Cols: cols, RowPtr: make([]int, rows+1)}
	for i := 0; i < rows; i++ {
		for j, x := range data[i*stride : i*stride+cols] {
			if keep(x) {
				sp.ColIdx = append(sp.ColIdx, int32(j))
				sp.Val = append(sp.Val, x)
			}
		}
		sp.RowPtr[i+1] = len(sp.Val)
	}
	return sp
}

// Scaled returns a copy of s with every value multiplied by c.
func (s *Matrix) Scaled(c float64) *Matrix {
	out := &Matrix{Rows: s.Rows, Cols: s.Cols, RowPtr: slices.Clone(s.RowPtr), ColIdx: slices.Clone(s.ColIdx), Val: make([]float64, len(s.Val))}
	for k, v := range s.Val {
		out.Val[k] = c * v
	}
	return out
}
