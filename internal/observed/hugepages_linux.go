package observed

import (
	"syscall"
	"unsafe"
)

// hugePageSize is the size of a transparent huge page on amd64 and arm64.
const hugePageSize = 2 << 20

// adviseHuge asks the kernel to back the 2 MiB-aligned part of b's memory
// with transparent huge pages (madvise(MADV_HUGEPAGE)); the kernels' random
// row accesses then miss the TLB far less often. It is only advice: errors
// (THP disabled, old kernels) are ignored and the contents are unchanged.
func adviseHuge[T any](b []T) {
	if cap(b) == 0 {
		return
	}
	var z T
	base := unsafe.Pointer(unsafe.SliceData(b))
	start := uintptr(base)
	end := start + uintptr(cap(b))*unsafe.Sizeof(z)
	lo := (start + hugePageSize - 1) &^ (hugePageSize - 1)
	hi := end &^ (hugePageSize - 1)
	if hi <= lo {
		return
	}
	const madvHugepage = 14 // MADV_HUGEPAGE, linux/mman.h
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, lo-start)), hi-lo), madvHugepage)
}
