package robust

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSampledSpread: on Gaussian values of deviation 3 the spread is 3
// to within the sampling error of a median of 16,384 values (about 1.2%
// at one standard error; 5% allowed); with 20% gross values counted it is
// 1.4826 times the 62.5% quantile of |N(0, 9)|, 3·1.4826·0.8871 = 3.946
// (the gross fifth moves the median, by a bounded amount, not by their
// size); positions left out are not counted, and none counted gives 0.
func TestSampledSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 100000
	x := make([]float64, n)
	for i := range x {
		x[i] = 3 * rng.NormFloat64()
		if rng.Float64() < 0.2 {
			x[i] = 1e6
		}
	}
	s, _ := SampledSpread(n, nil, func(q int) (float64, bool) { return x[q], true })
	if math.Abs(s/3.946-1) > 0.05 {
		t.Errorf("spread with 20%% gross: %g, want 3.946 within 5%%", s)
	}
	s, _ = SampledSpread(n, nil, func(q int) (float64, bool) { return x[q], x[q] != 1e6 })
	if math.Abs(s/3-1) > 0.05 {
		t.Errorf("spread of the clean values: %g, want 3 within 5%%", s)
	}
	if s, _ := SampledSpread(n, nil, func(int) (float64, bool) { return 1, false }); s != 0 {
		t.Errorf("nothing counted: %g, want 0", s)
	}
}
