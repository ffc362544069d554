package main

import (
	"context"
	"fmt"

	"github.com/rpca-gd/rpca/experiment"
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
	if *d < 1 || *d > 20000 {
		return fmt.Errorf("--d must be in [1, 20000] for the demo, got %d (use 'rpca synth' for other sizes): %w", *d, errUsage)
	}
	// The stages go to stderr unless --quiet, the iterations as newProgress
	// says.
	bar := newProgress(e, &f)
	stage := func(msg string) {
		if !f.quiet {
			bar.Done()
			fmt.Fprintln(e.stderr, msg)
		}
	}
	rep, err := experiment.Demo(ctx, experiment.DemoOptions{D: *d, Rank: f.rank, Alpha: f.alpha, Seed: f.seed, Workers: f.workers,
		Stage: stage, Callback: bar.Record})
	bar.Done()
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(e.stdout, rep.String())
	return err
}
