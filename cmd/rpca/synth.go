package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/rpca-gd/rpca/autorank"
	"github.com/rpca-gd/rpca/decompose"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/gcpolicy"
	"github.com/rpca-gd/rpca/internal/solveflags"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/synth"
)

func init() {
	register(&command{
		name:    "synth",
		summary: "generate the paper's synthetic model, solve it, and report the true error",
		run:     withFlags(runSynth),
	})
}

// synthFlags are the flags of "rpca synth".
type synthFlags struct {
	solveflags.Flags
	d, d1, d2   int
	corruption  string
	magnitude   float64
	targetError float64
	save        string // --out DIR: write the generated instance
	force       bool
	noSolve     bool
	kappa       float64
	rankAuto    bool // --rank-auto: solve without the rank
}

func (f *synthFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "synth", "[flags]", nil)
	f.AllowAuto, f.Rank, f.Alpha = true, 10, 0.1
	f.Flags.Register(fs, solveflags.Solve)
	fs.IntVar(&f.d, "d", 2000, "size of a square problem (d1 = d2 = d)")
	fs.IntVar(&f.d1, "d1", 0, "number of rows (overrides --d)")
	fs.IntVar(&f.d2, "d2", 0, "number of columns (overrides --d)")
	cliflag.Var(fs, &f.corruption, "corruption", "random", cliflag.OneOf("random", "deterministic"), "random or deterministic", "corruption model: random (the paper's experiments) or deterministic (the theory's model)")
	fs.Float64Var(&f.magnitude, "magnitude", 0, "corruption scale c (0: 5r/√(d1·d2))")
	fs.Float64Var(&f.kappa, "kappa", 0, "condition number κ ≥ 1 of M*: singular values evenly spaced over [1/κ, 1] (1: all equal; 0: the paper's model, Gaussian factors)")
	cliflag.Var(fs, &f.targetError, "target-error", 0, cliflag.OrDefault, "a finite non-negative number (0: off)", "also stop as soon as the true relative error is at most this (0: off)")
	fs.StringVar(&f.save, "out", "", "write the generated instance (Y, A, B, S, instance.json) into this directory")
	fs.StringVar(&f.save, "save", "", "the older name of --out")
	fs.BoolVar(&f.force, "force", false, "with --out: replace the directory if it exists and is not empty")
	fs.BoolVar(&f.noSolve, "no-solve", false, "with --out: only generate and save the instance, do not solve it")
	fs.BoolVar(&f.rankAuto, "rank-auto", false, "solve without being told the rank, choosing it as 'rpca decompose --rank auto' does, and report the rank chosen against --rank")
	return fs
}

func (f *synthFlags) config() synth.Config {
	cfg := synth.Config{D1: cmp.Or(f.d1, f.d), D2: cmp.Or(f.d2, f.d), Rank: f.Rank, Alpha: f.Alpha, Magnitude: f.magnitude, Kappa: f.kappa,
		Seed: f.Seed, Workers: f.Workers, P: f.SampleRate, Corruption: synth.Random}
	if f.corruption == "deterministic" {
		cfg.Corruption = synth.Deterministic
	}
	return cfg
}

func runSynth(ctx context.Context, e *env, f *synthFlags, _ *flag.FlagSet) error {
	cfg := f.config()
	if f.noSolve && f.save == "" {
		return cliflag.Usagef("--no-solve needs --out DIR")
	}
	if f.save != "" {
		if err := checkOutputDir(f.save, f.force); err != nil {
			return err
		}
	}
	if err := synth.CheckMemory(cfg, !f.noSolve, load.AvailableMemory()); err != nil {
		return synthMemoryError(err)
	}
	// Sizes, rank, α, κ and p out of range are usage errors (exit code 2).
	if err := cfg.Validate(f.SampleRate < 1); err != nil {
		return cliflag.Usagef("%w", err)
	}
	values := float64(cfg.D1) * float64(cfg.D2) * 8 // Y, dense
	if cfg.P > 0 && cfg.P < 1 {
		values *= 1.5 * cfg.P // the observed values and their column indices
	}
	gcpolicy.Tighten(values)
	job := synth.Job{Config: cfg, Settings: f.Settings(), Out: f.save, Force: f.force,
		Command: fmt.Sprintf("rpca synth --d1 %d --d2 %d --rank %d --alpha %g --corruption %s --magnitude %g --kappa %g --p %g --seed %d",
			cfg.D1, cfg.D2, cfg.Rank, cfg.Alpha, cfg.Corruption, cfg.Magnitude, cfg.Kappa, f.SampleRate, cfg.Seed)}
	prog := newProgress(e, &f.Flags)
	defer prog.Done() // stops the heartbeat on every return
	job.Stage, job.Settings.Callback = prog.Stage, prog.Record
	job.Settings.Stop.TargetError = f.targetError
	if !f.noSolve {
		var err error
		if job.Method, err = f.NewMethod(); err != nil {
			return err
		}
	}
	if f.rankAuto {
		if f.noSolve {
			return cliflag.Usagef("--rank-auto needs a solve; drop --no-solve")
		}
		job.AutoRank = &autorank.Options{Convex: &ialm.Method{}}
	}
	rep, err := synth.Run(ctx, job)
	prog.Done()
	if err != nil {
		return outDirError(err, f.save)
	}
	if rep.SolveReport != nil {
		printNotes(e, f.Quiet, decompose.Notes(rep.Result), nil)
	}
	return printReport(e, f.JSON, rep)
}

// synthMemoryError adds the command line's remedy to synth.CheckMemory's
// error.
func synthMemoryError(err error) error {
	var mem *synth.MemoryError
	switch {
	case !errors.As(err, &mem) || mem.FactorsOnly:
		return err
	case mem.Config.P < 1:
		return fmt.Errorf("%w; lower --p %g to %.2g or less", err, mem.Config.P, mem.MaxRate)
	}
	return fmt.Errorf("%w; use --p (e.g. --p %.2g) to work on a random subset of the entries", err, mem.MaxRate)
}
