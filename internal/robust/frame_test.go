package robust

import (
	"math"
	"testing"
)

// TestFrameValue: (y − loc)/scale, to rounding for moderate values (the
// halves and the power-of-two scale are exact), and finite where y − loc
// overflows.
func TestFrameValue(t *testing.T) {
	for _, c := range []struct{ y, loc, scale, want float64 }{
		{3, 1, 1, 2},
		{-7.5, 2.5, 4, -2.5},
		{1e308, -1e308, 4, 5e307},
		{-1.5e308, 1.5e308, 1 << 10, -3e308 / (1 << 10)},
	} {
		if got := FrameValue(c.y, c.loc, c.scale); math.Abs(got-c.want) > 1e-15*math.Abs(c.want) || math.IsInf(got, 0) {
			t.Errorf("FrameValue(%g, %g, %g) = %g, want %g", c.y, c.loc, c.scale, got, c.want)
		}
	}
}
