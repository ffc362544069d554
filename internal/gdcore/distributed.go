package gdcore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/distributed"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/track"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/robust"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/internal/tsvd"
	"github.com/rpca-gd/rpca/internal/verify"
)

// SolveDistributed runs Algorithm 2 on the observed entries that d holds,
// with g's parameters and the settings s, exactly as [Solve] runs it on an
// [Observed] (with p = |Φ|/(d1·d2)), except that:
// T is d's threshold form; gross entries are not set
// aside before the method; the frame (location and scale) is applied
// only when d is a [distributed.Framer]; and the Result's S is nil, the
// sparse part staying with d.
func (g *GD) SolveDistributed(ctx context.Context, d distributed.Store, s rpca.Settings) (*rpca.Result, error) {
	d1, d2, nnz := d.Dims()
	if nnz == 0 {
		return nil, rpca.ErrNoEntries
	}
	if err := s.Check(d1, d2); err != nil {
		return nil, rpca.BadInput(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.PerLine {
		return nil, rpca.BadSettings(errors.New("PerLine is not available with SolveDistributed"))
	}
	if g.Update == UpdateALS {
		if _, ok := d.(distributed.ALSStore); !ok {
			return nil, rpca.BadSettings(errors.New("als: the store does not do the half-sweeps of ALS (distributed.ALSStore)"))
		}
		switch {
		case g.Biases:
			return nil, rpca.BadSettings(errors.New("als: Biases is not available with SolveDistributed"))
		case g.Huber > 0:
			return nil, rpca.BadSettings(errors.New("als: Huber is not available with SolveDistributed"))
		case g.Implicit > 0:
			return nil, rpca.BadSettings(errors.New("als: Implicit is not available with SolveDistributed"))
		}
	}
	q, err := g.paramsFor(d1, d2, float64(nnz)/(float64(d1)*float64(d2)), s)
	if err != nil {
		return nil, rpca.BadSettings(err)
	}
	loc, scale, ref, sample, err := sampleFrame(ctx, d)
	if err != nil {
		return nil, err
	}
	st := &distState{ctx: ctx, d: d, q: &q, ynorm: d.NormY(), sample: sample}
	def := DefaultGDStop
	if q.als {
		def = DefaultALSStop
	}
	tr := track.New(ctx, &rpca.Problem{}, s, def, gdDivergenceHint)
	if ref > 0 {
		tr.ScaleResiduals(st.ynorm * scale / ref)
	}
	res, err := g.run(ctx, tr, st, &q)
	if err != nil {
		return nil, err
	}
	res.DataScale = scale
	if scale != 1 {
		res.U.Scale(scale, res.U)
	}
	if loc != 0 {
		addLocation(res, loc, ref, d1, d2, nnz)
	}
	return res, nil
}

// sampleFrame reads the values of d at robust.SamplePositions (one pass)
// and, when d is a [distributed.Framer], puts d in the frame Solve would
// give them (robust.SampleFrame): the location c' removed, and the
// values divided by a power of two (scale) when c' ≠ 0 or their
// scale is extreme. It returns c' and scale (0 and 1 on another store),
// the sample as the store now presents it (for initialize's location),
// and the clean norm of the values less c', in the units of the data,
// which the reported residuals and the residual rule are relative to, as
// Solve's are to rpca.ResidualScale (0 for a constant sample). The
// method's own residual stays relative to NormY, as it is to ‖Π_Φ Y‖ of
// the framed data in Solve (the two differ only by the entries beyond
// GrossSpreads, which Solve sets aside).
func sampleFrame(ctx context.Context, d distributed.Store) (loc, scale, ref float64, sample []float64, err error) {
	fr, framer := d.(distributed.Framer)
	if framer {
		if err := fr.SetFrame(ctx, 0, 1); err != nil {
			return 0, 1, 0, nil, err
		}
	}
	_, _, nnz := d.Dims()
	pos := robust.SamplePositions(nnz)
	vals, err := d.Values(ctx, pos)
	if err != nil {
		return 0, 1, 0, nil, err
	}
	if len(vals) != len(pos) {
		return 0, 1, 0, nil, fmt.Errorf("rpca: distributed.Store.Values returned %d values for %d positions", len(vals), len(pos))
	}
	sample = slices.Clone(vals)
	loc, scale, ref = robust.SampleFrame(vals, nnz, framer)
	if !framer {
		return 0, 1, ref, sample, nil
	}
	if loc != 0 || scale != 1 {
		// The values as the store presents them after SetFrame.
		for k, y := range sample {
			sample[k] = robust.FrameValue(y, loc, scale)
		}
		err = fr.SetFrame(ctx, loc, scale)
	}
	return loc, scale, ref, sample, err
}

// addLocation adds the removed location loc back to res's M = U·Vᵀ at
// its rank (verify.Fold, as Solve does) and sets Result.Location. When
// the fold moves M by more than the noise of the fit (its residual,
// relative to scale, over nnz entries), the constant was not in the
// rank's model: res.Verification then fails rpca.CheckOffset.
func addLocation(res *rpca.Result, loc, scale float64, d1, d2, nnz int) {
	res.Location = loc
	rel := 0.0 // rms(E) over the rms of M's varying part
	if centred := metrics.CentredNorm(res.U, res.V); centred > 0 && !math.IsNaN(res.Residual) {
		rel = res.Residual * scale / math.Sqrt(float64(nnz)) / (centred / math.Sqrt(float64(d1)*float64(d2)))
	}
	var gap float64
	var misfit string
	res.U, res.V, gap, misfit = verify.Fold(res.U, res.V, loc, true, rel)
	if misfit != "" {
		res.Verification = &rpca.Verification{Failed: rpca.CheckOffset, Reason: misfit, OffsetGap: gap,
			Stationary: math.NaN(), Structure: math.NaN()}
	}
}

// distState is gdState on a Distributed.
type distState struct {
	ctx    context.Context
	d      distributed.Store
	q      *gdParams
	ynorm  float64
	loc    float64
	sample []float64 // the values at robust.SamplePositions, framed
}

func (st *distState) initLocation() float64     { return st.loc }
func (st *distState) setInitLocation(c float64) { st.loc = c }
func (st *distState) entries() int {
	_, _, nnz := st.d.Dims()
	return nnz
}
func (st *distState) normY() float64       { return st.ynorm }
func (st *distState) sparse() *rpca.Sparse { return nil }

// initialize is observedState.initialize on d: the location c from the
// same positions (the sample sampleFrame read, in the store's frame), T on
// Π_Φ(Y − c), and the truncated SVD of (1/p)·Π_Φ(Y − S_init) by tsvd on
// d's products.
func (st *distState) initialize(ctx context.Context) (u, v blas64.General, sigma1 float64, err error) {
	q := st.q
	if q.initTrims() {
		vals := slices.Clone(st.sample)
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
	var du, dv *mat.Dense // nil: the residual only (ALS forms no gradients)
	if gu.Data != nil {
		du, dv = kernels.Dense(gu), kernels.Dense(gv)
	}
	ss, err := st.d.Evaluate(st.ctx, kernels.Dense(u), kernels.Dense(v), du, dv, st.q.kRow, st.q.kCol)
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
	d      distributed.Store
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

// distALSUpdate is alsUpdate on a DistributedALS store: the row
// half-sweep against V, then the column half-sweep against the new U,
// both outside the support of the last evaluation's S.
type distALSUpdate struct {
	st    *distState
	ridge float64
}

func (a *distALSUpdate) step(un, vn, _, v, _, _ blas64.General, _ float64) error {
	a.ridge *= a.st.q.ridgeDecay // RidgeDecay: λ·ρᵗ in sweep t
	d := a.st.d.(distributed.ALSStore)
	if err := d.SolveLines(a.st.ctx, kernels.Dense(un), kernels.Dense(v), false, a.ridge); err != nil {
		return err
	}
	return d.SolveLines(a.st.ctx, kernels.Dense(vn), kernels.Dense(un), true, a.ridge)
}

func (a *distALSUpdate) penalty(u, v blas64.General) float64 { return ridgePenalty(a.ridge, u, v) }

func (a *distALSUpdate) predicted(_, _, _, _, _, _ blas64.General) float64 { return 0 }
