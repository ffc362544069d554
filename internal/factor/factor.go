// Package factor balances a product of two factors: the thin QR factors
// and the SVD of their small core that metrics.Balance and Solve's fold of
// a location into M share.
package factor

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// Balance returns the balanced factors U* = LΣ^½ and V* = RΣ^½ of the
// product A·Bᵀ = LΣRᵀ (thin SVD, r = the number of columns of A and B)
// and σ in decreasing order: A = Q_A R_A and B = Q_B R_B (Householder
// QR), R_A R_Bᵀ = WΣZᵀ, L = Q_A W, R = Q_B Z, at a cost of
// O((d1+d2)·r²). Columns past min(d1, d2, r) are zero. ok is false when
// the SVD of the core did not converge (a non-finite factor).
func Balance(a, b *mat.Dense) (us, vs *mat.Dense, sigma []float64, ok bool) {
	d1, r := a.Dims()
	d2, _ := b.Dims()
	qa, ra := ThinQ(a)
	qb, rb := ThinQ(b)
	var p mat.Dense
	p.Mul(ra, rb.T())
	var svd mat.SVD
	if !svd.Factorize(&p, mat.SVDFull) {
		return nil, nil, nil, false
	}
	var w, z mat.Dense
	svd.UTo(&w)
	svd.VTo(&z)
	sigma = svd.Values(nil)
	// Scale column l of W and Z by √σ_l.
	for l := range r {
		s := math.Sqrt(sigma[l])
		for i := range r {
			w.Set(i, l, w.At(i, l)*s)
			z.Set(i, l, z.At(i, l)*s)
		}
	}
	us = mat.NewDense(d1, r, nil)
	us.Mul(kernels.Dense(qa), &w)
	vs = mat.NewDense(d2, r, nil)
	vs.Mul(kernels.Dense(qb), &z)
	return us, vs, sigma, true
}

// ThinQ returns the factors of a thin Householder QR of a (d×k), which
// it does not change: Q (d×k) with orthonormal columns and R (k×k) upper
// triangular, Q·R = A. When d < k the first d columns of Q are an
// orthonormal basis of ℝ^d and the others zero, and R's rows past d are
// zero.
func ThinQ(a *mat.Dense) (q blas64.General, r *mat.Dense) {
	d, k := a.Dims()
	q = kernels.NewGeneral(d, k)
	kernels.Copy(q, a.RawMatrix())
	r = mat.NewDense(max(k, 1), max(k, 1), nil)
	if k == 0 || d == 0 {
		return q, r
	}
	kk := min(d, k)
	tau := make([]float64, kk)
	work := make([]float64, 1)
	lapack64.Geqrf(q, tau, work, -1)
	lw := int(work[0])
	qq := blas64.General{Rows: d, Cols: kk, Stride: q.Stride, Data: q.Data} // the columns Orgqr forms
	lapack64.Orgqr(qq, tau, work, -1)
	work = make([]float64, max(lw, int(work[0]), 1))
	lapack64.Geqrf(q, tau, work, len(work))
	for i := range kk {
		for j := i; j < k; j++ {
			r.Set(i, j, q.Data[i*q.Stride+j])
		}
	}
	lapack64.Orgqr(qq, tau, work, len(work))
	for i := range d { // columns past d (d < k): zero
		clear(q.Data[i*q.Stride+kk : i*q.Stride+k])
	}
	return q, r
}
