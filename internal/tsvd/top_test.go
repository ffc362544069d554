package tsvd

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
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

// TestTopGram checks the Gram path of Top (very rectangular matrices)
// against the reference SVD with check's accuracy checks: singular values
// to 1e-9·σ₁ (the spectrum spans 50 to 1, so squaring costs at most
// ε·σ₁/σ_k ≈ 1e-14 of σ₁), orthonormal factors and small residuals; tall
// and wide; and the fall back to the Krylov path when a wanted singular
// value is below the floor.
func TestTopGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	spectrum := []float64{50, 40, 30, 20, 10, 5, 2, 1}
	for _, sz := range [][2]int{{3000, 60}, {60, 3000}} {
		a := withSpectrum(rng, sz[0], sz[1], spectrum)
		for _, k := range []int{1, 5, 8} {
			res, err := Top(context.Background(), general(a), k, blas64.General{}, 1e-12, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			if res.Iterations != 0 || res.Products != 0 {
				t.Errorf("%v, k=%d: Krylov path taken (%d iterations)", sz, k, res.Iterations)
			}
			check(t, a, res, k, 1e-9)
		}
	}
	// σ₉ of this matrix is 0 (rank 8): below the floor, so the Krylov
	// method answers.
	a := withSpectrum(rng, 3000, 60, spectrum)
	res, err := Top(context.Background(), general(a), 9, blas64.General{}, 1e-10, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations == 0 {
		t.Error("Gram path taken for a singular value below the floor")
	}
}
