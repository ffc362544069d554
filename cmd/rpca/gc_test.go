package main

import (
	"runtime/debug"
	"testing"
)

// TestTightenGC: large data set the collector's target growth to
// gcPercent, small data leave the runtime's, and GOGC in the environment
// wins.
func TestTightenGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	current := func() int { // SetGCPercent returns the previous value
		v := debug.SetGCPercent(100)
		debug.SetGCPercent(v)
		return v
	}
	t.Setenv("GOGC", "")
	tightenGC(largeData - 1)
	if got := current(); got != 100 {
		t.Errorf("small data: GC percent %d, want 100", got)
	}
	tightenGC(largeData)
	if got := current(); got != gcPercent {
		t.Errorf("large data: GC percent %d, want %d", got, gcPercent)
	}
	debug.SetGCPercent(100)
	t.Setenv("GOGC", "200")
	tightenGC(10 * largeData)
	if got := current(); got != 100 {
		t.Errorf("GOGC set: GC percent %d, want it left alone (100)", got)
	}
}
