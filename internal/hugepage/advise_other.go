//go:build !linux

package hugepage

import "unsafe"

// advise does nothing where the kernel takes no such advice.
func advise(unsafe.Pointer, int) {}
