package synth

import (
	"math"
	"slices"
	"testing"

	"github.com/rpca-gd/rpca"

	"gonum.org/v1/gonum/mat"
)

// mustGen generates cfg's instance with gen (Dense or Observed), failing
// the test if the configuration is rejected.
func mustGen(t *testing.T, gen func(Config) (*Instance, error), cfg Config) *Instance {
	t.Helper()
	in, err := gen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func sameInstance(a, b *Instance) bool {
	if !mat.Equal(a.A, b.A) || !mat.Equal(a.B, b.B) {
		return false
	}
	if (a.Y == nil) != (b.Y == nil) || a.Y != nil && !mat.Equal(a.Y, b.Y) {
		return false
	}
	if (a.Obs == nil) != (b.Obs == nil) {
		return false
	}
	ar, ac, av := csrOf(a.Obs)
	br, bc, bv := csrOf(b.Obs)
	if a.Obs != nil && (!slices.Equal(ar, br) || !slices.Equal(ac, bc) || !slices.Equal(av, bv)) {
		return false
	}
	return slices.Equal(a.S.RowPtr, b.S.RowPtr) && slices.Equal(a.S.ColIdx, b.S.ColIdx) && slices.Equal(a.S.Val, b.S.Val)
}

// TestReproducible: the same Config gives bit-identical data for any number
// of workers (sizes span several generation blocks); another seed differs.
func TestReproducible(t *testing.T) {
	for _, kind := range []Corruption{Random, Deterministic} {
		base := Config{D1: 700, D2: 90, Rank: 3, Alpha: 0.2, Corruption: kind, P: 0.3, Seed: 42}
		for _, gen := range []struct {
			name string
			fn   func(Config) (*Instance, error)
		}{{"dense", Dense}, {"observed", Observed}} {
			c1, c3 := base, base
			c1.Workers, c3.Workers = 1, 3
			x1, x3 := mustGen(t, gen.fn, c1), mustGen(t, gen.fn, c3)
			if !sameInstance(x1, x3) {
				t.Errorf("%v %s: output depends on the number of workers", kind, gen.name)
			}
			if !sameInstance(x1, mustGen(t, gen.fn, c1)) {
				t.Errorf("%v %s: two runs differ", kind, gen.name)
			}
			c2 := c1
			c2.Seed++
			y := mustGen(t, gen.fn, c2)
			if mat.Equal(x1.A, y.A) || mat.Equal(x1.B, y.B) || slices.Equal(x1.S.ColIdx, y.S.ColIdx) {
				t.Errorf("%v %s: seeds %d and %d give equal factors or supports", kind, gen.name, c1.Seed, c2.Seed)
			}
		}
	}
}

// TestLowRankPart: Y − S* = A·Bᵀ, which has rank exactly r (gonum SVD of
// the dense product: σ_r is far from 0 and σ_{r+1} is at rounding level).
func TestLowRankPart(t *testing.T) {
	for _, kind := range []Corruption{Random, Deterministic} {
		const d1, d2, r = 80, 60, 4
		in := mustGen(t, Dense, Config{D1: d1, D2: d2, Rank: r, Alpha: 0.1, Corruption: kind, Seed: 7})
		var m mat.Dense
		m.Mul(in.A, in.B.T())
		diff := mat.DenseCopyOf(in.Y)
		diff.Sub(diff, &m)
		// Y_ij = a_iᵀb_j + s_ij rounded once: |Y − S − ABᵀ| ≤ ulp-level
		// of max(|Y|, |S|) ≤ 1e-15 · (c + max|M*|).
		in.S.Do(func(i, j int, v float64) { diff.Set(i, j, diff.At(i, j)-v) })
		if e := mat.Norm(diff, math.Inf(1)); e > 1e-14 {
			t.Errorf("%v: max |Y − S − ABᵀ| = %g", kind, e)
		}
		var svd mat.SVD
		svd.Factorize(&m, mat.SVDNone)
		sv := svd.Values(nil)
		if sv[r-1] < 1e-3*sv[0] || sv[r] > 1e-13*sv[0] {
			t.Errorf("%v: singular values around r = %d: %g, %g (σ₁ = %g)", kind, r, sv[r-1], sv[r], sv[0])
		}
	}
}

// TestFactorVariance: entries of A are N(0, 1/d1) and of B N(0, 1/d2).
// The sample variance of n i.i.d. normals has relative standard deviation
// √(2/n); the tolerance is 6 of those, and the mean is within 6/√n·sd.
func TestFactorVariance(t *testing.T) {
	in := mustGen(t, Dense, Config{D1: 3000, D2: 500, Rank: 6, Seed: 3, Alpha: 0})
	for _, f := range []struct {
		name string
		m    *mat.Dense
		d    int
	}{{"A", in.A, 3000}, {"B", in.B, 500}} {
		raw := f.m.RawMatrix().Data
		n := float64(len(raw))
		mean, sq := 0.0, 0.0
		for _, x := range raw {
			mean += x
			sq += x * x
		}
		mean /= n
		v := sq/n - mean*mean
		want := 1 / float64(f.d)
		if math.Abs(v-want) > 6*math.Sqrt(2/n)*want || math.Abs(mean) > 6*math.Sqrt(want/n) {
			t.Errorf("%s: mean %g, variance %g, want 0, %g", f.name, mean, v, want)
		}
	}
	if in.S.NNZ() != 0 {
		t.Errorf("α = 0 gave %d corruptions", in.S.NNZ())
	}
}

// TestRandomCorruptions checks the Bernoulli(α) model: the total count is
// Binomial(d1·d2, α) (tolerance 6 standard deviations); the per-row counts
// have the binomial variance d2·α(1−α) (sample variance over d1 rows has
// relative sd √(2/(d1−1)) ≈ 4.5%; tolerance 25%), which would fail for
// correlated indicators; values lie in [−c, c] with |v|/c uniform on [0, 1]
// (mean 1/2, sd 1/√(12n); tolerance 6 sd) and both signs equally likely.
func TestRandomCorruptions(t *testing.T) {
	const d1, d2, r, alpha = 1000, 700, 5, 0.13
	in := mustGen(t, Dense, Config{D1: d1, D2: d2, Rank: r, Alpha: alpha, Seed: 11})
	c := 5 * r / math.Sqrt(d1*d2)
	n := float64(d1 * d2)
	cnt := float64(in.S.NNZ())
	if sd := math.Sqrt(n * alpha * (1 - alpha)); math.Abs(cnt-n*alpha) > 6*sd {
		t.Errorf("%v corruptions, want %v ± %v", cnt, n*alpha, 6*sd)
	}
	mean, sq := 0.0, 0.0
	for i := 0; i < d1; i++ {
		k := float64(in.S.RowPtr[i+1] - in.S.RowPtr[i])
		mean += k
		sq += k * k
	}
	mean /= d1
	v := (sq - d1*mean*mean) / (d1 - 1)
	if want := d2 * alpha * (1 - alpha); math.Abs(v-want) > 0.25*want {
		t.Errorf("variance of per-row counts %g, want %g", v, want)
	}
	absMean, pos := 0.0, 0
	for _, x := range in.S.Val {
		if math.Abs(x) > c {
			t.Fatalf("corruption %g outside [−%g, %g]", x, c, c)
		}
		absMean += math.Abs(x) / c
		if x > 0 {
			pos++
		}
	}
	absMean /= cnt
	if math.Abs(absMean-0.5) > 6/math.Sqrt(12*cnt) {
		t.Errorf("mean |v|/c = %g, want 0.5", absMean)
	}
	if math.Abs(float64(pos)-cnt/2) > 6*math.Sqrt(cnt/4) {
		t.Errorf("%d positive of %v corruptions", pos, cnt)
	}
	// A custom magnitude scales the values.
	in2 := mustGen(t, Dense, Config{D1: 50, D2: 40, Rank: 2, Alpha: 0.3, Seed: 1, Magnitude: 100})
	big := 0
	for _, x := range in2.S.Val {
		if math.Abs(x) > 100 {
			t.Fatalf("corruption %g outside [−100, 100]", x)
		}
		if math.Abs(x) > 10 {
			big++
		}
	}
	if big == 0 {
		t.Error("Magnitude 100 gave no corruption above 10")
	}
}

func lineCounts(in *Instance) (rows, cols []int) {
	rows = make([]int, in.Config.D1)
	cols = make([]int, in.Config.D2)
	in.S.Do(func(i, j int, _ float64) {
		rows[i]++
		cols[j]++
	})
	return rows, cols
}

// TestDeterministicCounts checks S* ∈ S_α with the maximal counts: exactly
// ⌊α·d2⌋ per row and ⌊α·d1⌋ per column when d1⌊α·d2⌋ = d2⌊α·d1⌋, and
// otherwise exact on the binding side and within one of each other on the
// other side; values are ±[c/2, c].
func TestDeterministicCounts(t *testing.T) {
	cases := []struct {
		d1, d2 int
		alpha  float64
	}{
		{300, 300, 0.1}, // 30 and 30
		{200, 300, 0.1}, // 30 per row, 20 per column: 6000 = 6000
		{200, 333, 0.1}, // rows bind: 33 per row, columns 19 or 20 ≤ 20
		{333, 200, 0.1}, // columns bind
		{97, 89, 0.37},
		{50, 60, 0.01}, // ⌊α·d1⌋ = 0: no corruption at all
	}
	for _, c := range cases {
		in := mustGen(t, Dense, Config{D1: c.d1, D2: c.d2, Rank: 3, Alpha: c.alpha, Corruption: Deterministic, Seed: 5})
		mr, mc := int(math.Floor(c.alpha*float64(c.d2))), int(math.Floor(c.alpha*float64(c.d1)))
		total := min(c.d1*mr, c.d2*mc)
		rows, cols := lineCounts(in)
		if in.S.NNZ() != total {
			t.Errorf("%+v: %d corruptions, want %d", c, in.S.NNZ(), total)
		}
		check := func(name string, counts []int, limit int) {
			lo, hi := slices.Min(counts), slices.Max(counts)
			if hi > limit || hi-lo > 1 {
				t.Errorf("%+v: %s counts in [%d, %d], want within one of each other and ≤ %d", c, name, lo, hi, limit)
			}
			if len(counts)*limit == total && lo != limit {
				t.Errorf("%+v: %s counts in [%d, %d], want exactly %d", c, name, lo, hi, limit)
			}
		}
		check("row", rows, mr)
		check("column", cols, mc)
		cm := 5 * 3 / math.Sqrt(float64(c.d1*c.d2))
		neg := 0
		for _, v := range in.S.Val {
			if a := math.Abs(v); a < cm/2 || a > cm {
				t.Fatalf("%+v: corruption %g outside ±[%g, %g]", c, v, cm/2, cm)
			}
			if v < 0 {
				neg++
			}
		}
		if total > 100 && (neg == 0 || neg == total) {
			t.Errorf("%+v: %d negative of %d corruptions", c, neg, total)
		}
	}
}

// TestObservedMatchesDense: the partial generator gives the same A, B, and
// on Φ exactly the values and corruptions of the dense generator.
func TestObservedMatchesDense(t *testing.T) {
	for _, kind := range []Corruption{Random, Deterministic} {
		cfg := Config{D1: 600, D2: 250, Rank: 3, Alpha: 0.15, Corruption: kind, P: 0.2, Seed: 9}
		dn, ob := mustGen(t, Dense, cfg), mustGen(t, Observed, cfg)
		if !mat.Equal(dn.A, ob.A) || !mat.Equal(dn.B, ob.B) {
			t.Fatalf("%v: factors differ", kind)
		}
		nS := 0
		for i := 0; i < cfg.D1; i++ {
			cols, vals := ob.Obs.Row(i)
			for k, j := range cols {
				if y := dn.Y.At(i, int(j)); vals[k] != y {
					t.Fatalf("%v: observed Y(%d, %d) = %g, dense %g", kind, i, j, vals[k], y)
				}
				if s := dn.S.At(i, int(j)); s != 0 {
					nS++
					if ob.S.At(i, int(j)) != s {
						t.Fatalf("%v: observed S(%d, %d) = %g, dense %g", kind, i, j, ob.S.At(i, int(j)), s)
					}
				}
			}
		}
		if nS != ob.S.NNZ() {
			t.Errorf("%v: %d corruptions on Φ, observed instance lists %d", kind, nS, ob.S.NNZ())
		}
	}
}

// TestSamplingRate: |Φ| ~ Binomial(d1·d2, p) and the two column halves get
// Binomial(d1·d2/2, p) each (tolerance 6 standard deviations), for the
// paper's small rates and for a large one; p = 1 observes everything.
func TestSamplingRate(t *testing.T) {
	for _, c := range []struct {
		d1, d2 int
		p      float64
	}{{2000, 1500, 0.01}, {400, 300, 0.7}, {3000, 3000, PaperRate(3000, 2)}} {
		in := mustGen(t, Observed, Config{D1: c.d1, D2: c.d2, Rank: 2, Alpha: 0.1, P: c.p, Seed: 21})
		n := float64(c.d1) * float64(c.d2)
		got := float64(in.Obs.Len())
		if sd := math.Sqrt(n * c.p * (1 - c.p)); math.Abs(got-n*c.p) > 6*sd {
			t.Errorf("%+v: |Φ| = %v, want %v ± %v", c, got, n*c.p, 6*sd)
		}
		left := 0
		_, colIdx, _ := in.Obs.CSR()
		for _, j := range colIdx {
			if int(j) < c.d2/2 {
				left++
			}
		}
		half := float64(c.d1*(c.d2/2)) * c.p
		if sd := math.Sqrt(half * (1 - c.p)); math.Abs(float64(left)-half) > 6*sd {
			t.Errorf("%+v: %d entries in the left half, want %v ± %v", c, left, half, 6*sd)
		}
		// Corruptions on Φ: Binomial(|Φ|, α).
		if sd := math.Sqrt(got * 0.1 * 0.9); math.Abs(float64(in.S.NNZ())-0.1*got) > 6*sd {
			t.Errorf("%+v: %d corruptions on %v observed entries", c, in.S.NNZ(), got)
		}
	}
	in := mustGen(t, Observed, Config{D1: 30, D2: 20, Rank: 2, Alpha: 0.1, P: 1, Seed: 1})
	if in.Obs.Len() != 600 {
		t.Errorf("p = 1 observed %d of 600 entries", in.Obs.Len())
	}
}

func TestProblem(t *testing.T) {
	cfg := Config{D1: 40, D2: 30, Rank: 2, Alpha: 0.1, P: 0.5, Seed: 1}
	for _, in := range []*Instance{mustGen(t, Dense, cfg), mustGen(t, Observed, cfg)} {
		p := in.Problem()
		if err := p.Validate(); err != nil {
			t.Error(err)
		}
		if d1, d2 := p.Dims(); d1 != 40 || d2 != 30 || p.Truth.A != in.A {
			t.Errorf("problem dims %d×%d", d1, d2)
		}
		if (p.Observed != nil) != (in.Obs != nil) {
			t.Error("wrong problem kind")
		}
	}
}

func TestPaperRate(t *testing.T) {
	// 0.15·10²·ln(5000)/5000 ≈ 0.0255558 (ln 5000 ≈ 8.517193).
	if p := PaperRate(5000, 10); math.Abs(p-0.15*100*8.517193191416238/5000) > 1e-12 {
		t.Errorf("PaperRate(5000, 10) = %g", p)
	}
	if p := PaperRate(50, 10); p != 1 {
		t.Errorf("PaperRate(50, 10) = %g, want clamped to 1", p)
	}
}

func TestInvalidConfig(t *testing.T) {
	ok := Config{D1: 20, D2: 30, Rank: 2, Alpha: 0.1, P: 0.5}
	bad := map[string]func(*Config){
		"d1 = 0":           func(c *Config) { c.D1 = 0 },
		"d2 < 0":           func(c *Config) { c.D2 = -3 },
		"rank 0":           func(c *Config) { c.Rank = 0 },
		"rank = min d":     func(c *Config) { c.Rank = 20 },
		"alpha < 0":        func(c *Config) { c.Alpha = -0.1 },
		"alpha = 1":        func(c *Config) { c.Alpha = 1 },
		"alpha NaN":        func(c *Config) { c.Alpha = math.NaN() },
		"unknown model":    func(c *Config) { c.Corruption = 7 },
		"magnitude < 0":    func(c *Config) { c.Magnitude = -1 },
		"magnitude +Inf":   func(c *Config) { c.Magnitude = math.Inf(1) },
		"huge dimension":   func(c *Config) { c.D1 = math.MaxInt32 + 1 },
		"|Φ| beyond int32": func(c *Config) { c.D1, c.D2, c.P = 1<<20, 1<<20, 0.5 },
	}
	for name, f := range bad {
		c := ok
		f(&c)
		if _, err := Observed(c); err == nil {
			t.Errorf("Observed accepted %s", name)
		}
		if name == "|Φ| beyond int32" {
			continue // a valid size for Dense in principle (but 8 TB)
		}
		if _, err := Dense(c); err == nil {
			t.Errorf("Dense accepted %s", name)
		}
	}
	for _, p := range []float64{0, -0.5, 1.5, math.NaN()} {
		c := ok
		c.P = p
		if _, err := Observed(c); err == nil {
			t.Errorf("Observed accepted p = %v", p)
		}
	}
	c := ok
	c.P = 0 // Dense ignores P
	if _, err := Dense(c); err != nil {
		t.Errorf("Dense rejected P = 0: %v", err)
	}
}

// TestKappa checks the ill-conditioned model against a full SVD of
// M* = A·Bᵀ: singular values evenly spaced from σ₁ to σ₁/κ, ‖M*‖_F = √r.
func TestKappa(t *testing.T) {
	const r = 4
	for _, kappa := range []float64{1, 100} {
		in, err := Dense(Config{D1: 120, D2: 90, Rank: r, Alpha: 0.1, Kappa: kappa, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		var m mat.Dense
		m.Mul(in.A, in.B.T())
		var svd mat.SVD
		if !svd.Factorize(&m, mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		s := svd.Values(nil)
		if got := s[0] / s[r-1]; math.Abs(got-kappa) > 1e-9*kappa {
			t.Errorf("κ = %v: σ₁/σ_r = %v", kappa, got)
		}
	}
	// κ = 1 is the model with equal singular values, not the paper's
	// (whose Gaussian factors give σ₁/σ_r > 1).
	paper, _ := Dense(Config{D1: 120, D2: 90, Rank: r, Alpha: 0.1, Seed: 3})
	one, _ := Dense(Config{D1: 120, D2: 90, Rank: r, Alpha: 0.1, Kappa: 1, Seed: 3})
	if mat.Equal(paper.A, one.A) {
		t.Error("κ = 1 generated the paper's model")
	}
	const kappa = 100.0
	in, err := Dense(Config{D1: 120, D2: 90, Rank: r, Alpha: 0.1, Kappa: kappa, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var m mat.Dense
	m.Mul(in.A, in.B.T())
	var svd mat.SVD
	if !svd.Factorize(&m, mat.SVDNone) {
		t.Fatal("SVD failed")
	}
	s := svd.Values(nil)
	if s[r] > 1e-12 {
		t.Errorf("σ_{r+1} = %v, want 0", s[r])
	}
	mid := s[0] + (s[r-1]-s[0])/float64(r-1)
	if math.Abs(s[1]-mid) > 1e-12 {
		t.Errorf("σ₂ = %v, want %v (evenly spaced)", s[1], mid)
	}
	if f := mat.Norm(&m, 2); math.Abs(f-math.Sqrt(r)) > 1e-12 {
		t.Errorf("‖M*‖_F = %v, want √r", f)
	}
	for _, k := range []float64{0.5, -1, math.NaN(), math.Inf(1)} {
		if _, err := Dense(Config{D1: 20, D2: 20, Rank: 2, Kappa: k}); err == nil {
			t.Errorf("Kappa %v accepted", k)
		}
	}
}

// csrOf returns the CSR arrays of o, or nils for a nil o.
func csrOf(o *rpca.Observed) ([]int, []int32, []float64) {
	if o == nil {
		return nil, nil, nil
	}
	return o.CSR()
}
