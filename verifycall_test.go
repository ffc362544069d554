package rpca_test

import (
	"context"
	"testing"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/synth"
)

// TestVerifyJudgesAsSolve: rpca.Verify on a method's raw answer (its
// Solve called directly, as a distributed run's answer is obtained) gives
// rpca.Solve's verdict on the same problem. The raw S of the gradient
// method holds γα entries per line whatever their size; Verify used to
// count those at the noise level of the fit as corruptions and failed
// the sparse check, where Solve takes them as residual. And an answer
// stopped by the iteration cap after 20 iterations is not verified, by
// Verify as by Solve, for the same reason.
func TestVerifyJudgesAsSolve(t *testing.T) {
	in, err := synth.Observed(synth.Config{D1: 600, D2: 400, Rank: 3, Alpha: 0.05, P: 0.3, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	p := in.Problem()
	for _, maxIter := range []int{0, 20} {
		s := rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1, Stop: rpca.Stop{MaxIter: maxIter}}
		ref, err := rpca.Solve(context.Background(), p, s, &gd.Method{})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := (&gd.Method{}).Solve(context.Background(), p, s)
		if err != nil {
			t.Fatal(err)
		}
		v, err := rpca.Verify(p, raw, s)
		if err != nil {
			t.Fatal(err)
		}
		want := ref.Verification
		if v.Verified != want.Verified || v.Failed != want.Failed {
			t.Errorf("max-iter %d (%s): Verify says %s; Solve %s", maxIter, raw.Stop, v, want)
		}
		if v.Verified != (maxIter == 0) {
			t.Errorf("max-iter %d (%s): %s", maxIter, raw.Stop, v)
		}
	}
}
