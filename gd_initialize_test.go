package rpca_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/synth"
)

// TestGDInitializeIsPhaseI: a run started from GD.Initialize's factors is
// the run that does Phase I itself, on partial observations (ALS and the
// paper's steps) and on a dense Y. The start is re-balanced by GD.Start
// (a QR and an r×r SVD), so the two runs agree up to rounding, not bit
// for bit: 1e-8 on the final M leaves room for that rounding carried
// through a contracting iteration and fails for any other start (the
// starts of the two runs below differ by more than 1e-2).
func TestGDInitializeIsPhaseI(t *testing.T) {
	ctx := context.Background()
	in := instance(t, synth.Config{D1: 200, D2: 150, Rank: 3, Alpha: 0.05, P: 0.4, Seed: 3})
	s := rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 2, Stop: rpca.Stop{MaxIter: 30, FactorTol: -1, ResidualTol: -1}}
	type initializer interface {
		rpca.Method
		rpca.WarmStarter
		Initialize(context.Context, *rpca.Problem, rpca.Settings) (*rpca.Start, error)
	}
	cases := map[string]struct {
		p *rpca.Problem
		g initializer
	}{
		"partial, ALS":   {in.Problem(), &als.Method{}},
		"partial, paper": {in.Problem(), &gd.Method{}},
		"dense, paper":   {warmInstance(t), &gd.Method{}},
	}
	for name, c := range cases {
		w, err := c.g.Initialize(ctx, c.p, s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cold := solve(t, c.p, s, c.g)
		warm := solve(t, c.p, s, c.g.WithWarmStart(w.U, w.V))
		if d := relDiff(warm.LowRank(), cold.LowRank()); d > 1e-8 || warm.Iterations != cold.Iterations {
			t.Errorf("%s: started from Initialize, %d iterations and M %.3g from the run with its own Phase I (%d iterations)", name, warm.Iterations, d, cold.Iterations)
		}
		var m0 mat.Dense
		m0.Mul(w.U, w.V.T())
		if d := relDiff(&m0, cold.LowRank()); d < 1e-2 {
			t.Errorf("%s: the start is already %.3g from the answer; the comparison above cannot tell starts apart", name, d)
		}
	}
}

// TestGDInitializePrefix: the leading r columns of a rank-R start are the
// rank-r start, to the SVD's tolerance (1e-10 asked; 1e-7 allowed on
// U₀V₀ᵀ, whose top singular values are well separated on this instance).
// Data scaled by 2^200 give the start scaled by 2^200 (Solve's power-of-two
// scaling is exact).
func TestGDInitializePrefix(t *testing.T) {
	ctx := context.Background()
	in := instance(t, synth.Config{D1: 200, D2: 150, Rank: 5, Alpha: 0.05, P: 0.4, Seed: 4})
	g := &gd.Method{SVDTol: 1e-10}
	big, err := g.Initialize(ctx, in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	small, err := g.Initialize(ctx, in.Problem(), rpca.Settings{Rank: 3, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var lead, want mat.Dense
	lead.Mul(big.U.Slice(0, 200, 0, 3), big.V.Slice(0, 150, 0, 3).T())
	want.Mul(small.U, small.V.T())
	if d := relDiff(&lead, &want); d > 1e-7 {
		t.Errorf("leading 3 columns of the rank-5 start are %.3g from the rank-3 start", d)
	}

	const c = 0x1p200
	var rows, cols []int
	var vals []float64
	in.Problem().Observed.Do(func(i, j int, v float64) {
		rows, cols, vals = append(rows, i), append(cols, j), append(vals, v*c)
	})
	scaled, err := rpca.NewObserved(200, 150, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := g.Initialize(ctx, &rpca.Problem{Observed: scaled}, rpca.Settings{Rank: 3, Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var got mat.Dense
	got.Mul(ws.U, ws.V.T())
	want.Scale(c, &want)
	if d := relDiff(&got, &want); d > 1e-12 {
		t.Errorf("the start of Y·2^200 is %.3g from 2^200 times the start of Y", d)
	}
}

// TestGDInitializeBadInput: what Solve refuses, Initialize refuses, and a
// zero Y has no start.
func TestGDInitializeBadInput(t *testing.T) {
	ctx := context.Background()
	zero, err := rpca.NewObserved(20, 10, []int{0, 1}, []int{0, 1}, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	y := warmInstance(t)
	for name, c := range map[string]struct {
		p *rpca.Problem
		s rpca.Settings
	}{
		"zero Y":   {&rpca.Problem{Observed: zero}, rpca.Settings{Rank: 1}},
		"rank 0":   {y, rpca.Settings{}},
		"alpha 2":  {y, rpca.Settings{Rank: 2, Alpha: 2}},
		"no data":  {&rpca.Problem{}, rpca.Settings{Rank: 2}},
		"too big":  {y, rpca.Settings{Rank: 500}},
		"negative": {y, rpca.Settings{Rank: -1}},
	} {
		if _, err := (&gd.Method{}).Initialize(ctx, c.p, c.s); !errors.Is(err, rpca.ErrBadInput) {
			t.Errorf("%s: %v, want ErrBadInput", name, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (&gd.Method{}).Initialize(cancelled, y, rpca.Settings{Rank: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
