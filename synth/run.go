package synth

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/autorank"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
)

// Job is one run of rpca synth: generate an instance (on Φ when
// Config.P < 1), save it when Out is set, and solve it unless Method is
// nil.
type Job struct {
	Config Config
	// Method solves the instance; nil only generates (and saves) it. The
	// data of a partial instance are generated on Φ.
	Method   rpca.Method
	Settings rpca.Settings
	// Out, when set, is the directory the instance is saved into,
	// atomically (see package outdir); Force replaces one that rpca
	// wrote.
	Out   string
	Force bool
	// Command is recorded in instance.json.
	Command string
	// Stage, when set, is told each step of the work.
	Stage func(msg string)
	// AutoRank, when set, solves without the rank (package autorank,
	// with these options, as rpca decompose --rank auto does), so that
	// the rank it chooses can be compared with Config.Rank.
	AutoRank *autorank.Options
}

// Report is the summary of a Job.
type Report struct {
	Method          string  `json:"method,omitempty"`
	D1              int     `json:"d1"`
	D2              int     `json:"d2"`
	Rank            int     `json:"rank"`
	Alpha           float64 `json:"alpha"`
	P               float64 `json:"p"`
	Corruption      string  `json:"corruption"`
	Seed            uint64  `json:"seed"`
	Observed        int     `json:"observed_entries"`
	Corrupted       int     `json:"corrupted_entries"`
	GenerateSeconds float64 `json:"generate_seconds"`
	Saved           string  `json:"saved,omitempty"`
	// The solve, nil when the job only generated; its fields stand at
	// the top level of the JSON.
	*SolveReport
}

// SolveReport is what the method found, with its true error.
type SolveReport struct {
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	StopReason string  `json:"stop_reason"`
	Converged  bool    `json:"converged"` // the method's own rule, not a check of the answer
	// Verified and Verification are rpca.Solve's check of the answer
	// against the data (rpca.Verify); Attempts lists the methods tried
	// when the first answer was not verified (--method auto).
	Verified     bool               `json:"verified"`
	Verification *rpca.Verification `json:"verification"`
	Attempts     []rpca.Attempt     `json:"attempts,omitempty"`
	// RelError is ‖U·Vᵀ − M*‖_F/‖M* − mean(M*)‖_F (metrics.CentredRelError).
	RelError      *float64     `json:"rel_error"`
	Residual      *float64     `json:"residual"`
	SparseEntries int          `json:"sparse_entries"`
	Params        any          `json:"params"`
	Result        *rpca.Result `json:"-"`
	// RankChoice says which rank Job.AutoRank chose and why (nil when
	// the rank was given).
	RankChoice *autorank.Choice `json:"rank_choice,omitempty"`
}

// Run does the job. On an error, or when ctx is cancelled, no output
// directory is left behind.
func Run(ctx context.Context, job Job) (*Report, error) {
	cfg := job.Config
	stage := job.Stage
	if stage == nil {
		stage = func(string) {}
	}
	stage(fmt.Sprintf("generating a %d×%d instance", cfg.D1, cfg.D2))
	t0 := time.Now()
	var in *Instance
	var err error
	if cfg.P > 0 && cfg.P < 1 {
		in, err = Observed(cfg)
	} else {
		in, err = Dense(cfg)
	}
	if err != nil {
		return nil, err
	}
	info := in.Info()
	rep := &Report{
		D1: cfg.D1, D2: cfg.D2, Rank: cfg.Rank, Alpha: cfg.Alpha, P: info.P, Corruption: info.Corruption, Seed: cfg.Seed,
		Observed: info.Observed, Corrupted: info.Corrupted, GenerateSeconds: time.Since(t0).Seconds(),
	}
	var dir *outdir.Dir
	if job.Out != "" {
		if dir, err = outdir.New(job.Out, job.Force); err != nil {
			return nil, err
		}
		defer dir.Abort()
		info.Generator = "rpca synth (package synth, the paper's Section 5.1 model)"
		info.Command = job.Command
		if _, err := in.Save(dir.Path(), info); err != nil {
			return nil, err
		}
	}
	if job.Method != nil {
		var res *rpca.Result
		var choice *autorank.Choice
		if job.AutoRank != nil {
			stage(fmt.Sprintf("solving with %s at a rank chosen from the data", job.Method.Name()))
			o := *job.AutoRank
			if o.Stage == nil {
				o.Stage = stage
			}
			res, choice, err = autorank.Solve(ctx, in.Problem(), job.Settings, job.Method, o)
		} else {
			stage(fmt.Sprintf("solving with %s (initialization, then iterations)", job.Method.Name()))
			res, err = rpca.Solve(ctx, in.Problem(), job.Settings, job.Method)
		}
		if err != nil {
			return nil, err
		}
		rep.Method = res.Method
		rep.SolveReport = &SolveReport{
			Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop), Converged: res.Stop.Converged(),
			Verified: res.Verification.Verified, Verification: res.Verification, Attempts: res.Attempts,
			RelError: metrics.Finite(metrics.CentredRelError(res.U, res.V, in.A, in.B)), Residual: metrics.Finite(res.Residual),
			SparseEntries: res.S.NNZ(), Params: res.Params, Result: res, RankChoice: choice,
		}
	}
	if dir != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := dir.Commit(); err != nil {
			return nil, err
		}
		rep.Saved = job.Out
	}
	return rep, nil
}

// MemoryError is returned by CheckMemory: the instance would not fit in
// the free memory.
type MemoryError struct {
	Config          Config
	Need, Available float64 // bytes
	// FactorsOnly: the factors alone take more than half the free
	// memory, so no sampling rate helps.
	FactorsOnly bool
	// MaxRate is the largest sampling rate at which the instance would
	// take at most half the free memory (for FactorsOnly, 0).
	MaxRate float64
}

func (e *MemoryError) Error() string {
	c := e.Config
	gb := func(b float64) string { return fmt.Sprintf("%.3g GB", b/1e9) }
	switch {
	case e.FactorsOnly:
		return fmt.Sprintf("a %d×%d problem of rank %d needs about %s for its factors alone, more than this machine has free (%s)", c.D1, c.D2, c.Rank, gb(e.Need), gb(e.Available))
	case c.P > 0 && c.P < 1:
		return fmt.Sprintf("a %d×%d problem at sampling rate %g needs about %s, more than the %s free", c.D1, c.D2, c.P, gb(e.Need), gb(e.Available))
	}
	return fmt.Sprintf("a dense %d×%d problem needs about %s, more than the %s free", c.D1, c.D2, gb(e.Need), gb(e.Available))
}

// CheckMemory returns a *MemoryError when the instance of cfg, and its
// solve when solve is set, would not fit in available bytes, before
// anything is allocated. The budget is rough: a dense instance holds Y
// and S and, to solve it, a method's work matrices (4 d1×d2 float64
// matrices in all, 2 without a solve); a partial one (cfg.P < 1)
// load.SampledBytesPerEntry per expected observed entry; both hold the
// factors A, B, U and V. A size that Config.Validate rejects passes.
func CheckMemory(cfg Config, solve bool, available float64) error {
	if cfg.D1 <= 0 || cfg.D2 <= 0 {
		return nil
	}
	d1, d2, r := float64(cfg.D1), float64(cfg.D2), float64(max(cfg.Rank, 1))
	factors := 4 * 8 * (d1 + d2) * r
	copies := 4.0
	if !solve {
		copies = 2
	}
	need := copies*8*d1*d2 + factors
	partial := cfg.P > 0 && cfg.P < 1
	if partial {
		need = load.SampledBytesPerEntry*cfg.P*d1*d2 + factors
	}
	if need <= available {
		return nil
	}
	if factors > available/2 {
		return &MemoryError{Config: cfg, Need: factors, Available: available, FactorsOnly: true}
	}
	rate := 0.5 * (available - factors) / (load.SampledBytesPerEntry * d1 * d2)
	if !partial {
		rate = math.Min(rate, PaperRate(max(cfg.D1, cfg.D2), max(cfg.Rank, 1)))
	}
	return &MemoryError{Config: cfg, Need: need, Available: available, MaxRate: rate}
}

// String is the one-line summary of the report.
func (r *Report) String() string {
	saved := ""
	if r.Saved != "" {
		saved = "; wrote " + r.Saved
	}
	if r.SolveReport == nil {
		return fmt.Sprintf("generated %d×%d, r=%d, α=%g, p=%g, seed %d (%d corruptions) in %.2fs%s",
			r.D1, r.D2, r.Rank, r.Alpha, r.P, r.Seed, r.Corrupted, r.GenerateSeconds, saved)
	}
	rank := ""
	if c := r.RankChoice; c != nil {
		rank = fmt.Sprintf("\nrank %d chosen by --rank-auto (true rank %d, rule %s): %s", c.Rank, r.Rank, c.Rule, c.Reason)
	}
	return fmt.Sprintf("%s on %d×%d, r=%d, α=%g, p=%g: %d iterations in %.2fs (%s, %s); relative error %s, residual %s%s",
		r.Method, r.D1, r.D2, r.Rank, r.Alpha, r.P, r.Iterations, r.Seconds, r.StopReason, r.Verification.Status(),
		metrics.Format("%.3g", r.RelError), metrics.Format("%.3g", r.Residual), saved) + rank
}
