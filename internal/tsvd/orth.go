package tsvd

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// Bases are stored transposed: a basis of k vectors of length dim is a
// k×dim row-major matrix whose rows are the (contiguous) vectors. Long
// operations split the length into fixed chunks so that results do not
// depend on the number of workers.

// chunk is the number of vector entries per parallel task.
const chunk = 2048

// dgksRatio is the reorthogonalization threshold (Daniel–Gragg–Kaufman–
// Stewart): a Gram–Schmidt pass that shrinks a vector to less than this
// fraction of its norm may have lost orthogonality and is repeated.
const dgksRatio = 0.7

// dropRatio: a vector that has shrunk below dropRatio times its original
// norm after repeated passes is treated as lying in the span of the basis;
// its remainder (a rounding-level ≤ dropRatio·‖y‖ perturbation) is dropped
// and it is replaced by a random orthonormal vector.
const dropRatio = 1e-13

// rowsView returns rows [lo, hi) of a basis with vectors of length dim.
func rowsView(data []float64, lo, hi, dim int) blas64.General {
	return blas64.General{Rows: hi - lo, Cols: dim, Stride: dim, Data: data[lo*dim : hi*dim]}
}

// colRange returns the columns [lo, hi) of g as a view.
func colRange(g blas64.General, lo, hi int) blas64.General {
	if g.Rows == 0 {
		return blas64.General{Cols: hi - lo, Stride: g.Stride}
	}
	return blas64.General{Rows: g.Rows, Cols: hi - lo, Stride: g.Stride, Data: g.Data[lo : (g.Rows-1)*g.Stride+hi]}
}

// project sets t (q.Rows×y.Rows, compact) = q·yᵀ: t[i][j] = ⟨qᵢ, yⱼ⟩. The
// partial sums of each chunk are added in chunk order.
func project(t []float64, q, y blas64.General, workers int) {
	k, b, dim := q.Rows, y.Rows, q.Cols
	clear(t[:k*b])
	nc := (dim + chunk - 1) / chunk
	if nc == 1 {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, q, y, 0, blas64.General{Rows: k, Cols: b, Stride: b, Data: t})
		return
	}
	parts := make([]float64, nc*k*b)
	kernels.ParallelFor(nc, workers, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			a, e := c*chunk, min((c+1)*chunk, dim)
			dst := blas64.General{Rows: k, Cols: b, Stride: b, Data: parts[c*k*b : (c+1)*k*b]}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, colRange(q, a, e), colRange(y, a, e), 0, dst)
		}
	})
	for c := 0; c < nc; c++ {
		for i, v := range parts[c*k*b : (c+1)*k*b] {
			t[i] += v
		}
	}
}

// subtract sets y −= tᵀ·q, with t q.Rows×y.Rows compact.
func subtract(y, q blas64.General, t []float64, workers int) {
	k, b, dim := q.Rows, y.Rows, q.Cols
	tg := blas64.General{Rows: k, Cols: b, Stride: b, Data: t}
	nc := (dim + chunk - 1) / chunk
	kernels.ParallelFor(nc, workers, 1, func(lo, hi int) {
		a, e := lo*chunk, min(hi*chunk, dim)
		blas64.Gemm(blas.Trans, blas.NoTrans, -1, tg, colRange(q, a, e), 1, colRange(y, a, e))
	})
}

// orthonormalizer orthonormalizes new blocks against a basis.
type orthonormalizer struct {
	workers int
	rng     *rand.Rand
	t       []float64 // scratch for projections
}

func norm(x []float64) float64 {
	return blas64.Nrm2(blas64.Vector{N: len(x), Inc: 1, Data: x})
}

// block orthonormalizes rows [p, p+b) of the basis data (vectors of
// length dim) against rows [0, p) (assumed orthonormal) and among
// themselves, by block classical Gram–Schmidt run twice followed by
// column-wise Gram–Schmidt with DGKS reorthogonalization. It stores in
// coef (a (p+b)×b view) the coefficients with yⱼ(original) =
// Σᵢ rowᵢ·coef[i][j], upper triangular in its last b rows; coef must be
// zero on entry. Vectors that are numerically in the span of the previous
// ones are replaced by random orthonormal vectors with a zero diagonal
// coefficient (deflation). It returns the number of such replacements.
func (o *orthonormalizer) block(data []float64, dim, p, b int, coef blas64.General) int {
	y := rowsView(data, p, p+b, dim)
	norm0 := make([]float64, b)
	for j := range b {
		norm0[j] = norm(y.Data[j*dim : (j+1)*dim])
	}
	needFull := make([]bool, b)
	if p > 0 {
		q := rowsView(data, 0, p, dim)
		o.t = grow(o.t, p*b)
		var mid []float64
		for pass := range 2 {
			project(o.t, q, y, o.workers)
			subtract(y, q, o.t, o.workers)
			for i := range p {
				for j := range b {
					coef.Data[i*coef.Stride+j] += o.t[i*b+j]
				}
			}
			if pass == 0 {
				mid = make([]float64, b)
				for j := range b {
					mid[j] = norm(y.Data[j*dim : (j+1)*dim])
				}
			}
		}
		for j := range b {
			needFull[j] = norm(y.Data[j*dim:(j+1)*dim]) < dgksRatio*mid[j]
		}
	}
	deflated := 0
	for j := range b {
		row := p + j
		yj := data[row*dim : (row+1)*dim]
		prev := norm(yj)
		cur := prev
		ok := false
		for pass := 0; pass < 4; pass++ {
			lo := p
			if pass > 0 || needFull[j] {
				lo = 0
			}
			cur = o.vector(data, dim, lo, row, coef, j)
			if cur >= dgksRatio*prev {
				ok = true
				break
			}
			prev = cur
		}
		if !ok && cur <= dropRatio*norm0[j] || cur == 0 || math.IsNaN(cur) {
			deflated++
			coef.Data[row*coef.Stride+j] = 0
			o.random(data, dim, row)
			continue
		}
		coef.Data[row*coef.Stride+j] += cur
		scale(yj, 1/cur)
	}
	return deflated
}

// vector runs one Gram–Schmidt pass of row against rows [lo, row),
// adding the coefficients to column j of coef, and returns the new norm.
func (o *orthonormalizer) vector(data []float64, dim, lo, row int, coef blas64.General, j int) float64 {
	yj := rowsView(data, row, row+1, dim)
	if row > lo {
		q := rowsView(data, lo, row, dim)
		k := row - lo
		o.t = grow(o.t, k)
		project(o.t, q, yj, o.workers)
		subtract(yj, q, o.t, o.workers)
		if coef.Data != nil {
			for i := range k {
				coef.Data[(lo+i)*coef.Stride+j] += o.t[i]
			}
		}
	}
	return norm(yj.Data)
}

// random replaces row by a random unit vector orthogonal to rows [0, row).
func (o *orthonormalizer) random(data []float64, dim, row int) {
	yj := data[row*dim : (row+1)*dim]
	for {
		for i := range yj {
			yj[i] = o.rng.NormFloat64()
		}
		prev := norm(yj)
		// A random vector has a small component in any fixed subspace of
		// dimension row < dim, so a few passes always succeed.
		for pass := 0; pass < 4; pass++ {
			cur := o.vector(data, dim, 0, row, blas64.General{}, 0)
			if cur >= dgksRatio*prev && cur > 0 {
				scale(yj, 1/cur)
				return
			}
			prev = cur
		}
	}
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
