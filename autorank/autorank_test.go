package autorank_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/autorank"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/methods"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

// instance is a generated problem with the factors of its true low-rank
// part.
type instance struct {
	prob *rpca.Problem
	a, b *mat.Dense // L* = A·Bᵀ, the offset as one more column
	rank int        // rank of L*, offset included
}

// generate returns the paper's model at d×d, rank r, condition number
// kappa and α = 0.1, plus the constant offset (which adds one to the
// rank), fully observed or sampled at rate p < 1.
func generate(t testing.TB, d, r int, kappa, offset, p float64, seed uint64) instance {
	t.Helper()
	cfg := synth.Config{D1: d, D2: d, Rank: r, Alpha: 0.1, Kappa: kappa, Seed: seed, P: p}
	var in *synth.Instance
	var err error
	if p < 1 {
		in, err = synth.Observed(cfg)
	} else {
		in, err = synth.Dense(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	inst := instance{a: in.A, b: in.B, rank: r}
	if offset != 0 {
		inst.rank++
		inst.a, inst.b = withColumn(in.A, math.Sqrt(offset)), withColumn(in.B, math.Sqrt(offset))
	}
	if p < 1 {
		var rows, cols []int
		var vals []float64
		in.Obs.Do(func(i, j int, v float64) {
			rows, cols, vals = append(rows, i), append(cols, j), append(vals, v+offset)
		})
		obs, err := rpca.NewObserved(d, d, rows, cols, vals)
		if err != nil {
			t.Fatal(err)
		}
		inst.prob = &rpca.Problem{Observed: obs}
		return inst
	}
	y := in.Y
	for i := range d {
		row := y.RawRowView(i)
		for j := range row {
			row[j] += offset
		}
	}
	inst.prob = &rpca.Problem{Dense: y}
	return inst
}

// withColumn returns [f, c·1].
func withColumn(f *mat.Dense, c float64) *mat.Dense {
	n, k := f.Dims()
	out := mat.NewDense(n, k+1, nil)
	out.Slice(0, n, 0, k).(*mat.Dense).Copy(f)
	for i := range n {
		out.Set(i, k, c)
	}
	return out
}

type rankCase struct {
	name          string
	d, r          int
	kappa, offset float64
	p             float64
	seed          uint64
}

// check solves tc with --rank auto's defaults and reports the chosen
// rank, whether it was verified, and the true error.
func check(t *testing.T, tc rankCase, method string) (ok bool) {
	t.Helper()
	inst := generate(t, tc.d, tc.r, tc.kappa, tc.offset, tc.p, tc.seed)
	m, err := methods.New(method, inst.prob.Observed != nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, c, err := autorank.Solve(context.Background(), inst.prob, rpca.Settings{Alpha: 0.1}, m, autorank.Options{Convex: &ialm.Method{}})
	if err != nil {
		t.Fatal(err)
	}
	// ‖M − L*‖_F / ‖L* − mean(L*)‖_F: the offset is not in the
	// denominator, so it cannot hide an error in the varying part.
	e := metrics.CentredRelError(res.U, res.V, inst.a, inst.b)
	// 1e-5: the verified answers reproduce the data to 1e-7 of M's
	// variation (IALM's stopping rule) or better; the true error of an
	// answer at the right rank follows, with the conditioning (κ ≤ 100)
	// as the margin.
	ok = c.Rank == inst.rank && res.Verification.Verified && e < 1e-5
	if !ok {
		t.Logf("%s: chose rank %d (true %d), rule %s, tried %v %v, %s, true error %.3g; %s",
			tc.name, c.Rank, inst.rank, c.Rule, c.Tried, c.Methods, res.Verification.Status(), e, c.Reason)
	}
	return ok
}

// TestSolveFindsRank: the chosen rank is the true rank, and the answer at
// it is verified and right, for low and high ranks, offsets and κ = 100,
// through each of the rules.
func TestSolveFindsRank(t *testing.T) {
	for _, tc := range []rankCase{
		{"rank 1", 120, 1, 1, 0, 1, 1},
		{"rank 3 spectrum", 150, 3, 1, 0, 1, 3},
		{"rank 8 convex", 150, 8, 1, 0, 1, 8},
		{"rank 6 κ 100", 150, 6, 100, 0, 1, 6},
		{"rank 4 + offset 1e3", 150, 4, 1, 1e3, 1, 4},
		{"rank 12 κ 10 + offset 1e6", 150, 12, 10, 1e6, 1, 12},
		{"partial rank 2, p 0.6", 200, 2, 1, 0, 0.6, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !check(t, tc, "auto") {
				t.Fail()
			}
		})
	}
}

// TestSolveFindsRankSweep is issue 40's target: the true rank on at least
// 95% of generated cases with ranks 1–20, offsets and κ up to 100 (120
// problems at d = 200, about 3 minutes; RPCA_AUTORANK=1 runs it).
func TestSolveFindsRankSweep(t *testing.T) {
	if os.Getenv("RPCA_AUTORANK") == "" {
		t.Skip("RPCA_AUTORANK=1 runs the sweep")
	}
	good, total := 0, 0
	for _, kappa := range []float64{1, 10, 100} {
		for _, offset := range []float64{0, 1e3} {
			for r := 1; r <= 20; r++ {
				total++
				if check(t, rankCase{"sweep", 200, r, kappa, offset, 1, uint64(r)}, "auto") {
					good++
				}
			}
		}
	}
	t.Logf("the true rank, verified, on %d of %d", good, total)
	if float64(good) < 0.95*float64(total) {
		t.Errorf("the true rank on %d of %d, below 95%%", good, total)
	}
}

// TestSolveOneMethod: with a fixed-rank method that does not fall back
// (AccAltProj), the convex rule finds the rank and the method runs again
// at it.
func TestSolveOneMethod(t *testing.T) {
	tc := rankCase{"accaltproj rank 8", 150, 8, 1, 0, 1, 8}
	if !check(t, tc, "accaltproj") {
		t.Fail()
	}
}

func TestSolveErrors(t *testing.T) {
	m, _ := methods.New("auto", false, nil)
	_, _, err := autorank.Solve(context.Background(), &rpca.Problem{Dense: mat.NewDense(1, 5, nil)}, rpca.Settings{Alpha: 0.1}, m, autorank.Options{})
	if !errors.Is(err, autorank.ErrTooSmall) {
		t.Errorf("1×5: %v, want ErrTooSmall", err)
	}
	inst := generate(t, 60, 2, 1, 0, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := autorank.Solve(ctx, inst.prob, rpca.Settings{Alpha: 0.1}, m, autorank.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	if _, _, err := autorank.Solve(context.Background(), nil, rpca.Settings{}, m, autorank.Options{}); err == nil {
		t.Error("nil problem: no error")
	}
}

// TestSolveMaxRank: a cap below the true rank cannot be verified, and the
// choice says so instead of claiming a rank.
func TestSolveMaxRank(t *testing.T) {
	inst := generate(t, 120, 6, 1, 0, 1, 6)
	m, _ := methods.New("accaltproj", false, nil)
	res, c, err := autorank.Solve(context.Background(), inst.prob, rpca.Settings{Alpha: 0.1}, m, autorank.Options{MaxRank: 3, Convex: &ialm.Method{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verification.Verified || c.Rule != autorank.RuleNone {
		t.Errorf("rank 6 data under --max-rank 3: %s, rule %s (%s)", res.Verification.Status(), c.Rule, c.Reason)
	}
	for _, r := range c.Tried {
		if r > 3 {
			t.Errorf("tried rank %d above the cap 3", r)
		}
	}
}

// TestSolveGuessesThroughCorruptions: on the paper's model at d = 1000
// (rank 10, α = 0.1, corruptions up to 5r/d, about 16 times the clean
// entries' spread) the corruptions' noise bulk hides the gap of Y's
// spectrum (σ10/σ11 about 1.7 over all of Y, below the gap rule's 2), so
// a guess from Y alone would be 1 and the search would go through
// unverified answers and the convex rule (48 s at d = 3000). Clipped
// column by column, the sample shows the gap: the first guess is 10 and
// one solve suffices.
func TestSolveGuessesThroughCorruptions(t *testing.T) {
	if testing.Short() {
		t.Skip("d = 1000")
	}
	inst := generate(t, 1000, 10, 1, 0, 1, 3)
	sv := mat.SVD{}
	if !sv.Factorize(inst.prob.Dense, mat.SVDNone) {
		t.Fatal("SVD failed")
	}
	s := sv.Values(nil)
	if s[9]/s[10] >= autorank.DefaultMinGap {
		t.Fatalf("σ10/σ11 = %.3g: the gap shows in Y itself, so this instance tests nothing", s[9]/s[10])
	}
	m, _ := methods.New("auto", false, nil)
	res, c, err := autorank.Solve(context.Background(), inst.prob, rpca.Settings{Alpha: 0.1}, m, autorank.Options{Convex: &ialm.Method{}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Guess != 10 || c.Rank != 10 || len(c.Tried) != 1 || !res.Verification.Verified {
		t.Errorf("guess %d, rank %d, tried %v, %s; %s", c.Guess, c.Rank, c.Tried, res.Verification.Status(), c.Reason)
	}
}

// TestSolveWithoutCorruptions: at α = 0 (Y exactly of rank 5, with and
// without an offset, which adds one) the rank is the true one. Clipping
// bends a low-rank matrix, so a guess from the clipped sample read 35
// here; Y's own spectrum, exactly zero after the rank, says it.
func TestSolveWithoutCorruptions(t *testing.T) {
	for _, offset := range []float64{0, 100} {
		in, err := synth.Dense(synth.Config{D1: 300, D2: 250, Rank: 5, Alpha: 0, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		y, a, b, want := in.Y, in.A, in.B, 5
		if offset != 0 {
			y.Apply(func(_, _ int, v float64) float64 { return v + offset }, y)
			a, b, want = withColumn(in.A, offset), withColumn(in.B, 1), 6
		}
		m, _ := methods.New("auto", false, nil)
		res, c, err := autorank.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Alpha: 0.1}, m, autorank.Options{Convex: &ialm.Method{}})
		if err != nil {
			t.Fatal(err)
		}
		e := metrics.CentredRelError(res.U, res.V, a, b)
		if c.Rank != want || !res.Verification.Verified || e > 1e-6 {
			t.Errorf("offset %g: rank %d (want %d, guess %d, %s), %s, true error %.3g", offset, c.Rank, want, c.Guess, c.Reason, res.Verification.Status(), e)
		}
	}
}

// TestSolveSmallSpiky: rank 1 with 5% gross spikes on a small 60×40
// matrix. The search used to range up to min(d1, d2) − 1 = 39, where a
// gap of the noise's tail (σ39/σ40 ≥ 2) made the guess 39, a rank Solve
// refuses as unidentifiable: the command failed on the paper's own model.
// The search now stops at rpca.MaxSeparableRank, and the answer is rank
// 1, verified, with L* recovered.
func TestSolveSmallSpiky(t *testing.T) {
	const d1, d2 = 60, 40
	rng := rand.New(rand.NewPCG(7, 8))
	u, v := make([]float64, d1), make([]float64, d2)
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	for j := range v {
		v[j] = rng.NormFloat64()
	}
	y := mat.NewDense(d1, d2, nil)
	y.Outer(1, mat.NewVecDense(d1, u), mat.NewVecDense(d2, v))
	for _, k := range rng.Perm(d1 * d2)[:d1*d2/20] {
		y.Set(k/d2, k%d2, y.At(k/d2, k%d2)+20*rng.NormFloat64())
	}
	m, _ := methods.New("auto", false, nil)
	s := rpca.Settings{Alpha: 0.1}
	res, c, err := autorank.Solve(context.Background(), &rpca.Problem{Dense: y}, s, m, autorank.Options{Convex: &ialm.Method{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := rpca.MaxSeparableRank(d1, d2, s.Alpha); c.MaxRank != want || want >= 39 {
		t.Errorf("cap %d, want MaxSeparableRank = %d", c.MaxRank, want)
	}
	if c.Rank != 1 || !res.Verification.Verified {
		t.Fatalf("rank %d, %s; %s", c.Rank, res.Verification.Status(), c.Reason)
	}
	// Relative to L*'s spread around its mean (the location is not in the
	// denominator); a verified exact answer is accurate to far below 1e-6.
	if e := metrics.CentredRelError(res.U, res.V, mat.NewDense(d1, 1, u), mat.NewDense(d2, 1, v)); e > 1e-6 {
		t.Errorf("‖L − L*‖/‖L* − mean‖ = %.3g", e)
	}
}
