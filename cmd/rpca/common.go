package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/altproj"
	"github.com/rpca-gd/rpca/ialm"
)

// errHelp is returned when -h was asked for; the usage was printed.
var errHelp = flag.ErrHelp

// newFlagSet returns a flag set whose errors are returned, not printed
// with os.Exit, and whose usage text starts with the given description.
func newFlagSet(e *env, name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := e.stdout
		fmt.Fprintf(w, "Usage: rpca %s %s\n\n%s\n\nFlags:\n", name, synopsis, strings.TrimSpace(description))
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(e.stderr)
	}
	return fs
}

// parse parses args and turns flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // we print our own one-line error
	err := fs.Parse(args)
	fs.SetOutput(os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return errHelp
	}
	if err != nil {
		return fmt.Errorf("%s: %v (run 'rpca %s -h' for help): %w", fs.Name(), err, fs.Name(), errUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q (run 'rpca %s -h' for help): %w", fs.Name(), fs.Arg(0), fs.Name(), errUsage)
	}
	return nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// solveFlags are the flags shared by every command that solves a problem.
type solveFlags struct {
	method     string
	rank       int
	alpha      float64
	gamma      float64
	step       float64
	mu         float64
	noProj     bool
	p          float64
	tol        float64
	factorTol  float64
	maxIter    int
	seed       uint64
	workers    int
	quiet      bool
	verbose    bool
	jsonOut    bool
	ialmLambda float64
}

// register adds the flags to fs; rank and alpha defaults are given by the
// command (0 rank means required).
func (f *solveFlags) register(fs *flag.FlagSet, rank int, alpha float64) {
	fs.StringVar(&f.method, "method", "gd", "method: gd (the paper's gradient descent), altproj or ialm")
	fs.IntVar(&f.rank, "rank", rank, "rank r of the low-rank part")
	fs.Float64Var(&f.alpha, "alpha", alpha, "α, the largest fraction of corrupted entries per row/column, in [0, 1)")
	fs.Float64Var(&f.gamma, "gamma", 0, "gd: γ, the sparse estimator keeps ⌊γα·d⌋ per line in the iterations (0: 2 full, 3 partial)")
	fs.Float64Var(&f.step, "step", 0, fmt.Sprintf("gd: step constant c in η = c/σ̂₁ (0: %g full, %g partial)", rpca.DefaultStepDense, rpca.DefaultStepPartial))
	fs.Float64Var(&f.mu, "mu", 0, "incoherence μ: gd row-norm constraints (0: 10), altproj threshold β = 4μ²r/√(d1·d2) (0: 1)")
	fs.BoolVar(&f.noProj, "no-projection", false, "gd: switch off the row-norm projections")
	fs.Float64Var(&f.p, "p", 1, "gd: sampling rate; p < 1 runs Algorithm 2 on a random fraction p of the entries")
	fs.Float64Var(&f.tol, "tol", 0, "relative residual tolerance ‖Y−UVᵀ−S‖/‖Y‖ (0: method default; <0: off)")
	fs.Float64Var(&f.factorTol, "factor-tol", 0, "gd: relative factor-change tolerance (0: default; <0: off)")
	fs.IntVar(&f.maxIter, "max-iter", 0, "iteration cap (0: method default)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed")
	fs.IntVar(&f.workers, "workers", 0, "goroutines for the parallel kernels (0: all cores)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output on stderr")
	fs.BoolVar(&f.verbose, "verbose", false, "one progress line per iteration on stderr, even when it is not a terminal")
	fs.BoolVar(&f.jsonOut, "json", false, "print the summary as one JSON object on stdout")
	fs.Float64Var(&f.ialmLambda, "lambda", 0, "ialm: weight λ of ‖S‖₁ (0: 1/√d1)")
}

// settings returns the shared settings.
func (f *solveFlags) settings() rpca.Settings {
	return rpca.Settings{
		Rank:    f.rank,
		Alpha:   f.alpha,
		Seed:    f.seed,
		Workers: f.workers,
		Stop: rpca.Stop{
			MaxIter:     f.maxIter,
			ResidualTol: f.tol,
			FactorTol:   f.factorTol,
		},
	}
}

// check validates the flag values that the library would otherwise
// reject with a less specific message.
func (f *solveFlags) check() error {
	switch {
	case f.rank < 1:
		return fmt.Errorf("--rank must be at least 1, got %d: %w", f.rank, errUsage)
	case math.IsNaN(f.alpha) || f.alpha < 0 || f.alpha >= 1:
		return fmt.Errorf("--alpha must be in [0, 1), got %v: %w", f.alpha, errUsage)
	case math.IsNaN(f.p) || f.p <= 0 || f.p > 1:
		return fmt.Errorf("--p must be in (0, 1], got %v: %w", f.p, errUsage)
	case f.workers < 0:
		return fmt.Errorf("--workers must be non-negative: %w", errUsage)
	}
	return nil
}

// newMethod builds the method chosen by --method.
func (f *solveFlags) newMethod() (rpca.Method, error) {
	switch f.method {
	case "gd", "":
		g := &rpca.GD{Gamma: f.gamma, StepConst: f.step, Mu: f.mu, NoProjection: f.noProj}
		if f.p < 1 {
			g.SampleRate = f.p
		}
		return g, nil
	case "altproj", "ialm":
		if f.p < 1 {
			return nil, fmt.Errorf("--method %s needs the full matrix; --p < 1 (subsampling) works with --method gd only: %w", f.method, errUsage)
		}
		if f.method == "altproj" {
			return &altproj.Method{Mu: f.mu}, nil
		}
		return &ialm.Method{Lambda: f.ialmLambda}, nil
	}
	return nil, fmt.Errorf("unknown --method %q (want gd, altproj or ialm): %w", f.method, errUsage)
}

// progress reports iterations on stderr: an updating line on a terminal,
// one line per iteration with --verbose, nothing with --quiet.
type progress struct {
	w       io.Writer
	bar     bool
	lines   bool
	last    time.Time
	printed bool
	maxIter int
}

func newProgress(e *env, f *solveFlags) *progress {
	p := &progress{w: e.stderr}
	switch {
	case f.quiet:
	case f.verbose:
		p.lines = true
	case e.stderrIsTerminal:
		p.bar = true
	}
	return p
}

// callback is passed to rpca.Settings.Callback.
func (p *progress) callback(r rpca.Record) {
	if !p.bar && !p.lines {
		return
	}
	line := fmt.Sprintf("iter %4d  residual %.3e", r.Iter, r.Residual)
	if !math.IsNaN(r.FactorChange) {
		line += fmt.Sprintf("  change %.2e", r.FactorChange)
	}
	if !math.IsNaN(r.Error) {
		line += fmt.Sprintf("  error %.3e", r.Error)
	}
	secs := r.Elapsed.Seconds()
	line += fmt.Sprintf("  %7.2fs", secs)
	if r.Iter > 0 && secs > 0 {
		line += fmt.Sprintf("  %.1f it/s", float64(r.Iter)/secs)
	}
	if p.lines {
		fmt.Fprintln(p.w, line)
		return
	}
	if now := time.Now(); now.Sub(p.last) > 100*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.printed = true
	}
}

// done ends the progress bar line.
func (p *progress) done() {
	if p.bar && p.printed {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// finite replaces NaN and ±Inf, which JSON cannot hold, by nil.
func finite(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}
