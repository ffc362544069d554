// Package distributed is the contract between the methods that run
// Algorithm 2 on entries they do not hold (gd.Method, als.Method) and the
// stores that hold them: the module beam/ runs a [Store] on Apache Beam.
package distributed

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
)

// Store is the data side of Algorithm 2 for observed entries that a
// method does not hold: entries kept by a distributed engine (the module
// beam/ runs them on Apache Beam) or any other store. A method that can
// drive one implements [Solver] (gd.Method, and als.Method on an
// [ALSStore]), and does everything else with the code [rpca.Solve] uses: the parameters and
// their defaults, the location c and the counts of T, the truncated SVD
// of the initialization, the update rule with its step rule and
// projection, and the stopping rules. An implementation does the passes
// over Φ, and only ever exchanges d×r factors, d×r products and scalars.
//
// T below is the sparse estimator of Algorithm 2 in threshold form: with
// R the values of a pass, an observed entry is in T(R) when |R_ij| > 0 is
// at least the kRow-th largest |R| among its row's observed entries and at
// least the kCol-th largest among its column's (all of a line's non-zeros
// when it has at most that many entries). Ties at a threshold are all
// kept, where [rpca.Solve]'s selection keeps exactly k; on continuous
// data the two agree.
type Store interface {
	// Dims returns the size d1×d2 of Y and the number of observed
	// entries |Φ|.
	Dims() (d1, d2, nnz int)
	// NormY returns ‖Π_Φ Y‖_F.
	NormY() float64
	// Values returns the observed values at positions (increasing, in
	// 0..nnz−1) of Φ in row-major order: row by row, by column within a
	// row.
	Values(ctx context.Context, positions []int) ([]float64, error)
	// SetInit fixes Algorithm 2 line 1: S_init = T(Π_Φ(Y − c)) with
	// counts kRow, kCol, and X = Π_Φ(Y) with the entries of S_init's
	// support replaced by c, the matrix of MulInit and MulInitTrans.
	SetInit(ctx context.Context, c float64, kRow, kCol int) error
	// MulInit sets dst (d1×k) = X·x for x of size d2×k.
	MulInit(ctx context.Context, dst, x *mat.Dense) error
	// MulInitTrans sets dst (d2×k) = Xᵀ·x for x of size d1×k.
	MulInitTrans(ctx context.Context, dst, x *mat.Dense) error
	// Evaluate is Algorithm 2 line 6 and the products of lines 7–8: with
	// R = Π_Φ(Y − U·Vᵀ), S = T(R) with counts kRow, kCol and E = R − S,
	// it sets gu (d1×r) = E·V and gv (d2×r) = Eᵀ·U and returns ‖E‖²_F
	// (with gu and gv nil, for ALS, it only returns ‖E‖²_F). It keeps S's
	// support for Trial and SolveLines.
	Evaluate(ctx context.Context, u, v, gu, gv *mat.Dense, kRow, kCol int) (float64, error)
	// Trial returns the sum of (Y − U·Vᵀ)²_ij over the observed entries
	// outside the support of the last Evaluate's S.
	Trial(ctx context.Context, u, v *mat.Dense) (float64, error)
}

// ALSStore is a [Store] that also does the half-sweeps
// of alternating least squares (als.Method), for the methods that run on
// it.
type ALSStore interface {
	Store
	// SolveLines sets row l of dst to the ridge least-squares fit of
	// line l's observed entries outside the support of the last
	// Evaluate's S against the rows of x (rows of Y when cols is false,
	// dst d1×r and x d2×r; columns otherwise): with y the entries and X
	// the rows of x they pair with, dst_l = (XᵀX + λI)⁻¹Xᵀy, λ = ridge
	// plus 1e-10 of the mean of XᵀX's diagonal (als.LineSolver fits one line).
	SolveLines(ctx context.Context, dst, x *mat.Dense, cols bool, ridge float64) error
}

// Framer is a [Store] that can present its values in a frame, as
// [rpca.Solve] presents the data to a method: after SetFrame(c, scale),
// Values, NormY and every pass see Π_Φ(Y − c)/scale, formed as
// (y/2 − c/2)·(2/scale) so that nothing overflows; SetFrame(0, 1)
// restores Y. On a Framer the methods' SolveDistributed remove the
// location Solve would (Result.Location: an offset no longer
// makes the problem ill-conditioned) and divide data of an extreme scale
// by a power of two (Result.DataScale), and return M in the units of Y.
type Framer interface {
	Store
	SetFrame(ctx context.Context, c, scale float64) error
}

// Solver is implemented by methods that can run on a [Store] (gd.Method, als.Method): the same algorithm as their Solve, on
// entries they do not hold. The result's S is nil (the sparse part stays
// with the store) and the data are not rescaled.
type Solver interface {
	SolveDistributed(ctx context.Context, d Store, s rpca.Settings) (*rpca.Result, error)
}
