//go:build amd64 && !purego

package kernels

//go:generate sh -c "cd asm && go run . -out ../micro_amd64.s"

import "golang.org/x/sys/cpu"

// isa is the instruction set the micro-kernels use: AVX2 with FMA if the
// CPU supports it, else portable Go. (An AVX-512 level gained 1.03–1.10×
// per whole iteration over AVX2 and was removed; docs/performance.md,
// "Assembly".) It is a variable so
// that tests can select each level the machine has.
var isa = detectISA()

// maxISA is the best level this machine supports.
var maxISA = isa

func detectISA() int {
	switch {
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return isaAVX2
	}
	return isaGo
}

// abt4x8AVX2 is abtGo for a full panel (rows = 4) and n a positive multiple
// of 8; sub is 0 or 1. y is not read when sub is 0.
//
//go:noescape
func abt4x8AVX2(k int, ap, bt *float64, ldb, n int, y *float64, ldy int, dst *float64, ldd int, sub int) (ssq float64)

// axv4AVX2 is axvGo for rows = 4, n a positive multiple of 4 and k ≥ 1,
// except that it spreads the sums over lanes 0–3 of each accumulator.
//
//go:noescape
func axv4AVX2(n int, a *float64, lda int, xt *float64, ldx, k int, accv *float64, pf *float64)

// aty4x8AVX2 is atyGo for rows = 4, n a positive multiple of 8 and l ≥ 1.
//
//go:noescape
func aty4x8AVX2(n int, a *float64, lda int, yp *float64, l int, acct *float64, ldt int, pf *float64)

// gram12AVX2 is gramGo for w = 12 and n ≥ 1 rows, except that it also
// writes entries above the diagonal inside the three 4×4 diagonal blocks.
//
//go:noescape
func gram12AVX2(n int, z, dst *float64)

// clip8AVX2 is clipGo for len(x) = n, a positive multiple of 8, except
// for the order in which the squares are summed.
//
//go:noescape
func clip8AVX2(n int, x *float64, zeta float64) (ssq, amax float64)

// prefetchRowsAsm prefetches, for each j of idx, the cache lines at
// base + 8·j·stride and 8·last bytes further.
//
//go:noescape
func prefetchRowsAsm(base *float64, idx []int32, stride, last int)

func prefetchRows(x []float64, idx []int32, stride, width int) {
	if len(x) == 0 || len(idx) == 0 || width < 1 {
		return
	}
	prefetchRowsAsm(&x[0], idx, stride, width-1)
}

// The dispatchers below run the widest assembly kernel on the largest part
// of a panel it handles, then narrower ones, and the portable kernel on the
// rest. The blank index expressions check, before any assembly runs, that
// the last element it touches lies in the slice (all strides are positive,
// so every other one does too). pf, when not empty, starts at the tile of A
// to be processed next; the assembly prefetches it (prefetches never
// fault, so it needs no bounds check).

func abtPanel(rows, k int, ap, bt []float64, ldb, n int, y []float64, ldy int, dst []float64, ldd int, sub bool) float64 {
	ssq, done := 0.0, 0
	if isa >= isaAVX2 && rows == 4 && n >= 8 && k > 0 {
		end := n &^ 7
		_ = ap[4*k-1]
		_ = bt[(k-1)*ldb+end-1]
		_ = dst[3*ldd+end-1]
		yr, s := dst, 0
		if sub {
			_ = y[3*ldy+end-1]
			yr, s = y, 1
		}
		ssq = abt4x8AVX2(k, &ap[0], &bt[0], ldb, end, &yr[0], ldy, &dst[0], ldd, s)
		done = end
	}
	if done < n {
		var yr []float64
		if sub {
			yr = y[done:]
		}
		ssq += abtGo(rows, k, ap, bt[done:], ldb, n-done, yr, ldy, dst[done:], ldd, sub)
	}
	return ssq
}

func axvPanel(rows, n int, a []float64, lda int, xt []float64, ldx, k int, accv, pf []float64) {
	done := 0
	if isa >= isaAVX2 && rows == 4 && n >= 4 && k > 0 {
		done = n &^ 3
		_ = a[3*lda+done-1]
		_ = xt[(k-1)*ldx+done-1]
		_ = accv[32*k-1]
		var p *float64
		if len(pf) > 0 {
			p = &pf[0]
		}
		axv4AVX2(done, &a[0], lda, &xt[0], ldx, k, &accv[0], p)
	}
	if done < n {
		axvGo(rows, n-done, a[done:], lda, xt[done:], ldx, k, accv)
	}
}

func atyPanel(rows, n int, a []float64, lda int, yp []float64, l int, acct []float64, ldt int, pf []float64) {
	done := 0
	if isa >= isaAVX2 && rows == 4 && n >= 8 && l > 0 {
		_ = a[3*lda+(n&^7)-1]
		_ = yp[4*l-1]
		_ = acct[(l-1)*ldt+(n&^7)-1]
		if len(pf) == 0 {
			pf = a
		}
		done = n &^ 7
		aty4x8AVX2(done, &a[0], lda, &yp[0], l, &acct[0], ldt, &pf[0])
	}
	if done < n {
		atyGo(rows, n-done, a[done:], lda, yp, l, acct[done:], ldt)
	}
}

func gramPanel(g, z []float64, w int) {
	if n := len(z) / w; isa >= isaAVX2 && w == 12 && n > 0 {
		_ = g[143]
		_ = z[12*n-1]
		gram12AVX2(n, &z[0], &g[0])
		return
	}
	gramGo(g, z, w)
}

func clipRow(x []float64, zeta float64) (ssq, amax float64) {
	end := 0
	if isa >= isaAVX2 && len(x) >= 8 {
		end = len(x) &^ 7
		ssq, amax = clip8AVX2(end, &x[0], zeta)
	}
	if end < len(x) {
		s, m := clipGo(x[end:], zeta)
		ssq += s
		amax = max(amax, m)
	}
	return ssq, amax
}
