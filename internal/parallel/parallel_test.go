package parallel

import (
	"sync/atomic"
	"testing"
)

// TestStrided: every k < n is visited exactly once, by the goroutine
// k mod workers, for worker counts below, at and above n.
func TestStrided(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 3}, {1, 4}, {10, 1}, {10, 0}, {10, 3}, {7, 7}, {5, 9}} {
		seen := make([]atomic.Int32, tc.n)
		Strided(tc.n, tc.workers, func(w, k int) {
			if eff := max(min(tc.workers, tc.n), 1); w != k%eff {
				t.Errorf("n %d workers %d: k %d ran on goroutine %d", tc.n, tc.workers, k, w)
			}
			seen[k].Add(1)
		})
		for k := range seen {
			if c := seen[k].Load(); c != 1 {
				t.Errorf("n %d workers %d: k %d visited %d times", tc.n, tc.workers, k, c)
			}
		}
	}
}
