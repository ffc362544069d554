package rpca

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// Problem is the data to decompose: Y = M + S with M of low rank and S
// sparse. Exactly one of Dense and Observed must be set.
type Problem struct {
	// Dense is a fully observed d1×d2 matrix Y.
	Dense *mat.Dense

	// Observed holds the observed entries Φ of a partially observed Y
	// (the paper's eq. (Y)); entries outside Φ are missing, not zero.
	Observed *Observed

	// Truth, when known (synthetic data), lets methods record the true
	// estimation error ‖UVᵀ − M*‖_F/‖M*‖_F in their history and stop on
	// Stop.TargetError. It is never used to compute the estimate.
	Truth *Truth

	// resFactor, set by Solve on the problem a method sees, converts the
	// method's relative residual (against ‖Π_Φ Y‖) into one against the
	// clean scale of the data (see frame.go); 0 means 1.
	resFactor float64
}

// Truth is the true low-rank matrix M* = A·Bᵀ, given by its factors so that
// errors can be computed without forming a d1×d2 matrix.
type Truth struct {
	A *mat.Dense // d1×r
	B *mat.Dense // d2×r
}

// Dims returns the size d1×d2 of Y (0×0 for a nil or empty problem).
func (p *Problem) Dims() (d1, d2 int) {
	switch {
	case p == nil:
	case p.Dense != nil:
		return p.Dense.Dims()
	case p.Observed != nil:
		return p.Observed.Dims()
	}
	return 0, 0
}

// DenseInput returns p's fully observed Y, or an error naming method:
// p holds no matrix, or only a partially observed one ([ErrDenseOnly]).
// Methods that need a dense Y call it when run directly; [Solve]
// refuses such problems before.
func (p *Problem) DenseInput(method string) (*mat.Dense, error) {
	switch {
	case p == nil || (p.Dense == nil && p.Observed == nil):
		return nil, fmt.Errorf("%s: problem has no matrix", method)
	case p.Dense == nil:
		return nil, fmt.Errorf("%s: %w", method, ErrDenseOnly)
	}
	return p.Dense, nil
}

// Validate checks that the problem is well formed: exactly one of Dense and
// Observed, a non-empty matrix, no NaN or Inf values, and truth factors of
// matching size. It returns a descriptive error otherwise.
func (p *Problem) Validate() error {
	if err := p.checkShape(); err != nil {
		return err
	}
	d1, d2 := p.Dims()
	if p.Dense != nil {
		raw := p.Dense.RawMatrix()
		for i := 0; i < raw.Rows; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
			if kernels.AllFinite(row) {
				continue
			}
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("rpca: Y has a non-finite value %v at (%d, %d)", v, i, j)
				}
			}
		}
	}
	if t := p.Truth; t != nil {
		if t.A == nil || t.B == nil {
			return errors.New("rpca: truth needs both factors A and B")
		}
		ar, ac := t.A.Dims()
		br, bc := t.B.Dims()
		if ar != d1 || br != d2 || ac != bc {
			return fmt.Errorf("rpca: truth factors are %d×%d and %d×%d, want %d×r and %d×r", ar, ac, br, bc, d1, d2)
		}
	}
	return nil
}

// CheckShape is the part of Validate that does not read the data: a
// problem, with exactly one matrix, built as documented, not empty. It
// returns a descriptive error otherwise, for methods' own entry points.
func (p *Problem) CheckShape() error { return p.checkShape() }

// checkShape is CheckShape.
func (p *Problem) checkShape() error {
	if p == nil {
		return errors.New("rpca: nil problem")
	}
	if (p.Dense == nil) == (p.Observed == nil) {
		return errors.New("rpca: problem must set exactly one of Dense and Observed")
	}
	if p.Observed != nil && p.Observed.m == nil {
		return errors.New("rpca: Problem.Observed is a zero value; build it with NewObserved or SampleDense")
	}
	if d1, d2 := p.Dims(); d1 == 0 || d2 == 0 {
		return errors.New("rpca: empty matrix")
	}
	return nil
}

// Observed is a partially observed matrix: the set Φ of observed positions
// (i, j) with their values. An observed value of exactly 0 is an
// observation, not a missing entry. Build one with [NewObserved] or
// [SampleDense]; it is immutable afterwards and safe for concurrent reads.
// (A [Sparse], the output type, reads an entry it does not list as 0.)
type Observed struct {
	m *observed.Matrix
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
		return nil, badInput(fmt.Errorf("rpca: matrix size %d×%d must be positive", d1, d2))
	}
	if len(rows) != len(vals) || len(cols) != len(vals) {
		return nil, badInput(fmt.Errorf("rpca: %d row indices, %d column indices and %d values; want equal counts", len(rows), len(cols), len(vals)))
	}
	if float64(d1)+float64(d2) > 2*float64(len(vals))+(1<<20) {
		return nil, badInput(fmt.Errorf("rpca: a %d×%d matrix with only %d observed entries: nearly every row and column would be empty (at least one entry per row and column is needed)", d1, d2, len(vals)))
	}
	m, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		return nil, fmt.Errorf("rpca: %w", err)
	}
	return &Observed{m: m}, nil
}

// Sampling is the paper's observation model (eq. (Y)): every entry is
// observed independently with probability P ∈ (0, 1], the draws keyed by
// Seed. It is the project's one sampler: GD.SampleRate, the file loader
// (rpca decompose --p), the synthetic generator and the experiments draw
// the same entries for the same P and Seed, whatever the order in which
// rows are read.
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
		return nil, badInput(errors.New("rpca: sampling a nil matrix"))
	}
	m, err := observed.SampleDense(y.RawMatrix(), s.P, s.Seed, s.Cover)
	if err != nil {
		return nil, badInput(fmt.Errorf("rpca: %w", err))
	}
	return &Observed{m: m}, nil
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

// NNZ is Len, so that an Observed can be written like a Sparse (both have
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
		return nil, badInput(fmt.Errorf("rpca: matrix size %d×%d must be positive", d1, d2))
	}
	m, err := observed.FromCSR(d1, d2, rowPtr, colIdx, vals)
	if err != nil {
		return nil, badInput(fmt.Errorf("rpca: %w", err))
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

// storage returns p's dense Y, or its observed entries (the other is
// empty).
func (p *Problem) storage() (blas64.General, *observed.Matrix) {
	if p.Dense != nil {
		return p.Dense.RawMatrix(), nil
	}
	return blas64.General{}, p.Observed.m
}
