// Package tsvd computes truncated singular value decompositions of large
// matrices that are only available through products with tall-skinny
// blocks.
//
// The method is block Golub–Kahan–Lanczos bidiagonalization with full
// reorthogonalization and thick restarts (a randomized block Krylov
// method): starting from a random (or warm-start) n×b block, it builds
// orthonormal bases V of ℝⁿ and U of ℝᵐ with A·V = U·B for a small
// upper-triangular B, extracts Ritz triplets from the SVD of B
// (Rayleigh–Ritz) and, when the basis is full, restarts from the best Ritz
// vectors. Each iteration costs one product with A and one with Aᵀ of b
// columns; the Ritz residuals come for free from the recurrence, so the
// stopping test needs no extra products. Operators whose smaller dimension
// is below Rank + 3b are instead formed explicitly and factorized with
// gonum's dense SVD.
//
// This is the rank-r SVD of the initialization SVD_r[Y − S_init] in the
// paper's Algorithms 1 and 2 (its experiments use PROPACK, an unblocked
// Lanczos bidiagonalization), also used by the AltProj and IALM baselines,
// which warm-start repeated calls through Options.Start.
package tsvd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// Operator is a linear map A: ℝⁿ → ℝᵐ known through block products.
//
// Compute always passes compact blocks (Stride == Cols) that do not alias
// each other; dst must be fully overwritten.
type Operator interface {
	// Dims returns m, n: A is m×n.
	Dims() (m, n int)
	// MulTo sets dst (m×k) = A·X for X of size n×k.
	MulTo(dst, x blas64.General)
	// MulTransTo sets dst (n×k) = Aᵀ·X for X of size m×k.
	MulTransTo(dst, x blas64.General)
}

// Default option values.
const (
	// DefaultTol is the default relative residual tolerance: a triplet is
	// accepted when ‖Aᵀuᵢ − σᵢvᵢ‖ ≤ Tol·σ₁ (A·vᵢ = σᵢuᵢ holds to rounding
	// by construction). Singular values are then accurate to about
	// Tol·σ₁ (and to (Tol·σ₁)²/gap when separated by gap), singular
	// vectors to about Tol·σ₁/gap in angle.
	DefaultTol = 1e-10
	// DefaultMaxIter is the default cap on iterations (each one product
	// with A and one with Aᵀ). The flat top spectrum of a 5000×5000
	// Gaussian matrix (relative gaps of order 1e-3) needs about 85 at
	// rank 10 and DefaultTol; flatter spectra stop at the cap with
	// Converged false. Tolerances below about 1e-14 may be unreachable in
	// floating point.
	DefaultMaxIter = 300
)

// DefaultBlockSize returns the default number of columns per product for a
// given rank: Rank+2 clamped to [8, 32].
//
// Two extra columns let the block method resolve clusters of nearly equal
// singular values straddling σ_Rank. The block has at least 8 columns
// because a dense product with up to about 12 columns costs little more
// than with one (it is limited by reading the matrix) and larger blocks
// converge in fewer iterations. It has at most 32 because for larger ranks
// smaller blocks need fewer matrix–vector products and, above all, keep
// the basis and its O(p³) projected SVDs small (measured at rank 100 and
// 200, d = 1000: about 3× faster than Rank+2). A Krylov method cannot
// separate more equal singular values than its block size, so for ranks
// above 30 a singular value of multiplicity above 32 could be
// under-represented: set Oversample or BlockSize for such matrices.
func DefaultBlockSize(rank int) int { return min(max(rank+2, 8), 32) }

// DefaultMaxBasis returns the default largest Krylov basis size for an m×n
// operator, rank r and block size b: r + min(8b, 200), reduced so that the
// two bases take at most 2²⁴ values (128 MiB), but never below r + 3b.
// Larger bases need fewer iterations on flat spectra at the price of
// memory, more orthogonalization work per iteration and larger projected
// SVDs (O(p³), which the cap of 200 keeps small for large ranks).
func DefaultMaxBasis(m, n, rank, b int) int {
	p := min(rank+min(8*b, 200), (1<<24)/(m+n))
	return max(p, rank+3*b)
}

// Options control Compute.
type Options struct {
	Rank       int            // number of singular triplets wanted (required, ≥ 1)
	Oversample int            // extra block columns: the block size is Rank+Oversample; 0 means the default (see BlockSize)
	BlockSize  int            // columns per product, overriding Oversample; 0 means Rank+Oversample or, without both, DefaultBlockSize(Rank), raised to hold a warm start
	MaxIter    int            // cap on iterations (raised to ⌈Rank/b⌉); 0 means DefaultMaxIter
	Tol        float64        // relative residual tolerance (see DefaultTol); 0 means DefaultTol
	Seed       uint64         // seed of the random start block and of any random refill
	Start      blas64.General // optional warm start: n×k block whose span approximates the right singular subspace (see Compute)
	Workers    int            // goroutines for the basis operations inside Compute; 0 means GOMAXPROCS
	MaxBasis   int            // largest Krylov basis before a restart (at least Rank+2b); 0 means DefaultMaxBasis
}

// Result is a truncated SVD A ≈ U·diag(S)·Vᵀ.
type Result struct {
	U          blas64.General // m×r, orthonormal columns
	S          []float64      // r singular values, non-increasing
	V          blas64.General // n×r, orthonormal columns
	Iterations int            // iterations run (each one product with A and one with Aᵀ)
	Products   int            // number of block products with A or Aᵀ
	Columns    int            // total number of columns in those products (matrix–vector products)
	// Residuals[i] bounds ‖Aᵀuᵢ − σᵢvᵢ‖ (the other residual A·vᵢ − σᵢuᵢ is
	// zero up to rounding); zero for the dense fallback.
	Residuals []float64
	// Converged reports whether all Residuals are ≤ Tol·S[0]. When false
	// (MaxIter reached), the triplets are still the best available Ritz
	// approximations.
	Converged bool
}

// ErrNonFinite is returned when a product with the operator produced a NaN
// or an infinity.
var ErrNonFinite = errors.New("tsvd: operator product has non-finite entries")

// settings are validated options with defaults applied.
type settings struct {
	m, n     int
	rank     int
	b        int // block size
	maxStart int // largest number of warm-start columns used
	maxBasis int // largest basis size p before a restart
	keep     int // basis size after a restart
	maxIter  int
	tol      float64
	workers  int
}

func newSettings(m, n int, opt Options) (settings, error) {
	var s settings
	if m < 1 || n < 1 {
		return s, fmt.Errorf("tsvd: operator size %d×%d must be positive", m, n)
	}
	k := min(m, n)
	if opt.Rank < 1 || opt.Rank > k {
		return s, fmt.Errorf("tsvd: rank %d outside [1, %d] for a %d×%d operator", opt.Rank, k, m, n)
	}
	if opt.Oversample < 0 || opt.BlockSize < 0 || opt.MaxIter < 0 || opt.MaxBasis < 0 {
		return s, fmt.Errorf("tsvd: negative Oversample (%d), BlockSize (%d), MaxIter (%d) or MaxBasis (%d)",
			opt.Oversample, opt.BlockSize, opt.MaxIter, opt.MaxBasis)
	}
	if !(opt.Tol >= 0) || math.IsInf(opt.Tol, 0) {
		return s, fmt.Errorf("tsvd: tolerance %v must be finite and non-negative", opt.Tol)
	}
	if opt.Start.Data != nil && opt.Start.Cols > 0 && opt.Start.Rows != n {
		return s, fmt.Errorf("tsvd: warm start has %d rows, want n = %d", opt.Start.Rows, n)
	}
	s = settings{m: m, n: n, rank: opt.Rank, maxIter: opt.MaxIter, tol: opt.Tol, workers: kernels.Workers(opt.Workers)}
	switch {
	case opt.BlockSize > 0:
		s.b = opt.BlockSize
	case opt.Oversample > 0:
		s.b = opt.Rank + opt.Oversample
	default:
		s.b = DefaultBlockSize(opt.Rank)
		if opt.Start.Data != nil && opt.Start.Cols > 0 {
			// Room for the warm start and two random columns.
			s.b = max(s.b, min(opt.Start.Cols, opt.Rank)+2)
		}
	}
	// Columns of the warm start used: at least min(2, b − Rank) columns
	// (one when b ≤ Rank) stay random so that directions missing from the
	// warm start are still found.
	s.maxStart = s.b - max(1, min(2, s.b-s.rank))
	s.maxIter = cmp.Or(s.maxIter, DefaultMaxIter)
	s.tol = cmp.Or(s.tol, DefaultTol)
	s.maxBasis = opt.MaxBasis
	if s.maxBasis == 0 {
		s.maxBasis = DefaultMaxBasis(m, n, s.rank, s.b)
	}
	// The basis must reach Rank before the first Rayleigh–Ritz step.
	s.maxIter = max(s.maxIter, (s.rank+s.b-1)/s.b)
	// The basis must hold the kept Ritz vectors plus one new block.
	s.maxBasis = max(s.maxBasis, s.rank+2*s.b)
	// V holds the basis plus the next block, U the basis: both must fit.
	s.maxBasis = min(s.maxBasis, k-s.b)
	s.keep = s.rank + (s.maxBasis-s.b-s.rank+1)/2
	return s, nil
}

// useDense reports whether the explicit dense SVD is used: when the Krylov
// bases could not hold Rank+2b vectors plus the next block, so the
// operator is small in at least one dimension and the explicit matrix has
// fewer than max(m, n)·(Rank+3b) entries.
func (s settings) useDense() bool { return min(s.m, s.n) < s.rank+3*s.b }

// Compute returns the top Rank singular triplets of op.
//
// With a warm start, the start block is made of the first columns of
// opt.Start, at most b−2 of them (b−1 if b ≤ Rank+1, b the block size),
// completed with random columns; they need not be orthonormal. Starting from the right singular vectors of a
// nearby matrix saves the iterations a random start needs to reach their
// accuracy: the iteration count grows with log(start error/Tol).
//
// It returns an error for invalid options (Rank outside [1, min(m, n)],
// negative counts, a warm start with the wrong number of rows), ctx.Err()
// when ctx is cancelled (checked before every product) and ErrNonFinite
// when a product is not finite. Not reaching Tol within MaxIter is not an
// error: see Result.Converged. The result depends only on op, opt.Seed and
// the other options, provided op's products are deterministic.
func Compute(ctx context.Context, op Operator, opt Options) (*Result, error) {
	m, n := op.Dims()
	s, err := newSettings(m, n, opt)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.useDense() {
		return denseSVD(ctx, op, s)
	}
	return lanczos(ctx, op, s, opt)
}

// ComputeAbove returns all singular triplets of op with σ > threshold, as
// needed by singular value thresholding. opt.Rank (at least 1) is the
// first guess of their number; while the smallest computed value is still
// above threshold the rank grows by half (at least 5), warm-started from
// the previous right singular vectors. The Result holds the triplets above
// threshold (possibly none) and the totals of all calls.
func ComputeAbove(ctx context.Context, op Operator, threshold float64, opt Options) (*Result, error) {
	m, n := op.Dims()
	k := min(m, n)
	if math.IsNaN(threshold) {
		return nil, errors.New("tsvd: threshold is NaN")
	}
	opt.Rank = min(max(opt.Rank, 1), max(k, 1))
	var iters, prods, cols int
	for {
		res, err := Compute(ctx, op, opt)
		if err != nil {
			return nil, err
		}
		iters += res.Iterations
		prods += res.Products
		cols += res.Columns
		r := len(res.S)
		if res.S[r-1] <= threshold || r == k {
			c := 0
			for c < r && res.S[c] > threshold {
				c++
			}
			res.S = res.S[:c]
			res.Residuals = res.Residuals[:c]
			res.U.Cols = c
			res.V.Cols = c
			res.Iterations, res.Products, res.Columns = iters, prods, cols
			return res, nil
		}
		opt.Rank = min(r+max(5, r/2), k)
		opt.Start = res.V
	}
}

// Dense is the Operator of a dense row-major matrix.
type Dense struct {
	A       blas64.General
	Workers int // goroutines for the products; 0 means GOMAXPROCS
}

// Dims returns the size of the matrix.
func (d Dense) Dims() (int, int) { return d.A.Rows, d.A.Cols }

// MulTo sets dst = A·X.
func (d Dense) MulTo(dst, x blas64.General) { kernels.MulAX(dst, d.A, x, d.Workers) }

// MulTransTo sets dst = Aᵀ·X.
func (d Dense) MulTransTo(dst, x blas64.General) { kernels.MulAtX(dst, d.A, x, d.Workers) }

// WrapError labels an error of a method's truncated SVD with the method's
// name; cancellation and deadline errors pass through unchanged, so that
// callers can compare them with ==.
func WrapError(method string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s: truncated SVD: %w", method, err)
}
