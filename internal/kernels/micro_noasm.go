//go:build !amd64 || purego

package kernels

// isa is the instruction set the micro-kernels use; this build has no
// assembly.
var isa = isaGo

// maxISA is the best level this build supports.
var maxISA = isaGo

func abtPanel(rows, k int, ap, bt []float64, ldb, n int, y []float64, ldy int, dst []float64, ldd int, sub bool) float64 {
	return abtGo(rows, k, ap, bt, ldb, n, y, ldy, dst, ldd, sub)
}

func atyPanel(rows, n int, a []float64, lda int, yp []float64, l int, acct []float64, ldt int, _ []float64) {
	atyGo(rows, n, a, lda, yp, l, acct, ldt)
}

func axvPanel(rows, n int, a []float64, lda int, xt []float64, ldx, k int, accv, _ []float64) {
	axvGo(rows, n, a, lda, xt, ldx, k, accv)
}

func gramPanel(g, z []float64, w int) { gramGo(g, z, w) }

func clipRow(x []float64, zeta float64) (ssq, amax float64) { return clipGo(x, zeta) }

func prefetchRows(_ []float64, _ []int32, _, _ int) {}
