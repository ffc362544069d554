package main

import (
	"context"
	"fmt"

	"github.com/rpca-gd/rpca/experiment"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/solveflags"
)

func init() {
	register(&command{
		name:    "demo",
		summary: "run the main job on an embedded default problem and explain the result",
		run:     runDemo,
	})
}

func runDemo(ctx context.Context, e *env, args []string) error {
	var f solveflags.Flags
	fs := newFlagSet(e, "demo", "[flags]", nil)
	// Only the flags the demo honours.
	var d int
	cliflag.Var(fs, &d, "d", 2000, cliflag.Between(1, 20000), "in [1, 20000] for the demo (use 'rpca synth' for other sizes)", "matrix size d (d×d)")
	f.Rank, f.Alpha = 10, 0.1
	f.Register(fs, solveflags.Rank|solveflags.Alpha|solveflags.Seed|solveflags.Workers|solveflags.Quiet|solveflags.Verbose)
	if err := parse(fs, args); err != nil {
		return err
	}
	// The stages go to stderr unless --quiet, the iterations as newProgress
	// says.
	bar := newProgress(e, &f)
	stage := func(msg string) {
		if !f.Quiet {
			bar.Done()
			fmt.Fprintln(e.stderr, msg)
		}
	}
	rep, err := experiment.Demo(ctx, experiment.DemoOptions{D: d, Rank: f.Rank, Alpha: f.Alpha, Seed: f.Seed, Workers: f.Workers,
		Stage: stage, Callback: bar.Record})
	bar.Done()
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(e.stdout, rep.String())
	return err
}
