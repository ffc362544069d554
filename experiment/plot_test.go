package experiment

import (
	"slices"
	"testing"
)

// TestTicks125: a log axis over at most three decades is labelled at 1, 2
// and 5 times the powers of ten inside it, and only there; a wider axis
// keeps gonum's powers of ten.
func TestTicks125(t *testing.T) {
	labels := func(min, max float64) []string {
		var out []string
		for _, tk := range (ticks125{}).Ticks(min, max) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, tc := range []struct {
		min, max float64
		want     []string
	}{
		{2, 50, []string{"2", "5", "10", "20", "50"}},
		{1.5, 1000, []string{"2", "5", "10", "20", "50", "100", "200", "500", "1000"}},
		{0.003, 0.4, []string{"0.005", "0.01", "0.02", "0.05", "0.1", "0.2"}},
	} {
		if got := labels(tc.min, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("[%g, %g]: labels %v, want %v", tc.min, tc.max, got, tc.want)
		}
	}
	// Ten decades: powers of ten only, none of 2 or 5 times one.
	for _, l := range labels(1e-10, 1) {
		if l[0] == '2' || l[0] == '5' {
			t.Errorf("[1e-10, 1]: label %s on a wide axis", l)
		}
	}
	// Minor ticks at the other integer multiples: 2–9 and 10–50 by 10.
	if got := len((ticks125{}).Ticks(2, 50)); got != 8+5 {
		t.Errorf("[2, 50]: %d ticks, want 13", got)
	}
}
