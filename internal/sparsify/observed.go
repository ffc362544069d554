package sparsify

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// Observed computes T on Π_Φ(A) for the observed set Φ of m (Algorithm 2,
// lines 1 and 6): selection in a row or column runs over that line's
// observed entries only. The workspace is reused across calls; it holds
// one float64 per observed entry.
//
// Algorithm. First the magnitudes are copied into column-major order, in
// parallel over blocks of rows: each worker streams its rows and writes
// every entry to the next free slot of its column (scattered writes cost
// less than gathering each column through m.Perm, about 2× in our
// measurements). Then each column's cutoff is found by linear-time
// selection (exactCutoff, or a sampled bracket for long columns), in
// parallel over blocks of columns with about equal numbers of entries.
// Last, in parallel over blocks of rows, each row's cutoff is selected the
// same way and keep is written for the row's entries in one pass.
type Observed struct {
	m        *observed.Matrix
	workers  int
	rowParts []int // row blocks: worker w owns rows [rowParts[w], rowParts[w+1])
	colParts []int
	colVals  []float64 // magnitudes in column-major (CSC) order
	colT     []float64 // column cutoffs (see passes)
	colLast  []int32
	ws       []obsWorker

	// State of the call in progress.
	vals       []float64
	keep       []bool
	kRow, kCol int
	frac       float64 // > 0: each line keeps Count(frac, its observed entries)
	wg         sync.WaitGroup
}

// obsWorker is the private workspace of one goroutine.
type obsWorker struct {
	start   []int32   // CSC slot of the first entry of each column in this worker's rows
	next    []int32   // next free CSC slot of each column
	line    []float64 // magnitudes of the current row
	scratch []float64 // selection scratch
	samp    []float64 // sample buffer of long lines
	nanQ    int       // CSR position of the first NaN found, or -1
}

// NewObserved returns an Observed for the pattern of m using workers
// goroutines (GOMAXPROCS when workers ≤ 0). m's pattern must not change
// while the Observed is in use.
func NewObserved(m *observed.Matrix, workers int) *Observed {
	w := max(1, min(kernels.Workers(workers), m.Rows, m.Cols))
	o := &Observed{
		m: m, workers: w,
		colVals: make([]float64, m.NNZ()),
		colT:    make([]float64, m.Cols),
		colLast: make([]int32, m.Cols),
	}
	o.rowParts = observed.BalanceLines(m.RowPtr, w)
	o.colParts = observed.BalanceLines(m.ColPtr, w)
	longest := 0
	for i := 0; i < m.Rows; i++ {
		longest = max(longest, m.RowPtr[i+1]-m.RowPtr[i])
	}
	for j := 0; j < m.Cols; j++ {
		longest = max(longest, m.ColPtr[j+1]-m.ColPtr[j])
	}
	o.ws = make([]obsWorker, w)
	next := make([]int32, m.Cols)
	for j := range next {
		next[j] = int32(m.ColPtr[j])
	}
	for i := range o.ws {
		ws := &o.ws[i]
		ws.start = slices.Clone(next)
		ws.next = make([]int32, m.Cols)
		ws.line = make([]float64, longest)
		ws.scratch = make([]float64, longest)
		ws.samp = make([]float64, lineSample)
		for _, c := range m.ColIdx[m.RowPtr[o.rowParts[i]]:m.RowPtr[o.rowParts[i+1]]] {
			next[c]++
		}
	}
	return o
}

// Apply sets keep[q] for the CSR positions q of m whose value vals[q] is
// kept by T applied to Π_Φ(A), where vals[q] is the value of A at the q-th
// observed entry (the same order as m.Val); kRow and kCol are the counts
// per row and column (⌊γpα·d2⌋ and ⌊γpα·d1⌋ in Algorithm 2). A line with at
// most that many observed entries keeps all of its non-zeros. A NaN in vals
// is an error. It panics if len(vals) or len(keep) differs from m.NNZ() or
// a count is negative.
func (o *Observed) Apply(vals []float64, kRow, kCol int, keep []bool) error {
	o.checkLengths(vals, keep)
	if kRow < 0 || kCol < 0 {
		panic("sparsify: negative count")
	}
	if kRow == 0 || kCol == 0 {
		return o.keepNone(vals, keep)
	}
	return o.apply(vals, kRow, kCol, 0, keep)
}

// ApplyFraction is Apply with counts per line: a row or column with n
// observed entries keeps Count(frac, n) of them (T on Π_Φ(A) with the
// fraction taken of each line's observed entries, not of its length). A
// line with fewer than 1/frac entries keeps none.
func (o *Observed) ApplyFraction(vals []float64, frac float64, keep []bool) error {
	o.checkLengths(vals, keep)
	if !(frac > 0) {
		return o.keepNone(vals, keep)
	}
	return o.apply(vals, 0, 0, frac, keep)
}

// checkLengths panics unless vals and keep have one element per observed
// entry.
func (o *Observed) checkLengths(vals []float64, keep []bool) {
	if n := o.m.NNZ(); len(vals) != n || len(keep) != n {
		panic(fmt.Sprintf("sparsify: Observed with %d values and %d flags, want %d", len(vals), len(keep), n))
	}
}

// keepNone clears keep, reporting a NaN in vals.
func (o *Observed) keepNone(vals []float64, keep []bool) error {
	clear(keep)
	for q, v := range vals {
		if v != v {
			return o.nanAt(q)
		}
	}
	return nil
}

// apply runs the three passes with counts kRow, kCol, or per-line counts
// for frac > 0.
func (o *Observed) apply(vals []float64, kRow, kCol int, frac float64, keep []bool) error {
	o.vals, o.keep, o.kRow, o.kCol, o.frac = vals, keep, kRow, kCol, frac
	runOn(&o.wg, o, o.workers, (*Observed).transpose)
	runOn(&o.wg, o, o.workers, (*Observed).columns)
	runOn(&o.wg, o, o.workers, (*Observed).rows)
	o.vals, o.keep = nil, nil // do not retain the caller's data
	for w := range o.ws {
		if q := o.ws[w].nanQ; q >= 0 {
			return o.nanAt(q)
		}
	}
	return nil
}

// nanAt returns the error for a NaN at CSR position q.
func (o *Observed) nanAt(q int) error {
	m := o.m
	// Row of q: the last i with RowPtr[i] ≤ q (binary search).
	lo, hi := 0, m.Rows-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if m.RowPtr[mid] <= q {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return fmt.Errorf("sparsify: NaN at (%d, %d) (observed entry %d)", lo, m.ColIdx[q], q)
}

// transpose writes the magnitudes of worker w's rows to colVals.
func (o *Observed) transpose(w int) {
	m, vals := o.m, o.vals
	next := o.ws[w].next
	copy(next, o.ws[w].start)
	lo, hi := m.RowPtr[o.rowParts[w]], m.RowPtr[o.rowParts[w+1]]
	cols := m.ColIdx[lo:hi]
	for q, x := range vals[lo:hi] {
		c := cols[q]
		p := next[c]
		next[c] = p + 1
		o.colVals[p] = math.Abs(x)
	}
}

// columns computes the cutoffs of worker w's columns. NaNs are not checked
// here: rows sees every entry and reports them.
func (o *Observed) columns(w int) {
	m, k := o.m, o.kCol
	ws := &o.ws[w]
	for j := o.colParts[w]; j < o.colParts[w+1]; j++ {
		lo, hi := m.ColPtr[j], m.ColPtr[j+1]
		if o.frac > 0 {
			if k = Count(o.frac, hi-lo); k == 0 {
				o.colT[j], o.colLast[j] = math.Inf(1), -1 // keeps nothing
				continue
			}
		}
		if k >= hi-lo {
			o.colT[j], o.colLast[j] = 0, -1
			continue
		}
		t, last := lineCutoff(o.colVals[lo:hi], k, ws.scratch, ws.samp)
		o.colT[j], o.colLast[j] = t, -1
		if last >= 0 {
			o.colLast[j] = m.RowIdx[lo+last]
		}
	}
}

// rows computes the cutoffs of worker w's rows and writes keep for their
// entries.
func (o *Observed) rows(w int) {
	m, vals, k, keep := o.m, o.vals, o.kRow, o.keep
	ws := &o.ws[w]
	ws.nanQ = -1
	colT, colLast := o.colT, o.colLast
	for i := o.rowParts[w]; i < o.rowParts[w+1]; i++ {
		lo, hi := m.RowPtr[i], m.RowPtr[i+1]
		n := hi - lo
		line := ws.line[:n]
		nan := 0
		for q, x := range vals[lo:hi] {
			v := math.Abs(x)
			line[q] = v
			nan |= b2i(v != v)
		}
		if nan != 0 {
			ws.nanQ = lo + firstNaN(vals[lo:hi])
			return
		}
		if o.frac > 0 {
			k = Count(o.frac, n)
		}
		t, last := 0.0, -1
		switch {
		case k == 0:
			t = math.Inf(1) // keeps nothing
		case k < n:
			t, last = lineCutoff(line, k, ws.scratch, ws.samp)
		}
		cols := m.ColIdx[lo:hi]
		kp := keep[lo:hi]
		for q, v := range line { // passes() for row and column
			j := cols[q]
			ct := colT[j]
			row := b2i(v > t) | b2i(v == t)&b2i(q <= last)
			col := b2i(v > ct)
			if v == ct { // rare: only the threshold entry and its ties
				col = b2i(i <= int(colLast[j]))
			}
			kp[q] = b2i(v > 0)&row&col != 0
		}
	}
}
