package rpcabeam

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/distributed"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/synth"
)

// TestForLines: every line is handed out exactly once, whatever the
// number of goroutines; each goroutine asks for its scratch once; a
// line's error, and a cancelled context, end the call with that error.
func TestForLines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, lineBlock - 1, lineBlock, lineBlock + 1, 1000} {
			seen := make([]atomic.Int32, n)
			var scratches atomic.Int32
			err := forLines(context.Background(), n, func() func(int) error {
				scratches.Add(1)
				return func(l int) error {
					seen[l].Add(1)
					return nil
				}
			})
			if err != nil {
				t.Fatalf("procs %d, n %d: %v", procs, n, err)
			}
			for l := range seen {
				if c := seen[l].Load(); c != 1 {
					t.Errorf("procs %d, n %d: line %d handled %d times", procs, n, l, c)
				}
			}
			if want := int32(lineWorkers(n)); scratches.Load() != want {
				t.Errorf("procs %d, n %d: %d scratch spaces, want one per goroutine (%d)", procs, n, scratches.Load(), want)
			}
		}

		bad := errors.New("line 700 failed")
		var after atomic.Int32
		err := forLines(context.Background(), 5000, func() func(int) error {
			return func(l int) error {
				if l == 700 {
					return bad
				}
				if l >= 700+lineBlock*procs+lineBlock {
					after.Add(1) // handed out after the failure was seen
				}
				return nil
			}
		})
		if !errors.Is(err, bad) {
			t.Errorf("procs %d: error %v, want the line's", procs, err)
		}
		if procs == 1 && after.Load() > 0 {
			t.Errorf("one goroutine went on for %d lines after the error", after.Load())
		}

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := forLines(ctx, 100, func() func(int) error { return func(int) error { return nil } }); !errors.Is(err, context.Canceled) {
			t.Errorf("procs %d: cancelled context gave %v", procs, err)
		}
	}
}

// TestLinesSplit: the passes give the same answer, to the bit, whether a
// shard's lines run on one goroutine or several: every line's output
// depends on that line alone. Scratch space shared between goroutines,
// or a line skipped or done twice, changes the factors (and the race
// detector sees the sharing).
func TestLinesSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	_, file := instance(t, t.TempDir(), synth.Config{D1: 400, D2: 300, Rank: 3, Alpha: 0.05, P: 0.3, Seed: 8})
	solve := func(procs int, method distributed.Solver) *rpca.Result {
		runtime.GOMAXPROCS(procs)
		ctx := context.Background()
		st, err := Load(ctx, file, filepath.Join(t.TempDir(), "work"), Options{Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		res, err := method.SolveDistributed(ctx, st, rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1, Stop: rpca.Stop{MaxIter: 6}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for name, method := range map[string]func() distributed.Solver{
		"gd":  func() distributed.Solver { return &gd.Method{} },
		"als": func() distributed.Solver { return &als.Method{Ridge: 0.1} },
	} {
		one, several := solve(1, method()), solve(4, method())
		if one.Iterations != several.Iterations || !mat.Equal(one.U, several.U) || !mat.Equal(one.V, several.V) {
			t.Errorf("%s: one goroutine a shard and four differ: %d and %d iterations, factors equal %v, %v",
				name, one.Iterations, several.Iterations, mat.Equal(one.U, several.U), mat.Equal(one.V, several.V))
		}
	}
}

// TestTrialGradients: the gradients a trial forms at its factors, which
// the next Evaluate there takes without a pipeline, are those that
// Evaluate forms by its own passes, to the bit; an Evaluate elsewhere
// runs its passes.
func TestTrialGradients(t *testing.T) {
	_, file := instance(t, t.TempDir(), synth.Config{D1: 300, D2: 200, Rank: 3, Alpha: 0.05, P: 0.3, Seed: 9})
	ctx := context.Background()
	load := func() *Store {
		st, err := Load(ctx, file, filepath.Join(t.TempDir(), "work"), Options{Shards: 3})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	rng := rand.New(rand.NewPCG(4, 5))
	random := func(n int) *mat.Dense {
		m := mat.NewDense(n, 3, nil)
		for i := range n {
			for c := range 3 {
				m.Set(i, c, rng.NormFloat64())
			}
		}
		return m
	}
	const kRow, kCol = 4, 5
	u0, v0, u1, v1 := random(300), random(200), random(300), random(200)
	evaluate := func(st *Store, u, v *mat.Dense) (float64, *mat.Dense, *mat.Dense) {
		gu, gv := mat.NewDense(300, 3, nil), mat.NewDense(200, 3, nil)
		ss, err := st.Evaluate(ctx, u, v, gu, gv, kRow, kCol)
		if err != nil {
			t.Fatal(err)
		}
		return ss, gu, gv
	}

	spec := load()
	evaluate(spec, u0, v0)
	if _, err := spec.Trial(ctx, u1, v1); err != nil {
		t.Fatal(err)
	}
	before := spec.Pipelines()
	ss, gu, gv := evaluate(spec, u1, v1)
	if spec.Pipelines() != before {
		t.Errorf("Evaluate at the trial's factors ran %d pipelines, want none", spec.Pipelines()-before)
	}

	ref := load()
	ssRef, guRef, gvRef := evaluate(ref, u1, v1)
	if ss != ssRef || !mat.Equal(gu, guRef) || !mat.Equal(gv, gvRef) {
		t.Errorf("the trial's gradients differ from Evaluate's: ‖E‖² %v against %v, E·V equal %v, Eᵀ·U equal %v",
			ss, ssRef, mat.Equal(gu, guRef), mat.Equal(gv, gvRef))
	}

	if _, err := spec.Trial(ctx, u0, v0); err != nil {
		t.Fatal(err)
	}
	before = spec.Pipelines()
	evaluate(spec, u1, v1) // not the trial's factors
	if spec.Pipelines()-before != 2 {
		t.Errorf("Evaluate away from the trial ran %d pipelines, want its 2", spec.Pipelines()-before)
	}
}
