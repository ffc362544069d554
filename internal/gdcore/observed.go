package gdcore

import (
	"context"
	"github.com/rpca-gd/rpca"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/sparsify"
	"github.com/rpca-gd/rpca/internal/tsvd"
)

// observedState holds Algorithm 2's data: Φ with the observed values, and
// per-entry work arrays, all of length |Φ|; nothing of size d1×d2. The
// steady state allocates nothing.
//
// One iteration makes two passes over Φ in CSR order besides T_{γpα}
// (internal/sparsify): the residual (with V), and one pass that zeroes
// S_t's support and forms E·V and Eᵀ·U (for large d2 by column blocks, so
// that the rows of V and Eᵀ·U in use stay cached). See
// docs/performance.md for the measurements.
type observedState struct {
	q     *gdParams
	m     *observed.Matrix
	plan  *observed.Plan
	e     []float64 // Π_Φ(Y − UVᵀ), then with S_t zeroed (CSR order)
	keep  []bool    // support of S_t
	sel   *sparsify.Observed
	ynorm float64
	loc   float64        // c of initialize
	u, v  blas64.General // factors of the last residual, to rebuild S_t
	// trialU, trialV are the factors whose residual e holds after a
	// trial (nil otherwise).
	trialU, trialV []float64
	// tau is τ_t of GD.Huber, set by evaluate; sample its work buffer.
	tau    float64
	sample []float64
}

// initLocation returns c of initialize.
func (st *observedState) initLocation() float64 { return st.loc }

func (st *observedState) setInitLocation(c float64) { st.loc = c }
func (st *observedState) entries() int              { return st.m.NNZ() }

// normY returns ‖Π_Φ Y‖_F.
func (st *observedState) normY() float64 { return st.ynorm }

// trial sets e = Π_Φ(Y − UVᵀ) and returns ½ of its sum of squares outside
// the support of the current S_t, summed entry by entry in CSR order.
func (st *observedState) trial(u, v blas64.General) (float64, error) {
	st.plan.Residual(st.e, u, v, st.q.workers)
	st.trialU, st.trialV = u.Data, v.Data
	return 0.5 * st.outsideSS(), nil
}

// outsideSS returns the sum of squares of e outside the support of S_t,
// entry by entry in CSR order.
func (st *observedState) outsideSS() float64 {
	ss := 0.0
	for k, x := range st.e {
		if !st.keep[k] {
			ss += x * x
		}
	}
	return ss
}

func newObservedState(m *observed.Matrix, q *gdParams) *observedState {
	st := &observedState{q: q, m: m, plan: observed.NewPlan(m), e: make([]float64, m.NNZ()),
		keep: make([]bool, m.NNZ())}
	if q.alpha > 0 {
		st.sel = sparsify.NewObserved(m, q.workers)
	}
	ss := 0.0
	for _, x := range m.Val {
		ss += x * x
	}
	st.ynorm = math.Sqrt(ss)
	return st
}

// initialize is Algorithm 2 lines 1–3: S_init = T_{2pα}(Π_Φ(Y − c·11ᵀ))
// with c from initLocation (c ≈ 0 on the paper's model),
// [L, Σ, R] = SVD_r((1/p)(Y − S_init)), U0 = LΣ^½, V0 = RΣ^½.
func (st *observedState) initialize(ctx context.Context) (u, v blas64.General, sigma1 float64, err error) {
	q := st.q
	val := st.m.Val
	c := initLocation(q.initTrims(), len(val), func(k int) float64 { return val[k] })
	st.loc = c
	for k, x := range val {
		st.e[k] = x - c
	}
	if err := st.mark(q.kRow0, q.kCol0, q.frac0); err != nil {
		return u, v, 0, err
	}
	// Π_Φ(Y − S_init): S_init holds the entries of Y − c it keeps, which
	// leaves c in their place.
	for k, kept := range st.keep {
		if kept {
			st.e[k] = c
		} else {
			st.e[k] = val[k]
		}
	}
	op := observed.NewOperator(st.plan, st.e, 1/q.p, q.workers)
	sv, err := tsvd.Compute(ctx, op, tsvd.Options{Rank: q.rank, Tol: q.svdTol, Seed: q.seed, Workers: q.workers})
	if err != nil {
		return u, v, 0, err
	}
	return svdFactors(sv, q)
}

// mark sets keep to the support of T(e), with counts kRow, kCol, or
// with per-line counts for the fraction frac > 0 (GD.PerLine).
func (st *observedState) mark(kRow, kCol int, frac float64) error {
	switch {
	case st.sel != nil && frac > 0:
		return st.sel.ApplyFraction(st.e, frac, st.keep)
	case st.sel == nil || kRow == 0 || kCol == 0:
		clear(st.keep)
		return nil
	}
	return st.sel.Apply(st.e, kRow, kCol, st.keep)
}

// huberReport is the multiple of τ_t beyond which GD.Huber reports a
// residual in S_t. Entries between τ_t and 3τ_t are only down-weighted:
// with the sound Huber = 3, a Gaussian residual passes 3τ_t (6σ) with
// probability 2e-9, while τ_t itself (2σ) would report 5% of the clean
// entries, or of the rounding errors of an exact fit.
const huberReport = 3

// markHuber sets τ_t = GD.Huber × the median of |e| over up to
// initLocationSample residuals at an even stride (stridedMedian), no less
// than 1e-14 of the rms of Π_Φ Y, and keep to the entries with
// |e| > huberReport·τ_t (S_t as reported; the weights are the update's,
// see alsUpdate). It returns the sum of squares of e outside keep, in
// CSR order like outsideSS: the residual of the stopping rule, from the
// same pass.
func (st *observedState) markHuber() float64 {
	n := len(st.e)
	if n == 0 {
		st.tau = 0
		return 0
	}
	if st.sample == nil {
		st.sample = make([]float64, min(n, initLocationSample))
	}
	med := stridedMedian(st.sample, n, func(k int) float64 { return math.Abs(st.e[k]) })
	st.tau = math.Max(st.q.huber*med, 1e-14*st.ynorm/math.Sqrt(float64(n)))
	cut, ss := huberReport*st.tau, 0.0
	for k, x := range st.e {
		out := math.Abs(x) > cut
		st.keep[k] = out
		if !out {
			ss += x * x
		}
	}
	return ss
}

// evaluate is Algorithm 2 line 6, the residual on Φ for the stopping rule,
// and gu = E·V, gv = Eᵀ·U over Φ, formed in the same pass that zeroes
// S_t's support (the gradients of eq. (loss_partial) are −gu/p, −gv/p).
func (st *observedState) evaluate(u, v, gu, gv blas64.General) (float64, error) {
	q := st.q
	if !sameData(st.trialU, u.Data) || !sameData(st.trialV, v.Data) {
		st.plan.Residual(st.e, u, v, q.workers)
	}
	st.trialU, st.trialV = nil, nil
	st.u, st.v = u, v
	if q.huber > 0 { // UpdateALS only: no gradients
		return math.Sqrt(st.markHuber()) / st.ynorm, nil
	}
	if err := st.mark(q.kRow, q.kCol, q.frac); err != nil {
		return 0, err
	}
	if q.als { // the update reads Φ itself, not the gradients
		return math.Sqrt(st.outsideSS()) / st.ynorm, nil
	}
	ss := st.plan.ZeroMulBothTiled(gu, gv, st.e, st.keep, u, v, q.workers)
	return math.Sqrt(ss) / st.ynorm, nil
}

// sparse rebuilds S_t = T(Π_Φ(Y − UVᵀ)) from the support and the factors
// of the last residual call.
func (st *observedState) sparse() *rpca.Sparse {
	m := st.m
	n := 0
	for _, kept := range st.keep {
		if kept {
			n++
		}
	}
	// Sized exactly: at d = 1e6 growing by appends left about a gigabyte
	// of garbage at the end of the run, the peak of its memory.
	out := &rpca.Sparse{Rows: m.Rows, Cols: m.Cols, RowPtr: make([]int, m.Rows+1),
		ColIdx: make([]int32, 0, n), Val: make([]float64, 0, n)}
	r := st.u.Cols
	for i := 0; i < m.Rows; i++ {
		ui := st.u.Data[i*st.u.Stride : i*st.u.Stride+r]
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			if !st.keep[k] {
				continue
			}
			j := int(m.ColIdx[k])
			vj := st.v.Data[j*st.v.Stride : j*st.v.Stride+r]
			s := 0.0
			for c, x := range ui {
				s += x * vj[c]
			}
			out.ColIdx = append(out.ColIdx, int32(j))
			out.Val = append(out.Val, m.Val[k]-s)
		}
		out.RowPtr[i+1] = len(out.Val)
	}
	return out
}
