// Package hugepage asks the kernel to back large numeric arrays with huge
// pages (2 MiB on amd64 Linux) instead of 4 KiB ones.
//
// A large matrix that is written once in full, such as a video's frames
// (368 MB for 200 colour frames of 320×240), takes a page fault for every
// 4 KiB page on its first touch, and on a virtual machine a fault can
// cost microseconds (docs/performance.md measures this machine). Linux
// backs a region with huge pages when transparent huge pages are
// "always", or when they are "madvise" (the common default) and the
// region was advised with MADV_HUGEPAGE, which is what [Make] does.
//
// The advice is only a hint: it changes no value, and where the kernel
// has no huge page to give, or on other systems, nothing changes. It is
// used where a measurement showed a gain (docs/performance.md lists where
// it was tried).
package hugepage

import "unsafe"

// MinBytes is the size from which [Make] advises its array: below it, a
// huge page would hold more than the array (and other objects of the heap
// beside it).
const MinBytes = 8 << 20

// Make returns make([]T, n), with the backing array advised to be backed
// by huge pages when it is at least MinBytes. Call it for arrays of
// numbers, before anything writes them: the advice applies to the pages
// touched after it.
func Make[T any](n int) []T {
	x := make([]T, n)
	if size := n * int(unsafe.Sizeof(*new(T))); size >= MinBytes {
		advise(unsafe.Pointer(unsafe.SliceData(x)), size)
	}
	return x
}

// Float64s is Make[float64].
func Float64s(n int) []float64 { return Make[float64](n) }
