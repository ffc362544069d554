package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRMS compares with the plain formula where it cannot overflow, and
// checks that scaling every value by 1e±300 scales the RMS alike (the
// plain formula gives +Inf and 0 there).
func TestRMS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 1000)
	for i := range x {
		x[i] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
	}
	x[17] = 0
	plain := 0.0
	for _, v := range x {
		plain += v * v
	}
	plain = math.Sqrt(plain / float64(len(x)))
	for _, c := range []float64{1, 1e300, 1e-300} {
		var a RMS
		for _, v := range x {
			a.Add(c * v)
		}
		// Each Add rounds once per value: 1000 roundings of relative size
		// 2⁻⁵³ bound the difference by about 1e-13.
		if got := a.Value() / c; math.Abs(got-plain) > 1e-12*plain || a.Len() != len(x) {
			t.Errorf("c=%g: RMS/c = %v, want %v (n %d)", c, got, plain, a.Len())
		}
	}
	var empty, zero, bad RMS
	zero.Add(0)
	bad.Add(1)
	bad.Add(math.Inf(-1))
	bad.Add(2)
	if !math.IsNaN(empty.Value()) || zero.Value() != 0 || !math.IsInf(bad.Value(), 1) {
		t.Errorf("empty %v, zero %v, with -Inf %v", empty.Value(), zero.Value(), bad.Value())
	}
	bad.Add(math.NaN())
	if !math.IsNaN(bad.Value()) {
		t.Errorf("with NaN: %v", bad.Value())
	}
}
