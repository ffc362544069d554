package sparsify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/selection"
)

// Default sampling parameters of Dense (see the Dense doc comment).
const (
	defRowSample = 256 // entries sampled per row for its bracket
	defColSample = 512 // rows sampled for the column brackets
	defRowZ      = 3.0 // row bracket half-width in standard deviations
	defColZ      = 3.5 // column bracket half-width in standard deviations
	colBlock     = 32  // columns per block when computing column brackets
	fbBlock      = 64  // failed columns gathered together in the fallback
)

// Dense computes T for dense matrices (Algorithm 1, lines 1 and 6),
// reusing its workspace across calls.
//
// Algorithm. Every line's threshold is bracketed from a sample: a fixed
// random set of rows is read once to bracket all columns, and a fixed
// random set of positions brackets each row. One pass over the rows of A,
// parallel over blocks of rows, then does all the counting: for each row
// it first streams the row from memory, counting per column the entries
// above the column's bracket and collecting the few inside it (colScan),
// then, on the now cached row, brackets the row and selects its threshold
// among the row's candidates (rowScan, rowSelect), storing the at most
// kRow entries that pass. Column thresholds are selected among the column
// candidates afterwards; a line whose bracket missed (rare, except for
// adversarial inputs) is redone by exact selection. A row too short to
// sample (no longer than the sample) is bracketed instead around its
// cutoff in the call before, when that call had the same count: a
// solver's residual changes little between iterations (prevBracket).
// The stored entries are finally filtered by the column thresholds. A is
// read from memory about 1.1 times and never transposed; the expected
// cost is linear in d1·d2.
// Inputs with few distinct magnitudes (long runs of exact ties at the
// column thresholds) overflow the candidate lists and take the exact path
// for most columns, about 3× slower but still linear.
//
// The workspace holds 12·(kRow+1) + 8 bytes per row for the stored
// entries and the last cutoffs, and 16 bytes per column-candidate slot; a
// column has about 2.5·z·d1·√(p(1−p)/S) slots (p = kCol/d1, S = 512
// sampled rows, z = 3.5), plus a margin per worker: 140 MB in all at
// 5000×5000 with kRow = kCol = 1000 and 2 workers.
type Dense struct {
	rows, cols, workers int

	rowSamp []int32 // sorted columns sampled in every row
	colSamp []int   // sorted rows sampled for the column brackets
	rowZ    float64
	colZ    float64

	kRow, kCol int // counts the workspace below is sized for
	slot       int // row-buffer slots per row (= kRow)
	capCol     int // per-worker candidate capacity per column

	colLo   []uint64 // column brackets as magnitude bits (see scan.go)
	colHi   []uint64
	colT    []float64 // column cutoffs (see passes)
	colLast []int32
	rbCol   []int32 // row-filtered entries: row i in [i*slot, i*slot+rbN[i])
	rbVal   []float64
	rbN     []int32
	ws      []denseWorker

	// rowT holds each row's cutoff from the last call, for the counts
	// kRow = rowTk (0: none); see prevBracket.
	rowT  []float64
	rowTk int

	// State of the call in progress.
	a      blas64.General
	failed []int32 // columns whose bracket missed
	out    *Sparse
	wg     sync.WaitGroup
}

// denseWorker is the private workspace of one goroutine.
type denseWorker struct {
	above   []int64   // per column: entries above the column bracket
	cn      []int32   // per column: candidates seen (may exceed capCol)
	candV   []float64 // per column j: candidates' magnitudes, [j*capCol, …)
	candRow []int32   // and their rows (two arrays: 12 bytes a candidate, not a padded 16)
	ge      []int32   // current row: positions at or above the row bracket
	cc      []int32   // current row: positions inside their column bracket
	samp    []float64 // sample buffer
	scratch []float64 // selection scratch (length max(rows, cols))
	rowAbs  []float64 // magnitudes of a row in the row fallback
	fb      []float64 // fallback gather buffer (fbBlock·rows)
	failed  []int32   // columns whose bracket missed
	tieRows []int32   // rows of tied column candidates
	rowPrev int       // rows bracketed from their last cutoff in the last call
	nanI    int       // first NaN found (row, column), or nanI = -1
	nanJ    int
	nnz     int
	rowMiss int // rows redone by exact selection in the last call
}

// NewDense returns a Dense for rows×cols matrices using workers goroutines
// (GOMAXPROCS when workers ≤ 0). It panics if rows or cols is not positive
// or exceeds the int32 range.
func NewDense(rows, cols, workers int) *Dense {
	if rows <= 0 || cols <= 0 || rows > math.MaxInt32 || cols > math.MaxInt32 {
		panic(fmt.Sprintf("sparsify: invalid size %d×%d", rows, cols))
	}
	w := min(kernels.Workers(workers), rows)
	d := &Dense{rows: rows, cols: cols, workers: w, rowZ: defRowZ, colZ: defColZ}
	d.setSamples(defRowSample, defColSample)
	d.ws = make([]denseWorker, w)
	for i := range d.ws {
		d.ws[i].scratch = make([]float64, max(rows, cols))
		d.ws[i].rowAbs = make([]float64, cols)
		d.ws[i].fb = make([]float64, min(fbBlock, cols)*rows)
		d.ws[i].tieRows = make([]int32, 0, rows)
	}
	d.colLo = make([]uint64, cols)
	d.colHi = make([]uint64, cols)
	d.colT = make([]float64, cols)
	d.colLast = make([]int32, cols)
	d.rowT = make([]float64, rows)
	return d
}

// setSamples chooses the sampled row positions and rows (fixed seed, so
// results and timings are reproducible). Sample sizes are capped at the
// line length.
func (d *Dense) setSamples(rowSample, colSample int) {
	rng := rand.New(rand.NewPCG(0x5eed, 0xd15))
	d.rowSamp = d.rowSamp[:0]
	for _, j := range rng.Perm(d.cols)[:min(rowSample, d.cols)] {
		d.rowSamp = append(d.rowSamp, int32(j))
	}
	slices.Sort(d.rowSamp)
	d.colSamp = slices.Clone(rng.Perm(d.rows)[:min(colSample, d.rows)])
	slices.Sort(d.colSamp)
	d.kRow, d.kCol = -1, -1 // force resizing
	d.rowTk = 0
}

// ensure sizes the workspace for the counts kRow, kCol (1 ≤ k ≤ line
// length), growing buffers only when they are too small.
func (d *Dense) ensure(kRow, kCol int) {
	if kRow == d.kRow && kCol == d.kCol {
		return
	}
	d.kRow, d.kCol = kRow, kCol
	d.slot = kRow + 1 // one spare slot for branch-free appends
	d.rbCol = grow(d.rbCol, d.rows*d.slot)
	d.rbVal = grow(d.rbVal, d.rows*d.slot)
	d.rbN = grow(d.rbN, d.rows)

	// Expected fraction of a column inside its bracket, and per-worker
	// capacity with a generous margin (an overflow only costs a fallback).
	frac := 1.0
	if s := len(d.colSamp); kCol < d.rows && s < d.rows {
		hiR, loR := bracketRanks(kCol, d.rows, s, d.colZ)
		if loR <= s {
			frac = float64(loR-max(hiR, 0)+1) / float64(s+1)
		}
	}
	rw := (d.rows + d.workers - 1) / d.workers // rows per worker
	exp := frac * float64(rw)
	d.capCol = min(rw, int(1.25*exp+4*math.Sqrt(exp)+16))
	for i := range d.ws {
		w := &d.ws[i]
		w.above = grow(w.above, d.cols)
		w.cn = grow(w.cn, d.cols)
		w.candV = grow(w.candV, d.cols*d.capCol)
		w.candRow = grow(w.candRow, d.cols*d.capCol)
		w.ge = grow(w.ge, d.cols)
		w.cc = grow(w.cc, d.cols)
		w.samp = grow(w.samp, max(len(d.rowSamp), colBlock*len(d.colSamp)))
	}
}

// Reserve sizes the workspace for counts up to kRow per row and kCol per
// column (clamped to the line lengths), so that a sequence of Apply calls
// with different counts — Algorithm 1 applies T_α once and then T_{γα} —
// reuses one set of buffers instead of holding both at once until the
// garbage collector runs. It panics if a count is negative.
func (d *Dense) Reserve(kRow, kCol int) {
	if kRow < 0 || kCol < 0 {
		panic("sparsify: negative count")
	}
	kRow, kCol = min(kRow, d.cols), min(kCol, d.rows)
	if kRow == 0 || kCol == 0 {
		return
	}
	d.ensure(kRow, kCol)
}

// grow returns s resliced to length n, reallocated if its capacity is too
// small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Apply computes T(A) into out (eq. (sparse_estimator) with the counts
// kRow = ⌊γα·d2⌋ per row and kCol = ⌊γα·d1⌋ per column; see the package
// comment for the exact rule). Counts above the line length are clamped.
// out's slices are reused when large enough. A NaN in A is an error. It
// panics if A's size differs from the Dense's or a count is negative.
func (d *Dense) Apply(a blas64.General, kRow, kCol int, out *Sparse) error {
	if a.Rows != d.rows || a.Cols != d.cols || a.Stride < a.Cols {
		panic(fmt.Sprintf("sparsify: Apply on a %d×%d matrix (stride %d), want %d×%d", a.Rows, a.Cols, a.Stride, d.rows, d.cols))
	}
	if kRow < 0 || kCol < 0 {
		panic("sparsify: negative count")
	}
	kRow, kCol = min(kRow, d.cols), min(kCol, d.rows)
	out.Rows, out.Cols = d.rows, d.cols
	out.RowPtr = grow(out.RowPtr, d.rows+1)
	if kRow == 0 || kCol == 0 {
		clear(out.RowPtr)
		out.ColIdx, out.Val = out.ColIdx[:0], out.Val[:0]
		d.a = a
		defer func() { d.a = blas64.General{} }()
		runOn(&d.wg, d, d.workers, (*Dense).checkNaN)
		return d.nanError()
	}
	d.ensure(kRow, kCol)
	d.a = a
	defer func() { d.a = blas64.General{} }() // do not retain the caller's data

	d.columnBrackets()
	runOn(&d.wg, d, d.workers, (*Dense).rowPass)
	d.rowTk = kRow
	if err := d.nanError(); err != nil {
		d.rowTk = 0
		return err
	}
	runOn(&d.wg, d, d.workers, (*Dense).columnCutoffs)
	d.columnFallback()
	d.assemble(out)
	return nil
}

// misses returns the numbers of rows and columns whose bracket missed in
// the last call (for tests and tuning).
func (d *Dense) misses() (rows, cols int) {
	for w := range d.ws {
		rows += d.ws[w].rowMiss
	}
	return rows, len(d.failed)
}

// prevBracketed returns the number of rows that the last call bracketed
// from their cutoff in the call before (for tests and tuning).
func (d *Dense) prevBracketed() int {
	n := 0
	for w := range d.ws {
		n += d.ws[w].rowPrev
	}
	return n
}

// Bounds of a row's bracket around its cutoff t of the call before, for
// rows too short to sample (prevBracket): [t·prevLo, t·prevHi].
const (
	prevLo = 0.8
	prevHi = 1.25
)

// prevBracket returns the bracket of row i from its cutoff in the call
// before, and whether there is one: only rows too short to sample (a
// sample would be the whole row) are bracketed this way, and only when
// the call before had the same count kRow. A solver applies T to a
// residual that changes little from one iteration to the next, so the
// cutoff mostly stays inside; when it does not, the row takes the exact
// path (rowSelect), with the same answer.
func (d *Dense) prevBracket(i int) (lo, hi float64, ok bool) {
	if d.rowTk != d.kRow {
		return 0, 0, false
	}
	t := d.rowT[i]
	if !(t >= tiny && t*prevHi <= math.MaxFloat64) {
		return 0, 0, false
	}
	return max(t*prevLo, tiny), t * prevHi, true
}

// checkNaN scans worker w's rows of A for NaN (used when the result is
// empty anyway).
func (d *Dense) checkNaN(w int) {
	a := d.a
	ws := &d.ws[w]
	ws.nanI = -1
	lo, hi := split(d.rows, d.workers, w)
	for i := lo; i < hi; i++ {
		if j := firstNaN(a.Data[i*a.Stride : i*a.Stride+a.Cols]); j >= 0 {
			ws.nanI, ws.nanJ = i, j
			return
		}
	}
}

// firstNaN returns the index of the first NaN in x, or -1.
func firstNaN(x []float64) int {
	for j, v := range x {
		if v != v {
			return j
		}
	}
	return -1
}

// nanError returns an error naming the first NaN (in row-major order) that
// the workers found; each worker stops at the first NaN of its rows.
func (d *Dense) nanError() error {
	first := -1
	for w := range d.ws {
		if ws := &d.ws[w]; ws.nanI >= 0 && (first < 0 || ws.nanI < d.ws[first].nanI) {
			first = w
		}
	}
	if first < 0 {
		return nil
	}
	return fmt.Errorf("sparsify: NaN at (%d, %d)", d.ws[first].nanI, d.ws[first].nanJ)
}

// columnBrackets fills colLo and colHi from the sampled rows, in parallel over
// blocks of columns.
func (d *Dense) columnBrackets() {
	s := len(d.colSamp)
	if d.kCol >= d.rows || s >= d.rows {
		// Every column keeps all its non-zeros (kCol = d1), or the sample
		// would be the whole column: bracket everything.
		lo, hi := tiny, math.Inf(1)
		if d.kCol >= d.rows {
			lo = math.Inf(1) // nothing to select; keep the pass cheap
		}
		for j := 0; j < d.cols; j++ {
			d.colLo[j], d.colHi[j] = math.Float64bits(lo), math.Float64bits(hi)
		}
		return
	}
	runOn(&d.wg, d, d.workers, (*Dense).columnBracketsPart)
}

// columnBracketsPart computes the brackets of worker w's column blocks.
func (d *Dense) columnBracketsPart(w int) {
	a := d.a
	s := len(d.colSamp)
	hiR, loR := bracketRanks(d.kCol, d.rows, s, d.colZ)
	nb := (d.cols + colBlock - 1) / colBlock
	buf := d.ws[w].samp[:colBlock*s]
	seg := d.ws[w].scratch[:s]
	blo, bhi := split(nb, d.workers, w)
	for b := blo; b < bhi; b++ {
		j0 := b * colBlock
		j1 := min(j0+colBlock, d.cols)
		nbj := j1 - j0
		// Copy the block's part of every sampled row (contiguous reads
		// and writes), then gather each column from the cached copy.
		for si, r := range d.colSamp {
			row := a.Data[r*a.Stride+j0 : r*a.Stride+j1]
			dst := buf[si*nbj : (si+1)*nbj]
			for jj, x := range row {
				dst[jj] = sampleAbs(x)
			}
		}
		for j := j0; j < j1; j++ {
			for si := range seg {
				seg[si] = buf[si*nbj+j-j0]
			}
			lo, hi := bracket(seg, hiR, loR)
			d.colLo[j], d.colHi[j] = math.Float64bits(lo), math.Float64bits(hi)
		}
	}
}

// signBit is the sign bit of a float64.
const signBit = 1 << 63

// tinyBits is math.Float64bits(tiny).
const tinyBits = 1

// sampleAbs returns |x|, or 0 for NaN (NaNs are reported by the main pass;
// the sample only has to be NaN-free).
func sampleAbs(x float64) float64 {
	v := math.Abs(x)
	if v != v {
		return 0
	}
	return v
}

// rowPass is the streaming pass of worker w over its block of rows: it
// brackets and selects each row's threshold, stores the row's surviving
// entries, and collects the column statistics.
func (d *Dense) rowPass(w int) {
	a := d.a
	ws := &d.ws[w]
	ws.nanI = -1
	ws.rowMiss, ws.rowPrev = 0, 0
	cols, kRow := d.cols, d.kRow
	capCol := d.capCol
	above := ws.above[:cols]
	cn := ws.cn[:cols]
	clear(above)
	clear(cn)
	ge := ws.ge[:cols]
	cc := ws.cc[:cols]
	samp := ws.samp[:len(d.rowSamp)]
	// rowAll: every non-zero of a row survives; sampled: rows are
	// bracketed from a sample (otherwise the bracket is every non-zero).
	rowAll := kRow >= cols
	sampled := !rowAll && len(d.rowSamp) < cols
	var hiR, loR int
	if sampled {
		hiR, loR = bracketRanks(kRow, cols, len(d.rowSamp), d.rowZ)
	}

	// Rows are dealt round-robin, so that each worker sees a like share of
	// every column's candidates even when large values cluster in a block
	// of rows (the candidate lists have room for about 1/workers of them).
	for i := w; i < d.rows; i += d.workers {
		row := a.Data[i*a.Stride : i*a.Stride+cols]
		// Column bookkeeping; this streams the row from memory.
		nc := colScan(row, d.colLo, d.colHi, above, cc)

		// Row bookkeeping, now on the cached row. (A NaN compares above
		// every bracket, so it lands in ge, where rowSelect reports it.)
		rlo, rhi := tiny, math.Inf(1)
		if sampled {
			for s, j := range d.rowSamp {
				samp[s] = sampleAbs(row[j])
			}
			rlo, rhi = bracket(samp, hiR, loR)
		} else if lo, hi, ok := d.prevBracket(i); ok && !rowAll {
			rlo, rhi = lo, hi
			ws.rowPrev++
		}
		ng, na := rowScan(row, math.Float64bits(rlo), math.Float64bits(rhi), ge)
		if !d.rowSelect(ws, i, row, ge[:ng], na, rlo, rhi, rowAll) {
			return // NaN
		}

		for _, j := range cc[:nc] {
			n := cn[j]
			if int(n) < capCol {
				p := int(j)*capCol + int(n)
				ws.candV[p], ws.candRow[p] = math.Abs(row[j]), int32(i)
			}
			cn[j] = n + 1
		}
	}
}

// rowSelect finds row i's cutoff from the entries ge at or above the
// bracket (na of them above it), falling back to exact selection over the
// row, and stores the surviving entries in the row buffer. It returns
// false, recording the position, if the row holds a NaN.
func (d *Dense) rowSelect(ws *denseWorker, i int, row []float64, ge []int32, na int, rlo, rhi float64, rowAll bool) bool {
	k := d.kRow
	// A NaN is in ge if anywhere in the row; collect the magnitudes not
	// above the bracket (the candidates) on the way.
	cand := ws.scratch[:len(ge)]
	nc, nan := 0, 0
	for _, j := range ge {
		v := math.Abs(row[j])
		cand[nc] = v
		nc += b2i(v <= rhi)
		nan |= b2i(v != v)
	}
	if nan != 0 {
		ws.nanI, ws.nanJ = i, firstNaN(row)
		return false
	}
	base := i * d.slot
	dstC := d.rbCol[base : base+d.slot]
	dstV := d.rbVal[base : base+d.slot]
	n := 0
	var t float64 // the cutoff, kept for the next call (prevBracket)
	switch {
	case rowAll || (len(ge) < k && rlo == tiny):
		// Every non-zero survives, and ge holds exactly the non-zeros.
		for _, j := range ge {
			dstC[n], dstV[n] = j, row[j]
			n++
		}
	case na < k && len(ge) >= k:
		// The threshold lies inside the bracket: it is the (k-na)-th
		// largest of the candidates.
		kk := k - na
		t = selection.Select(cand[:nc], kk)
		e := kk - countAbove(cand[:kk-1], t) // ties admitted, by column
		for _, j := range ge {               // branch-free; dst has a spare slot
			x := row[j]
			v := math.Abs(x)
			eq := b2i(v == t)
			ok := b2i(v > t) | eq&b2i(e > 0)
			e -= eq & ok
			dstC[n], dstV[n] = j, x
			n += ok
		}
	default:
		// The bracket missed: exact selection over the whole row.
		ws.rowMiss++
		absRow := ws.rowAbs[:len(row)]
		for j, x := range row {
			absRow[j] = math.Abs(x)
		}
		var last int
		t, last = exactCutoff(absRow, k, ws.scratch)
		for j, v := range absRow {
			if v > 0 && passes(v, t, j, last) {
				dstC[n], dstV[n] = int32(j), row[j]
				n++
			}
		}
	}
	d.rbN[i] = int32(n)
	d.rowT[i] = t
	return true
}

// columnCutoffs computes the cutoffs of worker w's share of the columns
// from the candidates, recording the columns whose bracket missed.
func (d *Dense) columnCutoffs(w int) {
	ws := &d.ws[w]
	ws.failed = ws.failed[:0]
	k := d.kCol
	lo, hi := split(d.cols, d.workers, w)
	if k >= d.rows {
		for j := lo; j < hi; j++ {
			d.colT[j], d.colLast[j] = 0, -1
		}
		return
	}
	capCol := d.capCol
	for j := lo; j < hi; j++ {
		above, nc, over := 0, 0, false
		for v := range d.ws {
			above += int(d.ws[v].above[j])
			n := int(d.ws[v].cn[j])
			nc += n
			over = over || n > capCol
		}
		switch {
		case !over && above < k && above+nc >= k:
			cand := ws.scratch[:0]
			for v := range d.ws {
				p := j * capCol
				cand = append(cand, d.ws[v].candV[p:p+int(d.ws[v].cn[j])]...)
			}
			kk := k - above
			t := selection.Select(cand, kk)
			e := kk - countAbove(cand[:kk-1], t) // ties admitted
			d.colT[j], d.colLast[j] = t, d.tieRow(ws, j, t, e)
		case !over && above+nc < k && d.colLo[j] == tinyBits:
			// Fewer than k non-zeros, all counted: all survive.
			d.colT[j], d.colLast[j] = 0, -1
		default:
			ws.failed = append(ws.failed, int32(j))
		}
	}
}

// tieRow returns the row of the e-th (by row) candidate of column j
// whose magnitude is t, e ≥ 1. The workers' lists are each in row order
// but interleave, so the tie rows are collected and selected; usually
// every tie is admitted and no row is needed.
func (d *Dense) tieRow(ws *denseWorker, j int, t float64, e int) int32 {
	p := j * d.capCol
	rows := ws.tieRows[:0]
	for v := range d.ws {
		w := &d.ws[v]
		for q, x := range w.candV[p : p+int(w.cn[j])] {
			if x == t {
				rows = append(rows, w.candRow[p+q])
			}
		}
	}
	ws.tieRows = rows
	if e >= len(rows) {
		return math.MaxInt32 // every tie is admitted
	}
	slices.Sort(rows)
	return rows[e-1]
}

// columnFallback computes the cutoffs of the columns whose bracket missed
// by exact selection.
func (d *Dense) columnFallback() {
	d.failed = d.failed[:0]
	for w := range d.ws {
		d.failed = append(d.failed, d.ws[w].failed...)
	}
	if len(d.failed) == 0 {
		return
	}
	nb := (len(d.failed) + fbBlock - 1) / fbBlock
	runOn(&d.wg, d, min(d.workers, nb), (*Dense).columnFallbackPart)
}

// columnFallbackPart handles worker w's share of the failed columns,
// gathering fbBlock of them per pass over the rows.
func (d *Dense) columnFallbackPart(w int) {
	a := d.a
	ws := &d.ws[w]
	nb := (len(d.failed) + fbBlock - 1) / fbBlock
	nw := min(d.workers, nb)
	blo, bhi := split(nb, nw, w)
	for b := blo; b < bhi; b++ {
		chunk := d.failed[b*fbBlock : min((b+1)*fbBlock, len(d.failed))]
		for i := 0; i < d.rows; i++ {
			row := a.Data[i*a.Stride : i*a.Stride+d.cols]
			for f, j := range chunk {
				ws.fb[f*d.rows+i] = math.Abs(row[j])
			}
		}
		for f, j := range chunk {
			t, last := exactCutoff(ws.fb[f*d.rows:(f+1)*d.rows], d.kCol, ws.scratch)
			d.colT[j], d.colLast[j] = t, int32(last)
		}
	}
}

// assemble filters the row buffer by the column cutoffs and writes the
// result to out.
func (d *Dense) assemble(out *Sparse) {
	runOn(&d.wg, d, d.workers, (*Dense).filterRows)
	total := 0
	for w := range d.ws {
		total += d.ws[w].nnz
	}
	if cap(out.ColIdx) < total {
		out.ColIdx = make([]int32, total, total+total/8)
	}
	if cap(out.Val) < total {
		out.Val = make([]float64, total, total+total/8)
	}
	out.ColIdx, out.Val = out.ColIdx[:total], out.Val[:total]
	out.RowPtr[0] = 0
	for i := 0; i < d.rows; i++ {
		out.RowPtr[i+1] = out.RowPtr[i] + int(d.rbN[i])
	}
	d.out = out
	runOn(&d.wg, d, d.workers, (*Dense).copyRows)
	d.out = nil
}

// filterRows keeps, in worker w's rows of the row buffer, the entries that
// pass their column's cutoff.
func (d *Dense) filterRows(w int) {
	nnz := 0
	lo, hi := split(d.rows, d.workers, w)
	for i := lo; i < hi; i++ {
		base := i * d.slot
		n := int(d.rbN[i])
		cs := d.rbCol[base : base+n]
		vs := d.rbVal[base : base+n]
		m := 0
		for q, j := range cs { // passes(), branch-free
			x := vs[q]
			v, t := math.Abs(x), d.colT[j]
			cs[m], vs[m] = j, x
			m += b2i(v > t) | b2i(v == t)&b2i(i <= int(d.colLast[j]))
		}
		d.rbN[i] = int32(m)
		nnz += m
	}
	d.ws[w].nnz = nnz
}

// copyRows copies worker w's rows of the row buffer to the output.
func (d *Dense) copyRows(w int) {
	out := d.out
	lo, hi := split(d.rows, d.workers, w)
	for i := lo; i < hi; i++ {
		base := i * d.slot
		n := int(d.rbN[i])
		copy(out.ColIdx[out.RowPtr[i]:], d.rbCol[base:base+n])
		copy(out.Val[out.RowPtr[i]:], d.rbVal[base:base+n])
	}
}
