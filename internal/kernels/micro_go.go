package kernels

import "math"

// Portable micro-kernels. They are the only ones on architectures without
// assembly (or with the purego build tag), handle the edges the assembly
// kernels leave (panels of fewer than four rows, column remainders), and
// serve as the reference the assembly is tested against. Each works on one
// panel of at most four rows; the panel layouts are those of packPanels and
// packT.

// abtGo computes, for the rows r < rows of a panel and columns j < n,
//
//	s = Σ_c ap[4c+r]·bt[c·ldb+j]
//
// and stores dst[r·ldd+j] = s, or y[r·ldy+j] − s when sub is set, returning
// the sum of squares of the stored values.
func abtGo(rows, k int, ap, bt []float64, ldb, n int, y []float64, ldy int, dst []float64, ldd int, sub bool) float64 {
	ssq := 0.0
	j := 0
	if rows == 4 {
		// 4×2 register tile: each pair of B values loaded is used 4 times.
		for ; j+2 <= n; j += 2 {
			var s00, s01, s10, s11, s20, s21, s30, s31 float64
			for c := range k {
				a := ap[4*c : 4*c+4 : 4*c+4]
				b := bt[c*ldb+j : c*ldb+j+2 : c*ldb+j+2]
				b0, b1 := b[0], b[1]
				s00 += a[0] * b0
				s01 += a[0] * b1
				s10 += a[1] * b0
				s11 += a[1] * b1
				s20 += a[2] * b0
				s21 += a[2] * b1
				s30 += a[3] * b0
				s31 += a[3] * b1
			}
			if sub {
				s00, s01 = y[j]-s00, y[j+1]-s01
				s10, s11 = y[ldy+j]-s10, y[ldy+j+1]-s11
				s20, s21 = y[2*ldy+j]-s20, y[2*ldy+j+1]-s21
				s30, s31 = y[3*ldy+j]-s30, y[3*ldy+j+1]-s31
				ssq += s00*s00 + s01*s01 + s10*s10 + s11*s11 +
					s20*s20 + s21*s21 + s30*s30 + s31*s31
			}
			dst[j], dst[j+1] = s00, s01
			dst[ldd+j], dst[ldd+j+1] = s10, s11
			dst[2*ldd+j], dst[2*ldd+j+1] = s20, s21
			dst[3*ldd+j], dst[3*ldd+j+1] = s30, s31
		}
	}
	for r := range rows {
		for jj := j; jj < n; jj++ {
			s := 0.0
			for c := range k {
				s += ap[4*c+r] * bt[c*ldb+jj]
			}
			if sub {
				s = y[r*ldy+jj] - s
				ssq += s * s
			}
			dst[r*ldd+jj] = s
		}
	}
	return ssq
}

// axGo sets out[4r+c] = Σ_{j<n} a[r·lda+j]·xt[c·ldx+j] for r < rows and
// c < nb ≤ 3.
func axGo(rows, n int, a []float64, lda int, xt []float64, ldx, nb int, out *[16]float64) {
	x0 := xt[:n]
	x1, x2 := x0, x0
	if nb > 1 {
		x1 = xt[ldx : ldx+n]
	}
	if nb > 2 {
		x2 = xt[2*ldx : 2*ldx+n]
	}
	r := 0
	// 2×3 register tile; columns beyond nb are computed on a duplicate of
	// column 0 and dropped.
	for ; r+2 <= rows; r += 2 {
		a0 := a[r*lda : r*lda+n]
		a1 := a[(r+1)*lda : (r+1)*lda+n]
		// Equal lengths let the compiler drop the bounds checks.
		a1, x0, x1, x2 := a1[:len(a0)], x0[:len(a0)], x1[:len(a0)], x2[:len(a0)]
		var s00, s01, s02, s10, s11, s12 float64
		for j, v0 := range a0 {
			v1 := a1[j]
			b0, b1, b2 := x0[j], x1[j], x2[j]
			s00 += v0 * b0
			s01 += v0 * b1
			s02 += v0 * b2
			s10 += v1 * b0
			s11 += v1 * b1
			s12 += v1 * b2
		}
		out[4*r], out[4*r+1], out[4*r+2] = s00, s01, s02
		out[4*r+4], out[4*r+5], out[4*r+6] = s10, s11, s12
	}
	for ; r < rows; r++ {
		a0 := a[r*lda : r*lda+n]
		x0, x1, x2 := x0[:len(a0)], x1[:len(a0)], x2[:len(a0)]
		var s0, s1, s2 float64
		for j, v := range a0 {
			s0 += v * x0[j]
			s1 += v * x1[j]
			s2 += v * x2[j]
		}
		out[4*r], out[4*r+1], out[4*r+2] = s0, s1, s2
	}
}

// atyGo adds Σ_{r<rows} yp[4c+r]·a[r·lda+j] to acct[c·ldt+j] for c < l and
// j < n.
func atyGo(rows, n int, a []float64, lda int, yp []float64, l int, acct []float64, ldt int) {
	if rows < 4 {
		for c := range l {
			t := acct[c*ldt : c*ldt+n]
			for r := range rows {
				w, ar := yp[4*c+r], a[r*lda:r*lda+n]
				for j, v := range ar {
					t[j] += w * v
				}
			}
		}
		return
	}
	a0 := a[:n]
	a1 := a[lda : lda+n]
	a2 := a[2*lda : 2*lda+n]
	a3 := a[3*lda : 3*lda+n]
	c := 0
	// Two output rows at a time, so that each loaded value of A is used
	// twice.
	for ; c+2 <= l; c += 2 {
		w := yp[4*c : 4*c+8 : 4*c+8]
		t0 := acct[c*ldt : c*ldt+n]
		t1 := acct[(c+1)*ldt : (c+1)*ldt+n]
		t1, a0, a1, a2, a3 := t1[:len(t0)], a0[:len(t0)], a1[:len(t0)], a2[:len(t0)], a3[:len(t0)]
		for j := range t0 {
			v0, v1, v2, v3 := a0[j], a1[j], a2[j], a3[j]
			t0[j] += w[0]*v0 + w[1]*v1 + w[2]*v2 + w[3]*v3
			t1[j] += w[4]*v0 + w[5]*v1 + w[6]*v2 + w[7]*v3
		}
	}
	if c < l {
		w := yp[4*c : 4*c+4 : 4*c+4]
		t0 := acct[c*ldt : c*ldt+n]
		a0, a1, a2, a3 := a0[:len(t0)], a1[:len(t0)], a2[:len(t0)], a3[:len(t0)]
		for j := range t0 {
			t0[j] += w[0]*a0[j] + w[1]*a1[j] + w[2]*a2[j] + w[3]*a3[j]
		}
	}
}

// axvGo adds Σ_{j<n} a[r·lda+j]·xt[c·ldx+j] to accv[(4c+r)·8] for r < rows
// and c < k: lane 0 of the per-lane accumulators of the assembly kernels.
func axvGo(rows, n int, a []float64, lda int, xt []float64, ldx, k int, accv []float64) {
	var out [16]float64
	for c0 := 0; c0 < k; c0 += 3 {
		nb := min(3, k-c0)
		axGo(rows, n, a, lda, xt[c0*ldx:], ldx, nb, &out)
		for r := range rows {
			for c := range nb {
				accv[(4*(c0+c)+r)*8] += out[4*r+c]
			}
		}
	}
}

// clipGo is the hard threshold T_ζ of one row: it sets to zero the
// entries of x with |x_j| > zeta and returns the sum of squares of the
// entries kept and the largest magnitude before thresholding. A NaN is
// kept, so that it reaches the sum.
func clipGo(x []float64, zeta float64) (ssq, amax float64) {
	for j, v := range x {
		a := math.Abs(v)
		amax = max(amax, a)
		if a > zeta {
			x[j] = 0
			continue
		}
		ssq += v * v
	}
	return ssq, amax
}
