package observed

import (
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// The kernels below are the per-iteration work of Algorithm 2: every one
// is a single pass over Φ in CSR order with O(r) work per entry. Rank 10
// (the paper's experiments) has unrolled loops that keep the factor row or
// the accumulators in registers; other ranks use loops over blocks of
// eight and four columns.
//
// Products into d1-row outputs (Residual, MulVals) split the rows into
// chunks of about chunkEntries entries that the workers take in turn (so
// that a worker slowed down by other load on the machine does not hold the
// others up); reductions are combined in chunk order, so results depend on
// neither the worker count nor the scheduling. Products into d2-row
// outputs (Eᵀ·X) accumulate into one buffer per worker over static row
// blocks (see byWorkers); their results depend on the worker count.

// chunkEntries is the default number of entries (plus lines) per chunk.
const chunkEntries = 1 << 15

func row(m blas64.General, i int) []float64 { return m.Data[i*m.Stride : i*m.Stride+m.Cols] }

// lineChunks cuts the lines described by ptr (len n+1) into contiguous
// chunks of about size entries plus lines and returns the chunk boundaries.
func lineChunks(ptr []int, size int) []int {
	n := len(ptr) - 1
	return BalanceLines(ptr, max(1, min(n, (ptr[n]+n)/size)))
}

// forChunks calls fn(c, bounds[c], bounds[c+1]) for every chunk c on at
// most workers goroutines, each taking the next chunk not yet taken.
func forChunks(bounds []int, workers int, fn func(c, lo, hi int)) {
	kernels.ForEach(len(bounds)-1, workers, func(c int) { fn(c, bounds[c], bounds[c+1]) })
}

// Plan holds the row chunks and column blocks of m for the kernels, and
// scratch for their reductions. It is not safe for concurrent use.
type Plan struct {
	m        *Matrix
	rowB     []int
	partials []float64

	// ZeroMulBoth's static row blocks, per-worker buffers and sums.
	parts []int
	bufs  [][]float64
	wss   []float64

	// Column tiling of the tiled kernels (see tiling).
	tile      int // target bytes of V per block
	tileCols  []int
	tileStart [][]int32
	tileSS    []float64
	guBufs    [][]float64
}

// NewPlan returns the plan of m.
func NewPlan(m *Matrix) *Plan { return newPlan(m, chunkEntries) }

func newPlan(m *Matrix, size int) *Plan {
	p := &Plan{m: m, rowB: lineChunks(m.RowPtr, size), tile: tileBytes}
	p.partials = make([]float64, len(p.rowB)-1)
	return p
}

func (p *Plan) sum() float64 {
	s := 0.0
	for _, x := range p.partials {
		s += x
	}
	return s
}

// Residual sets e[q] = Val[q] − u_iᵀv_j for every observed entry q = (i, j)
// (the residual Π_Φ(Y − UVᵀ) of Algorithm 2, in O(r·|Φ|)) and returns Σ e[q]².
// u is d1×r, v is d2×r.
func (p *Plan) Residual(e []float64, u, v blas64.General, workers int) float64 {
	m := p.m
	if len(e) != len(m.Val) || u.Rows != m.Rows || v.Rows != m.Cols || u.Cols != v.Cols {
		panic("observed: Residual dimension mismatch")
	}
	forChunks(p.rowB, workers, func(c, lo, hi int) {
		if u.Cols == 10 {
			p.partials[c] = residual10(m, e, u, v, lo, hi)
		} else {
			p.partials[c] = residualAny(m, e, u, v, lo, hi)
		}
	})
	return p.sum()
}

func residualAny(m *Matrix, e []float64, u, v blas64.General, lo, hi int) float64 {
	ss := 0.0
	for i := lo; i < hi; i++ {
		ui := row(u, i)
		kernels.PrefetchRows(v.Data, m.ColIdx[m.RowPtr[i]:m.RowPtr[i+1]], v.Stride, v.Cols)
		for q := m.RowPtr[i]; q < m.RowPtr[i+1]; q++ {
			r := m.Val[q] - kernels.DotPairs(ui, row(v, int(m.ColIdx[q])))
			e[q] = r
			ss += r * r
		}
	}
	return ss
}

func residual10(m *Matrix, e []float64, u, v blas64.General, lo, hi int) float64 {
	ss := 0.0
	vd, vs := v.Data, v.Stride
	for i := lo; i < hi; i++ {
		ui := (*[10]float64)(row(u, i))
		u0, u1, u2, u3, u4, u5, u6, u7, u8, u9 := ui[0], ui[1], ui[2], ui[3], ui[4], ui[5], ui[6], ui[7], ui[8], ui[9]
		qlo, qhi := m.RowPtr[i], m.RowPtr[i+1]
		cols, vals, ei := m.ColIdx[qlo:qhi], m.Val[qlo:qhi], e[qlo:qhi]
		kernels.PrefetchRows(vd, cols, vs, 10)
		for q, j := range cols {
			o := int(j) * vs
			vj := (*[10]float64)(vd[o : o+10])
			s := ((u0*vj[0] + u1*vj[1]) + (u2*vj[2] + u3*vj[3])) +
				((u4*vj[4] + u5*vj[5]) + (u6*vj[6] + u7*vj[7])) + (u8*vj[8] + u9*vj[9])
			r := vals[q] - s
			ei[q] = r
			ss += r * r
		}
	}
	return ss
}

// ZeroMulBoth finishes the residual of Algorithm 2 line 6 once S_t's
// support is known and forms both gradients, in one pass over Φ in CSR
// order: it zeroes e[q] where keep[q] (E = Π_Φ(Y − UVᵀ − S_t)), sets
// gu (d1×r) = E·V and gv (d2×r) = Eᵀ·U, and returns ‖E‖²_F. gv must be
// contiguous (Stride = r).
//
// Eᵀ·U is accumulated row by row of Φ into one d2×r buffer per row block
// (gv itself for the first), summed at the end in block order; the blocks
// depend on the shapes only (byWorkers), so the result depends neither on
// the worker count nor on scheduling. Measured against the alternative of copying E to
// CSC order and a CSC pass, this is 20% faster at d = 2e5 and needs no
// |Φ|-sized CSC copy (docs/performance.md).
func (p *Plan) ZeroMulBoth(gu, gv blas64.General, e []float64, keep []bool, u, v blas64.General, workers int) float64 {
	m := p.m
	r := v.Cols
	if len(e) != len(m.Val) || len(keep) != len(e) || gu.Rows != m.Rows || gv.Rows != m.Cols || v.Rows != m.Cols ||
		u.Rows != m.Rows || gu.Cols != r || gv.Cols != r || u.Cols != r || gv.Stride != r {
		panic("observed: ZeroMulBoth dimension mismatch")
	}
	return p.byWorkers(gv, workers, func(buf []float64, lo, hi int) float64 {
		ss := 0.0
		for q := m.RowPtr[lo]; q < m.RowPtr[hi]; q++ {
			x := e[q]
			if keep[q] {
				x = 0
				e[q] = 0
			}
			ss += x * x
		}
		if r == 10 {
			mulRows10(m, gu, e, v, lo, hi)
			scatterRows10(m, buf, e, u, lo, hi)
		} else {
			mulRowsAny(m, gu, e, v, lo, hi)
			scatterRowsAny(m, buf, e, u, lo, hi)
		}
		return ss
	})
}

// MulTransVals sets dst (d2×k, contiguous) = Eᵀ·X, with E as in
// [Plan.MulVals] and X d1×k, in one CSR pass with per-worker buffers as in
// [Plan.ZeroMulBoth].
func (p *Plan) MulTransVals(dst blas64.General, e []float64, x blas64.General, workers int) {
	m := p.m
	if len(e) != len(m.Val) || dst.Rows != m.Cols || x.Rows != m.Rows || dst.Cols != x.Cols || dst.Stride != dst.Cols {
		panic("observed: MulTransVals dimension mismatch")
	}
	if p.tiling(x.Cols) {
		p.mulTransTiled(dst, e, x, workers)
		return
	}
	p.byWorkers(dst, workers, func(buf []float64, lo, hi int) float64 {
		if x.Cols == 10 {
			scatterRows10(m, buf, e, x, lo, hi)
		} else {
			scatterRowsAny(m, buf, e, x, lo, hi)
		}
		return 0
	})
}

// Reductions over Φ that sum partial buffers use a number of blocks that
// depends only on the shapes, never on the worker count, so that results
// are bitwise identical for any number of workers: byWorkers cuts the rows
// into at most rowReduceBlocks blocks (its buffers are d2×k with
// d2·k < 1e6, the untiled case), ZeroMulBothTiled sums E·V over at most
// tileReduceGroups groups of column blocks (d1×r buffers each).
const (
	rowReduceBlocks  = 8
	tileReduceGroups = 4
)

// byWorkers runs fn on row blocks (at most rowReduceBlocks, cut by
// BalanceLines, taken in turn by at most workers goroutines), each with
// its own zeroed d2×k accumulation buffer (dst's storage for the first),
// then sums the buffers into dst in block order and returns the sum of
// fn's results in block order.
func (p *Plan) byWorkers(dst blas64.General, workers int, fn func(buf []float64, lo, hi int) float64) float64 {
	m := p.m
	w := max(1, min(rowReduceBlocks, m.Rows))
	if len(p.parts) != w+1 {
		p.parts = BalanceLines(m.RowPtr, w)
		p.bufs = make([][]float64, w)
		p.wss = make([]float64, w)
	}
	n := m.Cols * dst.Cols
	forChunks(p.parts, workers, func(t, lo, hi int) {
		buf := dst.Data[:n]
		if t > 0 {
			if cap(p.bufs[t]) < n {
				p.bufs[t] = make([]float64, n)
				adviseHuge(p.bufs[t])
			}
			buf = p.bufs[t][:n]
		}
		clear(buf)
		p.wss[t] = fn(buf, lo, hi)
	})
	addWorkerBuffers(dst.Data, p.bufs[:w], m.Cols, dst.Cols, workers)
	ss := 0.0
	for _, x := range p.wss {
		ss += x
	}
	return ss
}

// scatterRows10 adds e[q]·u_i to row j of buf (d2×10, contiguous) for every
// entry q = (i, j) of rows [lo, hi).
func scatterRows10(m *Matrix, buf, e []float64, u blas64.General, lo, hi int) {
	for i := lo; i < hi; i++ {
		ui := (*[10]float64)(row(u, i))
		u0, u1, u2, u3, u4, u5, u6, u7, u8, u9 := ui[0], ui[1], ui[2], ui[3], ui[4], ui[5], ui[6], ui[7], ui[8], ui[9]
		qlo, qhi := m.RowPtr[i], m.RowPtr[i+1]
		el := e[qlo:qhi]
		for q, j := range m.ColIdx[qlo:qhi] {
			x := el[q]
			if x == 0 {
				continue
			}
			o := int(j) * 10
			b := (*[10]float64)(buf[o : o+10])
			b[0] += x * u0
			b[1] += x * u1
			b[2] += x * u2
			b[3] += x * u3
			b[4] += x * u4
			b[5] += x * u5
			b[6] += x * u6
			b[7] += x * u7
			b[8] += x * u8
			b[9] += x * u9
		}
	}
}

func scatterRowsAny(m *Matrix, buf, e []float64, u blas64.General, lo, hi int) {
	r := u.Cols
	for i := lo; i < hi; i++ {
		ui := row(u, i)
		for q := m.RowPtr[i]; q < m.RowPtr[i+1]; q++ {
			x := e[q]
			if x == 0 {
				continue
			}
			o := int(m.ColIdx[q]) * r
			b := buf[o : o+r]
			for k, uk := range ui {
				b[k] += x * uk
			}
		}
	}
}

// BalanceLines cuts the lines described by the pointer array ptr (len
// n+1, CSR RowPtr or CSC ColPtr) into w contiguous blocks holding about
// equal numbers of entries plus lines, and returns the w+1 boundaries.
func BalanceLines(ptr []int, w int) []int {
	n := len(ptr) - 1
	parts := make([]int, w+1)
	total := ptr[n] + n
	l := 0
	for k := 1; k < w; k++ {
		target := total * k / w
		for l < n && ptr[l]+l < target {
			l++
		}
		parts[k] = l
	}
	parts[w] = n
	return parts
}

// MulVals sets dst (d1×k) = E·X, where E is the d1×d2 matrix with values
// e on Φ (CSR order) and zeros elsewhere, and X is d2×k.
func (p *Plan) MulVals(dst blas64.General, e []float64, x blas64.General, workers int) {
	m := p.m
	if len(e) != len(m.Val) || dst.Rows != m.Rows || x.Rows != m.Cols || dst.Cols != x.Cols {
		panic("observed: MulVals dimension mismatch")
	}
	forChunks(p.rowB, workers, func(_, lo, hi int) {
		if x.Cols == 10 {
			mulRows10(m, dst, e, x, lo, hi)
		} else {
			mulRowsAny(m, dst, e, x, lo, hi)
		}
	})
}

func mulRows10(m *Matrix, dst blas64.General, e []float64, x blas64.General, lo, hi int) {
	mulLines10(m.RowPtr, m.ColIdx, dst, e, x, lo, hi)
}

func mulRowsAny(m *Matrix, dst blas64.General, e []float64, x blas64.General, lo, hi int) {
	mulLinesAny(m.RowPtr, m.ColIdx, dst, e, x, lo, hi)
}

// mulLines10 sets row l of dst to Σ_q e[q]·x_{idx[q]} over q ∈
// [ptr[l], ptr[l+1]), for l ∈ [lo, hi), with 10 columns.
func mulLines10(ptr []int, idx []int32, dst blas64.General, e []float64, x blas64.General, lo, hi int) {
	xd, xs := x.Data, x.Stride
	for l := lo; l < hi; l++ {
		var a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 float64
		qlo, qhi := ptr[l], ptr[l+1]
		el := e[qlo:qhi]
		kernels.PrefetchRows(xd, idx[qlo:qhi], xs, 10)
		for q, j := range idx[qlo:qhi] {
			w := el[q]
			if w == 0 {
				continue
			}
			o := int(j) * xs
			xj := (*[10]float64)(xd[o : o+10])
			a0 += w * xj[0]
			a1 += w * xj[1]
			a2 += w * xj[2]
			a3 += w * xj[3]
			a4 += w * xj[4]
			a5 += w * xj[5]
			a6 += w * xj[6]
			a7 += w * xj[7]
			a8 += w * xj[8]
			a9 += w * xj[9]
		}
		d := (*[10]float64)(row(dst, l))
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9] = a0, a1, a2, a3, a4, a5, a6, a7, a8, a9
	}
}

// mulLinesAny is mulLines10 for any number of columns, in blocks of eight
// and then four columns with the accumulators in registers (so k = 12, the
// block size of the initial SVD at r = 10, takes two passes over each
// line), and single columns for the rest.
func mulLinesAny(ptr []int, idx []int32, dst blas64.General, e []float64, x blas64.General, lo, hi int) {
	xd, xs, k := x.Data, x.Stride, x.Cols
	for l := lo; l < hi; l++ {
		qlo, qhi := ptr[l], ptr[l+1]
		el, il := e[qlo:qhi], idx[qlo:qhi]
		kernels.PrefetchRows(xd, il, xs, k)
		d := row(dst, l)
		c := 0
		for ; c+8 <= k; c += 8 {
			var a0, a1, a2, a3, a4, a5, a6, a7 float64
			for q, j := range il {
				w := el[q]
				o := int(j)*xs + c
				xj := (*[8]float64)(xd[o : o+8])
				a0 += w * xj[0]
				a1 += w * xj[1]
				a2 += w * xj[2]
				a3 += w * xj[3]
				a4 += w * xj[4]
				a5 += w * xj[5]
				a6 += w * xj[6]
				a7 += w * xj[7]
			}
			d[c], d[c+1], d[c+2], d[c+3], d[c+4], d[c+5], d[c+6], d[c+7] = a0, a1, a2, a3, a4, a5, a6, a7
		}
		for ; c+4 <= k; c += 4 {
			var a0, a1, a2, a3 float64
			for q, j := range il {
				w := el[q]
				o := int(j)*xs + c
				xj := (*[4]float64)(xd[o : o+4])
				a0 += w * xj[0]
				a1 += w * xj[1]
				a2 += w * xj[2]
				a3 += w * xj[3]
			}
			d[c], d[c+1], d[c+2], d[c+3] = a0, a1, a2, a3
		}
		for ; c < k; c++ {
			a := 0.0
			for q, j := range il {
				a += el[q] * xd[int(j)*xs+c]
			}
			d[c] = a
		}
	}
}

// Operator is the linear operator Scale·E of the sparse matrix E with
// given values on Φ, for the truncated SVD of Algorithm 2's
// initialization, SVD_r[(1/p)(Y − S_init)].
type Operator struct {
	p       *Plan
	vals    []float64
	scale   float64
	workers int
}

// NewOperator returns the operator scale·E for the values vals (CSR
// order), which are retained and must not change while it is in use.
func NewOperator(p *Plan, vals []float64, scale float64, workers int) *Operator {
	return &Operator{p: p, vals: vals, scale: scale, workers: workers}
}

// Dims returns the matrix size.
func (o *Operator) Dims() (int, int) { return o.p.m.Rows, o.p.m.Cols }

// MulTo sets dst = Scale·E·X.
func (o *Operator) MulTo(dst, x blas64.General) {
	o.p.MulVals(dst, o.vals, x, o.workers)
	scale(dst, o.scale)
}

// MulTransTo sets dst = Scale·Eᵀ·X.
func (o *Operator) MulTransTo(dst, x blas64.General) {
	if dst.Stride != dst.Cols {
		t := blas64.General{Rows: dst.Rows, Cols: dst.Cols, Stride: dst.Cols, Data: make([]float64, dst.Rows*dst.Cols)}
		o.MulTransTo(t, x)
		for i := 0; i < t.Rows; i++ {
			copy(row(dst, i), row(t, i))
		}
		return
	}
	o.p.MulTransVals(dst, o.vals, x, o.workers)
	scale(dst, o.scale)
}

func scale(m blas64.General, s float64) {
	if s == 1 {
		return
	}
	for i := 0; i < m.Rows; i++ {
		r := row(m, i)
		for k := range r {
			r[k] *= s
		}
	}
}

// Column tiling for large d2. When V (d2×r) is much larger than the
// caches, the random row accesses of V and of the Eᵀ·U buffers in the CSR
// pass miss L2 and L3. ZeroMulBothTiled splits the columns into blocks
// whose slice of V (and of Eᵀ·U) takes about tileBytes, and walks Φ block
// by block, all rows per block, so the rows being touched stay cached; U
// and E·V are then streamed once per block instead. (A tiled residual
// pass was measured too: 10 ns/entry against 4 at d = 1e5, about equal at
// 2e5, so the residual is not tiled.)
const tileBytes = 2 << 20

// tiling returns the plan's column blocks for rank r, building them on
// first use: p.tileCols[b] is the first column of block b and
// p.tileStart[b][i] the CSR position of the first entry of row i in block
// b (so row i's entries in block b are [tileStart[b][i], tileStart[b+1][i])).
// It returns false when fewer than four blocks would cover all columns:
// at d2 = 5e4 and 1e5 (two and four blocks) ZeroMulBothTiled measured the
// same as ZeroMulBoth, while at d2 = 2e5 (eight blocks) it took 24
// ns/entry against 65 (docs/performance.md).
func (p *Plan) tiling(r int) bool {
	m := p.m
	nb := (m.Cols*r*8 + p.tile - 1) / p.tile
	if nb < 4 {
		return false
	}
	if len(p.tileCols) == nb+1 {
		return true
	}
	p.tileCols = make([]int, nb+1)
	for b := range p.tileCols {
		p.tileCols[b] = m.Cols * b / nb
	}
	p.tileStart = make([][]int32, nb+1)
	for b := range p.tileStart {
		p.tileStart[b] = make([]int32, m.Rows)
	}
	forChunks(p.rowB, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			q := m.RowPtr[i]
			for b := 0; b <= nb; b++ {
				c := int32(p.tileCols[b])
				if b == nb {
					c = int32(m.Cols)
				}
				for q < m.RowPtr[i+1] && m.ColIdx[q] < c {
					q++
				}
				p.tileStart[b][i] = int32(q - m.RowPtr[i]) // offset within the row
			}
		}
	})
	p.tileSS = make([]float64, nb)
	return true
}

// ZeroMulBothTiled is [Plan.ZeroMulBoth] walking Φ by column blocks (see
// tiling): group g of G = min(tileReduceGroups, blocks) takes blocks g,
// g+G, …; it writes Eᵀ·U for its blocks' columns directly and accumulates
// E·V in its own d1×r buffer (gu itself for the first group), summed in
// group order at the end, so the result depends neither on the worker
// count nor on scheduling.
func (p *Plan) ZeroMulBothTiled(gu, gv blas64.General, e []float64, keep []bool, u, v blas64.General, workers int) float64 {
	m := p.m
	r := v.Cols
	if len(e) != len(m.Val) || len(keep) != len(e) || gu.Rows != m.Rows || gv.Rows != m.Cols || v.Rows != m.Cols ||
		u.Rows != m.Rows || gu.Cols != r || gv.Cols != r || u.Cols != r || gv.Stride != r || gu.Stride != r {
		panic("observed: ZeroMulBothTiled dimension mismatch")
	}
	if r != 10 || !p.tiling(10) {
		return p.ZeroMulBoth(gu, gv, e, keep, u, v, workers)
	}
	nb := len(p.tileCols) - 1
	w := max(1, min(tileReduceGroups, nb))
	if len(p.guBufs) < w {
		p.guBufs = append(p.guBufs, make([][]float64, w-len(p.guBufs))...)
	}
	vd, vs := v.Data, v.Stride
	n := m.Rows * r
	groups := make([]int, w+1)
	for g := range groups {
		groups[g] = g
	}
	forChunks(groups, workers, func(t, _, _ int) {
		{
			acc := gu.Data[:n]
			if t > 0 {
				if len(p.guBufs[t]) != n {
					p.guBufs[t] = make([]float64, n)
				}
				acc = p.guBufs[t]
			}
			clear(acc)
			for b := t; b < nb; b += w {
				clear(gv.Data[p.tileCols[b]*r : p.tileCols[b+1]*r])
				s0, s1 := p.tileStart[b], p.tileStart[b+1]
				ss := 0.0
				for i := 0; i < m.Rows; i++ {
					base := m.RowPtr[i]
					qlo, qhi := base+int(s0[i]), base+int(s1[i])
					if qlo == qhi {
						continue
					}
					ui := (*[10]float64)(row(u, i))
					ai := (*[10]float64)(acc[i*10 : i*10+10])
					a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 := ai[0], ai[1], ai[2], ai[3], ai[4], ai[5], ai[6], ai[7], ai[8], ai[9]
					cols, kp, ei := m.ColIdx[qlo:qhi], keep[qlo:qhi], e[qlo:qhi]
					for q, j := range cols {
						x := ei[q]
						if kp[q] {
							x = 0
							ei[q] = 0
						}
						if x == 0 {
							continue
						}
						ss += x * x
						o := int(j) * vs
						vj := (*[10]float64)(vd[o : o+10])
						a0 += x * vj[0]
						a1 += x * vj[1]
						a2 += x * vj[2]
						a3 += x * vj[3]
						a4 += x * vj[4]
						a5 += x * vj[5]
						a6 += x * vj[6]
						a7 += x * vj[7]
						a8 += x * vj[8]
						a9 += x * vj[9]
						g := (*[10]float64)(gv.Data[int(j)*10 : int(j)*10+10])
						g[0] += x * ui[0]
						g[1] += x * ui[1]
						g[2] += x * ui[2]
						g[3] += x * ui[3]
						g[4] += x * ui[4]
						g[5] += x * ui[5]
						g[6] += x * ui[6]
						g[7] += x * ui[7]
						g[8] += x * ui[8]
						g[9] += x * ui[9]
					}
					ai[0], ai[1], ai[2], ai[3], ai[4], ai[5], ai[6], ai[7], ai[8], ai[9] = a0, a1, a2, a3, a4, a5, a6, a7, a8, a9
				}
				p.tileSS[b] = ss
			}
		}
	})
	addWorkerBuffers(gu.Data, p.guBufs[:w], m.Rows, r, workers)
	ss := 0.0
	for _, x := range p.tileSS {
		ss += x
	}
	return ss
}

// mulTransTiled is MulTransVals by column blocks (see tiling): the workers
// take whole blocks in turn and write the rows of dst of their block's
// columns directly, so nothing depends on the worker count or scheduling.
func (p *Plan) mulTransTiled(dst blas64.General, e []float64, x blas64.General, workers int) {
	m := p.m
	k := x.Cols
	nb := len(p.tileCols) - 1
	blocks := make([]int, nb+1)
	for b := range blocks {
		blocks[b] = b
	}
	forChunks(blocks, workers, func(b, _, _ int) {
		clear(dst.Data[p.tileCols[b]*k : p.tileCols[b+1]*k])
		s0, s1 := p.tileStart[b], p.tileStart[b+1]
		for i := 0; i < m.Rows; i++ {
			base := m.RowPtr[i]
			qlo, qhi := base+int(s0[i]), base+int(s1[i])
			if qlo == qhi {
				continue
			}
			xi := row(x, i)
			el := e[qlo:qhi]
			for q, j := range m.ColIdx[qlo:qhi] {
				w := el[q]
				if w == 0 {
					continue
				}
				d := dst.Data[int(j)*k : int(j)*k+k]
				for c, xc := range xi {
					d[c] += w * xc
				}
			}
		}
	})
}

// addWorkerBuffers adds the per-worker partial sums bufs[1:] (bufs[0] is
// dst itself or already in it) into dst, all lines×k row-major, in
// parallel over blocks of lines; the sum per entry is in worker order, so
// the result does not depend on the scheduling.
func addWorkerBuffers(dst []float64, bufs [][]float64, lines, k, workers int) {
	if len(bufs) < 2 {
		return
	}
	kernels.ParallelFor(lines, workers, 1024, func(lo, hi int) {
		d := dst[lo*k : hi*k]
		for _, b := range bufs[1:] {
			for c, x := range b[lo*k : hi*k] {
				d[c] += x
			}
		}
	})
}
