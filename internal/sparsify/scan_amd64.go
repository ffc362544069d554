//go:build amd64 && !purego

package sparsify

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels for the streaming loops. It is a
// variable so that tests can compare them with the Go versions.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT

// hasAVX2 reports whether this machine can run the AVX2 kernels.
var hasAVX2 = useAVX2

// colScanAVX2 is colScanGo for j0 = 0, nc = 0 and n = len(x) a positive
// multiple of 4.
//
//go:noescape
func colScanAVX2(x *float64, n int, lo, hi *uint64, above *int64, cc *int32) (nc int)

// rowScanAVX2 is rowScanGo for j0 = 0, ng = na = 0 and n = len(x) a
// positive multiple of 4.
//
//go:noescape
func rowScanAVX2(x *float64, n int, lo, hi uint64, ge *int32) (ng, na int)
