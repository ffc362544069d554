package rpca

import (
	"context"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/sparsify"
	"github.com/rpca-gd/rpca/internal/tsvd"
)

// denseState holds Algorithm 1's data: Y and one d1×d2 work matrix that
// holds R = Y − UVᵀ and then, with the entries of S_t zeroed,
// E = Y − UVᵀ − S_t = −∇_M ℒ.
type denseState struct {
	q     *gdParams
	y     blas64.General
	r     blas64.General
	sel   *sparsify.Dense
	s     sparsify.Sparse
	ynorm float64
}

func newDenseState(y blas64.General, q *gdParams) *denseState {
	st := &denseState{q: q, y: y, r: newGeneral(y.Rows, y.Cols)}
	if q.alpha > 0 {
		st.sel = sparsify.NewDense(y.Rows, y.Cols, q.workers)
	}
	st.ynorm = math.Sqrt(denseSumSq(y, q.workers))
	return st
}

// initialize is Algorithm 1 lines 1–3: S_init = T_α(Y),
// [L, Σ, R] = SVD_r(Y − S_init), U0 = LΣ^½, V0 = RΣ^½.
func (st *denseState) initialize(ctx context.Context) (u, v blas64.General, err error) {
	q := st.q
	copyGeneral(st.r, st.y)
	if err := st.apply(st.y, q.kRow0, q.kCol0); err != nil {
		return u, v, err
	}
	st.zeroSparse() // Y − S_init: S_init holds exactly the entries of Y it keeps
	sv, err := tsvd.Compute(ctx, tsvd.Dense{A: st.r, Workers: q.workers},
		tsvd.Options{Rank: q.rank, Tol: q.svdTol, Seed: q.seed, Workers: q.workers})
	if err != nil {
		return u, v, err
	}
	return svdFactors(sv, q)
}

// apply sets st.s = T(a) with the given counts (empty when α = 0).
func (st *denseState) apply(a blas64.General, kRow, kCol int) error {
	if st.sel == nil || kRow == 0 || kCol == 0 {
		st.s = sparsify.Sparse{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int, a.Rows+1)}
		return nil
	}
	return st.sel.Apply(a, kRow, kCol, &st.s)
}

// zeroSparse sets the entries of r on the support of s to zero.
func (st *denseState) zeroSparse() {
	s, r := &st.s, st.r
	for i := 0; i < s.Rows; i++ {
		ri := r.Data[i*r.Stride:]
		for k := s.RowPtr[i]; k < s.RowPtr[i+1]; k++ {
			ri[s.ColIdx[k]] = 0
		}
	}
}

// residual is Algorithm 1 line 6 plus the residual for the stopping rule.
func (st *denseState) residual(u, v blas64.General) (float64, error) {
	q := st.q
	kernels.SubMulABt(st.r, st.y, u, v, q.workers)
	if err := st.apply(st.r, q.kRow, q.kCol); err != nil {
		return 0, err
	}
	st.zeroSparse()
	return math.Sqrt(denseSumSq(st.r, q.workers)) / st.ynorm, nil
}

// gradients sets gu = E·V, gv = Eᵀ·U in one pass over E; the gradients
// of eq. (loss) are ∇_Uℒ = −gu, ∇_Vℒ = −gv.
func (st *denseState) gradients(gu, gv, u, v blas64.General) {
	kernels.MulAXAtY(gu, gv, st.r, v, u, st.q.workers)
}

func (st *denseState) sparse() *Sparse {
	s := &st.s
	return &Sparse{Rows: s.Rows, Cols: s.Cols, RowPtr: append([]int(nil), s.RowPtr...),
		ColIdx: append([]int32(nil), s.ColIdx...), Val: append([]float64(nil), s.Val...)}
}

func denseSumSq(a blas64.General, workers int) float64 {
	parts := make([]float64, a.Rows)
	kernels.ParallelFor(a.Rows, workers, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s := 0.0
			for _, x := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
				s += x * x
			}
			parts[i] = s
		}
	})
	t := 0.0
	for _, x := range parts {
		t += x
	}
	return t
}

// observedState holds Algorithm 2's data: Φ with the observed values, and
// per-entry work arrays, all of length |Φ|; nothing of size d1×d2.
type observedState struct {
	q     *gdParams
	m     *observed.Matrix
	e     []float64 // Π_Φ(Y − UVᵀ), then with S_t zeroed
	keep  []bool    // support of S_t
	sel   *sparsify.Observed
	ynorm float64
	u, v  blas64.General // factors of the last residual, to rebuild S_t
}

func newObservedState(m *observed.Matrix, q *gdParams) *observedState {
	st := &observedState{q: q, m: m, e: make([]float64, m.NNZ()), keep: make([]bool, m.NNZ())}
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

// initialize is Algorithm 2 lines 1–3: S_init = T_{2pα}(Π_Φ(Y)),
// [L, Σ, R] = SVD_r((1/p)(Y − S_init)), U0 = LΣ^½, V0 = RΣ^½.
func (st *observedState) initialize(ctx context.Context) (u, v blas64.General, err error) {
	q := st.q
	copy(st.e, st.m.Val)
	if err := st.apply(q.kRow0, q.kCol0); err != nil {
		return u, v, err
	}
	op := observed.Operator{M: st.m, Vals: st.e, Scale: 1 / q.p, Workers: q.workers}
	sv, err := tsvd.Compute(ctx, op, tsvd.Options{Rank: q.rank, Tol: q.svdTol, Seed: q.seed, Workers: q.workers})
	if err != nil {
		return u, v, err
	}
	return svdFactors(sv, q)
}

// apply marks T(e) in keep and zeroes those entries of e.
func (st *observedState) apply(kRow, kCol int) error {
	if st.sel == nil || kRow == 0 || kCol == 0 {
		clear(st.keep)
		return nil
	}
	if err := st.sel.Apply(st.e, kRow, kCol, st.keep); err != nil {
		return err
	}
	for k, kept := range st.keep {
		if kept {
			st.e[k] = 0
		}
	}
	return nil
}

// residual is Algorithm 2 line 6 plus the residual on Φ for the stopping rule.
func (st *observedState) residual(u, v blas64.General) (float64, error) {
	q := st.q
	st.m.Residual(st.e, u, v, q.workers)
	if err := st.apply(q.kRow, q.kCol); err != nil {
		return 0, err
	}
	st.u, st.v = u, v
	ss := 0.0
	for _, x := range st.e {
		ss += x * x
	}
	return math.Sqrt(ss) / st.ynorm, nil
}

// gradients sets gu = E·V and gv = Eᵀ·U over Φ; the gradients of
// eq. (loss_partial) are −gu/p and −gv/p.
func (st *observedState) gradients(gu, gv, u, v blas64.General) {
	st.m.MulVals(gu, st.e, v, st.q.workers)
	st.m.MulTransVals(gv, st.e, u, st.q.workers)
}

// sparse rebuilds S_t = T(Π_Φ(Y − UVᵀ)) from the support and the factors
// of the last residual call.
func (st *observedState) sparse() *Sparse {
	m := st.m
	out := &Sparse{Rows: m.Rows, Cols: m.Cols, RowPtr: make([]int, m.Rows+1)}
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
