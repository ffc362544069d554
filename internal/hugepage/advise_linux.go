package hugepage

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// huge is the huge page size of amd64 Linux (and of arm64 with 4 KiB
// base pages); where it is larger, the advice still covers every whole
// huge page inside the range it is given.
const huge = 2 << 20

// advise applies MADV_HUGEPAGE to the part of the size bytes at p that
// covers whole aligned huge pages. Errors are ignored: a kernel without
// transparent huge pages refuses the advice, and the array works as
// before.
func advise(p unsafe.Pointer, size int) {
	start := uintptr(p)
	lo := (start + huge - 1) &^ (huge - 1)
	hi := (start + uintptr(size)) &^ (huge - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(p), size)
	_ = unix.Madvise(b[lo-start:hi-start], unix.MADV_HUGEPAGE)
}
