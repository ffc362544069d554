package gdcore

import "testing"

// TestCycleWatch: a run going round three points, with steps drifting by
// 1e-9 a period, closes a cycle once the period has repeated; steps that
// shrink, however slowly, or a cycle of steps above (CycleChange·ρ)², do
// not.
func TestCycleWatch(t *testing.T) {
	res := []float64{0.0228507, 0.0228506, 0.0228390}
	step := []float64{1.5e-9, 6.4e-10, 1.8e-10}
	var c cycleWatch
	at := -1
	for i := range 12 {
		drift := 1 + 1e-9*float64(i/3)
		if c.closed(res[i%3], step[i%3]*drift) && at < 0 {
			at = i
		}
	}
	if at != 5 {
		t.Errorf("a period-3 cycle closed at iteration %d, want 5 (the second period's last)", at)
	}
	var slow cycleWatch
	for i := range 1000 {
		r := 0.02 * (1 + 1e-3*0.999999) // a residual still falling
		r *= 1 - 1e-7*float64(i)
		if slow.closed(r, 1e-9*pow(0.9999, i)) {
			t.Fatalf("shrinking steps closed a cycle at iteration %d", i)
		}
	}
	var big cycleWatch
	for i := range 12 {
		if big.closed(res[i%3], 1e-6) { // steps of 1e-3 in amplitude against ρ ≈ 0.02
			t.Fatalf("a cycle of steps above the bound closed at iteration %d", i)
		}
	}
}

func pow(x float64, n int) float64 {
	p := 1.0
	for range n {
		p *= x
	}
	return p
}
