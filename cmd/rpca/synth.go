package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/metrics"
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
}

func (f *synthFlags) register(e *env, name string) *flag.FlagSet {
	fs := newFlagSet(e, name, "[flags]", `
Generates Y = M* + S* from the paper's model (Section 5.1): M* = A·Bᵀ with
A, B having N(0, 1/d) entries, and each entry of S* corrupted with
probability α by a value uniform on [−5r/d, 5r/d] (or, with
--corruption deterministic, exactly ⌊αd⌋ large corruptions per row and
column). With --p < 1 only a random fraction p of the entries is generated
(memory proportional to p·d1·d2) and the partial-observation method
(Algorithm 2) runs on them. Progress goes to stderr, the summary to stdout;
the relative error ‖UVᵀ − M*‖_F/‖M*‖_F is computed from the factors.`)
	f.solveFlags.register(fs, 10, 0.1)
	fs.IntVar(&f.d, "d", 2000, "size of a square problem (d1 = d2 = d)")
	fs.IntVar(&f.d1, "d1", 0, "number of rows (overrides --d)")
	fs.IntVar(&f.d2, "d2", 0, "number of columns (overrides --d)")
	fs.StringVar(&f.corruption, "corruption", "random", "corruption model: random (the paper's experiments) or deterministic (the theory's model)")
	fs.Float64Var(&f.magnitude, "magnitude", 0, "corruption scale c (0: 5r/√(d1·d2))")
	fs.Float64Var(&f.targetError, "target-error", 0, "also stop as soon as the true relative error is at most this (0: off)")
	return fs
}

func (f *synthFlags) config() (synth.Config, error) {
	cfg := synth.Config{D1: f.d, D2: f.d, Rank: f.rank, Alpha: f.alpha, Magnitude: f.magnitude, Seed: f.seed, Workers: f.workers, P: f.p}
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
	Method          string             `json:"method"`
	D1              int                `json:"d1"`
	D2              int                `json:"d2"`
	Rank            int                `json:"rank"`
	Alpha           float64            `json:"alpha"`
	P               float64            `json:"p"`
	Corruption      string             `json:"corruption"`
	Seed            uint64             `json:"seed"`
	Observed        int                `json:"observed_entries"`
	Iterations      int                `json:"iterations"`
	Seconds         float64            `json:"seconds"`
	GenerateSeconds float64            `json:"generate_seconds"`
	StopReason      string             `json:"stop_reason"`
	RelError        any                `json:"rel_error"`
	Residual        any                `json:"residual"`
	SparseEntries   int                `json:"sparse_entries"`
	Params          map[string]float64 `json:"params"`
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
	if !partial {
		// Y, the residual and the method's work matrices: refuse early
		// rather than die in the allocator.
		if need := 4 * 8 * float64(cfg.D1) * float64(cfg.D2); need > availableMemory() {
			return nil, fmt.Errorf("a dense %d×%d problem needs about %.1f GB, more than this machine has free; use --p (e.g. --p %.3g) to work on a random subset of the entries",
				cfg.D1, cfg.D2, need/1e9, synth.PaperRate(max(cfg.D1, cfg.D2), max(cfg.Rank, 1)))
		}
	}
	t0 := time.Now()
	var in *synth.Instance
	if partial {
		in, err = synth.Observed(cfg)
	} else {
		in, err = synth.Dense(cfg)
	}
	if err != nil {
		return nil, err
	}
	gen := time.Since(t0)
	s := f.settings()
	s.Stop.TargetError = f.targetError
	prog := newProgress(e, &f.solveFlags)
	s.Callback = prog.callback
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
	return sum, nil
}

func printSynthSummary(e *env, f *synthFlags, sum *synthSummary) error {
	if f.jsonOut {
		return writeJSON(e.stdout, sum)
	}
	_, err := fmt.Fprintf(e.stdout, "%s on %d×%d, r=%d, α=%g, p=%g: %d iterations in %.2fs (%s); relative error %.3g, residual %.3g\n",
		sum.Method, sum.D1, sum.D2, sum.Rank, sum.Alpha, sum.P, sum.Iterations, sum.Seconds, sum.StopReason, sum.RelError, sum.Residual)
	return err
}

// relError is ‖UVᵀ − M*‖_F/‖M*‖_F from the factors.
func relError(res *rpca.Result, in *synth.Instance) float64 {
	return metrics.RelError(res.U, res.V, in.A, in.B)
}
