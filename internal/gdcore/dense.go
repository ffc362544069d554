package gdcore

import (
	"context"
	"github.com/rpca-gd/rpca"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
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
	loc   float64   // c of initialize
	rowSS []float64 // per-row sums of squares of zeroSparse, reused
	// trialU, trialV are the factors whose residual Y − UVᵀ st.r holds
	// after a trial (nil otherwise).
	trialU, trialV []float64
}

// initLocation returns c of initialize.
func (st *denseState) initLocation() float64 { return st.loc }

func (st *denseState) setInitLocation(c float64) { st.loc = c }
func (st *denseState) entries() int              { return st.y.Rows * st.y.Cols }

// normY returns ‖Y‖_F.
func (st *denseState) normY() float64 { return st.ynorm }

// trial sets r = Y − UVᵀ and returns ½ of its sum of squares outside the
// support of the current S_t, summed per row (skipping S_t's entries, no
// cancellation) and then over rows in order.
func (st *denseState) trial(u, v blas64.General) (float64, error) {
	kernels.SubMulABt(st.r, st.y, u, v, st.q.workers)
	s, r, parts := &st.s, st.r, st.rowSS
	kernels.ParallelFor(r.Rows, st.q.workers, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ri := r.Data[i*r.Stride : i*r.Stride+r.Cols]
			k, end := s.RowPtr[i], s.RowPtr[i+1]
			ss := 0.0
			for j, x := range ri {
				if k < end && int(s.ColIdx[k]) == j {
					k++
					continue
				}
				ss += x * x
			}
			parts[i] = ss
		}
	})
	t := 0.0
	for _, x := range parts {
		t += x
	}
	st.trialU, st.trialV = u.Data, v.Data
	return 0.5 * t, nil
}

// sameData reports whether a and b are the same slice.
func sameData(a, b []float64) bool { return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0] }

func newDenseState(y blas64.General, q *gdParams) *denseState {
	st := &denseState{q: q, y: y, r: kernels.NewGeneral(y.Rows, y.Cols), rowSS: make([]float64, y.Rows)}
	if q.alpha > 0 {
		st.sel = sparsify.NewDense(y.Rows, y.Cols, q.workers)
		kRow, kCol := min(max(q.kRow0, q.kRow), y.Cols), min(max(q.kCol0, q.kCol), y.Rows)
		st.sel.Reserve(kRow, kCol)
		// S_t holds at most min(kRow·d1, kCol·d2) entries: room for that
		// from the start, so that T never reallocates S while the old
		// arrays are still waiting for the garbage collector.
		n := min(kRow*y.Rows, kCol*y.Cols)
		st.s.ColIdx, st.s.Val = make([]int32, 0, n), make([]float64, 0, n)
	}
	st.ynorm = math.Sqrt(kernels.SumSq(y, q.workers))
	return st
}

// initialize is Algorithm 1 lines 1–3: S_init = T_α(Y − c·11ᵀ) with c
// from initLocation (c ≈ 0 on the paper's model), [L, Σ, R] =
// SVD_r(Y − S_init), U0 = LΣ^½, V0 = RΣ^½.
func (st *denseState) initialize(ctx context.Context) (u, v blas64.General, sigma1 float64, err error) {
	q := st.q
	y, r := st.y, st.r
	c := initLocation(q.initTrims(), y.Rows*y.Cols,
		func(k int) float64 { return y.Data[(k/y.Cols)*y.Stride+k%y.Cols] })
	st.loc = c
	kernels.ParallelFor(y.Rows, q.workers, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ri, yi := r.Data[i*r.Stride:i*r.Stride+r.Cols], y.Data[i*y.Stride:i*y.Stride+y.Cols]
			for j, x := range yi {
				ri[j] = x - c
			}
		}
	})
	if err := st.apply(r, q.kRow0, q.kCol0); err != nil {
		return u, v, 0, err
	}
	// Y − S_init: S_init holds exactly the entries of Y − c it keeps, which
	// leaves c in their place.
	sp := &st.s
	kernels.ParallelFor(r.Rows, q.workers, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ri := r.Data[i*r.Stride : i*r.Stride+r.Cols]
			copy(ri, y.Data[i*y.Stride:i*y.Stride+y.Cols])
			for k := sp.RowPtr[i]; k < sp.RowPtr[i+1]; k++ {
				ri[sp.ColIdx[k]] = c
			}
		}
	})
	sv, err := tsvd.Compute(ctx, tsvd.Dense{A: st.r, Workers: q.workers},
		tsvd.Options{Rank: q.rank, Tol: q.svdTol, Seed: q.seed, Workers: q.workers})
	if err != nil {
		return u, v, 0, err
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

// zeroSparse sets the entries of r on the support of s to zero and
// returns the sum of squares of what remains, ‖R − S‖²_F, in one parallel
// pass over the rows.
func (st *denseState) zeroSparse() float64 {
	s, r := &st.s, st.r
	parts := st.rowSS
	kernels.ParallelFor(r.Rows, st.q.workers, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ri := r.Data[i*r.Stride : i*r.Stride+r.Cols]
			for k := s.RowPtr[i]; k < s.RowPtr[i+1]; k++ {
				ri[s.ColIdx[k]] = 0
			}
			ss := 0.0
			for _, x := range ri {
				ss += x * x
			}
			parts[i] = ss
		}
	})
	t := 0.0
	for _, x := range parts {
		t += x
	}
	return t
}

// evaluate is Algorithm 1 line 6, the residual for the stopping rule, and
// gu = E·V, gv = Eᵀ·U in one pass over E (the gradients of eq. (loss) are
// ∇_Uℒ = −gu, ∇_Vℒ = −gv).
func (st *denseState) evaluate(u, v, gu, gv blas64.General) (float64, error) {
	q := st.q
	if !sameData(st.trialU, u.Data) || !sameData(st.trialV, v.Data) {
		kernels.SubMulABt(st.r, st.y, u, v, q.workers)
	}
	st.trialU, st.trialV = nil, nil
	if err := st.apply(st.r, q.kRow, q.kCol); err != nil {
		return 0, err
	}
	res := math.Sqrt(st.zeroSparse()) / st.ynorm
	kernels.MulAXAtY(gu, gv, st.r, v, u, q.workers)
	return res, nil
}

// sparse returns S_t, handing over the state's storage (a copy would
// raise the peak memory by the size of S at the very end of the run); the
// state must not be used afterwards.
func (st *denseState) sparse() *rpca.Sparse {
	s := st.s
	st.s = sparsify.Sparse{}
	return &rpca.Sparse{Rows: s.Rows, Cols: s.Cols, RowPtr: s.RowPtr, ColIdx: s.ColIdx, Val: s.Val}
}
