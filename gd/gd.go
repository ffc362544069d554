// Package gd is the projected gradient method of Yi, Park, Chen and
// Caramanis, "Fast Algorithms for Robust PCA via Gradient Descent"
// (NeurIPS 2016), as an [rpca.Method]: Algorithm 1 for a fully observed Y
// and Algorithm 2 for a partially observed one (the paper's subsampling
// of a dense Y is the caller's: [rpca.Sampling]), with the scaled steps of Tong, Ma and
// Chi (2021) as its one variant (Scaled). Phase I (the initial T_α and
// truncated SVD) and the sparse estimator are shared with package als
// through internal/gdcore.
package gd

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/distributed"
	"github.com/rpca-gd/rpca/internal/gdcore"
	"github.com/rpca-gd/rpca/internal/param"
)

// Method is the paper's gradient method. The zero value uses the defaults
// documented on each field. Every field is read in every mode.
type Method struct {
	// Scaled takes scaled gradient steps, U + η/p·E·V(VᵀV)⁻¹ (Tong, Ma,
	// Chi 2021; Name "scaledgd"), whose speed does not depend on the
	// condition number of M, in place of the paper's step U + η·E·V
	// (lines 7–8 of Algorithms 1 and 2).
	Scaled bool

	// Gamma is γ: the iterations estimate S_t = T_{γα}(Y − U_tV_tᵀ)
	// (Algorithm 1 line 6; T_{γpα} in Algorithm 2). 0 means 2 for a fully
	// observed Y (Theorem 2's value) and 3 for partial observations
	// (Theorem 4's value).
	Gamma float64

	// StepConst is c in the step size η = c/σ̂₁ of the paper's step, σ̂₁
	// the top singular value of the initial SVD, or the step η itself of
	// the scaled step. 0 means DefaultStepDense (Algorithm 1),
	// DefaultStepPartial (Algorithm 2) or DefaultStepScaled.
	StepConst float64

	// Mu is the incoherence μ of the constraint sets of eq. (set): rows
	// of U are kept within √(2μr/d1)·‖U₀‖op and rows of V within
	// √(2μr/d2)·‖V₀‖op (for the scaled step in the metric of the other
	// factor). 0 means 10 (the paper's video setting).
	Mu float64

	// NoProjection switches the projections Π_𝒰, Π_𝒱 off.
	NoProjection bool

	// Step is the step rule: StepFixed takes the step as it is (the
	// paper's rule); StepBacktracking halves it until the objective with
	// S_t fixed falls (Armijo), so the objective never rises within an
	// iteration. "" means StepBacktracking for partial observations and
	// StepFixed for a fully observed Y.
	Step StepRule

	// Balance is the weight of the balancing term −Balance·η·U(UᵀU − VᵀV)
	// in the paper's step. 0 means 1/2 for Algorithm 1 and 1/16 for
	// Algorithm 2, the paper's constants. With Scaled, 0 means none (the
	// scaled step does not need one), and a positive Balance adds the
	// same term to the direction before its scaling by (VᵀV)⁻¹, (UᵀU)⁻¹.
	Balance float64

	// Ridge is λ of a ridge penalty (λ/2)(‖U‖²_F + ‖V‖²_F) added to the
	// loss (both divided by p, like the loss of Algorithm 2). Not in the
	// paper. 0 leaves it out.
	Ridge float64

	// SVDTol is the relative accuracy of the initial truncated SVD (line 2
	// of Algorithms 1 and 2); 0 means DefaultSVDTol for Algorithm 1 and
	// DefaultSVDTolPartial for Algorithm 2.
	SVDTol float64

	// PerLine, for partial observations, makes T keep a fraction of each
	// line's observed entries: ⌊γα·n⌋ of a row or column with n observed
	// entries (⌊2α·n⌋ in the initialization), in place of the paper's
	// ⌊γpα·d⌋ for every line of length d. Not available with
	// SolveDistributed.
	PerLine bool

	// Start, when not nil, replaces Phase I: the iterations start from its
	// factors (d1×r and d2×r), and σ̂₁ is the top singular value of
	// U₀V₀ᵀ.
	Start *rpca.Start

	// Resume, when not nil, goes on from a state that OnCheckpoint was
	// given, in place of Phase I: the run takes the steps the run that
	// saved it would have taken, and ends with its answer. The problem,
	// rank, α and Scaled must be those of that run (an error wrapping
	// ErrCheckpoint otherwise); the stopping rules may differ. Not with
	// Start.
	Resume *Checkpoint

	// OnCheckpoint, when not nil, is called with the state after Phase I
	// and after every iteration that no stopping rule ended (not again
	// for the state a run resumed from). The state is the caller's to
	// keep; an error ends the run with that error.
	OnCheckpoint func(*Checkpoint) error
}

// Checkpoint is the state of Phase II after an iteration: the factors,
// σ̂₁ and the location of Phase I, the step rule's state, the history,
// and what identifies the problem. encoding/gob stores it exactly.
type Checkpoint = gdcore.Checkpoint

// ErrCheckpoint is wrapped by the error of a Resume that is not a state
// of the problem and settings it is given with.
var ErrCheckpoint = gdcore.ErrCheckpoint

// ErrResumeStart: Resume and Start both set (each replaces Phase I).
var ErrResumeStart = gdcore.ErrResumeStart

// StepRule selects how the steps are sized.
type StepRule string

// The step rules.
const (
	StepFixed        StepRule = "fixed"
	StepBacktracking StepRule = "backtracking"
)

// Defaults of the step and of the initial SVD, chosen by measurement on
// the paper's synthetic model (docs/performance.md).
const (
	DefaultStepDense     = gdcore.DefaultStepDense
	DefaultStepPartial   = gdcore.DefaultStepPartial
	DefaultStepScaled    = gdcore.DefaultStepScaled
	DefaultSVDTol        = gdcore.DefaultSVDTol
	DefaultSVDTolPartial = gdcore.DefaultSVDTolPartial
)

// DefaultStop are the default stopping rules: at most 1000 iterations,
// relative residual 1e-9, or a relative squared factor change still to go
// of 1e-16.
var DefaultStop = gdcore.DefaultGDStop

func (m *Method) core() *gdcore.GD {
	u := gdcore.UpdatePaper
	if m.Scaled {
		u = gdcore.UpdateScaled
	}
	return &gdcore.GD{Update: u, Gamma: m.Gamma, StepConst: m.StepConst, Mu: m.Mu, NoProjection: m.NoProjection,
		Step: gdcore.StepRule(m.Step), Balance: m.Balance, Ridge: m.Ridge,
		SVDTol: m.SVDTol, PerLine: m.PerLine, Start: m.Start, Resume: m.Resume, OnCheckpoint: m.OnCheckpoint}
}

// Checkpointing reports whether m saves or resumes a state
// ([rpca.Checkpointer]: Solve then runs it in one frame).
func (m *Method) Checkpointing() bool { return m.Resume != nil || m.OnCheckpoint != nil }

// Name returns "gd", or "scaledgd" with Scaled.
func (m *Method) Name() string {
	if m.Scaled {
		return "scaledgd"
	}
	return "gd"
}

// Capabilities: full and partial observations, α used, rank-r factors;
// 5 d1×d2 float64 matrices for a dense Y.
func (m *Method) Capabilities() rpca.Capabilities { return m.core().Capabilities() }

// CheckParams checks m's fields for p and s ([rpca.ParamChecker]).
func (m *Method) CheckParams(p *rpca.Problem, s rpca.Settings) error {
	return m.core().CheckParams(p, s)
}

// Solve runs Algorithm 1 on a dense Y, Algorithm 2 on observed entries
// (p is the Observed's Probability when a Sampling drew it, else its Rate).
func (m *Method) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	return publicParams(m.core().Solve(ctx, p, s))
}

// Initialize runs Phase I alone (lines 1–3: the initial sparse estimate
// T_α and the rank-r SVD, U₀ = LΣ^½ and V₀ = RΣ^½) on p, with the checks
// of rpca.Solve, and returns U₀ and V₀ in the units of the data, for
// Start. The first r' columns of a rank-r start are the rank-r' start (up
// to SVDTol).
func (m *Method) Initialize(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Start, error) {
	return m.core().Initialize(ctx, p, s)
}

// WarmStart returns the factors of m.Start ([rpca.WarmStarter]).
func (m *Method) WarmStart() (u, v *mat.Dense) { return m.Start.Factors() }

// WithWarmStart returns a copy of m that starts from U·Vᵀ
// ([rpca.WarmStarter]).
func (m *Method) WithWarmStart(u, v *mat.Dense) rpca.Method {
	cp := *m
	cp.Start, cp.Resume = &rpca.Start{U: u, V: v}, nil
	return &cp
}

// SolveDistributed runs Algorithm 2 on the observed entries that d holds
// ([distributed.Solver]), exactly as Solve runs it on an
// rpca.Observed (the same frame, on a [distributed.Framer], and
// residuals relative to the same clean scale),
// except that T is d's threshold form, entries beyond rpca.GrossSpreads
// are left to T, and the result's S is nil (the sparse part stays with d).
func (m *Method) SolveDistributed(ctx context.Context, d distributed.Store, s rpca.Settings) (*rpca.Result, error) {
	return publicParams(m.core().SolveDistributed(ctx, d, s))
}

// LineThreshold returns the threshold of T in the threshold form of
// distributed.Store on one line with count k: the k-th largest of the
// magnitudes mags, 0 when the line has at most k entries (all its
// non-zeros are kept), and +Inf when k = 0 (none is). It reorders mags.
func LineThreshold(mags []float64, k int) float64 { return gdcore.LineThreshold(mags, k) }

// InSparse reports whether an entry of magnitude a is in T (see
// distributed.Store) given its row's and its column's LineThreshold.
func InSparse(a, rowThreshold, colThreshold float64) bool {
	return gdcore.InSparse(a, rowThreshold, colThreshold)
}

// Params are the effective parameters of a run (rpca.Result.Params).
type Params struct {
	Algorithm    int     `json:"algorithm"`     // 1 (dense Y) or 2 (observed entries)
	Scaled       bool    `json:"scaled"`        // scaled steps
	Backtracking bool    `json:"backtracking"`  // the step rule StepBacktracking
	Projection   bool    `json:"projection"`    // the row-norm projections of Algorithm 1 line 7 / Algorithm 2 line 8
	Gamma        float64 `json:"gamma"`         // γ of T_γα in the iterations
	StepConst    float64 `json:"step_const"`    // c in η = c/σ̂₁ (the step η itself with Scaled)
	Step         float64 `json:"step"`          // η
	Sigma1       float64 `json:"sigma1"`        // σ̂₁ of the initialization
	Mu           float64 `json:"mu"`            // μ of the projection's bound
	Balance      float64 `json:"balance"`       // weight of the balancing term ‖UᵀU − VᵀV‖²_F (with Scaled: 0 unless given)
	P            float64 `json:"p"`             // the sampling rate
	Ridge        float64 `json:"ridge"`         // λ of the ridge penalty
	KRow         int     `json:"k_row"`         // entries T_γα keeps per row
	KCol         int     `json:"k_col"`         // entries T_γα keeps per column
	PerLine      bool    `json:"per_line"`      // T keeps ⌊γα·n⌋ of a line's n observed entries instead of KRow, KCol
	InitLocation float64 `json:"init_location"` // c of the initial T_α on Y − c·11ᵀ
}

// params returns the public report of gdcore's.
func params(q *gdcore.GDParams) *Params {
	return &Params{Algorithm: q.Algorithm, Scaled: q.Scaled, Backtracking: q.Backtracking, Projection: q.Projection,
		Gamma: q.Gamma, StepConst: q.StepConst, Step: q.Step, Sigma1: q.Sigma1, Mu: q.Mu, Balance: q.Balance, P: q.P,
		Ridge: q.Ridge, KRow: q.KRow, KCol: q.KCol, PerLine: q.PerLine, InitLocation: q.InitLocation}
}

// publicParams replaces a result's internal report by Params.
func publicParams(res *rpca.Result, err error) (*rpca.Result, error) {
	if res != nil {
		if q, ok := res.Params.(*gdcore.GDParams); ok {
			res.Params = params(q)
		}
	}
	return res, err
}

// Params are m's settings by name ([rpca.Configurable]).
func (m *Method) Params() []rpca.Param {
	step := fmt.Sprintf("step constant c in η = c/σ̂₁ (0: %g full, %g partial)", DefaultStepDense, DefaultStepPartial)
	if m.Scaled {
		step = fmt.Sprintf("step η of the scaled step (0: %g)", DefaultStepScaled)
	}
	ps := []rpca.Param{
		param.Float(&m.Gamma, "gamma", "γ: the sparse estimator keeps ⌊γα·d⌋ per line in the iterations (0: 2 full, 3 partial)", param.OrDefault),
		param.Float(&m.StepConst, "step", step, param.OrDefault),
		param.Float(&m.Mu, "mu", "incoherence μ of the row-norm constraints (0: 10)", param.OrDefault),
		param.Bool(&m.NoProjection, "no-projection", "switch off the row-norm projections"),
		param.Choice(&m.Step, "step-rule", "fixed (the paper's) or backtracking (halve each step until the objective falls); default: backtracking for partial observations, fixed for a full matrix", "", StepFixed, StepBacktracking),
		param.Float(&m.Ridge, "ridge", "ridge penalty λ/2·(‖U‖² + ‖V‖²) on the factors (0: none); guards against overfitting sparse data such as ratings", param.OrDefault),
	}
	balance := "weight of the balancing term ‖UᵀU − VᵀV‖²_F (0: 1/2 full, 1/16 partial)"
	if m.Scaled {
		balance = "weight of a balancing term ‖UᵀU − VᵀV‖²_F added to the scaled step (0: none)"
	}
	return append(ps, param.Float(&m.Balance, "balance", balance, param.OrDefault))
}
