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
// observed, and fit every entry with a wrong M. It returns the first such
// line, rows before columns (col tells a column), with its ratio
// λ_min(G)·d/n; the lines are tested on up to workers goroutines
// (GOMAXPROCS when workers ≤ 0), and the answer does not depend on them.
func Undetermined(o *observed.Matrix, qu, qv blas64.General, sp CSR, workers int) (line int, col bool, ratio float64, found bool) {
	rows := func(i int, g *lineGram) (float64, bool) {
		g.reset()
		n, s := 0, sp.RowPtr[i]
		for q := o.RowPtr[i]; q < o.RowPtr[i+1]; q++ {
			j := o.ColIdx[q]
			for s < sp.RowPtr[i+1] && sp.ColIdx[s] < j {
				s++
			}
			if s < sp.RowPtr[i+1] && sp.ColIdx[s] == j {
				continue
			}
			g.add(qv, int(j))
			n++
		}
		return g.test(n, o.Cols)
	}
	if line, ratio, found = firstFree(o.Rows, qu.Cols, workers, rows); found {
		return line, false, ratio, true
	}
	// S by columns, to skip its entries in the column pass.
	colPtr := make([]int, o.Cols+1)
	for _, j := range sp.ColIdx {
		colPtr[j+1]++
	}
	for j := range o.Cols {
		colPtr[j+1] += colPtr[j]
	}
	rowsOfS, next := make([]int32, len(sp.ColIdx)), append([]int(nil), colPtr[:o.Cols]...)
	for i := range o.Rows {
		for s := sp.RowPtr[i]; s < sp.RowPtr[i+1]; s++ {
			j := sp.ColIdx[s]
			rowsOfS[next[j]] = int32(i)
			next[j]++
		}
	}
	cols := func(j int, g *lineGram) (float64, bool) {
		g.reset()
		n, s := 0, colPtr[j]
		for q := o.ColPtr[j]; q < o.ColPtr[j+1]; q++ {
			i := o.RowIdx[q]
			for s < colPtr[j+1] && rowsOfS[s] < i {
				s++
			}
			if s < colPtr[j+1] && rowsOfS[s] == i {
				continue
			}
			g.add(qu, int(i))
			n++
		}
		return g.test(n, o.Rows)
	}
	line, ratio, found = firstFree(o.Cols, qu.Cols, workers, cols)
	return line, true, ratio, found
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
	k    int
	g    *mat.SymDense
	raw  blas64.Symmetric // g's upper triangle
	chol mat.Cholesky
	eig  mat.EigenSym
}

func newLineGram(k int) *lineGram {
	g := mat.NewSymDense(k, nil)
	return &lineGram{k: k, g: g, raw: g.RawSymmetric()}
}

func (l *lineGram) reset() { l.g.Zero() }

// add adds the outer product of row at of q.
func (l *lineGram) add(q blas64.General, at int) {
	row := q.Data[at*q.Stride : at*q.Stride+l.k]
	for a, x := range row {
		gr := l.raw.Data[a*l.raw.Stride+a : a*l.raw.Stride+l.k]
		for b, y := range row[a:] {
			gr[b] += x * y
		}
	}
}

// test reports whether the Gram matrix of a line of n entries out of d
// has an eigenvalue below Determined·n/d, and its ratio λ_min·d/n then.
// It changes the matrix.
func (l *lineGram) test(n, d int) (float64, bool) {
	floor := Determined * float64(n) / float64(d)
	for c := range l.k {
		l.g.SetSym(c, c, l.g.At(c, c)-floor)
	}
	if l.chol.Factorize(l.g) {
		return 0, false
	}
	for c := range l.k {
		l.g.SetSym(c, c, l.g.At(c, c)+floor)
	}
	lmin := 0.0
	if l.eig.Factorize(l.g, false) {
		lmin = math.Max(l.eig.Values(nil)[0], 0)
	}
	return lmin * float64(d) / float64(max(n, 1)), true
}
