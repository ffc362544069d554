package metrics

import (
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/factor"
	par "github.com/rpca-gd/rpca/internal/parallel"
)

// FactorDistance returns the paper's estimation error (eq. (error_metric))
//
//	d(U, V; U*, V*) = min over orthogonal Q of √(‖U − U*Q‖²_F + ‖V − V*Q‖²_F),
//
// where U is d1×k, V is d2×k, U* is d1×r and V* is d2×r. The paper uses the
// balanced factors U* = L*Σ*^½, V* = R*Σ*^½ of the truth M* = L*Σ*R*ᵀ; see
// [Balance]. With F = [U; V] and F* = [U*; V*], the minimizer is the
// orthogonal Procrustes solution Q = WZᵀ from the SVD F*ᵀF = WΣZᵀ (proof of
// Lemma symm), and the distance ‖F − F*Q‖_F is then evaluated directly, so
// that small distances keep their accuracy.
//
// When k ≠ r (a method that estimates the rank), the factors with fewer
// columns are padded with zero columns and Q ranges over the orthogonal
// max(k, r)×max(k, r) matrices.
func FactorDistance(u, v, us, vs *mat.Dense) float64 {
	_, _, k, r := pairDims("FactorDistance", u, v, us, vs)
	// C = F*ᵀF = U*ᵀU + V*ᵀV (r×k), zero-padded to m×m.
	m := max(k, r)
	var c, cv mat.Dense
	c.Mul(us.T(), u)
	cv.Mul(vs.T(), v)
	c.Add(&c, &cv)
	cp := mat.NewDense(m, m, nil)
	cp.Slice(0, r, 0, k).(*mat.Dense).Copy(&c)
	var svd mat.SVD
	if !svd.Factorize(cp, mat.SVDFull) {
		panic("metrics: SVD of a small matrix did not converge")
	}
	var w, z, q mat.Dense
	svd.UTo(&w)
	svd.VTo(&z)
	q.Mul(&w, z.T())
	qr := q.RawMatrix()
	s := sumSqDiffRot(u.RawMatrix(), us.RawMatrix(), qr) + sumSqDiffRot(v.RawMatrix(), vs.RawMatrix(), qr)
	return math.Sqrt(s)
}

// sumSqDiffRot returns ‖[X, 0] − [X*, 0]·Q‖²_F, one row at a time, where
// the zero padding brings X and X* to the m columns of the m×m matrix Q.
func sumSqDiffRot(x, xs, q blas64.General) float64 {
	const rowsPer = 1024
	n := (x.Rows + rowsPer - 1) / rowsPer
	parts := make([]float64, n)
	parallel(n, func(c int) {
		tmp := make([]float64, q.Cols)
		ss := 0.0
		for i := c * rowsPer; i < min((c+1)*rowsPer, x.Rows); i++ {
			xi := x.Data[i*x.Stride : i*x.Stride+x.Cols]
			xsi := xs.Data[i*xs.Stride : i*xs.Stride+xs.Cols]
			clear(tmp)
			copy(tmp, xi)
			for l, a := range xsi {
				ql := q.Data[l*q.Stride : l*q.Stride+q.Cols]
				for j, b := range ql {
					tmp[j] -= a * b
				}
			}
			for _, t := range tmp {
				ss += t * t
			}
		}
		parts[c] = ss
	})
	return floats.Sum(parts)
}

// parallel calls fn(0), …, fn(n−1) on up to GOMAXPROCS goroutines.
func parallel(n int, fn func(c int)) {
	par.Strided(n, runtime.GOMAXPROCS(0), func(_, c int) { fn(c) })
}

// Balance returns the balanced factors U* = LΣ^½ and V* = RΣ^½ of the
// product A·Bᵀ = LΣRᵀ (thin SVD, r = number of columns of A and B), the
// factors of the paper's eq. (error_metric) (Section 4.1). U*ᵀU* =
// V*ᵀV* = Σ and U*V*ᵀ = A·Bᵀ. It costs O((d1+d2)·r²): A = Q_A R_A and
// B = Q_B R_B (Householder QR), R_A R_Bᵀ = WΣZᵀ, L = Q_A W, R = Q_B Z.
func Balance(a, b *mat.Dense) (us, vs *mat.Dense) {
	d1, r := a.Dims()
	d2, rb := b.Dims()
	if rb != r {
		panic(fmt.Sprintf("metrics: Balance dimension mismatch: A %d×%d, B %d×%d", d1, r, d2, rb))
	}
	us, vs, _, ok := factor.Balance(a, b)
	if !ok {
		panic("metrics: SVD of an r×r matrix did not converge")
	}
	return us, vs
}
