package rpca_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/synth"
)

// TestALSRecovers runs UpdateALS on partial instances of the paper's
// model (Algorithm 2's setting): it must reach the truth to the true
// relative error 1e-6 and say it converged, with the paper's counts and
// with PerLine, in far fewer sweeps than the gradient method needs
// iterations (each sweep is an exact minimisation; the paper's update
// took 86 iterations here).
func TestALSRecovers(t *testing.T) {
	in, err := synth.Observed(synth.Config{D1: 400, D2: 300, Rank: 4, Alpha: 0.05, P: 0.3, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := rpca.Settings{Rank: 4, Alpha: 0.05, Seed: 1}
	gd := solve(t, in.Problem(), s, &rpca.GD{})
	for _, perLine := range []bool{false, true} {
		res := solve(t, in.Problem(), s, &rpca.GD{Update: rpca.UpdateALS, PerLine: perLine})
		e := relErr(res, in)
		t.Logf("PerLine %v: %d sweeps (gd: %d iterations), stop %s, error %.2g", perLine, res.Iterations, gd.Iterations, res.Stop, e)
		if !res.Stop.Converged() || e > 1e-6 {
			t.Errorf("PerLine %v: stop %s with error %.3g, want convergence to 1e-6", perLine, res.Stop, e)
		}
		if res.Iterations*3 > gd.Iterations {
			t.Errorf("PerLine %v: %d sweeps against the gradient method's %d iterations, want a third at most", perLine, res.Iterations, gd.Iterations)
		}
		if q := gdParams(t, res); res.Method != "als" || !q.ALS || q.Projection || q.Backtracking || q.StepConst != 0 || q.Step != 0 {
			t.Errorf("method %q, params %+v: want als reported, without a step, projection or backtracking", res.Method, res.Params)
		}
	}
}

// TestALSDistributedRefused: SolveDistributed has no column access to Φ,
// so it refuses UpdateALS as bad input.
func TestALSDistributedRefused(t *testing.T) {
	in, err := synth.Observed(synth.Config{D1: 60, D2: 50, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&rpca.GD{Update: rpca.UpdateALS}).SolveDistributed(context.Background(), newRefDistributed(in.Obs), rpca.Settings{Rank: 2, Alpha: 0.05})
	if !errors.Is(err, rpca.ErrBadInput) {
		t.Errorf("SolveDistributed with UpdateALS: %v, want ErrBadInput", err)
	}
}
