//go:build !amd64 || purego

package sparsify

// Without assembly the streaming loops always run in Go.
var useAVX2, hasAVX2 = false, false

func colScanAVX2(x *float64, n int, lo, hi *uint64, above *int64, cc *int32) int {
	panic("sparsify: no AVX2 kernels in this build")
}

func rowScanAVX2(x *float64, n int, lo, hi uint64, ge *int32) (int, int) {
	panic("sparsify: no AVX2 kernels in this build")
}
