package rpca_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/methods"
	"github.com/rpca-gd/rpca/synth"
)

// TestTargetErrorEndsTheSolve: a run stopped at the caller's target error
// (a benchmark's stop, short of convergence) is reported as it is: on data
// with an offset, with the default chain, neither the next method of the
// chain nor the second try without the location runs. The answer at 1e-2
// is not verified (checked, so that the test exercises that path), and
// only one run starts (one record of iteration 0).
func TestTargetErrorEndsTheSolve(t *testing.T) {
	in := instance(t, synth.Config{D1: 300, D2: 200, Rank: 3, Alpha: 0.1, Seed: 4})
	const offset = 50
	y := mat.DenseCopyOf(in.Y)
	raw := y.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] += offset
	}
	a, b := withOffset(in.A, in.B, offset) // the truth with the offset
	starts := 0
	// The offset counts in the rank (docs/verification.md): rank 3 + 1.
	s := rpca.Settings{Rank: 4, Alpha: 0.1, Stop: rpca.Stop{TargetError: 1e-2},
		Callback: func(rec rpca.Record) {
			if rec.Iter == 0 {
				starts++
			}
		}}
	p := &rpca.Problem{Dense: y, Truth: &rpca.Truth{A: a, B: b}}
	res, err := rpca.Solve(context.Background(), p, s, &methods.Auto{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != rpca.StopTargetError || res.Verification.Verified {
		t.Fatalf("stop %q, verified %v: want the target error, not verified (the path under test)", res.Stop, res.Verification.Verified)
	}
	if len(res.Attempts) != 0 || starts != 1 {
		t.Errorf("%d runs started, attempts %+v: want one run of the chain's first method", starts, res.Attempts)
	}
}
