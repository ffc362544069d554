// Package parallel runs the iterations of a loop on several goroutines.
package parallel

import "sync"

// Strided calls fn(w, k) for every k < n on workers goroutines (at most
// n), goroutine w taking k = w, w + workers, …; with one worker, or
// none, it calls them in order on the calling goroutine. It returns when
// every call has returned.
func Strided(n, workers int, fn func(w, k int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for k := range n {
			fn(0, k)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < n; k += workers {
				fn(w, k)
			}
		}()
	}
	wg.Wait()
}
