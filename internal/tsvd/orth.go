package tsvd

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// Bases are dim×c row-major views (Stride ≥ c) whose columns are the basis
// vectors, the layout of the tall-skinny operands of internal/kernels.
// Products with a basis are split into fixed blocks of rows so that the
// results do not depend on the number of workers.

// rowChunk is the number of basis rows per parallel task.
const rowChunk = 1024

// dgksRatio is the reorthogonalization threshold (Daniel–Gragg–Kaufman–
// Stewart): a Gram–Schmidt pass that shrinks a vector to less than this
// fraction of its norm may have lost orthogonality and is repeated.
const dgksRatio = 0.7

// dropRatio: a vector whose remainder after orthogonalization is below
// dropRatio times its original norm lies numerically in the span of the
// basis; the remainder (rounding noise) is dropped and the vector is
// replaced by a random orthonormal one.
const dropRatio = 1e-13

// maxPasses bounds the Gram–Schmidt passes per vector.
const maxPasses = 4

// colRange returns the columns [lo, hi) of g as a view.
func colRange(g blas64.General, lo, hi int) blas64.General {
	if g.Rows == 0 {
		return blas64.General{Cols: hi - lo, Stride: max(g.Stride, 1)}
	}
	return blas64.General{Rows: g.Rows, Cols: hi - lo, Stride: g.Stride, Data: g.Data[lo : (g.Rows-1)*g.Stride+hi]}
}

// rowRange returns the rows [lo, hi) of g as a view.
func rowRange(g blas64.General, lo, hi int) blas64.General {
	if hi == lo {
		return blas64.General{Cols: g.Cols, Stride: g.Stride}
	}
	return blas64.General{Rows: hi - lo, Cols: g.Cols, Stride: g.Stride, Data: g.Data[lo*g.Stride : (hi-1)*g.Stride+g.Cols]}
}

// compact returns a compact rows×cols matrix backed by buf (grown if
// needed).
func compact(buf *[]float64, rows, cols int) blas64.General {
	*buf = grow(*buf, rows*cols)
	return blas64.General{Rows: rows, Cols: cols, Stride: max(cols, 1), Data: (*buf)[:rows*cols]}
}

// basisOps holds the scratch space of products with a basis.
type basisOps struct {
	workers int
	parts   []float64
	tmp     []float64
}

// project sets t (compact q.Cols×y.Cols) = qᵀ·y for q, y with the same
// number of rows; per-chunk partial products are added in chunk order.
func (o *basisOps) project(t, q, y blas64.General) {
	n := q.Rows
	nc := (n + rowChunk - 1) / rowChunk
	size := t.Rows * t.Cols
	if nc == 1 {
		kernels.MulAtX(t, q, y, 1)
		return
	}
	o.parts = grow(o.parts, nc*size)
	kernels.ParallelFor(nc, o.workers, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			a, e := c*rowChunk, min((c+1)*rowChunk, n)
			dst := blas64.General{Rows: t.Rows, Cols: t.Cols, Stride: t.Cols, Data: o.parts[c*size : (c+1)*size]}
			kernels.MulAtX(dst, rowRange(q, a, e), rowRange(y, a, e), 1)
		}
	})
	copy(t.Data, o.parts[:size])
	for c := 1; c < nc; c++ {
		for i, v := range o.parts[c*size : (c+1)*size] {
			t.Data[i] += v
		}
	}
}

// subtract sets y −= q·t.
func (o *basisOps) subtract(y, q, t blas64.General) {
	n, k := y.Rows, y.Cols
	tmp := compact(&o.tmp, n, k)
	nc := (n + rowChunk - 1) / rowChunk
	kernels.ParallelFor(nc, o.workers, 1, func(lo, hi int) {
		a, e := lo*rowChunk, min(hi*rowChunk, n)
		tc := rowRange(tmp, a, e)
		kernels.MulAX(tc, rowRange(q, a, e), t, 1)
		for i := a; i < e; i++ {
			yi := y.Data[i*y.Stride : i*y.Stride+k]
			for j, v := range tmp.Data[i*k : (i+1)*k] {
				yi[j] -= v
			}
		}
	})
}

// combine sets dst (n×k) = q·c.
func (o *basisOps) combine(dst, q, c blas64.General) {
	n := q.Rows
	nc := (n + rowChunk - 1) / rowChunk
	kernels.ParallelFor(nc, o.workers, 1, func(lo, hi int) {
		a, e := lo*rowChunk, min(hi*rowChunk, n)
		kernels.MulAX(rowRange(dst, a, e), rowRange(q, a, e), c, 1)
	})
}

// orthonormalizer orthonormalizes new blocks against a basis.
type orthonormalizer struct {
	basisOps
	rng *rand.Rand
	t   []float64 // projection coefficients
	yt  []float64 // the new block, transposed
}

// block orthonormalizes columns [p, p+b) of the basis (dim×≥p+b) against
// columns [0, p) (assumed orthonormal) and among themselves: block
// classical Gram–Schmidt against the old columns, repeated once when a
// column shrinks below dgksRatio of its norm (DGKS), then
// column-by-column Gram–Schmidt with DGKS reorthogonalization. It stores
// in coef (a (p+b)×b view, zero on entry) the coefficients with
// yⱼ(original) = Σᵢ basisᵢ·coef[i][j], upper triangular in the last b
// rows. Vectors that are numerically in the span of the previous ones are
// replaced by random orthonormal vectors with a zero diagonal coefficient
// (deflation); block returns their number.
func (o *orthonormalizer) block(basis blas64.General, p, b int, coef blas64.General) int {
	dim := basis.Rows
	y := colRange(basis, p, p+b)
	q := colRange(basis, 0, p)
	norm0 := colNorms(y)
	needFull := make([]bool, b)
	if p > 0 {
		t := compact(&o.t, p, b)
		prev := norm0
		for range 2 {
			o.project(t, q, y)
			o.subtract(y, q, t)
			for i := range p {
				for j := range b {
					coef.Data[i*coef.Stride+j] += t.Data[i*b+j]
				}
			}
			cur := colNorms(y)
			again := false
			for j := range b {
				needFull[j] = cur[j] < dgksRatio*prev[j]
				again = again || needFull[j]
			}
			if !again {
				break
			}
			// The second pass settles the columns that needed it; any
			// still shrinking get a full pass below.
			prev = cur
		}
	}
	// Column-by-column work on a transposed copy: row j of yt is yⱼ.
	o.yt = grow(o.yt, b*dim)
	yt := o.yt
	for i := range dim {
		for j, v := range y.Data[i*y.Stride : i*y.Stride+b] {
			yt[j*dim+i] = v
		}
	}
	deflated := 0
	for j := range b {
		yj := yt[j*dim : (j+1)*dim]
		prev := norm(yj)
		cur := prev
		for pass := 0; pass < maxPasses; pass++ {
			full := pass > 0 || needFull[j]
			cur = o.vector(yj, q, yt, j, full, coef, p, j)
			if cur >= dgksRatio*prev {
				break
			}
			prev = cur
		}
		// A negligible remainder (rounding noise) is replaced.
		if cur <= dropRatio*norm0[j] || !(cur > 0) || math.IsInf(cur, 0) {
			deflated++
			o.random(yj, q, yt, j)
			continue
		}
		coef.Data[(p+j)*coef.Stride+j] += cur
		scale(yj, 1/cur)
	}
	for i := range dim {
		yi := y.Data[i*y.Stride : i*y.Stride+b]
		for j := range yi {
			yi[j] = yt[j*dim+i]
		}
	}
	return deflated
}

// vector runs one Gram–Schmidt pass of y against rows [0, k) of yt and,
// when full, against the columns of q, adding the coefficients to column
// col of coef (rows of q first, then rows off+i for the rows of yt) unless
// coef is empty; it returns the new norm of y.
func (o *orthonormalizer) vector(y []float64, q blas64.General, yt []float64, k int, full bool, coef blas64.General, off, col int) float64 {
	dim := len(y)
	if full && q.Cols > 0 {
		yv := blas64.General{Rows: dim, Cols: 1, Stride: 1, Data: y}
		t := compact(&o.t, q.Cols, 1)
		o.project(t, q, yv)
		o.subtract(yv, q, t)
		if coef.Data != nil {
			for i, v := range t.Data {
				coef.Data[i*coef.Stride+col] += v
			}
		}
	}
	for i := range k {
		w := yt[i*dim : (i+1)*dim]
		d := blas64.Dot(blas64.Vector{N: dim, Inc: 1, Data: w}, blas64.Vector{N: dim, Inc: 1, Data: y})
		blas64.Axpy(-d, blas64.Vector{N: dim, Inc: 1, Data: w}, blas64.Vector{N: dim, Inc: 1, Data: y})
		if coef.Data != nil {
			coef.Data[(off+i)*coef.Stride+col] += d
		}
	}
	return norm(y)
}

// random replaces y by a random unit vector orthogonal to the columns of q
// and to rows [0, k) of yt.
func (o *orthonormalizer) random(y []float64, q blas64.General, yt []float64, k int) {
	for {
		for i := range y {
			y[i] = o.rng.NormFloat64()
		}
		prev := norm(y)
		// A random vector has a small component in any fixed subspace of
		// dimension < len(y), so a few passes always succeed.
		for range maxPasses {
			cur := o.vector(y, q, yt, k, true, blas64.General{}, 0, 0)
			if cur >= dgksRatio*prev && cur > 0 {
				scale(y, 1/cur)
				return
			}
			prev = cur
		}
	}
}

// colNorms returns the Euclidean norms of the columns of g, scaled by the
// largest magnitude of each column to avoid overflow.
func colNorms(g blas64.General) []float64 {
	big := make([]float64, g.Cols)
	for i := range g.Rows {
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			big[j] = max(big[j], math.Abs(v))
		}
	}
	s := make([]float64, g.Cols)
	for i := range g.Rows {
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			if big[j] > 0 {
				v /= big[j]
				s[j] += v * v
			}
		}
	}
	for j := range s {
		s[j] = big[j] * math.Sqrt(s[j])
	}
	return s
}

func norm(x []float64) float64 {
	return blas64.Nrm2(blas64.Vector{N: len(x), Inc: 1, Data: x})
}

func scale(x []float64, a float64) {
	for i := range x {
		x[i] *= a
	}
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
