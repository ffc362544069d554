package rpca_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
)

// skewedObserved observes a rank-3 400×300 matrix the way real ratings
// are observed: a few rows and columns (the "popular" ones) completely,
// the rest at a rate of 4%.
func skewedObserved(t *testing.T) *rpca.Observed {
	t.Helper()
	const d1, d2, r = 400, 300, 3
	rng := rand.New(rand.NewPCG(41, 42))
	a, b := gaussianFactor(rng, d1, r), gaussianFactor(rng, d2, r)
	var rows, cols []int
	var vals []float64
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if i < 15 || j < 10 || rng.Float64() < 0.04 {
				v := mat.Dot(a.RowView(i), b.RowView(j))
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
			}
		}
	}
	obs, err := rpca.NewObserved(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestBacktrackingMonotone: on skewed sampling the paper's fixed step
// (η = c/σ̂₁ from the 1/p-scaled SVD) diverges, while the default
// backtracking rule lowers the objective at every iteration. With α = 0
// and the scaled update (no balancing term) the objective is ½‖E‖²/p, so
// the recorded residual must never rise (up to 1e-12 relative rounding);
// with the paper's update the objective includes the balancing term, and
// the residual must end far below where it started.
func TestBacktrackingMonotone(t *testing.T) {
	obs := skewedObserved(t)
	p := &rpca.Problem{Observed: obs}
	s := rpca.Settings{Rank: 3, Stop: rpca.Stop{MaxIter: 300}}
	if _, err := rpca.Solve(context.Background(), p, s, &gd.Method{Step: gd.StepFixed}); !errors.Is(err, rpca.ErrDiverged) {
		t.Errorf("fixed step: error %v, want ErrDiverged (the case this rule exists for)", err)
	}
	for _, m := range []*gd.Method{{}, {Scaled: true}} {
		res, err := rpca.Solve(context.Background(), p, s, m)
		if err != nil {
			t.Fatalf("%s with backtracking: %v", m.Name(), err)
		}
		h := res.History
		for k := 1; k < len(h) && m.Scaled; k++ {
			if h[k].Residual > h[k-1].Residual*(1+1e-12) {
				t.Errorf("%s: residual rose at iteration %d: %.6g → %.6g", m.Name(), k, h[k-1].Residual, h[k].Residual)
			}
		}
		t.Logf("%s: residual %.3g → %.3g in %d iterations (%s)", m.Name(), h[0].Residual, res.Residual, res.Iterations, res.Stop)
		if !(res.Residual < 1e-3*h[0].Residual) {
			t.Errorf("%s: residual only fell from %.3g to %.3g", m.Name(), h[0].Residual, res.Residual)
		}
	}
}

// TestGDWarmStartBalanced: a start whose factors are out of balance
// (U/4 with V, for data Y/4) is balanced before the first step and ends
// where the balanced start does.
func TestGDWarmStartBalanced(t *testing.T) {
	ctx := context.Background()
	inst, s, cold := coldRun(t)
	var y, u, want, dm mat.Dense
	y.Scale(0.25, inst.Dense)
	u.Scale(0.25, cold.U)
	w, err := rpca.Solve(ctx, &rpca.Problem{Dense: &y}, s, &gd.Method{Start: &rpca.Start{U: &u, V: mat.DenseCopyOf(cold.V)}})
	if err != nil {
		t.Fatal(err)
	}
	want.Scale(0.25, cold.LowRank())
	dm.Sub(w.LowRank(), &want)
	if e := mat.Norm(&dm, 2) / mat.Norm(&want, 2); e > 1e-6 {
		t.Errorf("unbalanced start ends %.3g from the answer", e)
	}
}

// TestGDWarmStart: started from the answer of a first run, GD stays there
// (it converges within a few iterations to the same low-rank part), and
// started from a perturbed answer it converges to the same point as from
// Phase I. Bad starts are refused with rpca.ErrBadInput.
func TestGDWarmStart(t *testing.T) {
	ctx := context.Background()
	inst, s, cold := coldRun(t)
	// A start near the answer: U·(1 + 0.05·noise), V unchanged.
	rng := rand.New(rand.NewPCG(3, 4))
	u := mat.DenseCopyOf(cold.U)
	r, c := u.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			u.Set(i, j, u.At(i, j)*(1+0.05*rng.NormFloat64()))
		}
	}
	warm, err := rpca.Solve(ctx, inst, s, &gd.Method{Start: &rpca.Start{U: u, V: mat.DenseCopyOf(cold.V)}})
	if err != nil {
		t.Fatal(err)
	}
	var dm mat.Dense
	dm.Sub(warm.LowRank(), cold.LowRank())
	if e := mat.Norm(&dm, 2) / mat.Norm(cold.LowRank(), 2); e > 1e-6 {
		t.Errorf("warm start ends %.3g from the cold answer", e)
	}
	if warm.Iterations >= cold.Iterations {
		t.Errorf("warm start took %d iterations, cold %d", warm.Iterations, cold.Iterations)
	}
	for _, bad := range []*rpca.Start{
		{U: u},
		{U: mat.NewDense(r, c+1, nil), V: mat.NewDense(inst.Dense.RawMatrix().Cols, c+1, nil)},
		{U: mat.NewDense(r, c, nil), V: mat.DenseCopyOf(cold.V)},
	} {
		if _, err := rpca.Solve(ctx, inst, s, &gd.Method{Start: bad}); !errors.Is(err, rpca.ErrBadInput) {
			t.Errorf("start %v: error %v, want rpca.ErrBadInput", bad, err)
		}
	}
}

// coldRun solves warmInstance from GD's own initialisation, to
// convergence, and returns the instance, the settings and the result.
func coldRun(t *testing.T) (*rpca.Problem, rpca.Settings, *rpca.Result) {
	t.Helper()
	inst := warmInstance(t)
	s := rpca.Settings{Rank: 3, Alpha: 0.1, Stop: rpca.Stop{FactorTol: 1e-16, MaxIter: 2000, ResidualTol: 1e-12}}
	cold, err := rpca.Solve(context.Background(), inst, s, &gd.Method{})
	if err != nil {
		t.Fatal(err)
	}
	return inst, s, cold
}

// warmInstance is a 120×90 rank-3 matrix with 5% gross corruptions.
func warmInstance(t *testing.T) *rpca.Problem {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const d1, d2, r = 120, 90, 3
	a, b := mat.NewDense(d1, r, nil), mat.NewDense(d2, r, nil)
	for i := 0; i < d1; i++ {
		for k := 0; k < r; k++ {
			a.Set(i, k, rng.NormFloat64())
		}
	}
	for j := 0; j < d2; j++ {
		for k := 0; k < r; k++ {
			b.Set(j, k, rng.NormFloat64())
		}
	}
	var y mat.Dense
	y.Mul(a, b.T())
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if rng.Float64() < 0.05 {
				y.Set(i, j, y.At(i, j)+10*(rng.Float64()-0.5))
			}
		}
	}
	return &rpca.Problem{Dense: &y}
}

// TestGDWarmStartScaled: data far outside the safe range are solved on a
// copy scaled by a power of two, and the warm start is scaled with them
// (and balanced again): started from the (scaled) answer of the unscaled
// problem, GD ends at that answer times the scale, in fewer iterations
// than from Phase I. Without the scaling of the start, or with the
// scaling but without balancing, the first step diverges.
func TestGDWarmStartScaled(t *testing.T) {
	ctx := context.Background()
	inst, s, cold := coldRun(t)
	const c = 0x1p200
	var big, u mat.Dense
	big.Scale(c, inst.Dense)
	u.Scale(c, cold.U)
	warm, err := rpca.Solve(ctx, &rpca.Problem{Dense: &big}, s, &gd.Method{Start: &rpca.Start{U: &u, V: mat.DenseCopyOf(cold.V)}})
	if err != nil {
		t.Fatal(err)
	}
	if warm.DataScale == 1 {
		t.Fatal("the data were not scaled; the test does not test the scaled start")
	}
	var want, dm mat.Dense
	want.Scale(c, cold.LowRank())
	dm.Sub(warm.LowRank(), &want)
	if e := mat.Norm(&dm, 2) / mat.Norm(&want, 2); e > 1e-6 {
		t.Errorf("scaled warm start ends %.3g from the scaled cold answer", e)
	}
	if warm.Iterations >= cold.Iterations/2 {
		t.Errorf("scaled warm start took %d iterations, cold %d", warm.Iterations, cold.Iterations)
	}
}
