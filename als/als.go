// Package als is alternating least squares with the sparse estimator of
// Yi, Park, Chen and Caramanis (NeurIPS 2016), as an [rpca.Method]: after
// T_{γα} (Algorithm 2 line 6) sets the suspected corruptions aside, every
// row of U is the ridge least-squares fit of its line's other entries,
// then every row of V the same with the new U. It has no step size,
// cannot diverge, and needs tens of sweeps where the gradient steps need
// hundreds. Not in the paper; its options (a decaying ridge, biases per
// row and column, Huber weights, SVD++'s implicit factors) serve
// partially observed data such as ratings. Phase I is the paper's, shared
// with package gd through internal/gdcore.
package als

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/distributed"
	"github.com/rpca-gd/rpca/internal/gdcore"
	"github.com/rpca-gd/rpca/internal/param"
)

// Method is ALS. The zero value uses the defaults documented on each
// field. A dense Y is treated as observed everywhere (54 bytes an entry).
type Method struct {
	// Gamma is γ of T_{γα} in the sweeps; 0 means 3 (Theorem 4's value).
	Gamma float64

	// Ridge is λ of the ridge penalty (λ/2)(‖U‖²_F + ‖V‖²_F) of every
	// line's fit; 0 leaves it out (with RidgeDecay < 1: starts it at
	// DefaultDecayingRidge).
	Ridge float64

	// RidgeDecay ρ ∈ (0, 1] makes the ridge a continuation: sweep t
	// solves with λ·ρᵗ, so the penalty steadies the first sweeps and
	// vanishes from the solution. 0 means 1, a fixed λ. With Ridge 0 the
	// decay starts from DefaultDecayingRidge.
	RidgeDecay float64

	// SVDTol is the relative accuracy of the initial truncated SVD; 0
	// means 1e-3 (Algorithm 2's default).
	SVDTol float64

	// PerLine makes T keep ⌊γα·n⌋ of a line's n observed entries, in
	// place of ⌊γpα·d⌋ for every line (ratings are far from uniform).
	PerLine bool

	// Start, when not nil, replaces Phase I (see gd.Method.Start).
	Start *rpca.Start

	// Biases fits a bias per row and per column jointly with the rank-r
	// factors: M = U₀V₀ᵀ + b1ᵀ + 1cᵀ, returned as U = [U₀ b 1] and
	// V = [V₀ 1 c] (r + 2 columns). The biases carry the ridge λ.
	Biases bool

	// Huber replaces T_{γα} of the sweeps by Huber weights: with
	// τ_t = Huber × the median absolute residual, an entry whose residual
	// r exceeds τ_t weighs τ_t/|r| (iteratively reweighted least squares
	// for the Huber loss); S is reported as the residuals above 3τ_t. It
	// needs α > 0; with Implicit, the implicit factors' step is weighted
	// the same way. 0 keeps T; 3 is a sound value.
	Huber float64

	// Implicit is λ_y of SVD++'s implicit factors (Koren, KDD 2008):
	// u_i = p_i + |Φ_i|^(−½) Σ_{l ∈ Φ_i} y_l, so that which columns a row
	// observed informs its factor. U is returned with it added in. 0
	// leaves it out.
	Implicit float64

	// Resume, when not nil, goes on from a state that OnCheckpoint was
	// given, in place of Phase I (see gd.Method.Resume): the sweeps it
	// takes, with the ridge at its decay, are those of the run that saved
	// it. Not with Start.
	Resume *Checkpoint

	// OnCheckpoint, when not nil, is called with the state after Phase I
	// and after every sweep that no stopping rule ended (see
	// gd.Method.OnCheckpoint); the state holds the implicit factors of
	// Implicit too.
	OnCheckpoint func(*Checkpoint) error
}

// Checkpoint is the state of the sweeps after one of them (see
// gd.Checkpoint).
type Checkpoint = gdcore.Checkpoint

// DefaultDecayingRidge is the ridge λ₀ that RidgeDecay < 1 starts from
// when Ridge is 0.
const DefaultDecayingRidge = gdcore.DefaultDecayingRidge

// DefaultStop are the default stopping rules: at most 200 sweeps,
// relative residual 1e-9, or a relative squared factor change still to go
// of 1e-14.
var DefaultStop = gdcore.DefaultALSStop

func (m *Method) core() *gdcore.GD {
	return &gdcore.GD{Update: gdcore.UpdateALS, Gamma: m.Gamma, Ridge: m.Ridge, RidgeDecay: m.RidgeDecay,
		SVDTol: m.SVDTol, PerLine: m.PerLine, Start: m.Start, Resume: m.Resume, OnCheckpoint: m.OnCheckpoint,
		Biases: m.Biases, Huber: m.Huber, Implicit: m.Implicit}
}

// Checkpointing reports whether m saves or resumes a state
// ([rpca.Checkpointer]: Solve then runs it in one frame).
func (m *Method) Checkpointing() bool { return m.Resume != nil || m.OnCheckpoint != nil }

// Name returns "als".
func (m *Method) Name() string { return "als" }

// Capabilities: full and partial observations, α used; rank-r factors,
// or r + 2 with Biases (which also carries its own offsets).
func (m *Method) Capabilities() rpca.Capabilities { return m.core().Capabilities() }

// CheckParams checks m's fields for p and s ([rpca.ParamChecker]).
func (m *Method) CheckParams(p *rpca.Problem, s rpca.Settings) error {
	return m.core().CheckParams(p, s)
}

// Solve runs the sweeps.
func (m *Method) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	return publicParams(m.core().Solve(ctx, p, s))
}

// SolveDistributed runs the sweeps on the observed entries that d holds
// ([distributed.Solver]), as Solve runs them on an rpca.Observed,
// when d does the half-sweeps ([distributed.ALSStore]), with the
// exceptions of gd.Method.SolveDistributed.
// PerLine, Biases, Huber and Implicit are not available there.
func (m *Method) SolveDistributed(ctx context.Context, d distributed.Store, s rpca.Settings) (*rpca.Result, error) {
	return publicParams(m.core().SolveDistributed(ctx, d, s))
}

// LineSolver fits one line of a half-sweep (distributed.ALSStore's
// SolveLines) as Solve's sweeps do, for a store that runs them.
type LineSolver = gdcore.LineSolver

// NewLineSolver returns a LineSolver for lines of rank r.
func NewLineSolver(r int) *LineSolver { return gdcore.NewLineSolver(r) }

// Initialize runs Phase I alone (see gd.Method.Initialize).
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

// Params are the effective parameters of a run (rpca.Result.Params).
type Params struct {
	Gamma        float64 `json:"gamma"`         // γ of T_γα in the sweeps
	Sigma1       float64 `json:"sigma1"`        // σ̂₁ of the initialization
	P            float64 `json:"p"`             // the sampling rate
	Ridge        float64 `json:"ridge"`         // λ of the ridge penalty
	RidgeDecay   float64 `json:"ridge_decay"`   // ρ of the ridge λ·ρᵗ of sweep t (1: fixed)
	KRow         int     `json:"k_row"`         // entries T_γα keeps per row
	KCol         int     `json:"k_col"`         // entries T_γα keeps per column
	PerLine      bool    `json:"per_line"`      // T keeps ⌊γα·n⌋ of a line's n observed entries instead of KRow, KCol
	Biases       bool    `json:"biases"`        // U and V end with the bias columns
	Huber        float64 `json:"huber"`         // Huber weights at this multiple of the median absolute residual in place of T_γα, or 0
	Implicit     float64 `json:"implicit"`      // λ_y of SVD++'s implicit factors, or 0
	InitLocation float64 `json:"init_location"` // c of the initial T_α on Y − c·11ᵀ
}

// publicParams replaces a result's internal report by Params.
func publicParams(res *rpca.Result, err error) (*rpca.Result, error) {
	if res != nil {
		if q, ok := res.Params.(*gdcore.GDParams); ok {
			res.Params = &Params{Gamma: q.Gamma, Sigma1: q.Sigma1, P: q.P, Ridge: q.Ridge, RidgeDecay: q.RidgeDecay,
				KRow: q.KRow, KCol: q.KCol, PerLine: q.PerLine, Biases: q.Biases, Huber: q.Huber, Implicit: q.Implicit,
				InitLocation: q.InitLocation}
		}
	}
	return res, err
}

// Params are m's settings by name ([rpca.Configurable]).
func (m *Method) Params() []rpca.Param {
	return []rpca.Param{
		param.Float(&m.Gamma, "gamma", "γ: the sparse estimator keeps ⌊γα·d⌋ per line in the sweeps (0: 3)", param.OrDefault),
		param.Float(&m.Ridge, "ridge", "ridge penalty λ/2·(‖U‖² + ‖V‖²) on the factors (0: none); guards against overfitting sparse data such as ratings", param.OrDefault),
		param.Float(&m.RidgeDecay, "ridge-decay", "ρ, the ridge of sweep t is λ·ρᵗ (0 or 1: fixed; without --ridge, λ starts at 0.01); with --huber 3 and --ridge-decay 0.8 it converges on partial observations of an ill-conditioned M (docs/performance.md)", param.Unit),
		param.Float(&m.Huber, "huber", "Huber weights at this multiple of the median absolute residual in place of the count-based sparse estimator (0: off; 3 is sound)", param.OrDefault),
		param.Float(&m.Implicit, "implicit", "λ_y of SVD++'s implicit factors: which columns a row has observed (which movies a user rated) shape its factor (0: off)", param.OrDefault),
	}
}
