package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/rpca-gd/rpca/internal/testmat"
	"gonum.org/v1/gonum/mat"
)

func TestRelErrorMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct{ d1, d2, k, r int }{
		{30, 30, 3, 3},
		{50, 20, 2, 5},
		{20, 70, 6, 1},
		{3, 4, 5, 4},     // fewer rows than k+r: trapezoidal R
		{9000, 40, 4, 3}, // several row chunks on the U side
		{4097, 30, 2, 2}, // a last chunk of one row
		{1, 1, 1, 1},
	}
	for _, c := range cases {
		u, v := testmat.Normal(rng, c.d1, c.k), testmat.Normal(rng, c.d2, c.k)
		a, b := testmat.Normal(rng, c.d1, c.r), testmat.Normal(rng, c.d2, c.r)
		got := RelError(u, v, a, b)
		want := testmat.RelErr(u, v, a, b)
		// Both are backward stable evaluations of an O(1) quantity
		// from O(1) data: agreement to ~1e-14 relative is expected.
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("%+v: RelError = %.16g, dense %.16g", c, got, want)
		}
		// The truth against itself: only the QR rounding error,
		// O((k+r)·ε_mach) relative, remains.
		if e := RelError(a, b, a, b); e > 1e-13 {
			t.Errorf("%+v: RelError of the truth itself = %g", c, e)
		}
	}
}

// TestRelErrorTiny perturbs the truth by ε and checks that relative errors
// down to 1e-12 are still resolved to several digits. The reference uses
// the exact differences ΔU = U − A, ΔV = V − B (exact in floating point by
// Sterbenz's lemma when U and A are this close) and forms
// ΔU·Bᵀ + A·ΔVᵀ + ΔU·ΔVᵀ, which has no cancellation, so it is accurate to
// ~1e-15 relative. RelError's absolute error is of order
// (k+r)·ε_mach·‖U‖‖V‖ ≈ 1e-15·‖A·Bᵀ‖, i.e. 1e-15/ε relative to the answer:
// 1e-3 at ε = 1e-12; the tolerance 30·(1e-15/ε) leaves a margin.
func TestRelErrorTiny(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d1, d2, r = 200, 150, 4
	a, b := testmat.Normal(rng, d1, r), testmat.Normal(rng, d2, r)
	a.Scale(1/math.Sqrt(d1), a)
	b.Scale(1/math.Sqrt(d2), b)
	for _, eps := range []float64{1e-4, 1e-8, 1e-10, 1e-12} {
		u, v := testmat.Normal(rng, d1, r), testmat.Normal(rng, d2, r)
		u.Scale(eps/math.Sqrt(d1), u)
		v.Scale(eps/math.Sqrt(d2), v)
		u.Add(u, a)
		v.Add(v, b)
		var du, dv, x, t1 mat.Dense
		du.Sub(u, a)
		dv.Sub(v, b)
		x.Mul(&du, b.T())
		t1.Mul(a, dv.T())
		x.Add(&x, &t1)
		t1.Mul(&du, dv.T())
		x.Add(&x, &t1)
		var m mat.Dense
		m.Mul(a, b.T())
		want := mat.Norm(&x, 2) / mat.Norm(&m, 2)
		got := RelError(u, v, a, b)
		tol := 30 * 1e-15 / want
		if math.Abs(got-want) > tol*want {
			t.Errorf("ε = %g: RelError = %.10g, want %.10g (rel. diff %.2g, tol %.2g)", eps, got, want, math.Abs(got-want)/want, tol)
		}
	}
}

func TestRelErrorWorkerIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	u, v := testmat.Normal(rng, 10000, 3), testmat.Normal(rng, 300, 3)
	a, b := testmat.Normal(rng, 10000, 2), testmat.Normal(rng, 300, 2)
	old := runtime.GOMAXPROCS(1)
	e1 := RelError(u, v, a, b)
	runtime.GOMAXPROCS(4)
	e4 := RelError(u, v, a, b)
	runtime.GOMAXPROCS(old)
	if e1 != e4 {
		t.Errorf("RelError differs with GOMAXPROCS: %.17g vs %.17g", e1, e4)
	}
}

func TestRelErrorZeroTruth(t *testing.T) {
	z := mat.NewDense(3, 2, nil)
	rng := rand.New(rand.NewPCG(7, 8))
	if e := RelError(z, z, z, z); e != 0 {
		t.Errorf("0 vs 0: %g, want 0", e)
	}
	if e := RelError(testmat.Normal(rng, 3, 2), testmat.Normal(rng, 3, 2), z, z); !math.IsInf(e, 1) {
		t.Errorf("x vs 0: %g, want +Inf", e)
	}
}

func randOrth(rng *rand.Rand, n int) *mat.Dense {
	var qr mat.QR
	qr.Factorize(testmat.Normal(rng, n, n))
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

func TestFactorDistanceRotationInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, r := range []int{1, 2, 5} {
		us, vs := testmat.Normal(rng, 40, r), testmat.Normal(rng, 30, r)
		q := randOrth(rng, r)
		var u, v mat.Dense
		u.Mul(us, q)
		v.Mul(vs, q)
		// The truth rotated is at distance 0 up to rounding of U*Q,
		// i.e. ~r·ε_mach·‖F*‖ with ‖F*‖ ≈ √(70r).
		if d := FactorDistance(&u, &v, us, vs); d > 1e-13*math.Sqrt(70*float64(r)) {
			t.Errorf("r = %d: distance of a rotated truth = %g", r, d)
		}
		// The distance is invariant under rotating the estimate.
		u2, v2 := testmat.Normal(rng, 40, r), testmat.Normal(rng, 30, r)
		d0 := FactorDistance(u2, v2, us, vs)
		var u3, v3 mat.Dense
		u3.Mul(u2, q)
		v3.Mul(v2, q)
		if d1 := FactorDistance(&u3, &v3, us, vs); math.Abs(d1-d0) > 1e-12*d0 {
			t.Errorf("r = %d: rotating the estimate changed the distance %g → %g", r, d0, d1)
		}
	}
}

// dist2 returns ‖[U,0] − [U*,0]Q‖² + ‖[V,0] − [V*,0]Q‖² for a given Q.
func dist2(u, v, us, vs, q *mat.Dense) float64 {
	m, _ := q.Dims()
	pad := func(x *mat.Dense) *mat.Dense {
		r, c := x.Dims()
		p := mat.NewDense(r, m, nil)
		p.Slice(0, r, 0, c).(*mat.Dense).Copy(x)
		return p
	}
	var a, b mat.Dense
	a.Mul(pad(us), q)
	a.Sub(pad(u), &a)
	b.Mul(pad(vs), q)
	b.Sub(pad(v), &b)
	n1, n2 := mat.Norm(&a, 2), mat.Norm(&b, 2)
	return n1*n1 + n2*n2
}

// TestFactorDistanceBruteForce compares with a scan over all 2×2
// orthogonal matrices (rotations and reflections by θ), refined by golden
// section search around the best grid point. The objective is smooth in θ,
// so the refined minimum is accurate to ~1e-10 relative.
func TestFactorDistanceBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 6; trial++ {
		k := 2
		if trial >= 4 {
			k = 1 // padded case: U has fewer columns than U*
		}
		u, v := testmat.Normal(rng, 7, k), testmat.Normal(rng, 5, k)
		us, vs := testmat.Normal(rng, 7, 2), testmat.Normal(rng, 5, 2)
		if trial%2 == 1 {
			// An estimate near a rotation of the truth.
			q := randOrth(rng, 2)
			var a, b mat.Dense
			a.Mul(us, q)
			b.Mul(vs, q)
			u = mat.DenseCopyOf(a.Slice(0, 7, 0, k))
			v = mat.DenseCopyOf(b.Slice(0, 5, 0, k))
			u.Add(u, scaled(testmat.Normal(rng, 7, k), 0.01))
			v.Add(v, scaled(testmat.Normal(rng, 5, k), 0.01))
		}
		best := math.Inf(1)
		for _, refl := range []float64{1, -1} {
			f := func(th float64) float64 {
				c, s := math.Cos(th), math.Sin(th)
				q := mat.NewDense(2, 2, []float64{c, -s * refl, s, c * refl})
				return dist2(u, v, us, vs, q)
			}
			const n = 4000
			bi, bf := 0, math.Inf(1)
			for i := 0; i < n; i++ {
				if y := f(2 * math.Pi * float64(i) / n); y < bf {
					bi, bf = i, y
				}
			}
			lo, hi := 2*math.Pi*float64(bi-1)/n, 2*math.Pi*float64(bi+1)/n
			g := (math.Sqrt(5) - 1) / 2
			for it := 0; it < 100; it++ {
				x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
				if f(x1) < f(x2) {
					hi = x2
				} else {
					lo = x1
				}
			}
			best = min(best, f((lo+hi)/2))
		}
		want := math.Sqrt(best)
		got := FactorDistance(u, v, us, vs)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("trial %d (k = %d): FactorDistance = %.12g, brute force %.12g", trial, k, got, want)
		}
	}
}

func scaled(m *mat.Dense, s float64) *mat.Dense { m.Scale(s, m); return m }

// TestFactorDistanceNuclear checks d² = ‖F‖² + ‖F*‖² − 2‖F*ᵀF‖_* (the
// minimum of the expanded objective, with the nuclear norm from gonum's
// singular values) for general and unequal ranks. For O(1) distances the
// cancellation in this formula costs at most a few digits: tolerance 1e-9.
func TestFactorDistanceNuclear(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct{ d1, d2, k, r int }{{30, 20, 4, 4}, {30, 20, 2, 5}, {25, 40, 6, 3}} {
		u, v := testmat.Normal(rng, c.d1, c.k), testmat.Normal(rng, c.d2, c.k)
		us, vs := testmat.Normal(rng, c.d1, c.r), testmat.Normal(rng, c.d2, c.r)
		var cm, cv mat.Dense
		cm.Mul(us.T(), u)
		cv.Mul(vs.T(), v)
		cm.Add(&cm, &cv)
		var svd mat.SVD
		svd.Factorize(&cm, mat.SVDNone)
		nuc := 0.0
		for _, s := range svd.Values(nil) {
			nuc += s
		}
		sq := func(m *mat.Dense) float64 { n := mat.Norm(m, 2); return n * n }
		want := math.Sqrt(sq(u) + sq(v) + sq(us) + sq(vs) - 2*nuc)
		got := FactorDistance(u, v, us, vs)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%+v: FactorDistance = %.12g, formula %.12g", c, got, want)
		}
	}
}

func TestBalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, c := range []struct{ d1, d2, r int }{{40, 30, 3}, {10, 60, 5}, {3, 8, 4}} {
		a, b := testmat.Normal(rng, c.d1, c.r), testmat.Normal(rng, c.d2, c.r)
		us, vs := Balance(a, b)
		var m, mb mat.Dense
		m.Mul(a, b.T())
		mb.Mul(us, vs.T())
		mb.Sub(&mb, &m)
		if e := mat.Norm(&mb, 2) / mat.Norm(&m, 2); e > 1e-13 {
			t.Errorf("%+v: ‖U*V*ᵀ − ABᵀ‖/‖ABᵀ‖ = %g", c, e)
		}
		// U*ᵀU* = V*ᵀV* = diag(σ) with σ the singular values of ABᵀ
		// (gonum's SVD of the dense product as the reference).
		var svd mat.SVD
		svd.Factorize(&m, mat.SVDNone)
		sv := svd.Values(nil)
		var gu, gv mat.Dense
		gu.Mul(us.T(), us)
		gv.Mul(vs.T(), vs)
		for i := 0; i < c.r; i++ {
			for j := 0; j < c.r; j++ {
				want := 0.0
				if i == j && i < len(sv) {
					want = sv[i]
				}
				tol := 1e-12 * sv[0]
				if math.Abs(gu.At(i, j)-want) > tol || math.Abs(gv.At(i, j)-want) > tol {
					t.Errorf("%+v: Gram (%d,%d) = %g, %g; want %g", c, i, j, gu.At(i, j), gv.At(i, j), want)
				}
			}
		}
		if d := FactorDistance(us, vs, us, vs); d > 1e-13*math.Sqrt(sv[0]) {
			t.Errorf("self distance %g", d)
		}
	}
}

func TestDetect(t *testing.T) {
	tr, fa := true, false
	cases := []struct {
		pred, truth []bool
		p, r, f     float64
	}{
		// TP = 2, FP = 1, FN = 1: P = 2/3, R = 2/3, F = 2/3.
		{[]bool{tr, tr, tr, fa, fa}, []bool{tr, tr, fa, tr, fa}, 2.0 / 3, 2.0 / 3, 2.0 / 3},
		// TP = 1, FP = 0, FN = 3: P = 1, R = 1/4, F = 2·(1/4)/(5/4) = 0.4.
		{[]bool{tr, fa, fa, fa}, []bool{tr, tr, tr, tr}, 1, 0.25, 0.4},
		{[]bool{fa, fa}, []bool{fa, fa}, 1, 1, 1}, // both empty
		{[]bool{fa, fa}, []bool{tr, fa}, 1, 0, 0}, // nothing predicted
		{[]bool{tr, fa}, []bool{fa, fa}, 0, 1, 0}, // empty truth
		{[]bool{tr, fa}, []bool{fa, tr}, 0, 0, 0}, // all wrong: P+R = 0
		{nil, nil, 1, 1, 1},
	}
	for i, c := range cases {
		s, err := Detect(c.pred, c.truth)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(s.Precision-c.p) > 1e-15 || math.Abs(s.Recall-c.r) > 1e-15 || math.Abs(s.F-c.f) > 1e-15 {
			t.Errorf("case %d: got P %g R %g F %g, want %g %g %g", i, s.Precision, s.Recall, s.F, c.p, c.r, c.f)
		}
	}
	if s, _ := Detect([]bool{tr, tr, fa}, []bool{tr, fa, tr}); s.TruePos != 1 || s.FalsePos != 1 || s.FalseNeg != 1 {
		t.Errorf("counts %+v", s)
	}
	if _, err := Detect([]bool{tr}, []bool{tr, fa}); err == nil {
		t.Error("no error for masks of different length")
	}
}

func TestThreshold(t *testing.T) {
	got := Threshold([]float64{0.5, -2, 1, math.NaN(), -1.0000001}, 1)
	want := []bool{false, true, false, false, true}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Threshold[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// BenchmarkRelError measures the metric at the paper's largest scale,
// d = 10⁶ with k = r = 10.
func BenchmarkRelError(b *testing.B)       { benchMetric(b, 17, RelError) }
func BenchmarkFactorDistance(b *testing.B) { benchMetric(b, 19, FactorDistance) }

// benchMetric times metric on four 10⁶×10 factors of N(0, 1) entries.
func benchMetric(b *testing.B, seed uint64, metric func(u, v, a, b *mat.Dense) float64) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	const d, r = 1_000_000, 10
	u, v := testmat.Normal(rng, d, r), testmat.Normal(rng, d, r)
	x, y := testmat.Normal(rng, d, r), testmat.Normal(rng, d, r)
	b.ResetTimer()
	for b.Loop() {
		metric(u, v, x, y)
	}
}

// TestCentredRelError compares CentredRelError and CentredNorm with the
// dense evaluation, on a truth with an offset: the denominator is the
// truth less the mean of its entries. At offset 1e6 the dense reference
// forms entries of 1e6 ± O(1) and subtracts their mean, which costs it
// about ε·1e6 ≈ 2e-10 relative; the tolerance 1e-8 covers both evaluations.
func TestCentredRelError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		d1, d2, k, r int
		offset       float64
	}{{30, 20, 3, 2, 0}, {40, 50, 2, 3, 7}, {25, 25, 4, 4, 1e6}, {5000, 12, 3, 3, -30}} {
		a, b := testmat.Normal(rng, c.d1, c.r), testmat.Normal(rng, c.d2, c.r)
		// The offset as one more column pair of the truth: A·Bᵀ + offset·11ᵀ.
		a1, b1 := mat.NewDense(c.d1, c.r+1, nil), mat.NewDense(c.d2, c.r+1, nil)
		a1.Slice(0, c.d1, 0, c.r).(*mat.Dense).Copy(a)
		b1.Slice(0, c.d2, 0, c.r).(*mat.Dense).Copy(b)
		for i := range c.d1 {
			a1.Set(i, c.r, c.offset)
		}
		for j := range c.d2 {
			b1.Set(j, c.r, 1)
		}
		u, v := testmat.Normal(rng, c.d1, c.k), testmat.Normal(rng, c.d2, c.k)
		var m, l mat.Dense
		m.Mul(u, v.T())
		l.Mul(a1, b1.T())
		mean := mat.Sum(&l) / float64(c.d1*c.d2)
		var diff, centred mat.Dense
		diff.Sub(&m, &l)
		centred.Apply(func(_, _ int, x float64) float64 { return x - mean }, &l)
		wantNorm := mat.Norm(&centred, 2)
		want := mat.Norm(&diff, 2) / wantNorm
		if got := CentredNorm(a1, b1); math.Abs(got-wantNorm) > 1e-8*wantNorm {
			t.Errorf("%+v: CentredNorm = %.16g, dense %.16g", c, got, wantNorm)
		}
		if got := CentredRelError(u, v, a1, b1); math.Abs(got-want) > 1e-8*want {
			t.Errorf("%+v: CentredRelError = %.16g, dense %.16g", c, got, want)
		}
	}
	// A constant truth: 0 against itself, +Inf against anything else.
	ones := mat.NewDense(4, 1, []float64{1, 1, 1, 1})
	if e := CentredRelError(ones, ones, ones, ones); e != 0 {
		t.Errorf("constant truth against itself: %g", e)
	}
	two := mat.NewDense(4, 1, []float64{2, 1, 1, 1})
	if e := CentredRelError(two, ones, ones, ones); !math.IsInf(e, 1) {
		t.Errorf("constant truth against another matrix: %g", e)
	}
}
