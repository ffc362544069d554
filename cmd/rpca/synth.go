package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/synth"
)

func init() {
	register(&command{
		name:    "synth",
		summary: "generate the paper's synthetic model, solve it, and report the true error",
		run:     runSynth,
	})
}

// synthFlags are the flags of "rpca synth".
type synthFlags struct {
	solveFlags
	d, d1, d2   int
	corruption  string
	magnitude   float64
	targetError float64
	save        string // --out DIR: write the generated instance
	force       bool
	noSolve     bool
	kappa       float64
}

func (f *synthFlags) register(e *env, name string) *flag.FlagSet {
	fs := newFlagSet(e, name, "[flags]")
	f.allowAuto = true
	f.solveFlags.register(fs, 10, 0.1)
	fs.IntVar(&f.d, "d", 2000, "size of a square problem (d1 = d2 = d)")
	fs.IntVar(&f.d1, "d1", 0, "number of rows (overrides --d)")
	fs.IntVar(&f.d2, "d2", 0, "number of columns (overrides --d)")
	fs.StringVar(&f.corruption, "corruption", "random", "corruption model: random (the paper's experiments) or deterministic (the theory's model)")
	fs.Float64Var(&f.magnitude, "magnitude", 0, "corruption scale c (0: 5r/√(d1·d2))")
	fs.Float64Var(&f.kappa, "kappa", 0, "condition number κ of M*: singular values evenly spaced over [1/κ, 1] (0: the paper's model)")
	fs.Float64Var(&f.targetError, "target-error", 0, "also stop as soon as the true relative error is at most this (0: off)")
	fs.StringVar(&f.save, "out", "", "write the generated instance (Y, A, B, S, instance.json) into this directory")
	fs.StringVar(&f.save, "save", "", "the older name of --out")
	fs.BoolVar(&f.force, "force", false, "with --out: replace the directory if it exists and is not empty")
	fs.BoolVar(&f.noSolve, "no-solve", false, "with --out: only generate and save the instance, do not solve it")
	return fs
}

func (f *synthFlags) config() (synth.Config, error) {
	cfg := synth.Config{D1: f.d, D2: f.d, Rank: f.rank, Alpha: f.alpha, Magnitude: f.magnitude, Kappa: f.kappa, Seed: f.seed, Workers: f.workers, P: f.p}
	if f.d1 > 0 {
		cfg.D1 = f.d1
	}
	if f.d2 > 0 {
		cfg.D2 = f.d2
	}
	switch f.corruption {
	case "random":
		cfg.Corruption = synth.Random
	case "deterministic":
		cfg.Corruption = synth.Deterministic
	default:
		return cfg, fmt.Errorf("--corruption must be random or deterministic, got %q: %w", f.corruption, errUsage)
	}
	if math.IsNaN(f.targetError) || f.targetError < 0 {
		return cfg, fmt.Errorf("--target-error must be non-negative: %w", errUsage)
	}
	return cfg, nil
}

// synthSummary is the JSON summary of a synth run.
type synthSummary struct {
	Method          string  `json:"method"`
	D1              int     `json:"d1"`
	D2              int     `json:"d2"`
	Rank            int     `json:"rank"`
	Alpha           float64 `json:"alpha"`
	P               float64 `json:"p"`
	Corruption      string  `json:"corruption"`
	Seed            uint64  `json:"seed"`
	Observed        int     `json:"observed_entries"`
	Iterations      int     `json:"iterations"`
	Seconds         float64 `json:"seconds"`
	GenerateSeconds float64 `json:"generate_seconds"`
	StopReason      string  `json:"stop_reason"`
	RelError        *number `json:"rel_error"`
	Residual        *number `json:"residual"`
	SparseEntries   int     `json:"sparse_entries"`
	Params          any     `json:"params"`
	Saved           string  `json:"saved,omitempty"`
}

func runSynth(ctx context.Context, e *env, args []string) error {
	var f synthFlags
	fs := f.register(e, "synth")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if f.noSolve && f.save == "" {
		return fmt.Errorf("--no-solve needs --out DIR: %w", errUsage)
	}
	if f.save != "" {
		if err := checkOutputDir(f.save, f.force); err != nil {
			return err
		}
	}
	if err := checkSynthMemory(cfg, !f.noSolve); err != nil {
		return err
	}
	// Sizes, rank, α, κ and p out of range are usage errors (exit code 2).
	if err := cfg.Validate(f.p < 1); err != nil {
		return fmt.Errorf("%w: %w", err, errUsage)
	}
	if f.noSolve {
		return saveOnly(ctx, e, &f, cfg)
	}
	sum, err := solveSynth(ctx, e, &f, cfg)
	if err != nil {
		return err
	}
	return printSynthSummary(e, &f, sum)
}

// solveSynth generates the instance and solves it with the chosen method.
func solveSynth(ctx context.Context, e *env, f *synthFlags, cfg synth.Config) (*synthSummary, error) {
	m, err := f.newMethod()
	if err != nil {
		return nil, err
	}
	partial := f.p < 1
	prog := newProgress(e, &f.solveFlags)
	prog.stage("generating a %d×%d instance", cfg.D1, cfg.D2)
	in, gen, err := generate(cfg, partial)
	if err != nil {
		return nil, err
	}
	var saved *outdir.Dir
	if f.save != "" {
		if saved, err = saveInstance(f, in); err != nil {
			return nil, err
		}
		defer saved.Abort()
	}
	s := f.settings()
	s.Stop.TargetError = f.targetError
	s.Callback = prog.callback
	prog.stage("solving with %s (initialization, then iterations)", m.Name())
	p := in.Problem()
	var res *rpca.Result
	if partial {
		// The data are generated on Φ directly; GD must not subsample again.
		if g, ok := m.(*rpca.GD); ok {
			g.SampleRate = 0
		}
	}
	res, err = rpca.Solve(ctx, p, s, m)
	prog.done()
	if err != nil {
		return nil, err
	}
	prog.warnUnconverged(res)
	sum := &synthSummary{
		Method: m.Name(), D1: cfg.D1, D2: cfg.D2, Rank: cfg.Rank, Alpha: cfg.Alpha, P: f.p,
		Corruption: cfg.Corruption.String(), Seed: cfg.Seed,
		Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), GenerateSeconds: gen.Seconds(),
		StopReason: string(res.Stop), Residual: finite(res.Residual), SparseEntries: res.S.NNZ(), Params: res.Params,
	}
	if p.Observed != nil {
		sum.Observed = p.Observed.Len()
	} else {
		sum.Observed = cfg.D1 * cfg.D2
	}
	sum.RelError = finite(relError(res, in))
	if saved != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := saved.Commit(); err != nil {
			return nil, outDirError(err, f.save)
		}
		sum.Saved = f.save
	}
	return sum, nil
}

// checkSynthMemory refuses an instance that would not fit in the free
// memory before anything is allocated, rather than die in the allocator.
// Rough budget: a dense instance holds Y and S and, to solve it, the
// method's work matrices (4 d1×d2 float64 matrices, 2 without a solve);
// a partial one (cfg.P < 1) load.SampledBytesPerEntry per expected observed
// entry (measured for synth: 42); both hold the factors A, B, U and V.
func checkSynthMemory(cfg synth.Config, solve bool) error {
	if cfg.D1 <= 0 || cfg.D2 <= 0 {
		return nil // synth reports the bad size
	}
	d1, d2, r := float64(cfg.D1), float64(cfg.D2), float64(max(cfg.Rank, 1))
	factors := 4 * 8 * (d1 + d2) * r
	copies := 4.0
	if !solve {
		copies = 2
	}
	need := copies*8*d1*d2 + factors
	if cfg.P < 1 {
		need = load.SampledBytesPerEntry*cfg.P*d1*d2 + factors
	}
	avail := load.AvailableMemory()
	if need <= avail {
		return nil
	}
	gb := func(b float64) string { return fmt.Sprintf("%.3g GB", b/1e9) }
	if factors > avail/2 {
		return fmt.Errorf("a %d×%d problem of rank %d needs about %s for its factors alone, more than this machine has free (%s)", cfg.D1, cfg.D2, cfg.Rank, gb(factors), gb(avail))
	}
	pFit := 0.5 * (avail - factors) / (load.SampledBytesPerEntry * d1 * d2)
	if cfg.P < 1 {
		return fmt.Errorf("a %d×%d problem at --p %g needs about %s, more than the %s free; use --p %.2g or less", cfg.D1, cfg.D2, cfg.P, gb(need), gb(avail), pFit)
	}
	return fmt.Errorf("a dense %d×%d problem needs about %s, more than the %s free; use --p (e.g. --p %.2g) to work on a random subset of the entries",
		cfg.D1, cfg.D2, gb(need), gb(avail), min(pFit, synth.PaperRate(max(cfg.D1, cfg.D2), max(cfg.Rank, 1))))
}

// generate draws the instance: all of Y, or only the entries on a random
// Φ when partial.
func generate(cfg synth.Config, partial bool) (*synth.Instance, time.Duration, error) {
	t0 := time.Now()
	var in *synth.Instance
	var err error
	if partial {
		in, err = synth.Observed(cfg)
	} else {
		in, err = synth.Dense(cfg)
	}
	return in, time.Since(t0), err
}

// saveInstance writes the instance into a new atomic directory, which the
// caller commits (or aborts).
func saveInstance(f *synthFlags, in *synth.Instance) (_ *outdir.Dir, err error) {
	d, err := outdir.New(f.save, f.force)
	if err != nil {
		return nil, outDirError(err, f.save)
	}
	cfg := in.Config
	info := in.Info()
	info.Generator = "rpca synth (package synth, the paper's Section 5.1 model)"
	info.P = f.p
	info.Command = fmt.Sprintf("rpca synth --d1 %d --d2 %d --rank %d --alpha %g --corruption %s --magnitude %g --p %g --seed %d",
		cfg.D1, cfg.D2, cfg.Rank, cfg.Alpha, info.Corruption, cfg.Magnitude, f.p, cfg.Seed)
	if _, err := in.Save(d.Path(), info); err != nil {
		d.Abort()
		return nil, err
	}
	return d, nil
}

// saveOnly generates and saves the instance without solving it.
func saveOnly(ctx context.Context, e *env, f *synthFlags, cfg synth.Config) error {
	in, gen, err := generate(cfg, f.p < 1)
	if err != nil {
		return err
	}
	d, err := saveInstance(f, in)
	if err != nil {
		return err
	}
	defer d.Abort()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := d.Commit(); err != nil {
		return outDirError(err, f.save)
	}
	if f.jsonOut {
		return writeJSON(e.stdout, map[string]any{
			"d1": cfg.D1, "d2": cfg.D2, "rank": cfg.Rank, "alpha": cfg.Alpha, "p": f.p, "seed": cfg.Seed,
			"corruption": cfg.Corruption.String(), "corrupted_entries": in.S.NNZ(),
			"generate_seconds": gen.Seconds(), "saved": f.save,
		})
	}
	_, err = fmt.Fprintf(e.stdout, "generated %d×%d, r=%d, α=%g, p=%g, seed %d (%d corruptions) in %.2fs; wrote %s\n",
		cfg.D1, cfg.D2, cfg.Rank, cfg.Alpha, f.p, cfg.Seed, in.S.NNZ(), gen.Seconds(), f.save)
	return err
}

func printSynthSummary(e *env, f *synthFlags, sum *synthSummary) error {
	if f.jsonOut {
		return writeJSON(e.stdout, sum)
	}
	saved := ""
	if sum.Saved != "" {
		saved = "; wrote the instance to " + sum.Saved
	}
	_, err := fmt.Fprintf(e.stdout, "%s on %d×%d, r=%d, α=%g, p=%g: %d iterations in %.2fs (%s); relative error %.3g, residual %.3g%s\n",
		sum.Method, sum.D1, sum.D2, sum.Rank, sum.Alpha, sum.P, sum.Iterations, sum.Seconds, sum.StopReason, sum.RelError, sum.Residual, saved)
	return err
}

// relError is ‖UVᵀ − M*‖_F/‖M*‖_F from the factors.
func relError(res *rpca.Result, in *synth.Instance) float64 {
	return metrics.RelError(res.U, res.V, in.A, in.B)
}
