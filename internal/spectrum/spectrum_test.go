package spectrum

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestLastGap(t *testing.T) {
	for _, tc := range []struct {
		sigma []float64
		want  int
		gap   float64
	}{
		{[]float64{10, 9, 8, 7}, 1, 10.0 / 9},
		{[]float64{100, 10, 9, 1}, 3, 9},
		{[]float64{100, 10, 9.5, 9}, 1, 10},
		{[]float64{5, 4, 0, 0}, 2, math.Inf(1)},
		{[]float64{0, 0, 0}, 1, 1},
		{[]float64{3}, 1, 1},
	} {
		k, g := LastGap(tc.sigma, 2)
		if k != tc.want || g != tc.gap {
			t.Errorf("LastGap(%v) = %d, %v; want %d, %v", tc.sigma, k, g, tc.want, tc.gap)
		}
	}
}

// TestValuesAgainstSVD compares the Gram route with gonum's SVD of the
// same matrix. The Gram matrix squares the condition, so values are
// accurate to about ε·σ₁²/σ_i relative: 1e-9 relative holds for the
// values here, which are within 1e3 of σ₁.
func TestValuesAgainstSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(30, 80, nil)
	for i := range 30 {
		for j := range 80 {
			x.Set(i, j, rng.NormFloat64()*math.Pow(10, -float64(i%4)))
		}
	}
	got, err := Values(context.Background(), mat.DenseCopyOf(x), 9) // Values scales its argument
	if err != nil {
		t.Fatal(err)
	}
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDNone) {
		t.Fatal("svd failed")
	}
	want := svd.Values(nil)
	if len(got) != 10 {
		t.Fatalf("%d values, want 10", len(got))
	}
	for i, g := range got {
		if math.Abs(g-want[i]) > 1e-9*want[i] {
			t.Errorf("σ%d = %.15g, SVD gives %.15g", i+1, g, want[i])
		}
	}
}

func TestValuesNotFinite(t *testing.T) {
	x := mat.NewDense(3, 4, nil)
	x.Set(1, 2, math.Inf(1))
	if _, err := Values(context.Background(), x, 2); err == nil {
		t.Error("an infinite entry gave no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Values(ctx, mat.NewDense(3, 4, nil), 2); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

func TestSpread(t *testing.T) {
	if got := Spread(3, 5); len(got) != 3 || got[2] != 2 {
		t.Errorf("Spread(3, 5) = %v", got)
	}
	got := Spread(1000, 7)
	if len(got) != 7 || got[0] != 0 {
		t.Fatalf("Spread(1000, 7) = %v", got)
	}
	for i := 1; i < len(got); i++ {
		if d := got[i] - got[i-1]; d < 142 || d > 143 {
			t.Errorf("Spread(1000, 7) = %v: uneven", got)
		}
	}
}

// TestValuesDeflates: a constant offset 1e6 times the varying part puts
// the varying part below the Gram route's precision (√ε·σ₁); the
// deflated computation still matches the SVD, which is accurate to
// ε·σ₁ in absolute terms (1e-9 of the varying part here).
func TestValuesDeflates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, m = 20, 60
	x := mat.NewDense(n, m, nil)
	for i := range n {
		for j := range m {
			x.Set(i, j, 1e6+rng.NormFloat64())
		}
	}
	got, err := Values(context.Background(), mat.DenseCopyOf(x), 8) // Values scales its argument
	if err != nil {
		t.Fatal(err)
	}
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDNone) {
		t.Fatal("svd failed")
	}
	want := svd.Values(nil)
	for i, g := range got {
		if math.Abs(g-want[i]) > 1e-6*want[i] {
			t.Errorf("σ%d = %.10g, SVD gives %.10g", i+1, g, want[i])
		}
	}
	// The varying part is noise: no gap after the offset's value, and
	// none of its values counts as zero.
	if k, _ := LastGap(got, 2); k != 1 {
		t.Errorf("LastGap = %d, want 1 (the offset alone)", k)
	}
	if got[8] < 1 {
		t.Errorf("σ9 = %g: the noise's values were lost", got[8])
	}
}

// TestLastGapAfterOffset: after a jump beyond Deflate, zero is relative
// to the value after the jump, so an exact low rank under a large offset
// is still found, and real values below 1e-6·σ₁ still count.
func TestLastGapAfterOffset(t *testing.T) {
	if k, g := LastGap([]float64{2e5, 1, 0.9, 3e-10, 1e-10}, 2); k != 3 || !math.IsInf(g, 1) {
		t.Errorf("exact rank 3 under an offset: %d, %v; want 3, +Inf", k, g)
	}
	if k, _ := LastGap([]float64{2e5, 1, 0.9, 0.1, 0.09, 0.085}, 2); k != 3 {
		t.Errorf("rank 3 under an offset above noise at 0.1: %d, want 3", k)
	}
}

// TestValuesExtremeScales: data at 1e±200, whose Gram matrix would
// overflow or underflow, give the values of the same data at unit scale
// times the scale, to rounding; an all-zero matrix gives zeros.
func TestValuesExtremeScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	base := mat.NewDense(10, 30, nil)
	for i := range 10 {
		for j := range 30 {
			base.Set(i, j, rng.NormFloat64())
		}
	}
	want, err := Values(context.Background(), mat.DenseCopyOf(base), 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []float64{1e-200, 1e200} {
		x := mat.DenseCopyOf(base)
		x.Scale(sc, x)
		got, err := Values(context.Background(), x, 4)
		if err != nil {
			t.Fatalf("scale %g: %v", sc, err)
		}
		for i := range want {
			if math.Abs(got[i]/sc-want[i]) > 1e-12*want[0] {
				t.Errorf("scale %g: σ%d = %g, want %g", sc, i+1, got[i]/sc, want[i])
			}
		}
	}
	if got, err := Values(context.Background(), mat.NewDense(3, 5, nil), 1); err != nil || len(got) != 2 || got[0] != 0 {
		t.Errorf("zero matrix: %v, %v", got, err)
	}
}

// BenchmarkValues: the spectrum of the video rank rule's sample (200
// frames × 40,000 pixels), whose Gram matrix is most of the cost.
func BenchmarkValues(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(200, 40000, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	for b.Loop() {
		if _, err := Values(context.Background(), x, 10); err != nil {
			b.Fatal(err)
		}
	}
}
