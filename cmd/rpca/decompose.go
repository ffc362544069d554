package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/autorank"
	"github.com/rpca-gd/rpca/decompose"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/gcpolicy"
	"github.com/rpca-gd/rpca/internal/solveflags"
	"github.com/rpca-gd/rpca/load"
)

func init() {
	register(&command{
		name:    "decompose",
		summary: "split a matrix from a file (.npy, CSV/TSV, Matrix Market) into low-rank and sparse parts",
		run:     withFlags(runDecompose),
	})
}

// decomposeFlags are the flags of "rpca decompose".
type decomposeFlags struct {
	solveflags.Flags
	outFlags
	in, inFormat, truth         string
	header, factors, missingNaN bool
	maxRank                     int
	target                      float64 // --target-error
}

func (f *decomposeFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "decompose", "--in FILE --out DIR [--rank R] [flags]", nil)
	f.AllowAuto, f.RankAuto, f.Alpha = true, true, 0.1
	f.Flags.Register(fs, solveflags.Solve)
	fs.Lookup("rank").Usage = "rank `r` of the low-rank part, a positive integer, or auto (the default) to choose it from the data: the spectrum of Y, checked on each answer and by principal component pursuit (see docs/cli.md)"
	fs.Lookup("rank").DefValue = "auto"
	cliflag.Var(fs, &f.maxRank, "max-rank", autorank.DefaultMaxRank, cliflag.AtLeast(1), "at least 1", "largest rank --rank auto considers")
	f.outFlags.register(fs)
	fs.StringVar(&f.in, "in", "", "input matrix file (required)")
	fs.StringVar(&f.inFormat, "in-format", "", "input format, overriding the extension: npy, csv, tsv, txt (white space) or mtx")
	fs.BoolVar(&f.header, "header", false, "CSV/TSV/TXT: skip the first line (column names)")
	fs.BoolVar(&f.factors, "factors", false, "write the factors U.npy and V.npy instead of the d1×d2 lowrank.npy")
	fs.StringVar(&f.truth, "truth", "", "directory with the true factors A.npy, B.npy (M* = A·Bᵀ) to report the true error")
	cliflag.Var(fs, &f.target, "target-error", 0, cliflag.OrDefault, "a finite non-negative number (0: off)", "with --truth: also stop as soon as the true relative error is at most this (0: off)")
	fs.BoolVar(&f.missingNaN, "missing-nan", false, "treat NaN entries of a dense input as missing (runs Algorithm 2 on the others)")
	return fs
}

func runDecompose(ctx context.Context, e *env, f *decomposeFlags, fs *flag.FlagSet) error {
	if err := f.validate(fs); err != nil {
		return err
	}
	method, err := f.NewMethod()
	if err != nil {
		return err
	}
	settings := f.Settings()
	settings.Stop.TargetError = f.target
	job := decompose.Job{Input: f.in, Settings: settings, Sampling: f.SampleRate, Truth: f.truth,
		Out: f.out, Force: f.force, Inputs: []string{f.in, f.truth}, Factors: f.factors, Format: decompose.Format(f.format)}
	if err := job.Check(); err != nil {
		return outDirError(err, f.out)
	}
	prog := newProgress(e, &f.Flags)
	defer prog.Done() // stops the heartbeat on every return
	prog.Stagef("reading %s", f.in)
	if st, err := os.Stat(f.in); err == nil {
		gcpolicy.Tighten(float64(st.Size())) // about the size of the data, or more for text
	}
	if job.Data, err = f.load(method); err != nil {
		return err
	}
	if job.Data.Observed != nil {
		if job.Method, err = f.NewMethod(true); err != nil {
			return fmt.Errorf("%s is partially observed: %w", f.in, err)
		}
	} else {
		job.Method = method
	}
	if name, n, large := job.LowRankSize(job.Data.D1, job.Data.D2); large {
		fmt.Fprintf(e.stderr, "rpca: warning: %s will take %.1f GB; --factors writes U and V instead (%d×r and %d×r)\n", name, float64(n)/1e9, job.Data.D1, job.Data.D2)
	}
	job.Settings.Callback = prog.Record
	if f.Rank == 0 {
		job.AutoRank = &autorank.Options{MaxRank: f.maxRank, Convex: &ialm.Method{}, Stage: func(s string) { prog.Stagef("%s", s) }}
		prog.Stagef("solving %d×%d with %s at a rank chosen from the data, then writing %s", job.Data.D1, job.Data.D2, job.Method.Name(), f.out)
	} else {
		prog.Stagef("solving %d×%d at rank %d with %s (initialization, then iterations), then writing %s", job.Data.D1, job.Data.D2, f.Rank, job.Method.Name(), f.out)
	}
	sum, err := decompose.Run(ctx, job)
	prog.Done()
	var te *decompose.TruthError
	var se *decompose.SpaceError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("--truth: %w", te.Err)
	case errors.As(err, &se):
		return fmt.Errorf("%w; --factors writes U and V instead (%d×r and %d×r)", err, job.Data.D1, job.Data.D2)
	case err != nil:
		return outDirError(err, f.out)
	}
	printNotes(e, f.Quiet, decompose.Notes(sum.Result), nil)
	return printReport(e, f.JSON, sum)
}

// validate checks the flags that do not need the data.
func (f *decomposeFlags) validate(fs *flag.FlagSet) error {
	if f.in == "" {
		return cliflag.Usagef("decompose: --in FILE is required (run 'rpca decompose -h' for help)")
	}
	if err := f.outFlags.validate("decompose"); err != nil {
		return err
	}
	if f.target > 0 && f.truth == "" {
		return cliflag.Usagef("decompose: --target-error needs --truth DIR, the true factors it is measured against")
	}
	if flagSet(fs, "max-rank") && f.Rank != 0 {
		return cliflag.Usagef("decompose: --max-rank applies to --rank auto, not to --rank %d", f.Rank)
	}
	return nil
}

// load reads --in with the loader of package load and rewords its errors
// for the command line.
func (f *decomposeFlags) load(method rpca.Method) (*load.Matrix, error) {
	opt := load.Options{
		Format: load.Format(f.inFormat), Header: f.header, MissingNaN: f.missingNaN,
		Sample:        rpca.Sampling{P: f.SampleRate, Seed: f.Seed},
		BytesPerEntry: method.Capabilities().BytesPerEntry,
		CheckDims: func(d1, d2 int) error {
			if f.Rank != 0 && f.Rank >= min(d1, d2) {
				return cliflag.Usagef("--rank %d must be smaller than min(d1, d2) = %d for the %d×%d matrix in %s", f.Rank, min(d1, d2), d1, d2, f.in)
			}
			return nil
		},
	}
	in, err := load.File(f.in, opt)
	return in, f.loadError(err)
}

// loadError adds the command line's remedies to the loader's errors.
func (f *decomposeFlags) loadError(err error) error {
	var mem *load.MemoryError
	var nf *load.NonFiniteError
	const nanHint = "; use --missing-nan if NaN marks a missing entry"
	switch {
	case err == nil:
		return nil
	case errors.Is(err, load.ErrFormat):
		return cliflag.Usagef("%v; give --in-format npy, csv, tsv, txt or mtx", err)
	case errors.Is(err, load.ErrPartialSample):
		return cliflag.Usagef("%v: --p subsamples a dense matrix, and this one is already partially observed", err)
	case errors.As(err, &nf) && math.IsNaN(nf.Value):
		return fmt.Errorf("%w"+nanHint, err)
	case errors.As(err, &nf):
		return err // ±Inf: no flag makes it acceptable
	case errors.Is(err, formats.ErrNonFinite) && f.inFmt() == load.MatrixMarket:
		return fmt.Errorf("%w; leave missing entries out of a coordinate file", err)
	case errors.Is(err, formats.ErrNonFinite):
		return fmt.Errorf("%w"+nanHint, err)
	case errors.As(err, &mem):
		return fmt.Errorf("%w for --method %s; %s", err, f.Method, memoryHint(mem))
	}
	return headerHint(err)
}

// inFmt is the input's format, "" when it cannot be told.
func (f *decomposeFlags) inFmt() load.Format {
	fm, _ := load.FormatOf(f.in, load.Format(f.inFormat))
	return fm
}

// memoryHint says what to do about a load that would not fit.
func memoryHint(e *load.MemoryError) string {
	var hint string
	switch {
	case e.MaxRate == 0:
		return "use a machine with more memory"
	case e.Rate == 0 && (e.Streamed || e.MaxRate > 0.05):
		hint = fmt.Sprintf("use --p (e.g. --p %.2g) with --method gd to work on a random fraction of the entries", min(0.1, e.MaxRate))
		if !e.Streamed {
			hint += "; --p reads the whole matrix first unless it is an .npy file"
		}
	case e.Rate == 0:
		hint = "convert it to .npy, which --p samples while reading"
	default:
		hint = fmt.Sprintf("use a smaller --p (at most about %.2g)", e.MaxRate)
		if !e.Streamed {
			hint += ", or convert it to .npy, which --p samples while reading"
		}
	}
	return hint
}
