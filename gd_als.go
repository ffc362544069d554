package rpca

import (
	"fmt"
	"math"

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
// through a column-order copy of Φ's values and a map to their CSR
// positions, and S_t's support in that order (13 bytes per observed
// entry).
type alsUpdate struct {
	st      *observedState
	ridge   float64
	pos     []int32   // CSR position of each CSC slot
	colVal  []float64 // observed values in CSC order
	colKeep []bool    // S_t's support in CSC order
	work    []alsWork // per worker
}

// alsWork is one worker's r×r system and gather buffers.
type alsWork struct {
	g, b     []float64
	rows, ys []float64 // alsBlock rows of x and their values
}

// alsBlock is the number of entries gathered at a time.
const alsBlock = 128

func newALSUpdate(st *observedState, q *gdParams) *alsUpdate {
	m := st.m
	a := &alsUpdate{st: st, ridge: q.ridge, pos: make([]int32, m.NNZ()), colVal: make([]float64, m.NNZ()),
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
			a.colVal[s] = m.Val[k]
		}
	})
	a.work = make([]alsWork, q.workers)
	for w := range a.work {
		a.work[w] = alsWork{g: make([]float64, q.rank*q.rank), b: make([]float64, q.rank),
			rows: make([]float64, alsBlock*q.rank), ys: make([]float64, alsBlock)}
	}
	return a
}

// step ignores the gradients and t: the update is an exact minimisation.
func (a *alsUpdate) step(un, vn, u, v, _, _ blas64.General, _ float64) error {
	m, keep := a.st.m, a.st.keep
	if l := a.solveLines(un, v, m.RowPtr, m.ColIdx, m.Val, keep); l >= 0 {
		return fmt.Errorf("%w: the least-squares system of row %d is not positive definite", ErrDiverged, l)
	}
	// S_t's support in column order, gathered in one tight loop (whose
	// cache misses overlap) rather than one miss per entry of the pass.
	kernels.ParallelFor(len(a.pos), len(a.work), 1<<16, func(lo, hi int) {
		for s, k := range a.pos[lo:hi] {
			a.colKeep[lo+s] = keep[k]
		}
	})
	if l := a.solveLines(vn, un, m.ColPtr, m.RowIdx, a.colVal, a.colKeep); l >= 0 {
		return fmt.Errorf("%w: the least-squares system of column %d is not positive definite", ErrDiverged, l)
	}
	return nil
}

// solveLines sets each row l of dst to the ridge least-squares fit of the
// line's entries outside Ω_t against the rows of x. Entry k of line l
// (ptr[l] ≤ k < ptr[l+1]) has value val[k], pairs with row idx[k] of x,
// and is in Ω_t if out[k]. The lines are split into fixed chunks, so the
// result does not depend on the workers. It returns the first line whose
// system failed (see solveRidge), or −1.
func (a *alsUpdate) solveLines(dst, x blas64.General, ptr []int, idx []int32, val []float64, out []bool) int {
	r := dst.Cols
	lines := len(ptr) - 1
	chunks := observed.BalanceLines(ptr, max(1, min(lines, (ptr[lines]+lines)/(1<<14))))
	next := make(chan int, len(chunks))
	for c := 0; c+1 < len(chunks); c++ {
		next <- c
	}
	close(next)
	failed := make([]int, len(a.work))
	kernels.ForEach(len(a.work), len(a.work), func(w int) {
		g, b := a.work[w].g, a.work[w].b
		rows, ys := a.work[w].rows, a.work[w].ys
		failed[w] = -1
		for c := range next {
			for l := chunks[c]; l < chunks[c+1]; l++ {
				clear(g)
				clear(b)
				// Gather the rows of x of a block of entries first (the
				// loads of one block are independent, so their cache
				// misses overlap), then accumulate from the copy.
				for k := ptr[l]; k < ptr[l+1]; {
					n := 0
					for ; k < ptr[l+1] && n < alsBlock; k++ {
						if out[k] {
							continue
						}
						j := int(idx[k])
						if r == 10 { // an array copy, not a call
							*(*[10]float64)(rows[n*10 : n*10+10]) = *(*[10]float64)(x.Data[j*x.Stride : j*x.Stride+10])
						} else {
							copy(rows[n*r:n*r+r], x.Data[j*x.Stride:j*x.Stride+r])
						}
						ys[n] = val[k]
						n++
					}
					t := 0
					if r == 10 {
						for ; t+4 <= n; t += 4 {
							addOuter10x4(g, b, (*[40]float64)(rows[t*10:t*10+40]), (*[4]float64)(ys[t:t+4]))
						}
					}
					for ; t < n; t++ {
						addOuter(g, b, rows[t*r:t*r+r], ys[t])
					}
				}
				if !solveRidge(dst.Data[l*dst.Stride:l*dst.Stride+r], g, b, a.ridge) && failed[w] < 0 {
					failed[w] = l
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

// addOuter adds x·xᵀ to the upper triangle of the r×r g and y·x to b.
func addOuter(g, b, x []float64, y float64) {
	r := len(x)
	for p, xp := range x {
		gp := g[p*r+p : p*r+r]
		for q, xq := range x[p:] {
			gp[q] += xp * xq
		}
		b[p] += y * xp
	}
}

// addOuter10 is addOuter for r = 10, unrolled with x in registers.
func addOuter10(g, b, x []float64, y float64) {
	gg := (*[100]float64)(g)
	bb := (*[10]float64)(b)
	xx := (*[10]float64)(x)
	x0, x1, x2, x3, x4, x5, x6, x7, x8, x9 := xx[0], xx[1], xx[2], xx[3], xx[4], xx[5], xx[6], xx[7], xx[8], xx[9]
	gg[0] += x0 * x0
	gg[1] += x0 * x1
	gg[2] += x0 * x2
	gg[3] += x0 * x3
	gg[4] += x0 * x4
	gg[5] += x0 * x5
	gg[6] += x0 * x6
	gg[7] += x0 * x7
	gg[8] += x0 * x8
	gg[9] += x0 * x9
	gg[11] += x1 * x1
	gg[12] += x1 * x2
	gg[13] += x1 * x3
	gg[14] += x1 * x4
	gg[15] += x1 * x5
	gg[16] += x1 * x6
	gg[17] += x1 * x7
	gg[18] += x1 * x8
	gg[19] += x1 * x9
	gg[22] += x2 * x2
	gg[23] += x2 * x3
	gg[24] += x2 * x4
	gg[25] += x2 * x5
	gg[26] += x2 * x6
	gg[27] += x2 * x7
	gg[28] += x2 * x8
	gg[29] += x2 * x9
	gg[33] += x3 * x3
	gg[34] += x3 * x4
	gg[35] += x3 * x5
	gg[36] += x3 * x6
	gg[37] += x3 * x7
	gg[38] += x3 * x8
	gg[39] += x3 * x9
	gg[44] += x4 * x4
	gg[45] += x4 * x5
	gg[46] += x4 * x6
	gg[47] += x4 * x7
	gg[48] += x4 * x8
	gg[49] += x4 * x9
	gg[55] += x5 * x5
	gg[56] += x5 * x6
	gg[57] += x5 * x7
	gg[58] += x5 * x8
	gg[59] += x5 * x9
	gg[66] += x6 * x6
	gg[67] += x6 * x7
	gg[68] += x6 * x8
	gg[69] += x6 * x9
	gg[77] += x7 * x7
	gg[78] += x7 * x8
	gg[79] += x7 * x9
	gg[88] += x8 * x8
	gg[89] += x8 * x9
	gg[99] += x9 * x9
	bb[0] += y * x0
	bb[1] += y * x1
	bb[2] += y * x2
	bb[3] += y * x3
	bb[4] += y * x4
	bb[5] += y * x5
	bb[6] += y * x6
	bb[7] += y * x7
	bb[8] += y * x8
	bb[9] += y * x9
}

// addOuter10x4 is addOuter10 for the four rows x[0:10], …, x[30:40] with
// values y[0:4], summed before g is touched, so g is read and written
// once for four entries.
func addOuter10x4(g, b []float64, x *[40]float64, y *[4]float64) {
	gg := (*[100]float64)(g)
	bb := (*[10]float64)(b)
	gg[0] += x[0]*x[0] + x[10]*x[10] + x[20]*x[20] + x[30]*x[30]
	gg[1] += x[0]*x[1] + x[10]*x[11] + x[20]*x[21] + x[30]*x[31]
	gg[2] += x[0]*x[2] + x[10]*x[12] + x[20]*x[22] + x[30]*x[32]
	gg[3] += x[0]*x[3] + x[10]*x[13] + x[20]*x[23] + x[30]*x[33]
	gg[4] += x[0]*x[4] + x[10]*x[14] + x[20]*x[24] + x[30]*x[34]
	gg[5] += x[0]*x[5] + x[10]*x[15] + x[20]*x[25] + x[30]*x[35]
	gg[6] += x[0]*x[6] + x[10]*x[16] + x[20]*x[26] + x[30]*x[36]
	gg[7] += x[0]*x[7] + x[10]*x[17] + x[20]*x[27] + x[30]*x[37]
	gg[8] += x[0]*x[8] + x[10]*x[18] + x[20]*x[28] + x[30]*x[38]
	gg[9] += x[0]*x[9] + x[10]*x[19] + x[20]*x[29] + x[30]*x[39]
	gg[11] += x[1]*x[1] + x[11]*x[11] + x[21]*x[21] + x[31]*x[31]
	gg[12] += x[1]*x[2] + x[11]*x[12] + x[21]*x[22] + x[31]*x[32]
	gg[13] += x[1]*x[3] + x[11]*x[13] + x[21]*x[23] + x[31]*x[33]
	gg[14] += x[1]*x[4] + x[11]*x[14] + x[21]*x[24] + x[31]*x[34]
	gg[15] += x[1]*x[5] + x[11]*x[15] + x[21]*x[25] + x[31]*x[35]
	gg[16] += x[1]*x[6] + x[11]*x[16] + x[21]*x[26] + x[31]*x[36]
	gg[17] += x[1]*x[7] + x[11]*x[17] + x[21]*x[27] + x[31]*x[37]
	gg[18] += x[1]*x[8] + x[11]*x[18] + x[21]*x[28] + x[31]*x[38]
	gg[19] += x[1]*x[9] + x[11]*x[19] + x[21]*x[29] + x[31]*x[39]
	gg[22] += x[2]*x[2] + x[12]*x[12] + x[22]*x[22] + x[32]*x[32]
	gg[23] += x[2]*x[3] + x[12]*x[13] + x[22]*x[23] + x[32]*x[33]
	gg[24] += x[2]*x[4] + x[12]*x[14] + x[22]*x[24] + x[32]*x[34]
	gg[25] += x[2]*x[5] + x[12]*x[15] + x[22]*x[25] + x[32]*x[35]
	gg[26] += x[2]*x[6] + x[12]*x[16] + x[22]*x[26] + x[32]*x[36]
	gg[27] += x[2]*x[7] + x[12]*x[17] + x[22]*x[27] + x[32]*x[37]
	gg[28] += x[2]*x[8] + x[12]*x[18] + x[22]*x[28] + x[32]*x[38]
	gg[29] += x[2]*x[9] + x[12]*x[19] + x[22]*x[29] + x[32]*x[39]
	gg[33] += x[3]*x[3] + x[13]*x[13] + x[23]*x[23] + x[33]*x[33]
	gg[34] += x[3]*x[4] + x[13]*x[14] + x[23]*x[24] + x[33]*x[34]
	gg[35] += x[3]*x[5] + x[13]*x[15] + x[23]*x[25] + x[33]*x[35]
	gg[36] += x[3]*x[6] + x[13]*x[16] + x[23]*x[26] + x[33]*x[36]
	gg[37] += x[3]*x[7] + x[13]*x[17] + x[23]*x[27] + x[33]*x[37]
	gg[38] += x[3]*x[8] + x[13]*x[18] + x[23]*x[28] + x[33]*x[38]
	gg[39] += x[3]*x[9] + x[13]*x[19] + x[23]*x[29] + x[33]*x[39]
	gg[44] += x[4]*x[4] + x[14]*x[14] + x[24]*x[24] + x[34]*x[34]
	gg[45] += x[4]*x[5] + x[14]*x[15] + x[24]*x[25] + x[34]*x[35]
	gg[46] += x[4]*x[6] + x[14]*x[16] + x[24]*x[26] + x[34]*x[36]
	gg[47] += x[4]*x[7] + x[14]*x[17] + x[24]*x[27] + x[34]*x[37]
	gg[48] += x[4]*x[8] + x[14]*x[18] + x[24]*x[28] + x[34]*x[38]
	gg[49] += x[4]*x[9] + x[14]*x[19] + x[24]*x[29] + x[34]*x[39]
	gg[55] += x[5]*x[5] + x[15]*x[15] + x[25]*x[25] + x[35]*x[35]
	gg[56] += x[5]*x[6] + x[15]*x[16] + x[25]*x[26] + x[35]*x[36]
	gg[57] += x[5]*x[7] + x[15]*x[17] + x[25]*x[27] + x[35]*x[37]
	gg[58] += x[5]*x[8] + x[15]*x[18] + x[25]*x[28] + x[35]*x[38]
	gg[59] += x[5]*x[9] + x[15]*x[19] + x[25]*x[29] + x[35]*x[39]
	gg[66] += x[6]*x[6] + x[16]*x[16] + x[26]*x[26] + x[36]*x[36]
	gg[67] += x[6]*x[7] + x[16]*x[17] + x[26]*x[27] + x[36]*x[37]
	gg[68] += x[6]*x[8] + x[16]*x[18] + x[26]*x[28] + x[36]*x[38]
	gg[69] += x[6]*x[9] + x[16]*x[19] + x[26]*x[29] + x[36]*x[39]
	gg[77] += x[7]*x[7] + x[17]*x[17] + x[27]*x[27] + x[37]*x[37]
	gg[78] += x[7]*x[8] + x[17]*x[18] + x[27]*x[28] + x[37]*x[38]
	gg[79] += x[7]*x[9] + x[17]*x[19] + x[27]*x[29] + x[37]*x[39]
	gg[88] += x[8]*x[8] + x[18]*x[18] + x[28]*x[28] + x[38]*x[38]
	gg[89] += x[8]*x[9] + x[18]*x[19] + x[28]*x[29] + x[38]*x[39]
	gg[99] += x[9]*x[9] + x[19]*x[19] + x[29]*x[29] + x[39]*x[39]
	bb[0] += y[0]*x[0] + y[1]*x[10] + y[2]*x[20] + y[3]*x[30]
	bb[1] += y[0]*x[1] + y[1]*x[11] + y[2]*x[21] + y[3]*x[31]
	bb[2] += y[0]*x[2] + y[1]*x[12] + y[2]*x[22] + y[3]*x[32]
	bb[3] += y[0]*x[3] + y[1]*x[13] + y[2]*x[23] + y[3]*x[33]
	bb[4] += y[0]*x[4] + y[1]*x[14] + y[2]*x[24] + y[3]*x[34]
	bb[5] += y[0]*x[5] + y[1]*x[15] + y[2]*x[25] + y[3]*x[35]
	bb[6] += y[0]*x[6] + y[1]*x[16] + y[2]*x[26] + y[3]*x[36]
	bb[7] += y[0]*x[7] + y[1]*x[17] + y[2]*x[27] + y[3]*x[37]
	bb[8] += y[0]*x[8] + y[1]*x[18] + y[2]*x[28] + y[3]*x[38]
	bb[9] += y[0]*x[9] + y[1]*x[19] + y[2]*x[29] + y[3]*x[39]
}

// solveRidge sets z = (G + (λ+ε)I)⁻¹ b for the symmetric r×r G given by
// its upper triangle (row-major), by Cholesky factorisation in place, with
// ε = 1e-10 of G's mean diagonal: enough to make the system definite for a
// line with fewer than r entries and λ = 0 (it then picks the fit of least
// norm up to that relative accuracy), too little to move any other fit
// beyond rounding. A line without entries, with λ = 0, gets z = 0. It
// reports false if the system is not definite even so (non-finite data).
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
	if !cholUpper(g, r) {
		return false
	}
	// Solve Rᵀ w = b, then R z = w, with G = RᵀR (R upper, row-major).
	for p := 0; p < r; p++ {
		s := b[p]
		for q := 0; q < p; q++ {
			s -= g[q*r+p] * z[q]
		}
		z[p] = s / g[p*r+p]
	}
	for p := r - 1; p >= 0; p-- {
		s := z[p]
		for q := p + 1; q < r; q++ {
			s -= g[p*r+q] * z[q]
		}
		z[p] = s / g[p*r+p]
	}
	return true
}

// cholUpper factors the symmetric positive definite r×r matrix given by
// the upper triangle of g as RᵀR, R upper triangular, in place; it
// reports false if a pivot is not positive.
func cholUpper(g []float64, r int) bool {
	for p := 0; p < r; p++ {
		d := g[p*r+p]
		for q := 0; q < p; q++ {
			d -= g[q*r+p] * g[q*r+p]
		}
		if !(d > 0) {
			return false
		}
		d = math.Sqrt(d)
		g[p*r+p] = d
		for c := p + 1; c < r; c++ {
			s := g[p*r+c]
			for q := 0; q < p; q++ {
				s -= g[q*r+p] * g[q*r+c]
			}
			g[p*r+c] = s / d
		}
	}
	return true
}

func (a *alsUpdate) penalty(u, v blas64.General) float64 { return ridgePenalty(a.ridge, u, v) }

func (a *alsUpdate) predicted(_, _, _, _, _, _ blas64.General) float64 { return 0 }
