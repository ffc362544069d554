package verify

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// FoldLocation adds c·11ᵀ to M = U·Vᵀ (k columns) and keeps k columns:
// the best rank-k approximation of [U, a1]·[V, b1]ᵀ (a·b = c), computed
// from thin QR factors of the two and the SVD of their (k+1)×(k+1) core,
// which is exact up to the discarded singular value σ_{k+1}. Without
// fixedRank it keeps k + 1 columns unless σ_{k+1} is rounding (1e-12·σ₁).
// It returns the new factors and σ_{k+1} and σ₁ when a column was
// discarded (0 and 0 otherwise); ok is false when the SVD failed.
func FoldLocation(u, v *mat.Dense, c float64, fixedRank bool) (uf, vf *mat.Dense, sigK, sig1 float64, ok bool) {
	d1, k := u.Dims()
	d2, _ := v.Dims()
	a, b := mat.NewDense(d1, k+1, nil), mat.NewDense(d2, k+1, nil)
	a.Slice(0, d1, 1, k+1).(*mat.Dense).Copy(u)
	b.Slice(0, d2, 1, k+1).(*mat.Dense).Copy(v)
	sq := math.Sqrt(math.Abs(c))
	for i := range d1 {
		a.Set(i, 0, sq)
	}
	for j := range d2 {
		b.Set(j, 0, math.Copysign(sq, c))
	}
	qa, ra := ThinQ(a)
	qb, rb := ThinQ(b)
	var core mat.Dense
	core.Mul(ra, rb.T())
	var svd mat.SVD
	if !svd.Factorize(&core, mat.SVDFull) {
		return nil, nil, 0, 0, false
	}
	sig := svd.Values(nil)
	keep := k
	if !fixedRank && sig[k] > 1e-12*sig[0] {
		keep = k + 1
	}
	var w, z mat.Dense
	svd.UTo(&w)
	svd.VTo(&z)
	uf, vf = mat.NewDense(d1, keep, nil), mat.NewDense(d2, keep, nil)
	for col := range keep {
		f := math.Sqrt(sig[col])
		for r := range k + 1 {
			w.Set(r, col, w.At(r, col)*f)
			z.Set(r, col, z.At(r, col)*f)
		}
	}
	uf.Mul(kernels.Dense(qa), w.Slice(0, k+1, 0, keep))
	vf.Mul(kernels.Dense(qb), z.Slice(0, k+1, 0, keep))
	if keep == k+1 {
		return uf, vf, 0, 0, true
	}
	return uf, vf, sig[k], sig[0], true
}
