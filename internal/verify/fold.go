package verify

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/factor"
	"github.com/rpca-gd/rpca/metrics"
)

// FoldLocation adds c·11ᵀ to M = U·Vᵀ (k columns) and keeps k columns:
// the best rank-k approximation of [U, a1]·[V, b1]ᵀ (a·b = c), the first
// k of its balanced factors (factor.Balance: thin QR factors of the two
// and the SVD of their (k+1)×(k+1) core), exact up to the discarded
// singular value σ_{k+1}. Without
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
	us, vs, sig, ok := factor.Balance(a, b)
	if !ok {
		return nil, nil, 0, 0, false
	}
	if !fixedRank && sig[k] > 1e-12*sig[0] {
		return us, vs, 0, 0, true
	}
	return mat.DenseCopyOf(us.Slice(0, d1, 0, k)), mat.DenseCopyOf(vs.Slice(0, d2, 0, k)), sig[k], sig[0], true
}

// Fold is FoldLocation with the test of rpca.CheckOffset: it returns
// the factors of M + c·11ᵀ (u and v themselves when M has no room for
// one more column, or when the SVD failed), σ_{k+1}/σ₁ of the fold (0
// when no column was discarded), and why the location is not in the
// rank-k model ("" when it is). The truncation moves M by σ_{k+1} in
// Frobenius norm: allowed when that is rounding for an exact answer
// (Exact of the varying part's norm), or no larger than the spectral
// norm of a noise of the answer's relative residual, rms(E)·(√d1 + √d2).
func Fold(u, v *mat.Dense, c float64, fixedRank bool, residual float64) (uf, vf *mat.Dense, gapRatio float64, misfit string) {
	d1, k := u.Dims()
	d2, _ := v.Dims()
	if k+1 > min(d1, d2) {
		return u, v, 0, ""
	}
	centred := metrics.CentredNorm(u, v)
	uf, vf, gap, sig1, ok := FoldLocation(u, v, c, fixedRank)
	switch {
	case !ok:
		return u, v, 0, "the SVD that adds the location back failed"
	case sig1 == 0:
		return uf, vf, 0, ""
	}
	noise := residual * centred * (math.Sqrt(float64(d1)) + math.Sqrt(float64(d2))) / math.Sqrt(float64(d1)*float64(d2))
	if gap > math.Max(Exact*centred, noise) {
		misfit = fmt.Sprintf("with the location %.6g added back, M has a %d-th singular value %.3g times its largest: the constant is not in the rank-%d model", c, k+1, gap/sig1, k)
	}
	return uf, vf, gap / sig1, misfit
}
