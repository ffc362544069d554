package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestFoldLocation: against U·Vᵀ + c·11ᵀ formed directly. Without a fixed
// rank the k + 1 columns reproduce it to rounding; with a fixed rank and
// the constant in U's column space, k columns do, and the discarded
// singular value is rounding; with the constant in neither space, the
// discarded σ_{k+1} is the error of the rank-k truncation, found by a
// full SVD.
func TestFoldLocation(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	const d1, d2, k, c = 30, 25, 2, 3.0
	random := func(r, cols int) *mat.Dense {
		m := mat.NewDense(r, cols, nil)
		for i := range r {
			for j := range cols {
				m.Set(i, j, rng.NormFloat64())
			}
		}
		return m
	}
	direct := func(u, v *mat.Dense) *mat.Dense {
		var m mat.Dense
		m.Mul(u, v.T())
		for i := range d1 {
			for j := range d2 {
				m.Set(i, j, m.At(i, j)+c)
			}
		}
		return &m
	}
	maxDiff := func(u, v, want *mat.Dense) float64 {
		var got mat.Dense
		got.Mul(u, v.T())
		got.Sub(&got, want)
		return mat.Norm(&got, math.Inf(1))
	}
	u, v := random(d1, k), random(d2, k)
	want := direct(u, v)
	uf, vf, gap, _, ok := FoldLocation(u, v, c, false)
	if _, w := uf.Dims(); !ok || w != k+1 || gap != 0 || maxDiff(uf, vf, want) > 1e-12 {
		t.Errorf("free rank: %d columns, gap %v, error %.3g", w, gap, maxDiff(uf, vf, want))
	}
	// The constant in U's column space: rank k after the fold.
	u1 := mat.DenseCopyOf(u)
	for i := range d1 {
		u1.Set(i, 0, 1)
	}
	want1 := direct(u1, v)
	uf, vf, gap, sig1, ok := FoldLocation(u1, v, c, true)
	if _, w := uf.Dims(); !ok || w != k || gap > 1e-12*sig1 || maxDiff(uf, vf, want1) > 1e-12 {
		t.Errorf("constant in the column space: %d columns, gap/σ₁ %.3g, error %.3g", w, gap/sig1, maxDiff(uf, vf, want1))
	}
	// In neither space: σ_{k+1} of the sum, as a full SVD gives it.
	uf, _, gap, sig1, ok = FoldLocation(u, v, c, true)
	var svd mat.SVD
	svd.Factorize(want, mat.SVDNone)
	s := svd.Values(nil)
	if _, w := uf.Dims(); !ok || w != k || math.Abs(gap-s[k]) > 1e-10*s[0] || math.Abs(sig1-s[0]) > 1e-10*s[0] {
		t.Errorf("fixed rank: %d columns, σ_{k+1} %v and σ₁ %v, want %v and %v", w, gap, sig1, s[k], s[0])
	}
}
