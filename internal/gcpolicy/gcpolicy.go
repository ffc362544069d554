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

// HugeData is the size of the data, in bytes, from which Tighten sets
// HugePercent: with hundreds of megabytes live, the quarter that Percent
// lets the heap grow is itself a large buffer, and the collections of a
// tighter target still cost little (measured on 2026-11-27: rpca video on
// 200 frames of 320×240 colour, 368 MB of frames, peak 575–581 MB at 10%
// against 610–641 MB at 25%, wall time +1.7%; rpca synth at d = 10⁵,
// 1.02 GB against 1.11 GB, no time cost).
const HugeData = 256 << 20

// HugePercent is the collector's target growth for data of HugeData or
// more.
const HugePercent = 10

// Tighten sets the collector's target growth to Percent for a run on
// about n bytes of data, when n is at least LargeData, and to HugePercent
// from HugeData on, unless GOGC is set in the environment. It never
// loosens the target.
func Tighten(n float64) {
	if n < LargeData || os.Getenv("GOGC") != "" {
		return
	}
	p := Percent
	if n >= HugeData {
		p = HugePercent
	}
	if old := debug.SetGCPercent(p); old < p { // includes −1, off
		debug.SetGCPercent(old)
	}
}
