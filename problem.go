package rpca

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/access"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/sparse"
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

// Observed is a partially observed matrix: the observed positions Φ
// with their values ([sparse.Observed]). Build one with [NewObserved],
// [NewObservedCSR] or [SampleDense].
type Observed = sparse.Observed

// Sampling is the paper's observation model, eq. (Y) ([sparse.Sampling]).
type Sampling = sparse.Sampling

// NewObserved builds a d1×d2 observed matrix from triplets in any order
// ([sparse.NewObserved]).
func NewObserved(d1, d2 int, rows, cols []int, vals []float64) (*Observed, error) {
	return sparse.NewObserved(d1, d2, rows, cols, vals)
}

// NewObservedCSR builds a d1×d2 observed matrix from compressed sparse
// row arrays, which it takes over ([sparse.NewObservedCSR]).
func NewObservedCSR(d1, d2 int, rowPtr []int, colIdx []int32, vals []float64) (*Observed, error) {
	return sparse.NewObservedCSR(d1, d2, rowPtr, colIdx, vals)
}

// SampleDense observes each entry of y with probability p, the draws
// keyed by seed: Sampling{P: p, Seed: seed}.Dense(y).
func SampleDense(y *mat.Dense, p float64, seed uint64) (*Observed, error) {
	return sparse.SampleDense(y, p, seed)
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
	if err := p.CheckShape(); err != nil {
		return err
	}
	d1, d2 := p.Dims()
	if p.Dense != nil {
		if i, j, bad := kernels.FirstNonFinite(p.Dense.RawMatrix()); bad {
			return fmt.Errorf("rpca: Y has a non-finite value %v at (%d, %d)", p.Dense.At(i, j), i, j)
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
func (p *Problem) CheckShape() error {
	if p == nil {
		return errors.New("rpca: nil problem")
	}
	if (p.Dense == nil) == (p.Observed == nil) {
		return errors.New("rpca: problem must set exactly one of Dense and Observed")
	}
	if p.Observed != nil && p.obs() == nil {
		return errors.New("rpca: Problem.Observed is a zero value; build it with NewObserved or SampleDense")
	}
	if d1, d2 := p.Dims(); d1 == 0 || d2 == 0 {
		return errors.New("rpca: empty matrix")
	}
	return nil
}

// storage returns p's dense Y, or its observed entries (the other is
// empty).
func (p *Problem) storage() (blas64.General, *observed.Matrix) {
	if p.Dense != nil {
		return p.Dense.RawMatrix(), nil
	}
	return blas64.General{}, p.obs()
}

// obs returns the storage of p's observed entries.
func (p *Problem) obs() *observed.Matrix { return access.ObservedMatrix(p.Observed) }
