package rpca_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/synth"
)

// roundTrip passes c through encoding/gob, as a program that stores
// checkpoints would.
func roundTrip(t *testing.T, c *gd.Checkpoint) *gd.Checkpoint {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		t.Fatal(err)
	}
	var out gd.Checkpoint
	if err := gob.NewDecoder(&buf).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// sameRun fails unless b ends exactly where a does: the same iterations,
// stopping rule, history of residuals and factors, bit for bit. The runs
// are deterministic (reductions over fixed blocks), so a resumed run that
// took any other step would differ in the last bits at least.
func sameRun(t *testing.T, a, b *rpca.Result) {
	t.Helper()
	if a.Iterations != b.Iterations || a.Stop != b.Stop || len(a.History) != len(b.History) {
		t.Fatalf("resumed run: %d iterations, %s, %d records; uninterrupted: %d, %s, %d",
			b.Iterations, b.Stop, len(b.History), a.Iterations, a.Stop, len(a.History))
	}
	for i := range a.History {
		if ra, rb := a.History[i].Residual, b.History[i].Residual; ra != rb {
			t.Fatalf("record %d: residual %.17g resumed, %.17g uninterrupted", i, rb, ra)
		}
	}
	if !mat.Equal(a.U, b.U) || !mat.Equal(a.V, b.V) {
		t.Fatalf("factors differ: max |ΔU| %.3g", maxAbsDiff(a.U, b.U))
	}
	if a.Residual != b.Residual {
		t.Fatalf("residual %.17g resumed, %.17g uninterrupted", b.Residual, a.Residual)
	}
}

func maxAbsDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

// TestCheckpointResume stops nothing: it records every state a run hands
// to OnCheckpoint, then resumes from some of them (after a gob round trip)
// and requires the resumed run to end bit for bit where the whole run
// ended, for Algorithm 1, Algorithm 2, the scaled step, the
// backtracking rule (whose multiplier the state carries), and ALS with a
// decaying ridge (which the state's iteration sets) and with biases.
func TestCheckpointResume(t *testing.T) {
	dense := instance(t, synth.Config{D1: 120, D2: 90, Rank: 3, Alpha: 0.1, Seed: 11})
	partial := instance(t, synth.Config{D1: 150, D2: 120, Rank: 3, Alpha: 0.05, P: 0.4, Seed: 12})
	// method builds the method of a case with its Resume and OnCheckpoint.
	type method func(resume *gd.Checkpoint, on func(*gd.Checkpoint) error) rpca.Method
	withGD := func(m gd.Method) method {
		return func(resume *gd.Checkpoint, on func(*gd.Checkpoint) error) rpca.Method {
			m.Resume, m.OnCheckpoint = resume, on
			return &m
		}
	}
	withALS := func(m als.Method) method {
		return func(resume *gd.Checkpoint, on func(*gd.Checkpoint) error) rpca.Method {
			m.Resume, m.OnCheckpoint = resume, on
			return &m
		}
	}
	cases := []struct {
		name string
		in   *synth.Instance
		m    method
	}{
		{"dense", dense, withGD(gd.Method{})},
		{"partial", partial, withGD(gd.Method{})},
		{"scaled", partial, withGD(gd.Method{Scaled: true})},
		{"backtracking", dense, withGD(gd.Method{Step: gd.StepBacktracking, StepConst: 1.5})},
		{"als-decay", partial, withALS(als.Method{Ridge: 0.5, RidgeDecay: 0.7})},
		{"als-biases", partial, withALS(als.Method{Biases: true, Ridge: 0.1})},
		{"als-huber", partial, withALS(als.Method{Huber: 3})},
		{"als-implicit", partial, withALS(als.Method{Implicit: 1, Ridge: 0.1})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := rpca.Settings{Rank: 3, Alpha: tc.in.Config.Alpha, Seed: 3, Stop: rpca.Stop{ResidualTol: 1e-7, MaxIter: 400}}
			var saved []*gd.Checkpoint
			whole, err := tc.m(nil, func(c *gd.Checkpoint) error {
				saved = append(saved, c)
				return nil
			}).Solve(context.Background(), tc.in.Problem(), s)
			if err != nil {
				t.Fatal(err)
			}
			if len(saved) != whole.Iterations || whole.Iterations < 4 {
				t.Fatalf("%d states for %d iterations (want one after Phase I and each iteration but the last)", len(saved), whole.Iterations)
			}
			for i, c := range saved {
				if c.Iteration != i || len(c.History) != i+1 {
					t.Fatalf("state %d says iteration %d with %d records", i, c.Iteration, len(c.History))
				}
			}
			for _, k := range []int{0, 1, whole.Iterations / 2, whole.Iterations - 1} {
				again := 0
				res, err := tc.m(roundTrip(t, saved[k]), func(c *gd.Checkpoint) error {
					if c.Iteration <= k {
						return fmt.Errorf("state of iteration %d handed over again after resuming from %d", c.Iteration, k)
					}
					again++
					return nil
				}).Solve(context.Background(), tc.in.Problem(), s)
				if err != nil {
					t.Fatalf("resume from %d: %v", k, err)
				}
				sameRun(t, whole, res)
				if again != whole.Iterations-1-k {
					t.Fatalf("resumed from %d: %d states, want %d", k, again, whole.Iterations-1-k)
				}
			}
		})
	}
}

// TestCheckpointThroughSolve resumes through rpca.Solve, whose frame
// (location, scale) is the same for the same problem, so that the state
// the method saved in its units is the one it gets back.
func TestCheckpointThroughSolve(t *testing.T) {
	in := instance(t, synth.Config{D1: 150, D2: 120, Rank: 3, Alpha: 0.05, P: 0.4, Seed: 13})
	s := rpca.Settings{Rank: 3, Alpha: 0.1, Seed: 1}
	var saved []*gd.Checkpoint
	whole := solve(t, in.Problem(), s, &gd.Method{OnCheckpoint: func(c *gd.Checkpoint) error {
		saved = append(saved, c)
		return nil
	}})
	if len(saved) < 3 {
		t.Fatalf("%d states", len(saved))
	}
	res := solve(t, in.Problem(), s, &gd.Method{Resume: roundTrip(t, saved[2])})
	sameRun(t, whole, res)
	if !whole.Verification.Verified || !res.Verification.Verified {
		t.Fatalf("answers not verified: %v (whole run), %v (resumed)", whole.Verification, res.Verification)
	}
}

// TestCheckpointMismatch: a state resumed with another problem or other
// settings is refused with ErrCheckpoint, an error of the input; with
// Start as well, of the settings; and an error of OnCheckpoint ends the
// run with that error.
func TestCheckpointMismatch(t *testing.T) {
	in := instance(t, synth.Config{D1: 100, D2: 80, Rank: 3, Alpha: 0.1, Seed: 14})
	other := instance(t, synth.Config{D1: 100, D2: 80, Rank: 3, Alpha: 0.1, Seed: 15})
	s := rpca.Settings{Rank: 3, Alpha: 0.1, Seed: 1}
	var c0 *gd.Checkpoint
	stop := errors.New("disk full")
	_, err := (&gd.Method{OnCheckpoint: func(c *gd.Checkpoint) error {
		if c.Iteration == 2 {
			c0 = c
			return stop
		}
		return nil
	}}).Solve(context.Background(), in.Problem(), s)
	if !errors.Is(err, stop) {
		t.Fatalf("OnCheckpoint's error: got %v", err)
	}
	for name, run := range map[string]func() error{
		"other data": func() error {
			_, err := (&gd.Method{Resume: c0}).Solve(context.Background(), other.Problem(), s)
			return err
		},
		"other rank": func() error {
			s2 := s
			s2.Rank = 2
			_, err := (&gd.Method{Resume: c0}).Solve(context.Background(), in.Problem(), s2)
			return err
		},
		"scaled": func() error {
			_, err := (&gd.Method{Resume: c0, Scaled: true}).Solve(context.Background(), in.Problem(), s)
			return err
		},
	} {
		err := run()
		if !errors.Is(err, gd.ErrCheckpoint) || !errors.Is(err, rpca.ErrBadInput) {
			t.Errorf("%s: got %v, want ErrCheckpoint and ErrBadInput", name, err)
		}
	}
	_, err = (&gd.Method{Resume: c0, Start: &rpca.Start{U: c0.U, V: c0.V}}).Solve(context.Background(), in.Problem(), s)
	if !errors.Is(err, gd.ErrResumeStart) || !errors.Is(err, rpca.ErrBadSettings) {
		t.Errorf("Resume with Start: got %v", err)
	}
	_, err = (&als.Method{Resume: c0}).Solve(context.Background(), in.Problem(), s)
	if !errors.Is(err, gd.ErrCheckpoint) {
		t.Errorf("a state of gd resumed by als: got %v", err)
	}
	// The state is resumable with a lower iteration cap: the run stops at once.
	s.Stop.MaxIter = 1
	res, err := (&gd.Method{Resume: c0}).Solve(context.Background(), in.Problem(), s)
	if err != nil || res.Iterations != 2 || res.Stop != rpca.StopMaxIter {
		t.Errorf("resume past MaxIter: %v, %+v", err, res)
	}
}

// TestCheckpointOffset: on data with an offset, rpca.Solve would remove
// the location and, when that answer is not verified, solve again without
// it: two problems, whose states a resume could not tell apart. A method
// that checkpoints is solved in one frame (rpca.Checkpointer), so the
// states are one per iteration of one run, and resuming through Solve
// ends where the whole run ended, bit for bit. Rank 1, offset 50.
func TestCheckpointOffset(t *testing.T) {
	in := instance(t, synth.Config{D1: 150, D2: 120, Rank: 1, Alpha: 0.1, P: 0.4, Seed: 13})
	var rows, cols []int
	var vals []float64
	in.Obs.Do(func(i, j int, v float64) { rows, cols, vals = append(rows, i), append(cols, j), append(vals, v+50) })
	obs, err := rpca.NewObserved(150, 120, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	p := &rpca.Problem{Observed: obs}
	s := rpca.Settings{Rank: 1, Alpha: 0.1, Seed: 1}
	var saved []*gd.Checkpoint
	whole := solve(t, p, s, &gd.Method{OnCheckpoint: func(c *gd.Checkpoint) error {
		saved = append(saved, c)
		return nil
	}})
	if len(saved) != whole.Iterations {
		t.Fatalf("%d states for %d iterations: more than one run", len(saved), whole.Iterations)
	}
	t.Logf("%d iterations, %s", whole.Iterations, whole.Verification)
	res := solve(t, p, s, &gd.Method{Resume: roundTrip(t, saved[len(saved)/2])})
	sameRun(t, whole, res)
}
