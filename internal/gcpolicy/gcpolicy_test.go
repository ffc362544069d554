package gcpolicy

import (
	"runtime/debug"
	"testing"
)

// TestTighten: large data set the collector's target growth to Percent,
// small data leave the runtime's, a lower target already set stays, and
// GOGC in the environment wins.
func TestTighten(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	current := func() int { // SetGCPercent returns the previous value
		v := debug.SetGCPercent(100)
		debug.SetGCPercent(v)
		return v
	}
	t.Setenv("GOGC", "")
	Tighten(LargeData - 1)
	if got := current(); got != 100 {
		t.Errorf("small data: GC percent %d, want 100", got)
	}
	Tighten(LargeData)
	if got := current(); got != Percent {
		t.Errorf("large data: GC percent %d, want %d", got, Percent)
	}
	Tighten(HugeData)
	if got := current(); got != HugePercent {
		t.Errorf("huge data: GC percent %d, want %d", got, HugePercent)
	}
	Tighten(LargeData)
	if got := current(); got != HugePercent {
		t.Errorf("large data after huge: GC percent %d, want %d kept", got, HugePercent)
	}
	debug.SetGCPercent(5)
	Tighten(HugeData)
	if got := current(); got != 5 {
		t.Errorf("a lower target set before: GC percent %d, want it kept (5)", got)
	}
	debug.SetGCPercent(100)
	t.Setenv("GOGC", "200")
	Tighten(10 * LargeData)
	if got := current(); got != 100 {
		t.Errorf("GOGC set: GC percent %d, want it left alone (100)", got)
	}
}
