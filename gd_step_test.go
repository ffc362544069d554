package rpca_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

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
	if _, err := rpca.Solve(context.Background(), p, s, &rpca.GD{Step: rpca.StepFixed}); !errors.Is(err, rpca.ErrDiverged) {
		t.Errorf("fixed step: error %v, want ErrDiverged (the case this rule exists for)", err)
	}
	for _, m := range []*rpca.GD{{}, {Update: rpca.UpdateScaled}} {
		res, err := rpca.Solve(context.Background(), p, s, m)
		if err != nil {
			t.Fatalf("%s with backtracking: %v", m.Name(), err)
		}
		h := res.History
		for k := 1; k < len(h) && m.Update == rpca.UpdateScaled; k++ {
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
