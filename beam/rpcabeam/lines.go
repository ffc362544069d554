package rpcabeam

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// lineBlock is how many consecutive lines of a shard one goroutine takes
// at a time in [forLines]: enough to amortise the hand-out, few enough
// that lines of uneven length balance.
const lineBlock = 64

// lineWorkers is how many goroutines a shard of n lines is split over:
// the process's cores shared among the shards it is working on at once.
// A runner that hands a worker one shard at a time (in-process Prism runs
// a stage's elements in one bundle) then still uses every core, and one
// that runs a shard per core gets one goroutine per shard.
func lineWorkers(n int) int {
	w := runtime.GOMAXPROCS(0) / max(1, int(active.Load()))
	return max(1, min(w, (n+lineBlock-1)/lineBlock))
}

// forLines calls, for every line l in [0, n), the function that newLine
// returned to the goroutine handling l. Each goroutine calls newLine once
// for its own scratch space, so a line's function may write any state
// the closure holds, and the rows of a shared output that belong to its
// line. It returns the first error of a line, or ctx's, and stops handing
// out lines after it. The result does not depend on how the lines are
// split when each line's output depends on that line alone, which is how
// every pass is written.
func forLines(ctx context.Context, n int, newLine func() func(l int) error) error {
	var (
		next    atomic.Int64
		errOnce sync.Once
		first   error
		failed  atomic.Bool
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		failed.Store(true)
	}
	work := func() {
		line := newLine()
		for !failed.Load() {
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			l0 := int(next.Add(lineBlock)) - lineBlock
			if l0 >= n {
				return
			}
			for l := l0; l < min(n, l0+lineBlock); l++ {
				if err := line(l); err != nil {
					fail(err)
					return
				}
			}
		}
	}
	workers := lineWorkers(n)
	if workers == 1 {
		work()
		return first
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return first
}
