// Package gcpolicy sets the Go collector's target for runs on large data:
// the command line and the Python bridge call Tighten with the size of
// the data they are about to solve.
//
// The data and the methods' state are large arrays without pointers,
// which a collection marks at almost no cost, while the runtime's default
// target (GOGC = 100) lets the heap grow to twice what is live before
// collecting: the transient buffers of loading and Phase I, and a
// finished run's state before the next run's, then set the peak memory.
// A target of Percent keeps the peak near 1.25 times the live data
// (docs/performance.md).
package gcpolicy

import (
	"os"
	"runtime/debug"
)

// Percent is the collector's target growth of the heap between
// collections for large data.
const Percent = 25

// LargeData is the size of the data, in bytes, from which Tighten sets
// Percent. Below it the default stays: with a small heap the collections
// of a 25% target come often enough to cost a few percent (ratings on
// ml-latest-small: 42 collections against 14).
const LargeData = 64 << 20

// Tighten sets the collector's target growth to Percent for a run on
// about n bytes of data, when n is at least LargeData and GOGC is not set
// in the environment. It never loosens the target.
func Tighten(n float64) {
	if n >= LargeData && os.Getenv("GOGC") == "" {
		if old := debug.SetGCPercent(Percent); old < Percent { // includes −1, off
			debug.SetGCPercent(old)
		}
	}
}
