package gdcore

import (
	"fmt"
	"github.com/rpca-gd/rpca"
	"math"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// alsUpdate is UpdateALS: with S_t's support Ω_t fixed by the last
// evaluation, each row of U, then (with the new U) each row of V, is the
// exact minimiser of the fixed-support loss
//
//	½ Σ_{(i,j) ∈ Φ∖Ω_t} (y_ij − u_iᵀv_j)² + (λ/2)(‖U‖²_F + ‖V‖²_F),
//
// u_i = (Σ_j v_j v_jᵀ + λI)⁻¹ Σ_j y_ij v_j over row i's entries outside Ω_t
// (and v_j likewise over column j's): alternating least squares, as
// recommender systems fit factor models, with the paper's sparse estimator
// setting the suspected outliers aside. Each half-step lowers the loss,
// so no step size is needed and none can diverge. The columns are read
// through a map from column-order slots to CSR positions: each sweep
// gathers S_t's support and Φ's values into column order, the values into
// the residual buffer, which is not read again before the next residual
// pass (5 bytes per observed entry of its own).
//
// With GD.Biases the factors are U = [U₀ b 1] and V = [V₀ 1 c], so that
// UVᵀ = U₀V₀ᵀ + b1ᵀ + 1cᵀ: the row half-step solves for [u₀ᵢ bᵢ] with
// the last column of U held at 1 (the target is y_ij − c_j), and the
// column half-step for [v₀ⱼ cⱼ] with the column r of V held at 1 (the
// target is y_ij − b_i). The biases carry the same ridge λ.
type alsUpdate struct {
	st    *observedState
	ridge float64
	// fixU, fixV are the columns of U and V held at 1 (GD.Biases), or −1.
	fixU, fixV int
	pos        []int32 // CSR position of each CSC slot
	colKeep    []bool  // S_t's support in CSC order
	// rowChunks and colChunks cut the rows and the columns into chunks of
	// about alsChunk entries, the workers' unit of work.
	rowChunks, colChunks []int
	work                 []alsWork        // per worker
	im                   *implicitFactors // GD.Implicit, or nil
}

// alsWork is one worker's system (r×r, or (r+1)×(r+1) with GD.Biases),
// its solution and gather buffers.
type alsWork struct {
	g, b, z []float64
	// rows holds alsBlock gathered entries as rows [x, y] (regressors,
	// then the target) of stride w = kernels.GramStride(len(x)+1), padded
	// with zeros. gw (w×w) is their Gram matrix and ys the targets of a
	// short line.
	rows, gw, ys []float64
	w            int
	// With GD.Huber (tau > 0), cur is the line's current row of the
	// factor being solved for, whose residuals set the weights.
	cur []float64
	tau float64
	// shift is the line's row of GD.Implicit's Z (see solveLines), or nil.
	shift []float64
}

// alsBlock is the number of entries gathered at a time; alsChunk the
// number of entries (plus lines) in a chunk of lines.
const (
	alsBlock = 128
	alsChunk = 1 << 14
)

// alsChunks cuts the lines of ptr (len n+1) into chunks of about
// alsChunk entries plus lines.
func alsChunks(ptr []int) []int {
	n := len(ptr) - 1
	return observed.BalanceLines(ptr, max(1, min(n, (ptr[n]+n)/alsChunk)))
}

func newALSUpdate(st *observedState, q *gdParams) *alsUpdate {
	m := st.m
	a := &alsUpdate{st: st, ridge: q.ridge, pos: make([]int32, m.NNZ()),
		colKeep: make([]bool, m.NNZ())}
	// Each worker copies a block of rows; its first slot in column j is
	// ColPtr[j] plus the entries of column j in the blocks before it.
	parts := observed.BalanceLines(m.RowPtr, q.workers)
	next := make([][]int32, q.workers)
	kernels.ForEach(q.workers, q.workers, func(w int) {
		c := make([]int32, m.Cols)
		for _, j := range m.ColIdx[m.RowPtr[parts[w]]:m.RowPtr[parts[w+1]]] {
			c[j]++
		}
		next[w] = c
	})
	for j := range m.Cols {
		s := int32(m.ColPtr[j])
		for w := range next {
			n := next[w][j]
			next[w][j] = s
			s += n
		}
	}
	kernels.ForEach(q.workers, q.workers, func(w int) {
		nw := next[w]
		for k := m.RowPtr[parts[w]]; k < m.RowPtr[parts[w+1]]; k++ {
			j := m.ColIdx[k]
			s := nw[j]
			nw[j]++
			a.pos[s] = int32(k)
		}
	})
	a.rowChunks, a.colChunks = alsChunks(m.RowPtr), alsChunks(m.ColPtr)
	a.fixU, a.fixV = -1, -1
	free := q.rank // unknowns per line
	if q.biases {
		a.fixU, a.fixV = q.rank+1, q.rank
		free = q.rank + 1
	}
	if q.implicit > 0 {
		width := q.rank // of U: [U₀], or [U₀ b 1] with GD.Biases
		if q.biases {
			width += 2
		}
		a.im = newImplicitFactors(m, q.rank, width, q.implicit, q.workers)
	}
	a.work = make([]alsWork, q.workers)
	for w := range a.work {
		stride := kernels.GramStride(free + 1) // rows [x, y], padded for Gram's vector kernel
		a.work[w] = alsWork{g: make([]float64, free*free), b: make([]float64, free), z: make([]float64, free),
			rows: make([]float64, alsBlock*stride), gw: make([]float64, stride*stride), ys: make([]float64, alsBlock), w: stride}
	}
	return a
}

// step ignores the gradients and t: the update is an exact minimisation.
// With GD.Huber it is one reweighted least-squares fit per line instead:
// entries are not set aside, and the weight min(1, τ_t/|r|) of an entry
// comes from its residual r at the line's current row and the other
// factor's newest (U_t's rows against V_t, then V_t's columns against
// U_{t+1}), so that each half-step minimises a quadratic that majorises
// the Huber loss at the current point and touches it there.
func (a *alsUpdate) step(un, vn, u, v, _, _ blas64.General, _ float64) error {
	a.ridge *= a.st.q.ridgeDecay // GD.RidgeDecay: λ·ρᵗ in sweep t
	m, keep := a.st.m, a.st.keep
	tau := 0.0
	curU, curV := blas64.General{}, blas64.General{}
	if a.st.q.huber > 0 {
		tau, keep, curU, curV = a.st.tau, nil, u, v
	}
	var shift blas64.General
	if a.im != nil {
		shift = a.im.z
	}
	if l := a.solveLines(un, v, a.fixU, m.RowPtr, a.rowChunks, m.ColIdx, m.Val, keep, curU, tau, shift); l >= 0 {
		return fmt.Errorf("%w: the least-squares system of row %d is not positive definite", rpca.ErrDiverged, l)
	}
	if a.im != nil {
		a.im.step(un, v, keep, tau)
	}
	// S_t's support and Φ's values in column order, gathered in one tight
	// loop (whose cache misses overlap) rather than one miss per entry of
	// the pass. The values go into the residual buffer: evaluate has read
	// it, and the next evaluate recomputes it.
	colVal := a.st.e
	a.st.trialU, a.st.trialV = nil, nil
	kernels.ParallelFor(len(a.pos), len(a.work), 1<<16, func(lo, hi int) {
		for s, k := range a.pos[lo:hi] {
			colVal[lo+s] = m.Val[k]
		}
		if keep == nil {
			return
		}
		for s, k := range a.pos[lo:hi] {
			a.colKeep[lo+s] = keep[k]
		}
	})
	colKeep := a.colKeep
	if keep == nil {
		colKeep = nil
	}
	if l := a.solveLines(vn, un, a.fixV, m.ColPtr, a.colChunks, m.RowIdx, colVal, colKeep, curV, tau, blas64.General{}); l >= 0 {
		return fmt.Errorf("%w: the least-squares system of column %d is not positive definite", rpca.ErrDiverged, l)
	}
	return nil
}

// solveLines sets each row l of dst to the ridge least-squares fit of the
// line's entries outside Ω_t against the rows of x (out nil: all of them,
// with tau > 0 weighted by their residuals at row l of cur; see step). Entry k of line l
// (ptr[l] ≤ k < ptr[l+1]) has value val[k], pairs with row idx[k] of x,
// and is in Ω_t if out[k]. The workers take the chunks of lines in turn;
// each line is solved on its own, so the result does not depend on them.
// A column fix ≥ 0 of dst is held at 1: it is left out of the unknowns,
// and its partner column of x out of the regressors and (subtracted)
// into the targets. With shift (GD.Implicit's Z; Data nil otherwise) the
// line solves for its row minus row l of shift, the targets less the
// regressors times that row, and adds the row back: the ridge pulls the
// line toward shift's row instead of 0. It returns the first line whose
// system failed (see solveRidge), or −1.
func (a *alsUpdate) solveLines(dst, x blas64.General, fix int, ptr, chunks []int, idx []int32, val []float64, out []bool, cur blas64.General, tau float64, shift blas64.General) int {
	r := dst.Cols
	var next atomic.Int64
	failed := make([]int, len(a.work))
	kernels.ForEach(len(a.work), len(a.work), func(w int) {
		ws := &a.work[w]
		failed[w] = -1
		for c := int(next.Add(1) - 1); c+1 < len(chunks); c = int(next.Add(1) - 1) {
			for l := chunks[c]; l < chunks[c+1]; l++ {
				var o []bool
				if out != nil {
					o = out[ptr[l]:ptr[l+1]]
				}
				ws.tau = tau
				if tau > 0 {
					ws.cur = cur.Data[l*cur.Stride : l*cur.Stride+cur.Cols]
				}
				ws.shift = nil
				if shift.Data != nil {
					ws.shift = shift.Data[l*shift.Stride : l*shift.Stride+shift.Cols]
				}
				if !ws.solveLine(x, fix, idx[ptr[l]:ptr[l+1]], val[ptr[l]:ptr[l+1]], o, a.ridge) && failed[w] < 0 {
					failed[w] = l
				}
				row := dst.Data[l*dst.Stride : l*dst.Stride+r]
				if fix < 0 {
					copy(row, ws.z)
				} else {
					copy(row[:fix], ws.z[:fix])
					row[fix] = 1
					copy(row[fix+1:], ws.z[fix:])
				}
				for c, z := range ws.shift { // 0 in the held column
					row[c] += z
				}
			}
		}
	})
	first := -1
	for _, l := range failed {
		if l >= 0 && (first < 0 || l < first) {
			first = l
		}
	}
	return first
}

// solveLine sets z to the ridge least-squares fit of one line (see
// solveLines) and reports whether its system was definite. A line with
// n entries outside Ω_t, fewer than the m regressors, is solved in the
// n×n form z = Xᵀ(XXᵀ + sI)⁻¹y, the same solution as (XᵀX + sI)⁻¹Xᵀy
// for any shift s > 0 with the same s (tr XXᵀ = tr XᵀX), at n²m + n³/3
// operations instead of nm² + m³/3: most items of real ratings have a
// handful of them.
func (ws *alsWork) solveLine(x blas64.General, fix int, idx []int32, val []float64, out []bool, lambda float64) bool {
	m := len(ws.z)
	n := len(idx)
	if out != nil {
		n = 0
		for _, o := range out {
			if !o {
				n++
			}
		}
	}
	if n >= m || n > alsBlock {
		ws.accumulate(x, fix, idx, val, out)
		return solveRidge(ws.z, ws.g, ws.b, lambda)
	}
	ws.gather(x, fix, idx, val, out, 0)
	// K = XXᵀ, lower triangle, n×n, in g (m×m ≥ n×n).
	tr := 0.0
	st := ws.w
	for a := range n {
		xa := ws.rows[a*st : a*st+m]
		for b := 0; b <= a; b++ {
			ws.g[a*n+b] = kernels.Dot(xa, ws.rows[b*st:b*st+m])
		}
		tr += ws.g[a*n+a]
		ws.ys[a] = ws.rows[a*st+m]
	}
	clear(ws.z)
	shift := lambda + 1e-10*tr/float64(m) // solveRidge's shift
	if shift == 0 {
		return true
	}
	for a := range n {
		ws.g[a*n+a] += shift
	}
	w := ws.b[:n]
	if !kernels.CholeskySolve(ws.g, n, ws.ys[:n], w, 0) {
		return false
	}
	for a, wa := range w {
		for c, xc := range ws.rows[a*st : a*st+m] {
			ws.z[c] += wa * xc
		}
	}
	return true
}

// gather copies the regressors and targets of the line's entries outside
// Ω_t from entry k on into rows and ys, up to alsBlock of them, and
// returns their number and the entry after the last one read. With
// fix ≥ 0, column fix of x is left out of the regressors and subtracted
// from the target.
func (ws *alsWork) gather(x blas64.General, fix int, idx []int32, val []float64, out []bool, k int) (n, next int) {
	r := len(ws.z)
	// The rows of the block, asked for before any is copied: their cache
	// misses overlap, where each copy would wait on its own.
	kernels.PrefetchRows(x.Data, idx[k:min(len(idx), k+alsBlock)], x.Stride, x.Cols)
	for ; k < len(idx) && n < alsBlock; k++ {
		if out != nil && out[k] {
			continue
		}
		j := int(idx[k])
		xj := x.Data[j*x.Stride : j*x.Stride+x.Cols]
		row := ws.rows[n*ws.w : (n+1)*ws.w]
		y := val[k]
		if fix >= 0 {
			copy(row[:fix], xj[:fix])
			copy(row[fix:r], xj[fix+1:])
			y -= xj[fix]
		} else {
			copy(row[:r], xj)
		}
		if ws.shift != nil {
			y -= kernels.Dot(xj, ws.shift)
		}
		row[r] = y // and row[r+1:], a pad, stays 0
		if ws.tau > 0 {
			ws.weigh(row[:r+1], val[k], xj)
		}
		n++
	}
	return n, k
}

// weigh scales a gathered row [x, y] by √w, w = min(1, τ/|y − xᵀc|)
// with c the line's current row (ws.cur): the Huber weight of the entry
// (GD.Huber). A held column of x pairs with cur's 1 there.
func (ws *alsWork) weigh(row []float64, y float64, x []float64) {
	res := y - kernels.Dot(x, ws.cur)
	if a := math.Abs(res); a > ws.tau {
		s := math.Sqrt(ws.tau / a)
		for c := range row {
			row[c] *= s
		}
	}
}

// accumulate sets g to the lower triangle of XᵀX and b to Xᵀy for the
// rows X of x named by the line's entries outside Ω_t and their values y.
// With fix ≥ 0, column fix of x is left out of X and subtracted from y.
// It gathers the rows [x, y] of a block of entries first (the loads of
// one block are independent, so their cache misses overlap), then adds
// their Gram matrix (kernels.Gram), whose last rows hold Xᵀy.
func (ws *alsWork) accumulate(x blas64.General, fix int, idx []int32, val []float64, out []bool) {
	r, w := len(ws.z), ws.w // regressors: x.Cols, or x.Cols − 1 with fix
	clear(ws.gw)
	for k := 0; k < len(idx); {
		var n int
		n, k = ws.gather(x, fix, idx, val, out, k)
		kernels.Gram(ws.gw, ws.rows[:n*w], w)
	}
	for a := range r {
		copy(ws.g[a*r:a*r+a+1], ws.gw[a*w:a*w+a+1])
		ws.b[a] = ws.gw[r*w+a]
	}
}

// solveRidge sets z = (G + (λ+ε)I)⁻¹ b for the symmetric r×r G given by
// its lower triangle (row-major), overwriting it, with ε = 1e-10 of G's
// mean diagonal: enough to make the system definite for a line with
// fewer than r entries and λ = 0 (it then picks the fit of least norm up
// to that relative accuracy), too little to move any other fit beyond
// rounding. A line without entries, with λ = 0, gets z = 0. It reports
// false if the system is not definite even so (non-finite data).
func solveRidge(z, g, b []float64, lambda float64) bool {
	r := len(z)
	tr := 0.0
	for p := 0; p < r; p++ {
		tr += g[p*r+p]
	}
	shift := lambda + 1e-10*tr/float64(r)
	if shift == 0 {
		clear(z)
		return true
	}
	for p := 0; p < r; p++ {
		g[p*r+p] += shift
	}
	return kernels.CholeskySolve(g, r, b, z, 0)
}

func (a *alsUpdate) penalty(u, v blas64.General) float64 { return ridgePenalty(a.ridge, u, v) }

func (a *alsUpdate) predicted(_, _, _, _, _, _ blas64.General) float64 { return 0 }

// LineSolver fits one line of an ALS half-sweep at a time, as the sweeps
// do (alsUpdate.solveLines, without biases, Huber weights or implicit
// factors), for a store that runs the sweeps on its own data.
type LineSolver struct{ ws alsWork }

// NewLineSolver returns a solver for lines of rank r.
func NewLineSolver(r int) *LineSolver {
	stride := kernels.GramStride(r + 1)
	return &LineSolver{ws: alsWork{g: make([]float64, r*r), b: make([]float64, r), z: make([]float64, r), rows: make([]float64, alsBlock*stride), gw: make([]float64, stride*stride), ys: make([]float64, alsBlock), w: stride}}
}

// Solve sets z (length r) to the ridge least-squares fit of a line whose
// entry k has value val[k] and pairs with row idx[k] of x, leaving out
// the entries with out[k] (out nil: none), and reports whether its system
// was definite (see solveRidge).
func (s *LineSolver) Solve(z []float64, x blas64.General, idx []int32, val []float64, out []bool, ridge float64) bool {
	ok := s.ws.solveLine(x, -1, idx, val, out, ridge)
	copy(z, s.ws.z)
	return ok
}
