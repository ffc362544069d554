package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

func init() {
	register(&command{
		name:    "demo",
		summary: "run the main job on an embedded default problem and explain the result",
		run:     runDemo,
	})
}

func runDemo(ctx context.Context, e *env, args []string) error {
	var f solveFlags
	fs := newFlagSet(e, "demo", "[flags]")
	// Only the flags the demo honours.
	d := fs.Int("d", 2000, "matrix size d (d×d)")
	f.rank, f.alpha = 10, 0.1
	f.register(fs, flagRank|flagAlpha|flagSeed|flagWorkers|flagQuiet|flagVerbose)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	w := e.stdout
	if *d < 1 || *d > 20000 {
		return fmt.Errorf("--d must be in [1, 20000] for the demo, got %d (use 'rpca synth' for other sizes): %w", *d, errUsage)
	}
	if !f.quiet {
		fmt.Fprintf(e.stderr, "generating a %d×%d instance…\n", *d, *d)
	}
	t0 := time.Now()
	in, err := synth.Dense(synth.Config{D1: *d, D2: *d, Rank: f.rank, Alpha: f.alpha, Seed: f.seed, Workers: f.workers})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Generated Y = M* + S*: %d×%d, rank(M*) = %d, %d corrupted entries (%.1f%%), magnitudes up to 5r/d = %.3g, in %.2fs.\n",
		*d, *d, f.rank, in.S.NNZ(), 100*float64(in.S.NNZ())/float64(*d**d), 5*float64(f.rank)/float64(*d), time.Since(t0).Seconds())
	runs := []struct {
		what string
		m    rpca.Method
	}{
		{"AccAltProj (the default for a fully observed matrix)", &accaltproj.Method{}},
		{"The paper's Algorithm 1 (all entries)", &rpca.GD{}},
		{"The paper's Algorithm 2 (random 10% of the entries)", &rpca.GD{SampleRate: 0.1}},
	}
	for _, r := range runs {
		prog := newProgress(e, &f)
		s := f.settings()
		s.Callback = prog.Record
		if !f.quiet {
			fmt.Fprintf(e.stderr, "%s: initializing…\n", r.m.Name())
		}
		res, err := rpca.Solve(ctx, in.Problem(), s, r.m)
		prog.Done()
		if err != nil {
			return err
		}
		h := res.History
		fmt.Fprintf(w, "%s: error %.2g after initialization, %.2g after %d iterations; %.2fs in all (stopped: %s); %d corruptions found.\n",
			r.what, h[0].Error, metrics.RelError(res.U, res.V, in.A, in.B), res.Iterations, res.Elapsed.Seconds(), res.Stop, res.S.NNZ())
	}
	fmt.Fprintln(w, "Errors are ‖UVᵀ − M*‖_F/‖M*‖_F. Try 'rpca synth -h' for other sizes, conditioning (--kappa) and methods.")
	return nil
}
