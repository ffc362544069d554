package observed

import (
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// The kernels below are the per-iteration work of Algorithm 2: every one
// is a single pass over Φ in CSR or CSC order with O(r) work per entry.
// Rank 10 (the paper's experiments) has unrolled loops that keep the
// factor row and the accumulators in registers; other ranks use loops over
// blocks of at most 4 columns.
//
// Work is split into chunks of about chunkEntries entries that the workers
// take in turn (so that a worker slowed down by other load on the machine
// does not hold the others up); reductions are combined in chunk order, so
// results depend on neither the worker count nor the scheduling.

// chunkEntries is the default number of entries (plus lines) per chunk.
const chunkEntries = 1 << 15

func row(m blas64.General, i int) []float64 { return m.Data[i*m.Stride : i*m.Stride+m.Cols] }

// lineChunks cuts the lines described by ptr (len n+1) into contiguous
// chunks of about size entries plus lines and returns the chunk boundaries.
func lineChunks(ptr []int, size int) []int {
	n := len(ptr) - 1
	total := ptr[n] + n
	c := max(1, min(n, total/size))
	b := make([]int, c+1)
	l := 0
	for k := 1; k < c; k++ {
		target := total * k / c
		for l < n && ptr[l]+l < target {
			l++
		}
		b[k] = l
	}
	b[c] = n
	return b
}

// forChunks calls fn(c, bounds[c], bounds[c+1]) for every chunk c on at
// most workers goroutines, each taking the next chunk not yet taken.
func forChunks(bounds []int, workers int, fn func(c, lo, hi int)) {
	nc := len(bounds) - 1
	w := min(kernels.Workers(workers), nc)
	if w <= 1 {
		for c := 0; c < nc; c++ {
			fn(c, bounds[c], bounds[c+1])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= nc {
					return
				}
				fn(c, bounds[c], bounds[c+1])
			}
		}()
	}
	wg.Wait()
}

// Plan holds the chunking of m's rows and columns for the kernels, and
// scratch for their reductions. It is not safe for concurrent use.
type Plan struct {
	m        *Matrix
	rowB     []int
	colB     []int
	partials []float64
}

// NewPlan returns the plan of m.
func NewPlan(m *Matrix) *Plan { return newPlan(m, chunkEntries) }

func newPlan(m *Matrix, size int) *Plan {
	p := &Plan{m: m, rowB: lineChunks(m.RowPtr, size), colB: lineChunks(m.ColPtr, size)}
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
		for q := m.RowPtr[i]; q < m.RowPtr[i+1]; q++ {
			vj := row(v, int(m.ColIdx[q]))[:len(ui)]
			var s0, s1 float64
			k := 0
			for ; k+1 < len(ui); k += 2 {
				s0 += ui[k] * vj[k]
				s1 += ui[k+1] * vj[k+1]
			}
			if k < len(ui) {
				s0 += ui[k] * vj[k]
			}
			r := m.Val[q] - (s0 + s1)
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

// ZeroMulScatter finishes the residual of Algorithm 2 line 6 after S_t's
// support is known: it zeroes e[q] where keep[q] (E = Π_Φ(Y − UVᵀ − S_t)),
// sets gu (d1×r) = E·V, copies E to ecsc in CSC order (for
// [Plan.MulTransCSC]) and returns ‖E‖²_F, all in one pass over Φ.
func (p *Plan) ZeroMulScatter(gu blas64.General, ecsc, e []float64, keep []bool, v blas64.General, workers int) float64 {
	m := p.m
	if len(e) != len(m.Val) || len(ecsc) != len(e) || len(keep) != len(e) || gu.Rows != m.Rows || v.Rows != m.Cols || gu.Cols != v.Cols {
		panic("observed: ZeroMulScatter dimension mismatch")
	}
	forChunks(p.rowB, workers, func(c, lo, hi int) {
		ss := 0.0
		for q := m.RowPtr[lo]; q < m.RowPtr[hi]; q++ {
			x := e[q]
			if keep[q] {
				x = 0
				e[q] = 0
			}
			ss += x * x
			ecsc[m.Pos[q]] = x
		}
		p.partials[c] = ss
		if v.Cols == 10 {
			mulRows10(m, gu, e, v, lo, hi)
		} else {
			mulRowsAny(m, gu, e, v, lo, hi)
		}
	})
	return p.sum()
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

// MulTransCSC sets dst (d2×k) = Eᵀ·X, where E has the values ecsc on Φ in
// CSC order (see [Matrix.ToCSC]) and X is d1×k. Every output row belongs
// to one column of Φ, so the pass is a row-by-row product over the CSC
// arrays.
func (p *Plan) MulTransCSC(dst blas64.General, ecsc []float64, x blas64.General, workers int) {
	m := p.m
	if len(ecsc) != len(m.Val) || dst.Rows != m.Cols || x.Rows != m.Rows || dst.Cols != x.Cols {
		panic("observed: MulTransCSC dimension mismatch")
	}
	forChunks(p.colB, workers, func(_, lo, hi int) {
		if x.Cols == 10 {
			mulLines10(m.ColPtr, m.RowIdx, dst, ecsc, x, lo, hi)
		} else {
			mulLinesAny(m.ColPtr, m.RowIdx, dst, ecsc, x, lo, hi)
		}
	})
}

// ToCSC sets dst[Pos[q]] = vals[q]: per-entry values from CSR to CSC order.
func (p *Plan) ToCSC(dst, vals []float64, workers int) {
	m := p.m
	if len(dst) != len(m.Val) || len(vals) != len(m.Val) {
		panic("observed: ToCSC length mismatch")
	}
	forChunks(p.rowB, workers, func(_, lo, hi int) {
		for q := m.RowPtr[lo]; q < m.RowPtr[hi]; q++ {
			dst[m.Pos[q]] = vals[q]
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

// mulLinesAny is mulLines10 for any number of columns, in blocks of up to
// four columns with the accumulators in registers.
func mulLinesAny(ptr []int, idx []int32, dst blas64.General, e []float64, x blas64.General, lo, hi int) {
	xd, xs, k := x.Data, x.Stride, x.Cols
	for l := lo; l < hi; l++ {
		qlo, qhi := ptr[l], ptr[l+1]
		el, il := e[qlo:qhi], idx[qlo:qhi]
		d := row(dst, l)
		c := 0
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
// initialization, SVD_r[(1/p)(Y − S_init)]. It keeps the values in both
// CSR and CSC order so that both products are single streaming passes.
type Operator struct {
	p       *Plan
	vals    []float64
	csc     []float64
	scale   float64
	workers int
}

// NewOperator returns the operator scale·E for the values vals (CSR
// order). csc (len |Φ|) receives the values in CSC order; both slices are
// retained and must not change while the operator is in use.
func NewOperator(p *Plan, vals, csc []float64, scale float64, workers int) *Operator {
	p.ToCSC(csc, vals, workers)
	return &Operator{p: p, vals: vals, csc: csc, scale: scale, workers: workers}
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
	o.p.MulTransCSC(dst, o.csc, x, o.workers)
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
