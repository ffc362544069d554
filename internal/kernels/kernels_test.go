package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Tolerances. Every kernel entry is a sum of K products (plus one term of Y
// for SubMulABt) evaluated in some order, with or without fused
// multiply-adds. Whatever the order, the computed sum differs from the exact
// one by at most γ_K·Σ|terms|, γ_K = K·u/(1−K·u), u = 2⁻⁵³ (Higham,
// "Accuracy and Stability of Numerical Algorithms", §3.1). The reference
// below carries the same bound, so two correct results differ by at most
// 2γ_K·Σ|terms|; the tests allow (2K+4)·u·Σ|terms|. A wrong index or a
// missing term changes an entry by about one term, far above this.

const unit = 0x1p-53

func tol(k int, abs float64) float64 { return float64(2*k+4) * unit * abs }

// randView returns an r×c matrix with Stride ≥ c whose padding holds NaN,
// so that reading or writing outside the view shows up. Its Data ends at
// the last element of the view.
func randView(rng *rand.Rand, r, c int) blas64.General {
	stride := c + rng.IntN(4)
	n := 0
	if r > 0 {
		n = (r-1)*stride + c
	}
	m := blas64.General{Rows: r, Cols: c, Stride: max(stride, 1), Data: make([]float64, n)}
	for i := range m.Data {
		m.Data[i] = math.NaN()
	}
	for i := range r {
		for j := range c {
			m.Data[i*m.Stride+j] = rng.NormFloat64()
		}
	}
	return m
}

// sameBits reports whether a and b hold bitwise identical values (any NaN
// matching any NaN).
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// dense returns the elements of m's view row by row.
func dense(m blas64.General) []float64 {
	var d []float64
	for i := range m.Rows {
		d = append(d, m.Data[i*m.Stride:i*m.Stride+m.Cols]...)
	}
	return d
}

func cloneGeneral(m blas64.General) blas64.General {
	m.Data = slices.Clone(m.Data)
	return m
}

// checkPadding fails if an element of m.Data outside the view is not NaN.
func checkPadding(t *testing.T, name string, m blas64.General) {
	t.Helper()
	for i, v := range m.Data {
		if i%m.Stride >= m.Cols && !math.IsNaN(v) {
			t.Fatalf("%s: padding element %d overwritten with %v", name, i, v)
		}
	}
}

// at returns m[i, j].
func at(m blas64.General, i, j int) float64 { return m.Data[i*m.Stride+j] }

// refMul returns Σ_c f(c)·g(c) over c < k and Σ|f(c)·g(c)|.
func refMul(k int, f, g func(c int) float64) (s, abs float64) {
	for c := range k {
		p := f(c) * g(c)
		s += p
		abs += math.Abs(p)
	}
	return s, abs
}

// impls lists the micro-kernel sets to test: the portable Go one and each
// assembly one this machine and build have. The best is restored after the
// test.
func impls(t *testing.T) []int {
	t.Cleanup(func() { isa = maxISA })
	var l []int
	for i := maxISA; i >= isaGo; i-- {
		l = append(l, i)
	}
	return l
}

func implName(level int) string {
	return Levels[level]
}

// shape is a random test case.
type shape struct{ m, n, k, l int }

// testShapes returns small random shapes with odd sizes, k and l covering
// 1…40, plus a few wide ones that cross the column blocks and tiles.
func testShapes(rng *rand.Rand) []shape {
	var s []shape
	for k := 1; k <= 40; k++ {
		s = append(s, shape{1 + rng.IntN(23), 1 + rng.IntN(41), k, 1 + rng.IntN(40)})
	}
	s = append(s,
		shape{4, 8, 1, 1}, shape{8, 16, 3, 2}, shape{1, 1, 1, 1}, shape{3, 7, 5, 5},
		shape{9, 1200, 10, 10}, // several l1Cols tiles
		shape{6, 3500, 40, 40}, // several column blocks
		shape{37, 301, 20, 13},
	)
	return s
}

// eachCase calls run for every kernel set, every test shape and every
// value of vary (a worker count or a variant), with one generator seeded
// (1, seed) for the whole test. name says which case it is.
func eachCase(t *testing.T, seed uint64, vary []int, run func(rng *rand.Rand, name string, s shape, v int)) {
	rng := rand.New(rand.NewPCG(1, seed))
	for _, level := range impls(t) {
		isa = level
		for _, s := range testShapes(rng) {
			for _, v := range vary {
				run(rng, fmt.Sprintf("%s %v", implName(level), s), s, v)
			}
		}
	}
}

func TestMulABt(t *testing.T) {
	eachCase(t, 1, []int{1, 3}, func(rng *rand.Rand, name string, s shape, w int) {
		a, b := randView(rng, s.m, s.k), randView(rng, s.n, s.k)
		dst := randView(rng, s.m, s.n)
		MulABt(dst, a, b, w)
		name = fmt.Sprintf("%s w=%d", name, w)
		checkPadding(t, name, dst)
		checkProduct(t, name+": A·Bᵀ", dst, s.k,
			func(i, c int) float64 { return at(a, i, c) }, func(c, j int) float64 { return at(b, j, c) })
	})
}

func TestSubMulABt(t *testing.T) {
	eachCase(t, 2, []int{0, 1}, func(rng *rand.Rand, name string, s shape, aliased int) {
		alias := aliased == 1
		w := 1 + rng.IntN(3)
		a, b := randView(rng, s.m, s.k), randView(rng, s.n, s.k)
		y := randView(rng, s.m, s.n)
		y0 := cloneGeneral(y)
		dst := y
		if !alias {
			dst = randView(rng, s.m, s.n)
		}
		got := SubMulABt(dst, y, a, b, w)
		name = fmt.Sprintf("%s w=%d alias=%v", name, w, alias)
		checkPadding(t, name, dst)
		if !alias && !sameBits(y.Data, y0.Data) {
			t.Fatalf("%s: y modified", name)
		}
		want, errNorm, sq := 0.0, 0.0, 0.0
		for i := range s.m {
			for j := range s.n {
				p, abs := refMul(s.k, func(c int) float64 { return at(a, i, c) }, func(c int) float64 { return at(b, j, c) })
				yij := at(y0, i, j)
				r := yij - p
				e := tol(s.k+1, abs+math.Abs(yij))
				d := at(dst, i, j)
				if math.Abs(d-r) > e {
					t.Fatalf("%s: dst[%d,%d] = %v, want %v", name, i, j, d, r)
				}
				want += r * r
				sq += d * d
				errNorm += (2*math.Abs(r) + e) * e
			}
		}
		// The norm: each square is off by at most (2|r|+e)e, and
		// summing N non-negative values in any order adds γ_N of
		// the total for each of the two sums.
		n := float64(s.m * s.n)
		if math.Abs(got-want) > errNorm+2*(n+2)*unit*(want+sq) {
			t.Fatalf("%s: ‖dst‖² = %v, want %v", name, got, want)
		}
	})
}

// TestSubMulABtClip checks the thresholded residual against the residual
// formed entry by entry: the threshold is put in the widest gap between
// the magnitudes of the reference residual from its 50th to its 95th
// percentile, so every entry is on a known side of it (the gap is many
// times the rounding error of an entry), and the entries above it must be
// exactly zero, the others within the rounding of TestSubMulABt; RowSS
// and RowMax are checked against sums of the reference.
func TestSubMulABtClip(t *testing.T) {
	eachCase(t, 12, []int{0, 1}, func(rng *rand.Rand, name string, s shape, aliased int) {
		k := s.k
		if rng.IntN(8) == 0 {
			k = 0 // Y itself, thresholded
		}
		w := 1 + rng.IntN(3)
		a, b := randView(rng, s.m, k), randView(rng, s.n, k)
		y := randView(rng, s.m, s.n)
		y0 := cloneGeneral(y)
		ref, errs := make([]float64, s.m*s.n), make([]float64, s.m*s.n)
		for i := range s.m {
			for j := range s.n {
				p, abs := refMul(k, func(c int) float64 { return at(a, i, c) }, func(c int) float64 { return at(b, j, c) })
				ref[i*s.n+j] = at(y0, i, j) - p
				errs[i*s.n+j] = tol(k+1, abs+math.Abs(at(y0, i, j)))
			}
		}
		mags := make([]float64, len(ref))
		for q, r := range ref {
			mags[q] = math.Abs(r)
		}
		slices.Sort(mags)
		zeta := mags[len(mags)-1] + 1 // nothing above it
		if len(mags) > 1 {
			gap := 0.0
			for q := len(mags) / 2; q+1 < len(mags) && q < len(mags)*95/100; q++ {
				if g := mags[q+1] - mags[q]; g > gap {
					gap, zeta = g, (mags[q]+mags[q+1])/2
				}
			}
		}
		dst := y
		if aliased == 0 {
			dst = randView(rng, s.m, s.n)
		}
		c := Clip{Zeta: zeta, RowSS: make([]float64, s.m), RowMax: make([]float64, s.m)}
		SubMulABtClip(dst, y, a, b, c, w)
		name = fmt.Sprintf("%s k=%d w=%d alias=%v ζ=%v", name, k, w, aliased == 1, zeta)
		checkPadding(t, name, dst)
		if aliased == 0 && !sameBits(y.Data, y0.Data) {
			t.Fatalf("%s: y modified", name)
		}
		for i := range s.m {
			ss, errSS, mx, errMx := 0.0, 0.0, 0.0, 0.0
			for j := range s.n {
				r, e := ref[i*s.n+j], errs[i*s.n+j]
				if math.Abs(math.Abs(r)-zeta) <= 2*e {
					t.Fatalf("%s: entry (%d,%d) = %v is within rounding of ζ; the test's gap is too small", name, i, j, r)
				}
				if math.Abs(r) > mx {
					mx, errMx = math.Abs(r), e
				}
				d := at(dst, i, j)
				if math.Abs(r) > zeta {
					if d != 0 {
						t.Fatalf("%s: dst[%d,%d] = %v, want 0 (|%v| > ζ)", name, i, j, d, r)
					}
					continue
				}
				if math.Abs(d-r) > e {
					t.Fatalf("%s: dst[%d,%d] = %v, want %v", name, i, j, d, r)
				}
				ss += r * r
				errSS += (2*math.Abs(r) + e) * e
			}
			if math.Abs(c.RowMax[i]-mx) > errMx {
				t.Fatalf("%s: RowMax[%d] = %v, want %v", name, i, c.RowMax[i], mx)
			}
			if math.Abs(c.RowSS[i]-ss) > errSS+2*float64(s.n+2)*unit*ss {
				t.Fatalf("%s: RowSS[%d] = %v, want %v", name, i, c.RowSS[i], ss)
			}
		}
	})
}

// TestVecSumSq against the sum taken in order, for every length up to 40
// (each tail of the four partial sums); the sums of N non-negative
// values in two orders differ by at most 2·γ_N of the total.
func TestVecSumSq(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 13))
	for n := range 41 {
		x := make([]float64, n)
		want := 0.0
		for j := range x {
			x[j] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
			want += x[j] * x[j]
		}
		if got := VecSumSq(x); math.Abs(got-want) > 2*float64(n+2)*unit*want {
			t.Fatalf("n=%d: VecSumSq = %v, want %v", n, got, want)
		}
	}
}

// TestAllFinite: a NaN, +Inf or −Inf at any position of rows of every
// length up to 9 (each partial sum of the fast pass and its tail) is
// found, and rows of finite values pass, also those whose squares
// overflow (±MaxFloat64: the value-by-value path) and the smallest
// subnormal and −0.
func TestAllFinite(t *testing.T) {
	for _, big := range []float64{1e150, math.MaxFloat64} {
		for n := range 10 {
			row := make([]float64, n)
			for j := range row {
				row[j] = []float64{big, -big, math.SmallestNonzeroFloat64, math.Copysign(0, -1), 1}[j%5]
			}
			if !AllFinite(row) {
				t.Fatalf("n=%d: finite row %v not passed", n, row)
			}
			for pos := range n {
				for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
					r := append([]float64(nil), row...)
					r[pos] = bad
					if AllFinite(r) {
						t.Fatalf("n=%d: %v at %d passed as finite", n, bad, pos)
					}
				}
			}
		}
	}
}

// TestClipNaN: a NaN in the residual is kept, so that the row's sum of
// squares is NaN and the caller sees it, with each kernel set and at each
// position within the vector blocks and the tail.
func TestClipNaN(t *testing.T) {
	for _, level := range impls(t) {
		isa = level
		for _, n := range []int{1, 7, 8, 19} {
			for pos := range n {
				x := make([]float64, n)
				for j := range x {
					x[j] = float64(j%5) - 2
				}
				x[pos] = math.NaN()
				ss, _ := clipRow(x, 1.5)
				if !math.IsNaN(ss) || !math.IsNaN(x[pos]) {
					t.Fatalf("%s n=%d NaN at %d: ssq %v, entry %v; want NaN kept", implName(level), n, pos, ss, x[pos])
				}
			}
		}
	}
}

// TestMulAX and TestMulAtX multiply by A and by Aᵀ.
func TestMulAX(t *testing.T)  { testMulA(t, 3, false) }
func TestMulAtX(t *testing.T) { testMulA(t, 4, true) }

func testMulA(t *testing.T, seed uint64, trans bool) {
	eachCase(t, seed, []int{1, 3}, func(rng *rand.Rand, name string, s shape, w int) {
		in, out, kernel, check := s.n, s.m, MulAX, checkAX
		if trans {
			in, out, kernel, check = s.m, s.n, MulAtX, checkAtY
		}
		a, x := randView(rng, s.m, s.n), randView(rng, in, s.k)
		dst := randView(rng, out, s.k)
		kernel(dst, a, x, w)
		name = fmt.Sprintf("%s w=%d", name, w)
		checkPadding(t, name, dst)
		check(t, name, dst, a, x)
	})
}

// checkProduct checks dst against the reference product of two k-wide
// operands, entry (i, j) being Σ_c lhs(i, c)·rhs(c, j).
func checkProduct(t *testing.T, name string, dst blas64.General, k int, lhs, rhs func(i, j int) float64) {
	t.Helper()
	for i := range dst.Rows {
		for j := range dst.Cols {
			want, abs := refMul(k, func(c int) float64 { return lhs(i, c) }, func(c int) float64 { return rhs(c, j) })
			if got := at(dst, i, j); math.Abs(got-want) > tol(k, abs) {
				t.Fatalf("%s [%d,%d] = %v, want %v", name, i, j, got, want)
			}
		}
	}
}

func checkAX(t *testing.T, name string, dst, a, x blas64.General) {
	t.Helper()
	checkProduct(t, name+": A·X", dst, a.Cols,
		func(i, j int) float64 { return at(a, i, j) }, func(j, c int) float64 { return at(x, j, c) })
}

func checkAtY(t *testing.T, name string, dst, a, y blas64.General) {
	t.Helper()
	checkProduct(t, name+": Aᵀ·Y", dst, a.Rows,
		func(j, i int) float64 { return at(a, i, j) }, func(i, c int) float64 { return at(y, i, c) })
}

func TestMulAXAtY(t *testing.T) {
	eachCase(t, 5, []int{1, 2, 5}, func(rng *rand.Rand, name string, s shape, w int) {
		a := randView(rng, s.m, s.n)
		x, y := randView(rng, s.n, s.k), randView(rng, s.m, s.l)
		ax, aty := randView(rng, s.m, s.k), randView(rng, s.n, s.l)
		MulAXAtY(ax, aty, a, x, y, w)
		name = fmt.Sprintf("%s w=%d", name, w)
		checkPadding(t, name+" ax", ax)
		checkPadding(t, name+" aty", aty)
		checkAX(t, name, ax, a, x)
		checkAtY(t, name, aty, a, y)
	})
}

// TestAsmMatchesGo runs each assembly micro-kernel set and the portable one
// on the same inputs and compares them entry by entry (same tolerance
// argument as above, with Σ|·| bounded by the product of the operands'
// max-norms).
func TestAsmMatchesGo(t *testing.T) {
	levels := impls(t)
	if len(levels) == 1 {
		t.Skip("no assembly kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(1, 6))
	for _, level := range levels[:len(levels)-1] {
		testAsmMatchesGo(t, rng, level)
	}
}

func testAsmMatchesGo(t *testing.T, rng *rand.Rand, level int) {
	for _, s := range testShapes(rng) {
		a := randView(rng, s.m, s.n)
		x, y := randView(rng, s.n, s.k), randView(rng, s.m, s.l)
		u, v := randView(rng, s.m, s.k), randView(rng, s.n, s.k)
		var res [2][4]blas64.General
		var ssq [2]float64
		for i, lv := range []int{level, isaGo} {
			isa = lv
			ax, aty := randView(rng, s.m, s.k), randView(rng, s.n, s.l)
			MulAXAtY(ax, aty, a, x, y, 2)
			r, p := randView(rng, s.m, s.n), randView(rng, s.m, s.n)
			ssq[i] = SubMulABt(r, a, u, v, 2)
			MulABt(p, u, v, 2)
			res[i] = [4]blas64.General{ax, aty, r, p}
		}
		// |entries| ≤ 6 for these normal samples with overwhelming
		// probability; K terms of size ≤ 36 each.
		lim := [4]float64{tol(s.n, 36*float64(s.n)), tol(s.m, 36*float64(s.m)),
			tol(s.k+1, 36*float64(s.k)+6), tol(s.k, 36*float64(s.k))}
		for q := range 4 {
			g, h := res[0][q], res[1][q]
			for i := range g.Rows {
				for j := range g.Cols {
					if d := math.Abs(at(g, i, j) - at(h, i, j)); d > lim[q] {
						t.Fatalf("%s %v output %d [%d,%d]: asm %v, go %v", implName(level), s, q, i, j, at(g, i, j), at(h, i, j))
					}
				}
			}
		}
		if d := math.Abs(ssq[0] - ssq[1]); d > 1e-12*ssq[1] {
			t.Fatalf("%s %v: ‖R‖² asm %v, go %v", implName(level), s, ssq[0], ssq[1])
		}
	}
}

// TestDeterministic checks that repeated calls give bitwise identical
// results, and that the outputs documented as independent of the worker
// count are.
func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 7))
	m, n, k := 203, 1301, 10
	a := randView(rng, m, n)
	x, y := randView(rng, n, k), randView(rng, m, k)
	type out struct {
		ax, aty, r, p []float64
		ssq           float64
	}
	run := func(w int) out {
		ax, aty := randView(rng, m, k), randView(rng, n, k)
		r, p := randView(rng, m, n), randView(rng, m, n)
		MulAXAtY(ax, aty, a, x, y, w)
		ssq := SubMulABt(r, a, y, x, w)
		MulABt(p, y, x, w)
		return out{dense(ax), dense(aty), dense(r), dense(p), ssq}
	}
	same := sameBits
	for _, w := range []int{1, 2, 3} {
		o1, o2 := run(w), run(w)
		if !same(o1.ax, o2.ax) || !same(o1.aty, o2.aty) || !same(o1.r, o2.r) || !same(o1.p, o2.p) || o1.ssq != o2.ssq {
			t.Fatalf("workers=%d: two runs differ", w)
		}
	}
	o1, o3 := run(1), run(3)
	if !same(o1.ax, o3.ax) || !same(o1.r, o3.r) || !same(o1.p, o3.p) || o1.ssq != o3.ssq {
		t.Fatal("A·X, A·Bᵀ or Y − A·Bᵀ depend on the worker count")
	}
}

// TestEmpty checks shapes with a zero dimension (the products are then
// zero, and Y − A·Bᵀ = Y when the inner dimension is zero).
func TestEmpty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 8))
	for _, s := range []shape{{0, 5, 3, 2}, {5, 0, 3, 2}, {5, 4, 0, 2}, {5, 4, 3, 0}, {5, 4, 0, 0}, {0, 0, 0, 0}} {
		a := randView(rng, s.m, s.n)
		x, y := randView(rng, s.n, s.k), randView(rng, s.m, s.l)
		ax, aty := randView(rng, s.m, s.k), randView(rng, s.n, s.l)
		MulAXAtY(ax, aty, a, x, y, 2)
		checkAX(t, fmt.Sprint(s), ax, a, x)
		checkAtY(t, fmt.Sprint(s), aty, a, y)
		u, v := randView(rng, s.m, s.k), randView(rng, s.n, s.k)
		r := randView(rng, s.m, s.n)
		ssq := SubMulABt(r, a, u, v, 2)
		want := 0.0
		for i := range s.m {
			for j := range s.n {
				p, abs := refMul(s.k, func(c int) float64 { return at(u, i, c) }, func(c int) float64 { return at(v, j, c) })
				e := at(a, i, j) - p
				if math.Abs(at(r, i, j)-e) > tol(s.k+1, abs+math.Abs(at(a, i, j))) {
					t.Fatalf("%v: (Y − A·Bᵀ)[%d,%d] = %v, want %v", s, i, j, at(r, i, j), e)
				}
				want += e * e
			}
		}
		if math.Abs(ssq-want) > 1e-12*want {
			t.Fatalf("%v: ‖R‖² = %v, want %v", s, ssq, want)
		}
	}
}

func TestPanicsOnMismatch(t *testing.T) {
	g := func(r, c int) blas64.General {
		return blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
	}
	for name, f := range map[string]func(){
		"MulABt":     func() { MulABt(g(3, 4), g(3, 2), g(4, 3), 1) },
		"SubMulABt":  func() { SubMulABt(g(3, 4), g(3, 5), g(3, 2), g(4, 2), 1) },
		"MulAX":      func() { MulAX(g(3, 2), g(3, 4), g(5, 2), 1) },
		"MulAtX":     func() { MulAtX(g(4, 2), g(3, 4), g(3, 3), 1) },
		"MulAXAtY/x": func() { MulAXAtY(g(3, 2), g(4, 2), g(3, 4), g(4, 3), g(3, 2), 1) },
		"MulAXAtY/y": func() { MulAXAtY(g(3, 2), g(4, 2), g(3, 4), g(4, 2), g(2, 2), 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestParallelFor(t *testing.T) {
	for _, c := range []struct{ n, w, grain int }{{0, 2, 1}, {1, 4, 1}, {10, 3, 1}, {100, 7, 9}, {5, 0, 2}, {64, 2, 100}} {
		hits := make([]int, c.n)
		ParallelFor(c.n, c.w, c.grain, func(lo, hi int) {
			if hi-lo < c.grain && hi != c.n {
				t.Errorf("%v: range [%d,%d) shorter than the grain", c, lo, hi)
			}
			for i := lo; i < hi; i++ {
				hits[i]++
			}
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("%v: index %d visited %d times", c, i, h)
			}
		}
	}
}

// TestSumSq compares SumSq with a plain loop on views with padding (NaN
// padding would show any read outside the view) for several worker counts.
// Both sum the same terms in a different grouping; the bound of tol with
// k = the number of terms covers that rounding, and the results for
// different worker counts must agree bit for bit.
func TestSumSq(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{0, 0}, {1, 1}, {7, 3}, {300, 41}} {
		a := randView(rng, sz[0], sz[1])
		want := 0.0
		for i := range a.Rows {
			for _, x := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
				want += x * x
			}
		}
		first := SumSq(a, 1)
		if math.Abs(first-want) > tol(a.Rows*a.Cols, want) {
			t.Errorf("%v: SumSq %v, want %v", sz, first, want)
		}
		for _, w := range []int{2, 3, 8} {
			if got := SumSq(a, w); math.Float64bits(got) != math.Float64bits(first) {
				t.Errorf("%v: %d workers give %v, 1 worker %v", sz, w, got, first)
			}
		}
	}
}

// TestReductionIgnoresWorkers: MulAXAtY and MulAtX sum partial results
// over chunks that depend on the shapes only, so 1, 2, 3, 4 and 8 workers
// give bitwise identical results (also for a matrix large enough to be
// cut into the maximum number of chunks).
func TestReductionIgnoresWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, sz := range [][2]int{{50, 40}, {1200, 900}} {
		a := randView(rng, sz[0], sz[1])
		x, y := randView(rng, sz[1], 10), randView(rng, sz[0], 10)
		var ref []float64
		for _, w := range []int{1, 2, 3, 4, 8} {
			ax, aty, atx := newG(sz[0], 10), newG(sz[1], 10), newG(sz[1], 10)
			MulAXAtY(ax, aty, a, x, y, w)
			MulAtX(atx, a, y, w)
			got := append(append(slices.Clone(ax.Data), aty.Data...), atx.Data...)
			if ref == nil {
				ref = got
			} else if !slices.Equal(got, ref) {
				t.Errorf("%v: %d workers differ from 1", sz, w)
			}
		}
	}
}

func newG(r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
}

// TestCholeskySolve checks CholeskySolve against gonum's dense solve on
// random well-conditioned SPD systems (XᵀX + I with X Gaussian, 3k×k:
// condition number below 100, so agreement to 1e-10 relative is far
// above rounding), that only the lower triangle is read, and that an
// indefinite matrix is refused with x untouched.
func TestCholeskySolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, k := range []int{1, 2, 5, 10, 17} {
		x := mat.NewDense(3*k, k, nil)
		for i := range 3 * k {
			for j := range k {
				x.Set(i, j, rng.NormFloat64())
			}
		}
		var a mat.Dense
		a.Mul(x.T(), x)
		for i := range k {
			a.Set(i, i, a.At(i, i)+1)
		}
		b := make([]float64, k)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		var want mat.VecDense
		if err := want.SolveVec(&a, mat.NewVecDense(k, b)); err != nil {
			t.Fatal(err)
		}
		packed := make([]float64, k*k)
		for i := range k {
			for j := range k {
				packed[i*k+j] = a.At(i, j)
				if j > i {
					packed[i*k+j] = math.NaN() // must not be read
				}
			}
		}
		got := make([]float64, k)
		if !CholeskySolve(packed, k, b, got, 0) {
			t.Fatalf("k=%d: refused an SPD matrix", k)
		}
		for i := range k {
			if d := math.Abs(got[i] - want.AtVec(i)); d > 1e-10*(1+math.Abs(want.AtVec(i))) {
				t.Errorf("k=%d: x[%d] = %v, want %v", k, i, got[i], want.AtVec(i))
			}
		}
	}
	// [[1, 2], [2, 1]] has eigenvalues 3 and −1.
	x := []float64{7, 7}
	if CholeskySolve([]float64{1, 0, 2, 1}, 2, []float64{1, 1}, x, 0) || x[0] != 7 || x[1] != 7 {
		t.Errorf("indefinite matrix: accepted or x changed (%v)", x)
	}
}

// TestAddOuter4 checks AddOuter4 for 0 to 4 rows against the sums
// Σ_t x_t·x_tᵀ (lower triangle) and Σ_t y_t·x_t written out, added to a
// nonzero g and b; the upper triangle must stay untouched. The sums are
// of at most 4 products of order one, so 1e-14 bounds their rounding.
func TestAddOuter4(t *testing.T) {
	const r = 7
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 5 {
		x, y := make([]float64, k*r), make([]float64, k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		g, b := make([]float64, r*r), make([]float64, r)
		for i := range g {
			g[i] = float64(i)
		}
		for i := range b {
			b[i] = -float64(i)
		}
		wantG, wantB := slices.Clone(g), slices.Clone(b)
		for tt := range k {
			for i := range r {
				for j := 0; j <= i; j++ {
					wantG[i*r+j] += x[tt*r+i] * x[tt*r+j]
				}
				wantB[i] += y[tt] * x[tt*r+i]
			}
		}
		AddOuter4(g, b, x, y)
		for i := range g {
			if math.Abs(g[i]-wantG[i]) > 1e-14*(1+math.Abs(wantG[i])) {
				t.Fatalf("%d rows: g[%d] = %v, want %v", k, i, g[i], wantG[i])
			}
		}
		for i := range b {
			if math.Abs(b[i]-wantB[i]) > 1e-14*(1+math.Abs(wantB[i])) {
				t.Fatalf("%d rows: b[%d] = %v, want %v", k, i, b[i], wantB[i])
			}
		}
	}
}

// TestGram checks Gram, with each kernel set, against Σ_t z_t·z_tᵀ
// written out, added to a nonzero g, for widths around the assembly's 12
// and row counts around its lack of a tail: the lower triangle must match
// and nothing past w×w may change. The sums are of at most 9 products of
// order one, so 1e-13 bounds their rounding (the assembly fuses the
// multiply-adds, the Go kernel does not).
func TestGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, level := range impls(t) {
		isa = level
		for _, w := range []int{1, 3, 11, 12, 13} {
			for _, n := range []int{0, 1, 3, 4, 5, 9} {
				z := make([]float64, n*w)
				for i := range z {
					z[i] = rng.NormFloat64()
				}
				g := make([]float64, w*w+3)
				for i := range g {
					g[i] = float64(i % 7)
				}
				want := slices.Clone(g)
				for tt := range n {
					for i := range w {
						for j := 0; j <= i; j++ {
							want[i*w+j] += z[tt*w+i] * z[tt*w+j]
						}
					}
				}
				Gram(g, z, w)
				for i := range w {
					for j := 0; j <= i; j++ {
						if d := g[i*w+j] - want[i*w+j]; math.Abs(d) > 1e-13*(1+math.Abs(want[i*w+j])) {
							t.Fatalf("%s, w %d, %d rows: g[%d,%d] = %v, want %v", implName(level), w, n, i, j, g[i*w+j], want[i*w+j])
						}
					}
				}
				if !slices.Equal(g[w*w:], want[w*w:]) {
					t.Fatalf("%s, w %d, %d rows: wrote past w×w", implName(level), w, n)
				}
			}
		}
	}
}

// TestGramStride: rows of w values padded with zeros to GramStride(w)
// give the same lower triangle on the first w rows and columns as the
// unpadded rows (to the rounding bound of TestGram), for every kernel set.
func TestGramStride(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, level := range impls(t) {
		isa = level
		for w := 1; w <= 13; w++ {
			s := GramStride(w)
			if s < w {
				t.Fatalf("GramStride(%d) = %d < %d", w, s, w)
			}
			const n = 9
			z, zp := make([]float64, n*w), make([]float64, n*s)
			for tt := range n {
				for i := range w {
					z[tt*w+i] = rng.NormFloat64()
					zp[tt*s+i] = z[tt*w+i]
				}
			}
			g, gp := make([]float64, w*w), make([]float64, s*s)
			Gram(g, z, w)
			Gram(gp, zp, s)
			for i := range w {
				for j := 0; j <= i; j++ {
					if d := gp[i*s+j] - g[i*w+j]; math.Abs(d) > 1e-13*(1+math.Abs(g[i*w+j])) {
						t.Fatalf("%s, w %d: padded [%d,%d] = %v, unpadded %v", implName(level), w, i, j, gp[i*s+j], g[i*w+j])
					}
				}
			}
		}
	}
}

// TestPrefetchRows checks that PrefetchRows is only a hint: it leaves
// memory as it was and does not fault, whatever the indices name: rows
// inside x, past its end, far outside it, negative ones, and none at all.
// An implementation that loaded the rows (a MOV in place of a PREFETCH)
// would fault on the addresses far outside x.
func TestPrefetchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, stride, width = 100, 12, 10
	x := make([]float64, rows*stride)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	want := slices.Clone(x)
	idx := []int32{0, 1, rows - 1, rows, rows + 1000, math.MaxInt32, -1, -1000, math.MinInt32, 37}
	PrefetchRows(x, idx, stride, width)
	PrefetchRows(x, idx, 1<<20, width)
	PrefetchRows(x, nil, stride, width)
	PrefetchRows(nil, idx, stride, width)
	PrefetchRows(x, idx, stride, 0)
	if !slices.Equal(x, want) {
		t.Fatal("PrefetchRows changed x")
	}
}

// TestDotPairs: DotPairs is the dot product for every length, odd ones
// included, reading b only as far as a: on small integers the sums are
// exact, so it equals the obvious loop to the bit; on random values it
// is its even and odd partial sums added.
func TestDotPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := range 14 {
		a, b := make([]float64, n), make([]float64, n+3)
		for k := range a {
			a[k] = float64(rng.IntN(21) - 10)
		}
		for k := range b {
			b[k] = float64(rng.IntN(21) - 10)
		}
		want := 0.0
		for k := range a {
			want += a[k] * b[k]
		}
		if got := DotPairs(a, b); got != want {
			t.Errorf("n = %d: %v, want %v", n, got, want)
		}
		for k := range a {
			a[k], b[k] = rng.NormFloat64(), rng.NormFloat64()
		}
		var even, odd float64
		for k := range a {
			if k%2 == 0 {
				even += a[k] * b[k]
			} else {
				odd += a[k] * b[k]
			}
		}
		if got := DotPairs(a, b); got != even+odd {
			t.Errorf("n = %d, random: %v, want the partial sums' %v", n, got, even+odd)
		}
	}
}
