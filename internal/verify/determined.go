package verify

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// Determined is the least ratio, for every line of partial data, of the
// smallest eigenvalue of G = Σ q_j q_jᵀ over the line's observed entries
// outside S (q_j the rows of an orthonormal basis of the other side's
// factor) to n/d, its mean under uniform sampling (n entries of d). A
// line below it leaves a direction of M free: its part of M is fitted to
// entries that do not see that direction, and any multiple of it fits
// them as well (CheckSampled). A direction the line does not see shows
// at rounding (1e-16 to 1e-13 where a rank set one above the data's let
// ALS put its extra component there); random samples of incoherent
// factors fall below 0.03 once in a thousand with 2k + 2 entries, and
// below 1.4e-5 with k + 1 at k = 10 (TestDeterminedMargin).
const Determined = 1e-9

// Undetermined looks for a line of the observed entries o whose factor
// its entries outside S do not fix (Determined): with qu and qv
// orthonormal bases of M's column and row spaces, row i is fixed when
// G_i = Σ_{j ∈ Φ_i∖S} qv_j qv_jᵀ has every eigenvalue at least
// Determined·n_i/d2, and column j likewise with qu. A rank set above the
// data's lets a method put its extra component where a line is not
// observed, or observed only through S, and fit every entry with a wrong
// M. A nil o is a dense Y. It returns the first such line, rows before
// columns (col tells a column), with its ratio λ_min(G)·d/n; the lines
// are tested on up to workers goroutines (GOMAXPROCS when workers ≤ 0),
// and the answer does not depend on them.
func Undetermined(o *observed.Matrix, qu, qv blas64.General, sp CSR, workers int) (line int, col bool, ratio float64, found bool) {
	d1, d2 := qu.Rows, qv.Rows
	var levU, levV []float64 // the dense test's bound
	if o == nil {
		levU, levV = leverages(qu), leverages(qv)
	}
	w := kernels.GramStride(qu.Cols)
	if qu.Rows*w <= paddedMax {
		qu = padded(qu, w)
	}
	if qv.Rows*w <= paddedMax {
		qv = padded(qv, w)
	}
	var colPtr []int
	var rowsOfS []int32 // S by columns, formed only for the column pass
	var rows, cols func(l int, g *lineGram) (float64, bool)
	if o == nil {
		rows = func(i int, g *lineGram) (float64, bool) {
			return g.complement(qv, levV, sp.ColIdx[sp.RowPtr[i]:sp.RowPtr[i+1]])
		}
		cols = func(j int, g *lineGram) (float64, bool) {
			return g.complement(qu, levU, rowsOfS[colPtr[j]:colPtr[j+1]])
		}
	} else {
		rows = func(i int, g *lineGram) (float64, bool) {
			return g.outside(qv, o.ColIdx[o.RowPtr[i]:o.RowPtr[i+1]], sp.ColIdx[sp.RowPtr[i]:sp.RowPtr[i+1]])
		}
		cols = func(j int, g *lineGram) (float64, bool) {
			return g.outside(qu, o.RowIdx[o.ColPtr[j]:o.ColPtr[j+1]], rowsOfS[colPtr[j]:colPtr[j+1]])
		}
	}
	if line, ratio, found = firstFree(d1, qu.Cols, workers, rows); found {
		return line, false, ratio, true
	}
	colPtr, rowsOfS = sp.byColumns(d2, workers)
	line, ratio, found = firstFree(d2, qu.Cols, workers, cols)
	return line, true, ratio, found
}

// byColumns returns S's pattern by columns: the rows of column j's
// entries, in increasing order, are rows[ptr[j]:ptr[j+1]]. The rows are
// split among up to workers goroutines, each counting its rows' entries
// by column and then placing them after those of the rows before.
func (sp CSR) byColumns(cols, workers int) (ptr []int, rows []int32) {
	nr := len(sp.RowPtr) - 1
	parts := max(1, min(kernels.Workers(workers), len(sp.ColIdx)/(1<<16)))
	bound := func(t int) int { return nr * t / parts }
	counts := make([][]int, parts)
	kernels.ForEach(parts, parts, func(t int) {
		c := make([]int, cols)
		for _, j := range sp.ColIdx[sp.RowPtr[bound(t)]:sp.RowPtr[bound(t+1)]] {
			c[j]++
		}
		counts[t] = c
	})
	// counts[t][j] becomes where part t starts in column j.
	ptr = make([]int, cols+1)
	at := 0
	for j := range cols {
		ptr[j] = at
		for t := range parts {
			c := counts[t][j]
			counts[t][j] = at
			at += c
		}
	}
	ptr[cols] = at
	rows = make([]int32, len(sp.ColIdx))
	kernels.ForEach(parts, parts, func(t int) {
		next := counts[t]
		for i := bound(t); i < bound(t+1); i++ {
			for _, j := range sp.ColIdx[sp.RowPtr[i]:sp.RowPtr[i+1]] {
				rows[next[j]] = int32(i)
				next[j]++
			}
		}
	})
	return ptr, rows
}

// paddedMax bounds the values of a padded copy of a basis (32 MB): a
// larger basis (d = 10⁶ at k = 10 would take 96 MB a side) is gathered
// from in place, a value at a time.
const paddedMax = 1 << 22

// padded returns q's rows with stride w, zeros after the k values, for
// gather to copy whole.
func padded(q blas64.General, w int) blas64.General {
	p := blas64.General{Rows: q.Rows, Cols: q.Cols, Stride: w, Data: make([]float64, q.Rows*w)}
	for i := range q.Rows {
		copy(p.Data[i*w:i*w+q.Cols], q.Data[i*q.Stride:i*q.Stride+q.Cols])
	}
	return p
}

// leverages returns the squared norms of q's rows.
func leverages(q blas64.General) []float64 {
	lev := make([]float64, q.Rows)
	for i := range lev {
		lev[i] = kernels.VecSumSq(q.Data[i*q.Stride : i*q.Stride+q.Cols])
	}
	return lev
}

// firstFree runs test on lines 0 … n−1 in parallel and returns the
// lowest line it finds free, with its ratio.
func firstFree(n, k, workers int, test func(l int, g *lineGram) (float64, bool)) (line int, ratio float64, found bool) {
	var mu sync.Mutex
	line = n
	kernels.ParallelFor(n, workers, 256, func(lo, hi int) {
		g := newLineGram(k)
		for l := lo; l < hi; l++ {
			if r, bad := test(l, g); bad {
				mu.Lock()
				if l < line {
					line, ratio = l, r
				}
				mu.Unlock()
				return
			}
		}
	})
	return line, ratio, line < n
}

// lineGram is the Gram matrix of one line's rows of a basis, and what
// tests it.
type lineGram struct {
	k, w  int       // the rank, and the stride of a gathered row (kernels.GramStride)
	block []float64 // the line's rows of the basis, one after another
	kept  []int32   // a line's entries outside S
	lower []float64 // their Gram matrix's lower triangle, w×w row-major
	fact  []float64 // its Cholesky factor
}

func newLineGram(k int) *lineGram {
	w := kernels.GramStride(k)
	return &lineGram{k: k, w: w, lower: make([]float64, w*w), fact: make([]float64, w*w)}
}

// outside tests the line observing the entries at (increasing) of which
// those in s (increasing, a subset) are S's: its Gram matrix is Σ q_j q_jᵀ
// over the others.
func (l *lineGram) outside(q blas64.General, at, s []int32) (float64, bool) {
	kept := l.kept[:0]
	for _, j := range at {
		for len(s) > 0 && s[0] < j {
			s = s[1:]
		}
		if len(s) > 0 && s[0] == j {
			continue
		}
		kept = append(kept, j)
	}
	l.kept = kept
	n := len(kept)
	l.gather(q, kept)
	l.form(0, 1)
	return l.test(n, q.Rows)
}

// complement tests a line of a dense Y whose entries in S are at: its
// Gram matrix is I − Σ q_j q_jᵀ over them (q orthonormal). Its least
// eigenvalue is at least 1 − Σ ‖q_j‖² (lev holds the squared norms), so
// most lines need no matrix.
func (l *lineGram) complement(q blas64.General, lev []float64, at []int32) (float64, bool) {
	d := q.Rows
	n := d - len(at)
	t := 0.0
	for _, j := range at {
		t += lev[j]
	}
	floor := Determined * float64(n) / float64(d)
	if 1-t > floor+64*epsilon*float64(len(at)+l.k) {
		return 0, false
	}
	l.gather(q, at)
	l.form(1, -1)
	return l.test(n, d)
}

// epsilon is the float64 unit roundoff.
const epsilon = 0x1p-53

// gather copies the rows at of q one after another into the block, at
// the lineGram's stride: whole rows when q is padded to it, else the k
// values of each, the block's padding staying zero (it is never written).
func (l *lineGram) gather(q blas64.General, at []int32) {
	w, k := l.w, l.k
	if cap(l.block) < len(at)*w {
		l.block = make([]float64, len(at)*w)
	}
	l.block = l.block[:len(at)*w]
	switch {
	case q.Stride == 12 && w == 12:
		for r, j := range at {
			dst, src := (*[12]float64)(l.block[r*12:]), (*[12]float64)(q.Data[int(j)*12:])
			for c := range 12 {
				dst[c] = src[c]
			}
		}
	default:
		// A basis read in place is too large for the cache: the rows of
		// each block of entries are asked for before any is copied, so
		// that their misses overlap (kernels.PrefetchRows).
		for b := 0; b < len(at); b += gatherBlock {
			blk := at[b:min(len(at), b+gatherBlock)]
			kernels.PrefetchRows(q.Data, blk, q.Stride, k)
			for r, j := range blk {
				dst, src := l.block[(b+r)*w:(b+r)*w+k], q.Data[int(j)*q.Stride:][:k]
				for c := range dst {
					dst[c] = src[c]
				}
			}
		}
	}
}

// gatherBlock is how many rows gather asks for ahead of copying them:
// few enough that they are still in the cache when copied.
const gatherBlock = 128

// form sets the lower triangle to diag·I + sign·Σ q_j q_jᵀ over the
// gathered rows.
func (l *lineGram) form(diag, sign float64) {
	clear(l.lower)
	if len(l.block) > 0 {
		kernels.Gram(l.lower, l.block, l.w)
	}
	for a := range l.k {
		row := l.lower[a*l.w : a*l.w+a+1]
		for b := range row {
			row[b] *= sign
		}
		row[a] += diag
	}
}

// test reports whether the Gram matrix of a line of n entries out of d
// has an eigenvalue below Determined·n/d, and its ratio λ_min·d/n then:
// a Cholesky factorisation of G − floor·I tells, and only a line it
// fails needs the eigenvalues.
func (l *lineGram) test(n, d int) (float64, bool) {
	floor := Determined * float64(n) / float64(d)
	copy(l.fact, l.lower)
	for c := range l.k {
		l.fact[c*l.w+c] -= floor
	}
	if kernels.CholeskyFactor(l.fact, l.k, l.w, 0) {
		return 0, false
	}
	g := mat.NewSymDense(l.k, nil)
	for a := range l.k {
		for b := a; b < l.k; b++ {
			g.SetSym(a, b, l.lower[b*l.w+a])
		}
	}
	var eig mat.EigenSym
	lmin := 0.0
	if eig.Factorize(g, false) {
		lmin = math.Max(eig.Values(nil)[0], 0)
	}
	return lmin * float64(d) / float64(max(n, 1)), true
}
