package rpca

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/internal/tsvd"
)

// Distributed is the data side of Algorithm 2 for observed entries that GD
// does not hold: entries kept by a distributed engine (the module beam/
// runs them on Apache Beam) or any other store. [GD.SolveDistributed]
// does everything else with the code [Solve] uses: the parameters and
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
// kept, where [Solve]'s selection keeps exactly k; on continuous data the
// two agree.
type Distributed interface {
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
	// it sets gu (d1×r) = E·V and gv (d2×r) = Eᵀ·U and returns ‖E‖²_F.
	// It keeps S's support for Trial.
	Evaluate(ctx context.Context, u, v, gu, gv *mat.Dense, kRow, kCol int) (float64, error)
	// Trial returns the sum of (Y − U·Vᵀ)²_ij over the observed entries
	// outside the support of the last Evaluate's S.
	Trial(ctx context.Context, u, v *mat.Dense) (float64, error)
}

// ErrNoEntries is returned by SolveDistributed when Φ is empty.
var ErrNoEntries = errors.New("rpca: no observed entries")

// SolveDistributed runs Algorithm 2 on the observed entries that d holds,
// with g's parameters and the settings s, exactly as [Solve] runs it on an
// [Observed] (p = |Φ|/(d1·d2) unless g.SampleRate is set), except that:
// T is d's threshold form; the data are not rescaled (Solve scales data
// beyond about 1e±150 by a power of two); and the Result's S is nil, the
// sparse part staying with d.
func (g *GD) SolveDistributed(ctx context.Context, d Distributed, s Settings) (*Result, error) {
	d1, d2, nnz := d.Dims()
	if nnz == 0 {
		return nil, ErrNoEntries
	}
	if err := s.validate(d1, d2); err != nil {
		return nil, badInput(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.PerLine {
		return nil, BadSettings(errors.New("rpca: GD.PerLine is not available with SolveDistributed"))
	}
	if g.Update == UpdateALS {
		return nil, BadSettings(fmt.Errorf("rpca: GD.Update %q is not available with SolveDistributed", UpdateALS))
	}
	q, err := g.paramsFor(d1, d2, float64(nnz)/(float64(d1)*float64(d2)), s)
	if err != nil {
		return nil, BadSettings(err)
	}
	st := &distState{ctx: ctx, d: d, q: &q, ynorm: d.NormY()}
	res, err := g.run(ctx, NewTracker(ctx, &Problem{}, s, DefaultGDStop, gdDivergenceHint), st, &q)
	if err != nil {
		return nil, err
	}
	res.DataScale = 1
	return res, nil
}

// distState is gdState on a Distributed.
type distState struct {
	ctx   context.Context
	d     Distributed
	q     *gdParams
	ynorm float64
	loc   float64
}

func (st *distState) initLocation() float64 { return st.loc }
func (st *distState) normY() float64        { return st.ynorm }
func (st *distState) sparse() *Sparse       { return nil }

// initialize is observedState.initialize on d: the location c from the
// same positions, T on Π_Φ(Y − c), and the truncated SVD of
// (1/p)·Π_Φ(Y − S_init) by tsvd on d's products.
func (st *distState) initialize(ctx context.Context) (u, v blas64.General, sigma1 float64, err error) {
	q := st.q
	_, _, nnz := st.d.Dims()
	if q.initTrims() {
		pos := locationPositions(nnz)
		vals, err := st.d.Values(ctx, pos)
		if err != nil {
			return u, v, 0, err
		}
		if len(vals) != len(pos) {
			return u, v, 0, fmt.Errorf("rpca: Distributed.Values returned %d values for %d positions", len(vals), len(pos))
		}
		st.loc = selection.SelectSmallest(vals, (len(vals)+1)/2) // initLocation's median
	}
	if err := st.d.SetInit(ctx, st.loc, q.kRow0, q.kCol0); err != nil {
		return u, v, 0, err
	}
	op := &distOperator{ctx: ctx, d: st.d, scale: 1 / q.p, d1: q.d1, d2: q.d2}
	sv, err := tsvd.Compute(ctx, op, tsvd.Options{Rank: q.rank, Tol: q.svdTol, Seed: q.seed, Workers: q.workers})
	if op.err != nil {
		return u, v, 0, op.err
	}
	if err != nil {
		return u, v, 0, err
	}
	return svdFactors(sv, q)
}

func (st *distState) evaluate(u, v, gu, gv blas64.General) (float64, error) {
	ss, err := st.d.Evaluate(st.ctx, kernels.Dense(u), kernels.Dense(v), kernels.Dense(gu), kernels.Dense(gv), st.q.kRow, st.q.kCol)
	if err != nil {
		return 0, err
	}
	return math.Sqrt(ss) / st.ynorm, nil
}

func (st *distState) trial(u, v blas64.General) (float64, error) {
	ss, err := st.d.Trial(st.ctx, kernels.Dense(u), kernels.Dense(v))
	return 0.5 * ss, err
}

// distOperator is (scale)·X of Distributed.SetInit as a tsvd.Operator;
// the first error of a product is kept in err (and later products are
// skipped), for initialize to return.
type distOperator struct {
	ctx    context.Context
	d      Distributed
	scale  float64
	d1, d2 int
	err    error
}

func (o *distOperator) Dims() (int, int) { return o.d1, o.d2 }

func (o *distOperator) MulTo(dst, x blas64.General) { o.mul(dst, x, o.d.MulInit) }

func (o *distOperator) MulTransTo(dst, x blas64.General) { o.mul(dst, x, o.d.MulInitTrans) }

func (o *distOperator) mul(dst, x blas64.General, f func(context.Context, *mat.Dense, *mat.Dense) error) {
	if o.err == nil {
		o.err = f(o.ctx, kernels.Dense(dst), kernels.Dense(x))
	}
	for i := 0; i < dst.Rows; i++ {
		r := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
		if o.err != nil {
			clear(r) // tsvd goes on to its end; initialize returns o.err
			continue
		}
		for k := range r {
			r[k] *= o.scale
		}
	}
}

// LineThreshold returns the threshold of T (see [Distributed]) on one
// line with count k: the k-th largest of the magnitudes mags, 0 when the
// line has at most k entries (all its non-zeros are kept), and +Inf when
// k = 0 (none is). It reorders mags.
func LineThreshold(mags []float64, k int) float64 {
	switch {
	case k <= 0:
		return math.Inf(1)
	case len(mags) <= k:
		return 0
	}
	return selection.Select(mags, k)
}

// InSparse reports whether an entry of magnitude a is in T (see
// [Distributed]) given its row's and its column's LineThreshold.
func InSparse(a, rowThreshold, colThreshold float64) bool {
	return a > 0 && a >= rowThreshold && a >= colThreshold
}
