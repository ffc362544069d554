package main

// #include <stdint.h>
import "C"

import (
	"sync"
	"sync/atomic"
)

// lastHandle is the last handle given out: handles are positive and never
// reused within a process, whatever table holds them.
var lastHandle atomic.Int64

// table holds the objects Python refers to by handle. Python may call
// from several threads, so every access takes its lock.
type table[T any] struct {
	mu sync.Mutex
	m  map[int64]T
}

// add stores v and returns its new handle.
func (t *table[T]) add(v T) C.int64_t {
	h := lastHandle.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[int64]T{}
	}
	t.m[h] = v
	return C.int64_t(h)
}

// get returns the object of handle h, or the zero T for a handle that is
// unknown or was removed.
func (t *table[T]) get(h C.int64_t) T {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[int64(h)]
}

// remove forgets handle h.
func (t *table[T]) remove(h C.int64_t) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, int64(h))
}
