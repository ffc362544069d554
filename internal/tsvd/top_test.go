package tsvd

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestTop checks both paths of Top (gonum's full SVD for a wanted rank of
// at least a quarter of min(d1, d2) ≤ 300, the truncated solver otherwise)
// against the reference SVD with the tolerances of check, and that a warm
// start of the wrong height is ignored.
func TestTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	spectrum := []float64{50, 40, 30, 20, 10, 5, 2, 1}
	for _, tc := range []struct {
		m, n, k int
		dense   bool
	}{
		{40, 30, 8, true},    // 4k ≥ 30
		{40, 30, 3, false},   // 4k < 30
		{400, 350, 3, false}, // min > fullSVDMax
		{12, 20, 12, true},   // k = min(d1, d2)
	} {
		a := withSpectrum(rng, tc.m, tc.n, spectrum)
		res, err := Top(context.Background(), general(a), tc.k, general(gaussian(rng, tc.n+1, 2, 1)), 1e-12, 1, 2)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if dense := res.Iterations == 0; dense != tc.dense {
			t.Errorf("%+v: dense path %v", tc, dense)
		}
		check(t, a, res, tc.k, 1e-12)
	}
}

// TestScaledFactor compares ScaledFactor with m·diag(√max(s, 0)) formed by
// gonum from a matrix with a row stride larger than its width.
func TestScaledFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	m := gaussian(rng, 7, 5, 1)
	s := []float64{4, 2.25, 0, -1}
	got := ScaledFactor(m.RawMatrix(), s)
	d := mat.NewDiagDense(len(s), []float64{2, 1.5, 0, 0})
	var want mat.Dense
	want.Mul(m.Slice(0, 7, 0, len(s)), d)
	if !mat.EqualApprox(got, &want, 1e-15) {
		t.Fatalf("ScaledFactor:\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(&want))
	}
	if r, c := got.Dims(); r != 7 || c != len(s) || math.IsNaN(got.At(0, 3)) {
		t.Fatalf("ScaledFactor is %d×%d", r, c)
	}
}
