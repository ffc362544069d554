// Package kernels holds the parallel dense kernels on the hot paths of the
// solvers: products of a large d1×d2 matrix with tall-skinny d×k blocks and
// the rank-k product U·Vᵀ, fused where that saves a pass over the large
// matrix. All matrices are row-major blas64.General values; sub-matrix views
// (Stride > Cols) are accepted everywhere.
//
// The large matrix is walked in panels of four rows, shared out between
// workers. Each panel (or tile of a panel) is handed to a micro-kernel that
// keeps a register tile of it and reuses it against the small operand,
// which is packed (transposed where useful) once per call. On amd64 the
// micro-kernels are written in assembly, for AVX-512 or AVX2 with FMA,
// chosen at run time; elsewhere, without those instructions, or when built
// with the purego tag, portable Go versions are used.
//
// Results are deterministic: the work split depends only on the shapes and
// the worker count, and every reduction runs in a fixed order, so the same
// inputs and worker count give bitwise identical outputs on a given
// machine, and none of them depends on the worker count: MulAtX and the
// Aᵀ·Y half of MulAXAtY sum partial results over chunks of rows whose
// number depends only on the shapes. Different instruction sets round
// differently.
package kernels

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// Instruction set levels of the micro-kernels (see isa).
const (
	isaGo = iota
	isaAVX2
)

// Workers returns w, or runtime.GOMAXPROCS(0) when w ≤ 0.
func Workers(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// ParallelFor calls fn on contiguous sub-ranges [lo, hi) covering [0, n),
// using at most workers goroutines (GOMAXPROCS when workers ≤ 0), and
// returns when all calls have returned. Ranges have at least grain
// elements (except possibly the last) so that tiny work stays serial.
func ParallelFor(n, workers, grain int, fn func(lo, hi int)) {
	parallelChunks(n, workers, grain, func(_, lo, hi int) { fn(lo, hi) })
}

// chunks returns the number of ranges ParallelFor and parallelChunks split
// [0, n) into, and their common length (the last may be shorter).
func chunks(n, workers, grain int) (count, size int) {
	if n <= 0 {
		return 0, 0
	}
	w := Workers(workers)
	if grain < 1 {
		grain = 1
	}
	w = min(w, (n+grain-1)/grain)
	if w <= 1 {
		return 1, n
	}
	size = (n + w - 1) / w
	return (n + size - 1) / size, size
}

// parallelChunks is ParallelFor with the index of each range passed to fn,
// so that callers can keep per-range results and combine them in order.
func parallelChunks(n, workers, grain int, fn func(t, lo, hi int)) {
	count, size := chunks(n, workers, grain)
	if count == 0 {
		return
	}
	if count == 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for t := range count {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			fn(t, t*size, min((t+1)*size, n))
		}(t)
	}
	wg.Wait()
}

// maxReduction bounds the number of chunks of a reduction over panels,
// and reductionBytes the memory of their accumulators together.
const (
	maxReduction   = 8
	reductionBytes = 32 << 20
)

// reductionChunks splits n panels into chunks whose number and size
// depend only on n, grain and the accumulator length acc (float64s per
// chunk), never on the worker count: at most maxReduction chunks, of at
// least grain panels, with at most reductionBytes of accumulators.
func reductionChunks(n, grain, acc int) (count, size int) {
	if n <= 0 {
		return 0, 0
	}
	c := min(maxReduction, (n+max(grain, 1)-1)/max(grain, 1), max(1, reductionBytes/(8*max(acc, 1))))
	size = (n + c - 1) / c
	return (n + size - 1) / size, size
}

// runChunks calls fn(t, t·size, min((t+1)·size, n)) for t < count on at
// most workers goroutines, which take the chunks in turn.
func runChunks(n, count, size, workers int, fn func(t, lo, hi int)) {
	ForEach(count, workers, func(t int) { fn(t, t*size, min((t+1)*size, n)) })
}

// ForEach calls fn(t) for every t < count on at most workers goroutines
// (GOMAXPROCS when workers ≤ 0), each taking the next t not yet taken, and
// returns when all calls have returned. Callers that keep one result per t
// and combine them in order get results independent of the worker count.
func ForEach(count, workers int, fn func(t int)) {
	w := min(Workers(workers), count)
	if w <= 1 {
		for t := range count {
			fn(t)
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
				t := int(next.Add(1) - 1)
				if t >= count {
					return
				}
				fn(t)
			}
		}()
	}
	wg.Wait()
}

// minWork is the smallest number of multiply-adds worth a goroutine.
const minWork = 1 << 17

// panelGrain returns the number of 4-row panels that make minWork when one
// panel costs perPanel multiply-adds.
func panelGrain(perPanel int) int {
	return max(1, minWork/max(1, perPanel))
}

// Cache blocking of A·X and Aᵀ·Y (axaty). The rows of A are taken in groups
// of groupPanels panels; within a group, column tile by column tile; within
// a tile, panel by panel. The slices of Xᵀ and of the Aᵀ·Y accumulators that
// a tile needs then stay in L1 while the group's panels stream past, and
// the A·X accumulators of the group's panels stay in L1/L2.
//
// Each micro-kernel call prefetches the tile of A that comes pfDist tiles
// later (the Aᵀ·Y kernel when there is one, else the A·X kernel).
//
// The tile width makes a tile's slices of the packed operands and
// accumulators plus two 4-row tiles of A take about budget bytes. All these
// values were tuned by timing one worker at 5000×5000, k = 10 and 20 on an
// AMD EPYC (Zen 5): the AVX-512 kernels run twice as fast as the AVX2 ones
// from L1 but lose that edge when the accumulators spill to L2, hence the
// smaller budget.
const (
	groupPanels = 32
	pfDist      = 2
)

// tileWidth returns the tile width for A·X with k columns and Aᵀ·Y with l
// columns (either may be zero): a multiple of 8 between 64 and 512.
func tileWidth(k, l int) int {
	budget := 32 << 10
	if l > 0 {
		budget = 96 << 10
	}
	w := budget / 8 / (k + l + 8)
	return min(512, max(64, w&^7))
}

// colBlock returns the width of the column blocks of A·Bᵀ when each column
// of the output needs perCol values of packed Bᵀ: the block of Bᵀ stays
// within about 1 MiB of the per-core L2 cache. It is a multiple of 512 (or
// n).
func colBlock(n, perCol int) int {
	nc := (1 << 20) / 8 / max(1, perCol)
	nc = max(512, nc&^511)
	return min(nc, n)
}

// Scratch buffers are recycled between calls: the packed operands and
// per-worker accumulators would otherwise be fresh garbage every iteration.
var bufPool sync.Pool

func getBuf(n int) *[]float64 {
	if p, ok := bufPool.Get().(*[]float64); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float64, n)
	return &s
}

func putBuf(p *[]float64) { bufPool.Put(p) }

// row returns row i of m.
func row(m blas64.General, i int) []float64 { return m.Data[i*m.Stride : i*m.Stride+m.Cols] }

// zero sets all elements of m to zero.
func zero(m blas64.General) {
	if m.Cols == 0 {
		return
	}
	for i := range m.Rows {
		clear(row(m, i))
	}
}

// from returns m.Data from element (i, j) on.
func from(m blas64.General, i, j int) []float64 { return m.Data[i*m.Stride+j:] }

// packPanels stores m (rows×c) as interleaved panels of four rows:
// dst[p·4c + j·4 + r] = m[4p+r, j], with missing rows of the last panel set
// to zero. len(dst) must be ⌈rows/4⌉·4c.
func packPanels(dst []float64, m blas64.General) {
	c := m.Cols
	for i := 0; i < m.Rows; i += 4 {
		p := dst[i*c : (i+4)*c]
		clear(p)
		for r := 0; r < 4 && i+r < m.Rows; r++ {
			for j, v := range row(m, i+r) {
				p[j*4+r] = v
			}
		}
	}
}

// packT stores mᵀ with row stride ld: dst[j·ld + i] = m[i, j].
func packT(dst []float64, ld int, m blas64.General) {
	for i := range m.Rows {
		for j, v := range row(m, i) {
			dst[j*ld+i] = v
		}
	}
}

// padLD returns the row stride for a packed buffer with n columns: n rounded
// up to whole cache lines, plus one line when that would be a multiple of
// 4 KiB, which would map every row to the same L1 cache sets.
func padLD(n int) int {
	ld := (n + 7) &^ 7
	if ld%512 == 0 {
		ld += 8
	}
	return ld
}

// MulABt sets dst = A·Bᵀ, with A d1×k, B d2×k and dst d1×d2.
func MulABt(dst, a, b blas64.General, workers int) {
	checkABt(dst, a, b)
	abt(dst, blas64.General{}, a, b, workers, false, nil)
}

// SumSq returns ‖a‖²_F, summing rows in parallel; the row sums are
// combined in row order, so the result does not depend on workers.
func SumSq(a blas64.General, workers int) float64 {
	rowSum := func(i int) float64 { return VecSumSq(a.Data[i*a.Stride : i*a.Stride+a.Cols]) }
	if Workers(workers) == 1 {
		t := 0.0 // the same grouping as below, without the buffer
		for i := range a.Rows {
			t += rowSum(i)
		}
		return t
	}
	parts := make([]float64, a.Rows)
	ParallelFor(a.Rows, workers, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parts[i] = rowSum(i)
		}
	})
	t := 0.0
	for _, x := range parts {
		t += x
	}
	return t
}

// VecSumSq returns Σ x_j², in four interleaved partial sums (so that the
// adds do not wait on one another) added at the end in a fixed order.
func VecSumSq(x []float64) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		q := x[j : j+4 : j+4]
		s0 += q[0] * q[0]
		s1 += q[1] * q[1]
		s2 += q[2] * q[2]
		s3 += q[3] * q[3]
	}
	for ; j < len(x); j++ {
		s0 += x[j] * x[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// AllFinite reports whether every value of x is finite. The common case
// takes one branch-free pass: Σ x_j² is finite exactly when no value is
// NaN or ±Inf, unless finite values above about 1e154 overflow it, and
// only then are the values looked at one by one.
func AllFinite(x []float64) bool {
	if s := VecSumSq(x); !math.IsNaN(s) && !math.IsInf(s, 0) {
		return true
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// FirstNonFinite returns the position of the first NaN or ±Inf of g in
// row-major order, and ok false when every value is finite.
func FirstNonFinite(g blas64.General) (i, j int, ok bool) {
	for i = 0; i < g.Rows; i++ {
		row := g.Data[i*g.Stride : i*g.Stride+g.Cols]
		if AllFinite(row) {
			continue
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// SubMulABt sets dst = Y − A·Bᵀ and returns ‖dst‖²_F: the residual
// Y − U_t·V_tᵀ of Algorithm 1, line 6, with A = U_t and B = V_t. dst may
// alias y (the same view), in which case Y is overwritten by the residual.
func SubMulABt(dst, y, a, b blas64.General, workers int) float64 {
	checkABt(dst, a, b)
	if y.Rows != dst.Rows || y.Cols != dst.Cols {
		panic("kernels: SubMulABt dimension mismatch")
	}
	return abt(dst, y, a, b, workers, true, nil)
}

// Clip is what SubMulABtClip computes besides the residual: the hard
// threshold ζ and, per row i of the result, RowSS[i] (the sum of squares
// of the entries kept) and RowMax[i] (the largest magnitude before
// thresholding). RowSS and RowMax have one element per row.
type Clip struct {
	Zeta          float64
	RowSS, RowMax []float64
}

// SubMulABtClip sets dst = T_ζ(Y − A·Bᵀ), the residual of the low-rank
// part with every entry of magnitude above c.Zeta set to zero, and fills
// c.RowSS and c.RowMax: lines 4 and 10 of Algorithm 1 of Cai, Cai and Wei
// (AccAltProj), S = T_ζ(Y − L) with E = Y − L − S left in dst, in one pass
// over Y. The threshold runs on each block of rows while the block is in
// cache; the per-row sums are added over the column blocks in order, so
// they do not depend on the worker count. dst may alias y.
func SubMulABtClip(dst, y, a, b blas64.General, c Clip, workers int) {
	checkABt(dst, a, b)
	if y.Rows != dst.Rows || y.Cols != dst.Cols || len(c.RowSS) != dst.Rows || len(c.RowMax) != dst.Rows {
		panic("kernels: SubMulABtClip dimension mismatch")
	}
	abt(dst, y, a, b, workers, true, &c)
}

// abt computes dst = A·Bᵀ, or dst = Y − A·Bᵀ when sub is set, and then
// returns ‖dst‖²_F. The norm is summed per panel and then over the panels
// in order, so it does not depend on the split. With clip, each block of
// dst is thresholded as soon as it is written (SubMulABtClip), and the
// norm returned is that before thresholding.
func abt(dst, y, a, b blas64.General, workers int, sub bool, clip *Clip) float64 {
	d1, d2, k := a.Rows, b.Rows, a.Cols
	if d1 == 0 || d2 == 0 {
		return 0
	}
	if k == 0 {
		total := 0.0
		for i := range d1 {
			di := row(dst, i)
			if !sub {
				clear(di)
				continue
			}
			copy(di, row(y, i))
			for _, v := range di {
				total += v * v
			}
			if clip != nil {
				clip.RowSS[i], clip.RowMax[i] = clipRow(di, clip.Zeta)
			}
		}
		return total
	}
	np := (d1 + 3) / 4
	ldb := padLD(d2)
	btBuf, apBuf, ssBuf := getBuf(k*ldb), getBuf(np*4*k), getBuf(np)
	defer putBuf(btBuf)
	defer putBuf(apBuf)
	defer putBuf(ssBuf)
	bt, ap, parts := *btBuf, *apBuf, *ssBuf
	packT(bt, ldb, b)
	packPanels(ap, a)
	nc := colBlock(d2, k)
	parallelChunks(np, workers, panelGrain(4*d2*k), func(_, lo, hi int) {
		for j0 := 0; j0 < d2; j0 += nc {
			n := min(nc, d2-j0)
			for p := lo; p < hi; p++ {
				i0 := 4 * p
				var ys []float64
				if sub {
					ys = from(y, i0, j0)
				}
				s := abtPanel(min(4, d1-i0), k, ap[4*k*p:4*k*(p+1)], bt[j0:], ldb, n,
					ys, y.Stride, from(dst, i0, j0), dst.Stride, sub)
				if j0 == 0 {
					parts[p] = s
				} else {
					parts[p] += s
				}
				if clip != nil {
					clipPanel(clip, dst, i0, min(4, d1-i0), j0, n)
				}
			}
		}
	})
	return floats.Sum(parts)
}

// clipPanel thresholds rows i0 … i0+rows−1, columns j0 … j0+n−1 of dst
// and adds their statistics to clip's rows (which the block j0 = 0 sets).
func clipPanel(clip *Clip, dst blas64.General, i0, rows, j0, n int) {
	for r := range rows {
		i := i0 + r
		ss, mx := clipRow(from(dst, i, j0)[:n], clip.Zeta)
		if j0 == 0 {
			clip.RowSS[i], clip.RowMax[i] = ss, mx
		} else {
			clip.RowSS[i] += ss
			clip.RowMax[i] = max(clip.RowMax[i], mx)
		}
	}
}

// MulAX sets dst = A·X, with A m×n, X n×k and dst m×k.
func MulAX(dst, a, x blas64.General, workers int) {
	if x.Rows != a.Cols || dst.Rows != a.Rows || dst.Cols != x.Cols {
		panic("kernels: MulAX dimension mismatch")
	}
	axaty(&dst, nil, a, x, blas64.General{}, workers)
}

// MulAtX sets dst = Aᵀ·X, with A m×n, X m×k and dst n×k.
func MulAtX(dst, a, x blas64.General, workers int) {
	if x.Rows != a.Rows || dst.Rows != a.Cols || dst.Cols != x.Cols {
		panic("kernels: MulAtX dimension mismatch")
	}
	axaty(nil, &dst, a, blas64.General{}, x, workers)
}

// MulAXAtY sets ax = A·X and aty = Aᵀ·Y in a single pass over A, with A
// m×n, X n×k, Y m×l, ax m×k and aty n×l. With A the residual
// E = U_tV_tᵀ + S_t − Y, X = V_t and Y = U_t, these are the gradients
// ∇_U L = E·V_t and ∇_V L = Eᵀ·U_t of Algorithm 1, lines 7–8.
func MulAXAtY(ax, aty, a, x, y blas64.General, workers int) {
	if x.Rows != a.Cols || ax.Rows != a.Rows || ax.Cols != x.Cols {
		panic("kernels: MulAXAtY dimension mismatch (A·X)")
	}
	if y.Rows != a.Rows || aty.Rows != a.Cols || aty.Cols != y.Cols {
		panic("kernels: MulAXAtY dimension mismatch (Aᵀ·Y)")
	}
	axaty(&ax, &aty, a, x, y, workers)
}

// axaty computes ax = A·X when ax is not nil and aty = Aᵀ·Y when aty is not
// nil, reading each tile of A from memory once for both.
//
// The rows of A are split into 4-row panels shared out between workers and
// walked as described at groupPanels. ax rows belong to the worker of their
// panel; their per-lane partial sums are added tile after tile, and the
// lanes summed at the end of the group. Aᵀ·Y is accumulated, transposed
// (l×n), in a private buffer per worker, and the buffers are added in
// worker order at the end.
func axaty(ax, aty *blas64.General, a, x, y blas64.General, workers int) {
	m, n := a.Rows, a.Cols
	k, l := axatyWidths(ax, aty, a, x, y)
	if m == 0 || n == 0 || k+l == 0 {
		return
	}
	np := (m + 3) / 4
	ld := padLD(n) // row stride of Xᵀ and of the Aᵀ·Y accumulators
	var xt, yp []float64
	if k > 0 {
		b := getBuf(k * ld)
		defer putBuf(b)
		xt = *b
		packT(xt, ld, x)
	}
	if l > 0 {
		b := getBuf(np * 4 * l)
		defer putBuf(b)
		yp = *b
		packPanels(yp, y)
	}
	tc := tileWidth(k, l)
	grain := panelGrain(4 * n * (k + l))
	// With Aᵀ·Y to accumulate, the panels are cut into a number of chunks
	// that depends on the shapes only, each with its own accumulator,
	// summed in chunk order at the end: the result does not depend on the
	// worker count.
	var count, size int
	var accs []*[]float64
	if l > 0 {
		count, size = reductionChunks(np, grain, l*ld)
		accs = make([]*[]float64, count)
	} else {
		count, size = chunks(np, workers, grain)
	}
	tiles := &axatyTiles{a: a, xt: xt, yp: yp, ld: ld, k: k, l: l, tc: tc}
	runChunks(np, count, size, workers, func(t, lo, hi int) {
		var acct, accv []float64
		if l > 0 {
			accs[t] = getBuf(l * ld)
			acct = *accs[t]
			clear(acct)
		}
		if k > 0 {
			b := getBuf(groupPanels * 32 * k)
			defer putBuf(b)
			accv = *b
		}
		for g0 := lo; g0 < hi; g0 += groupPanels {
			g1 := min(g0+groupPanels, hi)
			clear(accv)
			tiles.group(g0, g1, hi, accv, acct)
			if k > 0 {
				storeAXPanels(*ax, accv, g0, g1, m, k)
			}
		}
	})
	if l > 0 {
		sumAccumulators(*aty, accs, ld, l, workers)
	}
}

// axatyWidths returns the widths k of X and l of Y that axaty works
// with: 0 for a product it is not asked for, or whose result it sets to
// zero because an inner dimension is 0.
func axatyWidths(ax, aty *blas64.General, a, x, y blas64.General) (k, l int) {
	if ax != nil {
		k = x.Cols
		if a.Cols == 0 || k == 0 {
			zero(*ax)
			k = 0
		}
	}
	if aty != nil {
		l = y.Cols
		if a.Rows == 0 || l == 0 {
			zero(*aty)
			l = 0
		}
	}
	return k, l
}

// axatyTiles is what the tile loop of axaty reads: A, Xᵀ packed with row
// stride ld, Y packed by panels, the widths k of X and l of Y (0: that
// product is not formed) and the tile width tc.
type axatyTiles struct {
	a        blas64.General
	xt, yp   []float64
	ld, k, l int
	tc       int
}

// group runs the panels g0…g1−1 of a worker whose last panel is hi−1
// over every column tile: their A·X partial sums into accv (32·k per
// panel) and their share of Aᵀ·Y into acct.
func (t *axatyTiles) group(g0, g1, hi int, accv, acct []float64) {
	// Locals, not loads through t in the loop.
	a, m, n, k, l := t.a, t.a.Rows, t.a.Cols, t.k, t.l
	xt, yp, ld, tc := t.xt, t.yp, t.ld, t.tc
	for j0 := 0; j0 < n; j0 += tc {
		nn := min(tc, n-j0)
		for p := g0; p < g1; p++ {
			i0 := 4 * p
			rows := min(4, m-i0)
			ap := from(a, i0, j0)
			pf := tileAhead(a, p, j0, g0, g1, hi, tc, pfDist)
			if k > 0 {
				var pfx []float64
				if l == 0 {
					pfx = pf
				}
				axvPanel(rows, nn, ap, a.Stride, xt[j0:], ld, k, accv[(p-g0)*32*k:(p-g0+1)*32*k], pfx)
			}
			if l > 0 {
				atyPanel(rows, nn, ap, a.Stride, yp[4*l*p:4*l*(p+1)], l, acct[j0:], ld, pf)
			}
		}
	}
}

// storeAXPanels writes the rows of A·X of panels g0…g1−1 (of an m-row A)
// into ax: each entry is the sum of its eight lanes in accv.
func storeAXPanels(ax blas64.General, accv []float64, g0, g1, m, k int) {
	for p := g0; p < g1; p++ {
		v := accv[(p-g0)*32*k : (p-g0+1)*32*k]
		for r := range min(4, m-4*p) {
			dr := row(ax, 4*p+r)
			for c := range dr {
				q := v[(4*c+r)*8 : (4*c+r)*8+8]
				dr[c] = ((q[0] + q[1]) + (q[2] + q[3])) + ((q[4] + q[5]) + (q[6] + q[7]))
			}
		}
	}
}

// sumAccumulators writes into aty (n×l) the sum, in chunk order, of the
// transposed accumulators accs (l rows of stride ld each), and returns
// them to the pool.
func sumAccumulators(aty blas64.General, accs []*[]float64, ld, l, workers int) {
	ParallelFor(aty.Rows, workers, minWork/max(1, l*len(accs)), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			dj := row(aty, j)
			for c := range dj {
				s := (*accs[0])[c*ld+j]
				for _, acc := range accs[1:] {
					s += (*acc)[c*ld+j]
				}
				dj[c] = s
			}
		}
	})
	for _, acc := range accs {
		putBuf(acc)
	}
}

// tileAhead returns A from the start of the tile processed d tiles after
// the tile of panel p at column j0, in the order of axaty (panels g0…g1−1
// of a group for each column tile, then the next group), or nil past the
// worker's last panel hi−1. It is only used for prefetching, so landing on
// a slightly different tile near group ends does no harm.
func tileAhead(a blas64.General, p, j0, g0, g1, hi, tc, d int) []float64 {
	q, j := p+d, j0
	for q >= g1 && j < a.Cols {
		q -= g1 - g0
		j += tc
	}
	if j >= a.Cols {
		q, j = g1+(q-g0), 0
	}
	if q >= hi || 4*q >= a.Rows {
		return nil
	}
	return from(a, 4*q, j)
}

func checkABt(dst, a, b blas64.General) {
	if a.Cols != b.Cols || dst.Rows != a.Rows || dst.Cols != b.Rows {
		panic("kernels: A·Bᵀ dimension mismatch")
	}
}

// Levels are the names of the instruction set levels, indexed by level.
var Levels = []string{"go", "avx2"}

// SetLevel makes the micro-kernels use the named level of [Levels] and
// returns the level in use before. It reports false, and changes nothing,
// when this build or machine cannot run that level. It is for benchmarks
// that compare the levels on whole solves; it must not be called while
// kernels run.
func SetLevel(name string) (prev string, ok bool) {
	prev = Levels[isa]
	for l, n := range Levels {
		if n == name && l <= maxISA {
			isa = l
			return prev, true
		}
	}
	return prev, false
}

// Dot returns aᵀb for len(b) ≥ len(a), summed in index order by a plain
// loop, so the same inputs give the same bits on every platform (the
// generators of package synth rely on it).
func Dot(a, b []float64) float64 {
	b = b[:len(a)]
	s := 0.0
	for k, x := range a {
		s += x * b[k]
	}
	return s
}

// DotPairs returns aᵀb for len(b) ≥ len(a) as two partial sums, of the
// even and of the odd indices, added at the end: for the short dot
// products of a factor row against another (r values), it halves the
// chain of dependent additions. Its bits differ from [Dot]'s.
func DotPairs(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1 float64
	k := 0
	for ; k+1 < len(a); k += 2 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
	}
	if k < len(a) {
		s0 += a[k] * b[k]
	}
	return s0 + s1
}

// PrefetchRows asks the processor to bring into its cache the rows of x
// that idx names, row j being x[j·stride : j·stride+width], without
// waiting for them: the cache lines of their first and last values, which
// are all of a row of up to 9 values, and of a row of up to 12 that
// starts on a 32-byte boundary (rows of 12 at a stride of 12); a wider
// row's middle lines are left to the pass.
// It changes nothing in memory and cannot fault, whatever idx holds; it
// is a no-op without the assembly. Called on a line's indices before a
// pass that reads those rows, it lets their cache misses overlap, which
// the pass's own loads, each waited for by the arithmetic that uses it,
// do only a few at a time (docs/performance.md, "Prefetching the rows of
// a line").
func PrefetchRows(x []float64, idx []int32, stride, width int) {
	prefetchRows(x, idx, stride, width)
}

// Gram adds Σ_t z_t·z_tᵀ to the lower triangle of the w×w row-major g
// for the rows z_t of width w stored one after another in z (len(z) a
// multiple of w); entries above the diagonal may change too. For rows
// [x_t, y_t] (followed by zeros, if any), row len(x_t) of g gains
// Σ_t y_t·x_t and the rows above it Σ_t x_t·x_tᵀ: the normal equations.
func Gram(g, z []float64, w int) {
	if len(z)%w != 0 || len(g) < w*w {
		panic("kernels: Gram: bad lengths")
	}
	gramPanel(g, z, w)
}

// GramStride returns the row stride at which Gram is fastest for rows of
// w values: 12, the width of the vector kernel, for w from 5 to 12, since
// zeros appended to every row leave the first w rows and columns of the
// result unchanged; else w itself (docs/performance.md, "Gram at a padded
// stride").
func GramStride(w int) int {
	if w >= 5 && w <= 12 {
		return 12
	}
	return w
}

// gramGo is Gram's portable kernel: one pass over g per four rows.
func gramGo(g, z []float64, w int) {
	n := len(z) / w
	t := 0
	for ; t+4 <= n; t += 4 {
		addLower4(g, z[t*w:][:w], z[(t+1)*w:][:w], z[(t+2)*w:][:w], z[(t+3)*w:][:w])
	}
	for ; t < n; t++ {
		zt := z[t*w:][:w]
		for i, a := range zt {
			gi := g[i*w : i*w+i+1]
			for j := range gi {
				gi[j] += a * zt[j]
			}
		}
	}
}

// AddOuter4 adds Σ_t x_t·x_tᵀ to the lower triangle of the r×r g
// (row-major) and Σ_t y_t·x_t to b for the k = len(y) ≤ 4 rows x_t of
// length r = len(b) stored one after another in x: one pass over g per
// four rows, where gonum's Syrk makes one call per row and column.
func AddOuter4(g, b, x, y []float64) {
	r := len(b)
	if len(y) < 4 {
		for t, yt := range y {
			xt := x[t*r : t*r+r]
			for i, xi := range xt {
				gi := g[i*r : i*r+i+1]
				for j := range gi {
					gi[j] += xi * xt[j]
				}
				b[i] += yt * xi
			}
		}
		return
	}
	x0, x1, x2, x3 := x[:r], x[r:2*r], x[2*r:3*r], x[3*r:4*r]
	addLower4(g, x0, x1, x2, x3)
	y0, y1, y2, y3 := y[0], y[1], y[2], y[3]
	for i := range r {
		b[i] += y0*x0[i] + y1*x1[i] + y2*x2[i] + y3*x3[i]
	}
}

// addLower4 adds Σ_t z_t·z_tᵀ to the lower triangle of the w×w row-major
// g for the four rows z_t of length w: one pass over g.
func addLower4(g, z0, z1, z2, z3 []float64) {
	w := len(z0)
	z1, z2, z3 = z1[:w], z2[:w], z3[:w]
	for i := range w {
		a0, a1, a2, a3 := z0[i], z1[i], z2[i], z3[i]
		gi := g[i*w : i*w+i+1]
		p0, p1, p2, p3 := z0[:len(gi)], z1[:len(gi)], z2[:len(gi)], z3[:len(gi)]
		for j := range gi {
			gi[j] += a0*p0[j] + a1*p1[j] + a2*p2[j] + a3*p3[j]
		}
	}
}
