// Package factor balances a product of two factors: the thin QR factors
// and the SVD of their small core that metrics.Balance and Solve's fold of
// a location into M share.
package factor

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
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
	qa, ra := ThinQR(a)
	qb, rb := ThinQR(b)
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
	// Scale column l of W and Z by √σ_l; pad with zeros when d < r.
	ka, kb := qa.RawMatrix().Cols, qb.RawMatrix().Cols
	wa := mat.NewDense(ka, r, nil)
	zb := mat.NewDense(kb, r, nil)
	for l := 0; l < min(len(sigma), r); l++ {
		s := math.Sqrt(sigma[l])
		for i := 0; i < ka; i++ {
			wa.Set(i, l, w.At(i, l)*s)
		}
		for i := 0; i < kb; i++ {
			zb.Set(i, l, z.At(i, l)*s)
		}
	}
	us = mat.NewDense(d1, r, nil)
	us.Mul(qa, wa)
	vs = mat.NewDense(d2, r, nil)
	vs.Mul(qb, zb)
	return us, vs, sigma, true
}

// ThinQR returns Q (d×m) and R (m×r), m = min(d, r), with X = QR.
func ThinQR(x *mat.Dense) (q, r *mat.Dense) {
	d, n := x.Dims()
	m := min(d, n)
	a := mat.DenseCopyOf(x)
	raw := a.RawMatrix()
	tau := make([]float64, m)
	work := make([]float64, 1)
	lapack64.Geqrf(raw, tau, work, -1)
	work = make([]float64, max(int(work[0]), n))
	lapack64.Geqrf(raw, tau, work, len(work))
	r = mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := i; j < n; j++ {
			r.Set(i, j, raw.Data[i*raw.Stride+j])
		}
	}
	qraw := blas64.General{Rows: d, Cols: m, Stride: raw.Stride, Data: raw.Data}
	lapack64.Orgqr(qraw, tau, work, -1)
	if need := int(work[0]); need > len(work) {
		work = make([]float64, need)
	}
	lapack64.Orgqr(qraw, tau, work, len(work))
	q = mat.NewDense(d, m, nil)
	for i := 0; i < d; i++ {
		copy(q.RawRowView(i), qraw.Data[i*qraw.Stride:i*qraw.Stride+m])
	}
	return q, r
}
