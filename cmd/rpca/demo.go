package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rpca-gd/rpca"
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
	fs := newFlagSet(e, "demo", "[flags]", `
Generates the paper's synthetic model at d = 2000, r = 10, α = 0.1 (Section
5.1: 4 million entries, about 10% of them grossly corrupted) and recovers
the low-rank part twice with the paper's gradient method: from all entries
(Algorithm 1) and from a random 10% of them (Algorithm 2). It prints what
it did and the true relative error of each result.`)
	f.register(fs, 10, 0.1)
	d := fs.Int("d", 2000, "matrix size d (d×d)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	w := e.stdout
	t0 := time.Now()
	in, err := synth.Dense(synth.Config{D1: *d, D2: *d, Rank: f.rank, Alpha: f.alpha, Seed: f.seed, Workers: f.workers})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Generated Y = M* + S*: %d×%d, rank(M*) = %d, %d corrupted entries (%.1f%%), magnitudes up to 5r/d = %.3g, in %.2fs.\n",
		*d, *d, f.rank, in.S.NNZ(), 100*float64(in.S.NNZ())/float64(*d**d), 5*float64(f.rank)/float64(*d), time.Since(t0).Seconds())
	runs := []struct {
		what string
		m    *rpca.GD
	}{
		{"Algorithm 1 (all entries)", &rpca.GD{}},
		{"Algorithm 2 (random 10% of the entries)", &rpca.GD{SampleRate: 0.1}},
	}
	for _, r := range runs {
		prog := newProgress(e, &f)
		s := f.settings()
		s.Callback = prog.callback
		res, err := rpca.Solve(ctx, in.Problem(), s, r.m)
		prog.done()
		if err != nil {
			return err
		}
		h := res.History
		fmt.Fprintf(w, "%s: error %.2g after initialization, %.2g after %d gradient iterations; %.2fs in all (stopped: %s); %d corruptions found.\n",
			r.what, h[0].Error, metrics.RelError(res.U, res.V, in.A, in.B), res.Iterations, res.Elapsed.Seconds(), res.Stop, res.S.NNZ())
	}
	fmt.Fprintln(w, "Errors are ‖UVᵀ − M*‖_F/‖M*‖_F. Try 'rpca synth -h' for other sizes and methods (--method altproj|ialm).")
	return nil
}
