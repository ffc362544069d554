package tsvd

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Factors against gonum's full SVD: U·Vᵀ is the best rank-k
// approximation, the factors are balanced, and the residual is its
// relative error.
func TestFactors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const m, n, k = 40, 30, 3
	a := mat.NewDense(m, n, nil)
	for i := range m {
		for j := range n {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	u, v, res, err := Factors(context.Background(), a.RawMatrix(), k, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		t.Fatal("gonum's SVD failed")
	}
	var l, r mat.Dense
	svd.UTo(&l)
	svd.VTo(&r)
	s := svd.Values(nil)
	var ls, best, got, diff mat.Dense
	ls.Mul(l.Slice(0, m, 0, k), mat.NewDiagDense(k, s[:k]))
	best.Mul(&ls, r.Slice(0, n, 0, k).T())
	got.Mul(u, v.T())
	diff.Sub(&got, &best)
	// The Krylov method's tolerance is relative to σ₁: the approximation
	// is as accurate as DefaultTol allows, with a margin.
	if e := mat.Norm(&diff, 2) / s[0]; e > 10*DefaultTol {
		t.Errorf("‖U·Vᵀ − A_k‖/σ₁ = %.3g", e)
	}
	var gu, gv mat.Dense
	gu.Mul(u.T(), u)
	gv.Mul(v.T(), v)
	for c := range k {
		if math.Abs(gu.At(c, c)-s[c]) > 1e-6*s[0] || math.Abs(gv.At(c, c)-s[c]) > 1e-6*s[0] {
			t.Errorf("column %d not balanced: ‖u‖² %v ‖v‖² %v σ %v", c, gu.At(c, c), gv.At(c, c), s[c])
		}
	}
	var e mat.Dense
	e.Sub(a, &got)
	if want := mat.Norm(&e, 2) / mat.Norm(a, 2); math.Abs(res-want) > 1e-12 {
		t.Errorf("residual %v, want %v", res, want)
	}
}
