package rpca_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/testmat"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

func solve(t *testing.T, p *rpca.Problem, s rpca.Settings, m rpca.Method) *rpca.Result {
	t.Helper()
	res, err := rpca.Solve(context.Background(), p, s, m)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// instance generates a synthetic instance, failing the test if the
// configuration is rejected: cfg.P = 0 gives the fully observed Y
// (synth.Dense), cfg.P > 0 the partially observed one (synth.Observed).
func instance(t testing.TB, cfg synth.Config) *synth.Instance {
	t.Helper()
	generate := synth.Dense
	if cfg.P > 0 {
		generate = synth.Observed
	}
	in, err := generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// relErr is the true relative error computed densely (independent of the
// factor-based metric the history uses).
func relErr(res *rpca.Result, in *synth.Instance) float64 {
	return testmat.RelErr(res.U, res.V, in.A, in.B)
}

// TestGDRecoversPaperModel runs Algorithm 1 with its default parameters
// and stopping rules on the paper's model (Section 5.1).
func TestGDRecoversPaperModel(t *testing.T) {
	in := instance(t, synth.Config{D1: 500, D2: 500, Rank: 5, Alpha: 0.1, Seed: 11})
	res := solve(t, in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.1}, &gd.Method{})
	if e := relErr(res, in); e > 1e-6 {
		t.Fatalf("relative error %.3g after %d iterations (%s), want ≤ 1e-6", e, res.Iterations, res.Stop)
	}
	if res.Stop == rpca.StopMaxIter {
		t.Errorf("stopped on the iteration cap, want a tolerance rule")
	}
	if len(res.History) != res.Iterations+1 {
		t.Errorf("history has %d records for %d iterations", len(res.History), res.Iterations)
	}
	if gdParams(t, res).Algorithm != 1 || gdParams(t, res).Gamma != 2 || gdParams(t, res).StepConst != gd.DefaultStepDense {
		t.Errorf("unexpected effective parameters %v", res.Params)
	}
	// The estimated corruptions match S*: every entry of S* is larger than
	// the remaining error, so S = S* up to the tiny entries of S*.
	diff := res.S.ToDense()
	sStar := in.S.ToDense()
	diff.Sub(diff, sStar)
	if r := mat.Norm(diff, 2) / mat.Norm(sStar, 2); r > 1e-4 {
		t.Errorf("‖S − S*‖/‖S*‖ = %.3g, want ≤ 1e-4", r)
	}
	// S is in S_{γα}: at most ⌊γα·d⌋ entries per row.
	for i := 0; i < res.S.Rows; i++ {
		if n := res.S.RowPtr[i+1] - res.S.RowPtr[i]; n > 100 {
			t.Fatalf("row %d of S has %d entries, more than ⌊2·0.1·500⌋ = 100", i, n)
		}
	}
}

// TestGDGeometricConvergence checks the linear rate of Theorem 2: the
// error shrinks by a constant factor every few iterations.
func TestGDGeometricConvergence(t *testing.T) {
	in := instance(t, synth.Config{D1: 400, D2: 400, Rank: 4, Alpha: 0.1, Seed: 5})
	res := solve(t, in.Problem(), rpca.Settings{Rank: 4, Alpha: 0.1, Stop: rpca.Stop{TargetError: 1e-9, ResidualTol: -1, FactorTol: -1}}, &gd.Method{})
	h := res.History
	if res.Stop != rpca.StopTargetError {
		t.Fatalf("stopped by %s at error %.3g", res.Stop, h[len(h)-1].Error)
	}
	// With η = 0.5/σ̂₁ the measured contraction is about 0.8 per iteration
	// (≈ 0.1 per 10); require at most 0.5 per 10 iterations throughout.
	const span = 10
	for k := 0; k+span < len(h); k++ {
		if r := h[k+span].Error / h[k].Error; r > 0.5 {
			t.Fatalf("error went from %.3g (iter %d) to %.3g (iter %d): ratio %.2f, want ≤ 0.5",
				h[k].Error, k, h[k+span].Error, k+span, r)
		}
	}
}

func TestGDRectangular(t *testing.T) {
	for _, sz := range [][2]int{{300, 700}, {700, 300}} {
		in := instance(t, synth.Config{D1: sz[0], D2: sz[1], Rank: 5, Alpha: 0.08, Seed: 3})
		res := solve(t, in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.08}, &gd.Method{})
		if e := relErr(res, in); e > 1e-6 {
			t.Errorf("%d×%d: relative error %.3g, want ≤ 1e-6", sz[0], sz[1], e)
		}
		if r, c := res.U.Dims(); r != sz[0] || c != 5 {
			t.Errorf("U is %d×%d", r, c)
		}
	}
}

// TestGDDeterministicCorruptions uses the model of the theory: exactly
// ⌊αd⌋ large corruptions in every row and column.
func TestGDDeterministicCorruptions(t *testing.T) {
	in := instance(t, synth.Config{D1: 500, D2: 500, Rank: 5, Alpha: 0.1, Seed: 8, Corruption: synth.Deterministic})
	res := solve(t, in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.1}, &gd.Method{})
	if e := relErr(res, in); e > 1e-6 {
		t.Fatalf("relative error %.3g, want ≤ 1e-6", e)
	}
}

func TestGDDeterministic(t *testing.T) {
	in := instance(t, synth.Config{D1: 200, D2: 150, Rank: 3, Alpha: 0.1, Seed: 4})
	s := rpca.Settings{Rank: 3, Alpha: 0.1, Workers: 2, Stop: rpca.Stop{MaxIter: 15}}
	a := solve(t, in.Problem(), s, &gd.Method{})
	b := solve(t, in.Problem(), s, &gd.Method{})
	if !mat.Equal(a.U, b.U) || !mat.Equal(a.V, b.V) {
		t.Fatal("two runs with the same seed gave different factors")
	}
	// Subsampling draws Φ from the seed: same seed, same Φ, same result.
	sampled := func(seed uint64) *rpca.Problem {
		obs, err := rpca.Sampling{P: 0.5, Seed: seed}.Dense(in.Y)
		if err != nil {
			t.Fatal(err)
		}
		return &rpca.Problem{Observed: obs}
	}
	c := solve(t, sampled(9), s, &gd.Method{})
	d := solve(t, sampled(9), s, &gd.Method{})
	if !mat.Equal(c.U, d.U) {
		t.Fatal("subsampled runs with the same seed differ")
	}
	e := solve(t, sampled(10), s, &gd.Method{})
	if mat.Equal(c.U, e.U) {
		t.Fatal("subsampled runs with different seeds are identical")
	}
}

// TestGDPartialRecovery is Algorithm 2 on the paper's model with 30% of
// the entries observed.
func TestGDPartialRecovery(t *testing.T) {
	in := instance(t, synth.Config{D1: 1000, D2: 1000, Rank: 5, Alpha: 0.05, P: 0.3, Seed: 21})
	res := solve(t, in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.05}, &gd.Method{})
	if e := metrics.RelError(res.U, res.V, in.A, in.B); e > 1e-5 {
		t.Fatalf("relative error %.3g after %d iterations (%s), want ≤ 1e-5", e, res.Iterations, res.Stop)
	}
	if gdParams(t, res).Algorithm != 2 || gdParams(t, res).Gamma != 3 {
		t.Errorf("effective parameters %v, want Algorithm 2 with γ = 3", res.Params)
	}
	// S lives on Φ only.
	obs := in.Problem().Observed
	onPhi := map[[2]int]bool{}
	obs.Do(func(i, j int, _ float64) { onPhi[[2]int{i, j}] = true })
	res.S.Do(func(i, j int, _ float64) {
		if !onPhi[[2]int{i, j}] {
			t.Fatalf("S has entry (%d, %d) outside Φ", i, j)
		}
	})
}

func TestGDPartialRectangular(t *testing.T) {
	in := instance(t, synth.Config{D1: 400, D2: 900, Rank: 3, Alpha: 0.05, P: 0.4, Seed: 2})
	res := solve(t, in.Problem(), rpca.Settings{Rank: 3, Alpha: 0.05}, &gd.Method{})
	if e := metrics.RelError(res.U, res.V, in.A, in.B); e > 1e-5 {
		t.Fatalf("relative error %.3g, want ≤ 1e-5", e)
	}
}

// TestGDMatrixCompletion: S* = 0 and α = 0 skips the sparse step.
func TestGDMatrixCompletion(t *testing.T) {
	in := instance(t, synth.Config{D1: 600, D2: 500, Rank: 4, Alpha: 0, P: 0.2, Seed: 6})
	res := solve(t, in.Problem(), rpca.Settings{Rank: 4, Alpha: 0}, &gd.Method{})
	if e := metrics.RelError(res.U, res.V, in.A, in.B); e > 1e-5 {
		t.Fatalf("relative error %.3g, want ≤ 1e-5", e)
	}
	if res.S.NNZ() != 0 {
		t.Errorf("α = 0 produced %d sparse entries", res.S.NNZ())
	}
}

// TestGDSubsampling runs Algorithm 2 on a random half of a dense Y, drawn
// by rpca.Sampling: p is the draw's probability, not the fraction drawn.
func TestGDSubsampling(t *testing.T) {
	in := instance(t, synth.Config{D1: 600, D2: 600, Rank: 5, Alpha: 0.05, Seed: 13})
	obs, err := rpca.Sampling{P: 0.5}.Dense(in.Y)
	if err != nil {
		t.Fatal(err)
	}
	p := in.Problem()
	p.Dense, p.Observed = nil, obs
	res := solve(t, p, rpca.Settings{Rank: 5, Alpha: 0.05}, &gd.Method{})
	if gdParams(t, res).Algorithm != 2 || gdParams(t, res).P != 0.5 || obs.Rate() == 0.5 {
		t.Fatalf("effective parameters %v, want Algorithm 2 with p = 0.5 (the fraction drawn is %v)", res.Params, obs.Rate())
	}
	// Solve's frame (here the offset of 100 it removes) keeps the draw's p.
	shifted := mat.DenseCopyOf(in.Y)
	shifted.Apply(func(_, _ int, v float64) float64 { return v + 100 }, shifted)
	obs2, err := rpca.Sampling{P: 0.5}.Dense(shifted)
	if err != nil {
		t.Fatal(err)
	}
	res2 := solve(t, &rpca.Problem{Observed: obs2}, rpca.Settings{Rank: 6, Alpha: 0.05}, &gd.Method{})
	if res2.Location == 0 || gdParams(t, res2).P != 0.5 {
		t.Errorf("with an offset: location %v, p %v; want the offset removed and p = 0.5", res2.Location, gdParams(t, res2).P)
	}
	if e := relErr(res, in); e > 1e-5 {
		t.Fatalf("relative error %.3g, want ≤ 1e-5", e)
	}
}

// TestGDObservedZeros: rows of M* that are exactly zero are observed as
// zeros; they are observations, so the rows are not empty and the
// completion recovers them as zero.
func TestGDObservedZeros(t *testing.T) {
	const d1, d2 = 120, 100
	a := mat.NewDense(d1, 2, nil)
	b := mat.NewDense(d2, 2, nil)
	for i := 0; i < d1; i++ {
		if i%4 != 0 { // every fourth row of M* is zero
			a.Set(i, 0, math.Sin(float64(i)))
			a.Set(i, 1, math.Cos(float64(3*i)))
		}
	}
	for j := 0; j < d2; j++ {
		b.Set(j, 0, math.Cos(float64(j)))
		b.Set(j, 1, math.Sin(float64(2*j+1)))
	}
	var rows, cols []int
	var vals []float64
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if (i*7+j*3)%5 < 3 { // 60% observed, deterministic pattern
				rows, cols = append(rows, i), append(cols, j)
				vals = append(vals, mat.Dot(a.RowView(i), b.RowView(j)))
			}
		}
	}
	obs, err := rpca.NewObserved(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	if obs.Len() != len(vals) {
		t.Fatalf("observed %d entries, want %d (zeros must count)", obs.Len(), len(vals))
	}
	p := &rpca.Problem{Observed: obs, Truth: &rpca.Truth{A: a, B: b}}
	res := solve(t, p, rpca.Settings{Rank: 2, Alpha: 0, Stop: rpca.Stop{MaxIter: 5000}}, &gd.Method{})
	if e := metrics.RelError(res.U, res.V, a, b); e > 1e-5 {
		t.Fatalf("relative error %.3g after %d iterations, want ≤ 1e-5", e, res.Iterations)
	}
}

func TestGDBadInput(t *testing.T) {
	in := instance(t, synth.Config{D1: 50, D2: 40, Rank: 2, Alpha: 0.1, Seed: 1})
	good := rpca.Settings{Rank: 2, Alpha: 0.1}
	nanY := mat.DenseCopyOf(in.Y)
	nanY.Set(3, 4, math.NaN())
	emptyRow, err := rpca.NewObserved(3, 3, []int{0, 0, 2, 2}, []int{0, 1, 1, 2}, []float64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := rpca.Sampling{P: 0.5, Cover: true}.Dense(in.Y)
	if err != nil {
		t.Fatal(err)
	}
	half := &rpca.Problem{Observed: obs}
	cases := []struct {
		name string
		p    *rpca.Problem
		s    rpca.Settings
		m    rpca.Method
		want string
	}{
		{"nan", &rpca.Problem{Dense: nanY}, good, &gd.Method{}, "non-finite"},
		{"no data", &rpca.Problem{}, good, &gd.Method{}, "exactly one"},
		{"rank too big", in.Problem(), rpca.Settings{Rank: 40, Alpha: 0.1}, &gd.Method{}, "smaller than min"},
		{"rank zero", in.Problem(), rpca.Settings{Rank: 0, Alpha: 0.1}, &gd.Method{}, "at least 1"},
		{"alpha one", in.Problem(), rpca.Settings{Rank: 2, Alpha: 1}, &gd.Method{}, "alpha"},
		{"alpha negative", in.Problem(), rpca.Settings{Rank: 2, Alpha: -0.1}, &gd.Method{}, "alpha"},
		{"gamma", in.Problem(), good, &gd.Method{Gamma: -1}, "Gamma"},
		{"step nan", in.Problem(), good, &gd.Method{StepConst: math.NaN()}, "StepConst"},
		{"gamma alpha dense", in.Problem(), rpca.Settings{Rank: 2, Alpha: 0.5}, &gd.Method{}, "γ·α"},
		{"gamma alpha partial", half, rpca.Settings{Rank: 2, Alpha: 0.34}, &gd.Method{}, "γ·α"},
		{"gamma alpha explicit", in.Problem(), good, &gd.Method{Gamma: 10}, "γ·α"},
		{"target without truth", &rpca.Problem{Dense: in.Y}, rpca.Settings{Rank: 2, Alpha: 0.1, Stop: rpca.Stop{TargetError: 1e-3}}, &gd.Method{}, "Truth"},
		{"empty row", &rpca.Problem{Observed: emptyRow}, rpca.Settings{Rank: 1, Alpha: 0}, &gd.Method{}, "no observed entry"},
		{"truth size", &rpca.Problem{Dense: in.Y, Truth: &rpca.Truth{A: in.B, B: in.A}}, good, &gd.Method{}, "truth factors"},
	}
	for _, c := range cases {
		_, err := rpca.Solve(context.Background(), c.p, c.s, c.m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestGDDivergenceDetected(t *testing.T) {
	in := instance(t, synth.Config{D1: 300, D2: 300, Rank: 5, Alpha: 0.1, Seed: 2})
	_, err := rpca.Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.1}, &gd.Method{StepConst: 3})
	if !errors.Is(err, rpca.ErrDiverged) || !strings.Contains(err.Error(), "step") {
		t.Fatalf("error %v, want ErrDiverged naming the step size", err)
	}
	// The same step with backtracking converges.
	res, err := rpca.Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.1}, &gd.Method{StepConst: 3, Step: gd.StepBacktracking})
	if err != nil {
		t.Fatalf("backtracking: %v", err)
	}
	if e := res.History[len(res.History)-1].Error; !(e < 1e-6) {
		t.Errorf("backtracking from c = 3: error %.3g", e)
	}
}

func TestGDCancelAndCallback(t *testing.T) {
	in := instance(t, synth.Config{D1: 300, D2: 300, Rank: 5, Alpha: 0.1, Seed: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []int
	s := rpca.Settings{Rank: 5, Alpha: 0.1, Callback: func(r rpca.Record) {
		seen = append(seen, r.Iter)
		if r.Iter == 3 {
			cancel()
		}
	}}
	_, err := rpca.Solve(ctx, in.Problem(), s, &gd.Method{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(seen) != 4 || seen[0] != 0 || seen[3] != 3 {
		t.Fatalf("callback saw iterations %v, want 0..3", seen)
	}
	if _, err := rpca.Solve(ctx, in.Problem(), s, &gd.Method{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("already cancelled context: error %v", err)
	}
}

// TestStopRules checks that each rule fires and is reported.
func TestStopRules(t *testing.T) {
	in := instance(t, synth.Config{D1: 300, D2: 300, Rank: 5, Alpha: 0.1, Seed: 2})
	cases := []struct {
		stop rpca.Stop
		want rpca.StopReason
	}{
		{rpca.Stop{MaxIter: 7}, rpca.StopMaxIter},
		{rpca.Stop{ResidualTol: 1e-3, FactorTol: -1}, rpca.StopResidualTol},
		{rpca.Stop{FactorTol: 1e-6, ResidualTol: -1}, rpca.StopFactorTol},
		{rpca.Stop{TargetError: 1e-4}, rpca.StopTargetError},
	}
	for _, c := range cases {
		res := solve(t, in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.1, Stop: c.stop}, &gd.Method{})
		last := res.History[len(res.History)-1]
		if res.Stop != c.want {
			t.Errorf("%+v: stopped by %s, want %s", c.stop, res.Stop, c.want)
			continue
		}
		switch c.want {
		case rpca.StopMaxIter:
			if res.Iterations != 7 {
				t.Errorf("max-iter 7 ran %d iterations", res.Iterations)
			}
		case rpca.StopResidualTol:
			if last.Residual > 1e-3 || res.History[len(res.History)-2].Residual <= 1e-3 {
				t.Errorf("residual rule fired late or early")
			}
		case rpca.StopFactorTol:
			if last.FactorChange > 1e-6 {
				t.Errorf("factor change %.3g above tolerance", last.FactorChange)
			}
		case rpca.StopTargetError:
			if last.Error > 1e-4 || relErr(res, in) > 1e-4 {
				t.Errorf("target error not reached: %.3g", last.Error)
			}
		}
	}
}

// gdParams returns the parameters of a gd run.
func gdParams(t *testing.T, res *rpca.Result) *gd.Params {
	t.Helper()
	p, ok := res.Params.(*gd.Params)
	if !ok {
		t.Fatalf("Params is %T, want *gd.Params", res.Params)
	}
	return p
}

// alsParams returns the parameters of an als run.
func alsParams(t *testing.T, res *rpca.Result) *als.Params {
	t.Helper()
	p, ok := res.Params.(*als.Params)
	if !ok {
		t.Fatalf("Params is %T, want *als.Params", res.Params)
	}
	return p
}

// TestGDPerLine checks GD.PerLine: on a fully observed Φ (n = d in every
// line, p = 1) its counts are the paper's, so the run is the same to the
// bit; on a Φ whose rows are observed at rates from 0.09 to 0.6 it
// recovers M* (with the paper's counts the same run ends at the iteration
// cap with relative error 0.04); SolveDistributed refuses it.
func TestGDPerLine(t *testing.T) {
	in := instance(t, synth.Config{D1: 300, D2: 200, Rank: 3, Alpha: 0.05, P: 1, Seed: 4})
	s := rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1}
	plain := solve(t, in.Problem(), s, &gd.Method{})
	line := solve(t, in.Problem(), s, &gd.Method{PerLine: true})
	if !mat.Equal(plain.U, line.U) || !mat.Equal(plain.V, line.V) || plain.Iterations != line.Iterations {
		t.Errorf("p = 1: PerLine changed the run (%d and %d iterations)", plain.Iterations, line.Iterations)
	}
	if !gdParams(t, line).PerLine || gdParams(t, plain).PerLine {
		t.Errorf("PerLine not reported: %+v, %+v", line.Params, plain.Params)
	}

	in = instance(t, synth.Config{D1: 1200, D2: 800, Rank: 3, Alpha: 0.05, P: 0.6, Seed: 5})
	var rows, cols []int
	var vals []float64
	keepRate := func(i int) float64 { return 0.15 + 0.85*float64(i%10)/9 }
	h := uint64(0x9e3779b97f4a7c15)
	in.Problem().Observed.Do(func(i, j int, v float64) {
		h ^= h << 13
		h ^= h >> 7
		h ^= h << 17
		if float64(h>>11)/(1<<53) < keepRate(i) {
			rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
		}
	})
	obs, err := rpca.NewObserved(1200, 800, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	res := solve(t, &rpca.Problem{Observed: obs}, s, &gd.Method{PerLine: true})
	if e := metrics.RelError(res.U, res.V, in.A, in.B); e > 1e-4 {
		t.Errorf("non-uniform Φ: relative error %.3g after %d iterations (%s)", e, res.Iterations, res.Stop)
	}
	if _, err := (&gd.Method{PerLine: true}).SolveDistributed(context.Background(), newRefDistributed(in.Obs), s); !errors.Is(err, rpca.ErrBadSettings) {
		t.Errorf("SolveDistributed with PerLine: %v", err)
	}
}

// TestScaledBalance: GD.Balance with the scaled step (no longer refused)
// adds the balancing term to the scaled direction. On the paper's model,
// dense and partial, the run converges to the truth as the scaled step
// without it does (the term vanishes at balanced factors, U₀ and V₀ are
// balanced, and it keeps them so), reports the weight, and is not the
// same run; without Balance the scaled step reports 0.
func TestScaledBalance(t *testing.T) {
	for _, p := range []float64{0, 0.4} {
		in := instance(t, synth.Config{D1: 300, D2: 240, Rank: 3, Alpha: 0.1, P: p, Seed: 8})
		s := rpca.Settings{Rank: 3, Alpha: 0.1, Seed: 1}
		plain := solve(t, in.Problem(), s, &gd.Method{Scaled: true})
		bal := solve(t, in.Problem(), s, &gd.Method{Scaled: true, Balance: 0.5})
		if e := relErr(bal, in); !(e < 1e-6) || !bal.Verification.Verified {
			t.Errorf("p=%g: scaled with balance: error %.3g, verified %v (%s)", p, e, bal.Verification.Verified, bal.Verification.Reason)
		}
		if got := gdParams(t, bal).Balance; got != 0.5 {
			t.Errorf("p=%g: reported balance %v, want 0.5", p, got)
		}
		if got := gdParams(t, plain).Balance; got != 0 {
			t.Errorf("p=%g: the scaled step's default balance is reported as %v, want 0", p, got)
		}
		if mat.Equal(bal.U, plain.U) {
			t.Errorf("p=%g: the balance changed nothing", p)
		}
	}
	// Off the paper's model: rank one with an offset of 50 (asked at rank
	// 2, the offset counts) and one spike of 1e4, dense and partial; the
	// error against the varying part.
	for _, p := range []float64{0, 0.5} {
		in := instance(t, synth.Config{D1: 200, D2: 160, Rank: 1, Alpha: 0.1, P: p, Seed: 9})
		prob, a, b := offsetSpikeProblem(t, in, 50, 1e4)
		res := solve(t, prob, rpca.Settings{Rank: 2, Alpha: 0.1, Seed: 1}, &gd.Method{Scaled: true, Balance: 0.5})
		if e := metrics.CentredRelError(res.U, res.V, a, b); !(e < 1e-6) || !res.Verification.Verified {
			t.Errorf("p=%g, rank 1 + offset + spike: error %.3g, verified %v (%s)", p, e, res.Verification.Verified, res.Verification.Reason)
		}
	}
}

// offsetSpikeProblem returns in's problem with c added to every observed
// value and a spike added to the first observed entry, and the factors of
// the truth with the offset ([A, c·1], [B, 1]; the spike is a corruption).
func offsetSpikeProblem(t *testing.T, in *synth.Instance, c, spike float64) (*rpca.Problem, *mat.Dense, *mat.Dense) {
	t.Helper()
	a, b := withOffset(in.A, in.B, c)
	if in.Obs == nil {
		y := mat.DenseCopyOf(in.Y)
		raw := y.RawMatrix()
		for i := range raw.Data {
			raw.Data[i] += c
		}
		raw.Data[0] += spike
		return &rpca.Problem{Dense: y}, a, b
	}
	rowPtr, colIdx, vals := in.Obs.CSR()
	shifted := make([]float64, len(vals))
	for k, x := range vals {
		shifted[k] = x + c
	}
	shifted[0] += spike
	d1, d2 := in.Obs.Dims()
	o, err := rpca.NewObservedCSR(d1, d2, rowPtr, colIdx, shifted)
	if err != nil {
		t.Fatal(err)
	}
	return &rpca.Problem{Observed: o}, a, b
}
