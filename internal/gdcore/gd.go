package gdcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/track"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/access"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/internal/sparsify"
	"github.com/rpca-gd/rpca/internal/tsvd"
)

// GD is the union of the two public methods, gd.Method (the paper's
// Algorithms 1 and 2, and scaled steps) and als.Method (alternating least
// squares), which build it: they share Phase I, the sparse estimator, the
// stopping rules and the driver. Each field is documented where the user
// sets it, on gd.Method or als.Method; Update says which method it is.
type GD struct {
	Gamma        float64                 // γ of T_γα in the iterations
	Update       UpdateRule              // UpdatePaper, UpdateScaled (gd.Method) or UpdateALS (als.Method)
	StepConst    float64                 // c in η = c/σ̂₁, or η of the scaled step
	Mu           float64                 // μ of the constraint sets
	NoProjection bool                    // no projections Π_𝒰, Π_𝒱
	Step         StepRule                // StepFixed or StepBacktracking
	Balance      float64                 // weight of the balancing term
	Ridge        float64                 // λ of the ridge (λ/2)(‖U‖² + ‖V‖²)
	RidgeDecay   float64                 // ρ of the ridge λ·ρᵗ of sweep t (ALS)
	SVDTol       float64                 // accuracy of the initial truncated SVD
	PerLine      bool                    // T keeps a fraction of each line's observed entries
	Start        *rpca.Start             // factors that replace Phase I
	Resume       *Checkpoint             // a state of Phase II to go on from
	OnCheckpoint func(*Checkpoint) error // called with the state after every iteration
	Biases       bool                    // a bias per row and per column (ALS)
	Huber        float64                 // Huber weights in place of T (ALS)
	Implicit     float64                 // λ_y of SVD++'s implicit factors (ALS)
}

// WarmStart returns the factors of g.Start, nil when it is not set
// ([WarmStarter]).
func (g *GD) WarmStart() (u, v *mat.Dense) {
	if g.Start == nil {
		return nil, nil
	}
	return g.Start.U, g.Start.V
}

// WithWarmStart returns a copy of g that starts from U·Vᵀ ([WarmStarter]).
func (g *GD) WithWarmStart(u, v *mat.Dense) rpca.Method {
	cp := *g
	cp.Start = &rpca.Start{U: u, V: v}
	return &cp
}

// liveContext returns ctx (context.Background() for nil) and its error
// if it is already done.
func liveContext(ctx context.Context) (context.Context, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return ctx, ctx.Err()
}

// finite reports whether every entry of m is finite (true for nil).
func finite(m *mat.Dense) bool {
	if m == nil {
		return true
	}
	raw := m.RawMatrix()
	for i := range raw.Rows {
		for _, x := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
	}
	return true
}

// startFactors copies a warm start into the solver's layout, balanced,
// and returns σ₁(UVᵀ), the top singular value of R_U·R_Vᵀ for the thin QR
// factors U = Q_U·R_U and V = Q_V·R_V.
func startFactors(w *rpca.Start, q *gdParams) (u, v blas64.General, sigma1 float64, err error) {
	if w.U == nil || w.V == nil {
		return u, v, 0, errors.New("Start needs both factors")
	}
	ur, uc := w.U.Dims()
	vr, vc := w.V.Dims()
	if ur != q.d1 || vr != q.d2 || uc != q.rank || vc != q.rank {
		return u, v, 0, fmt.Errorf("Start is %d×%d and %d×%d; want %d×%d and %d×%d (rank %d)", ur, uc, vr, vc, q.d1, q.rank, q.d2, q.rank, q.rank)
	}
	if !finite(w.U) || !finite(w.V) {
		return u, v, 0, errors.New("Start has a value that is not finite")
	}
	var qu, qv mat.QR
	qu.Factorize(w.U)
	qv.Factorize(w.V)
	var ru, rv, core mat.Dense
	qu.RTo(&ru)
	qv.RTo(&rv)
	r := q.rank
	ru0, rv0 := ru.Slice(0, r, 0, r), rv.Slice(0, r, 0, r)
	core.Mul(ru0, rv0.T())
	var sv mat.SVD
	if !sv.Factorize(&core, mat.SVDFull) {
		return u, v, 0, fmt.Errorf("rpca: %w: the SVD of Start's %d×%d core failed", rpca.ErrDiverged, q.rank, q.rank)
	}
	sig := sv.Values(nil)
	sigma1 = sig[0]
	if !(sigma1 > 0) {
		return u, v, 0, errors.New("Start is zero")
	}
	// Balance the factors as Phase I does (U₀ = ŨΣ^½, V₀ = ṼΣ^½, so that
	// U₀ᵀU₀ = V₀ᵀV₀): with R_U·R_Vᵀ = A·Σ·Bᵀ, U·R_U⁻¹·A·Σ^½ and
	// V·R_V⁻¹·B·Σ^½ have the same product U·Vᵀ. A start whose scales are
	// apart (U·c with V/c) would otherwise make the fixed step diverge. A
	// rank-deficient factor is taken as it is.
	u, v = kernels.NewGeneral(q.d1, r), kernels.NewGeneral(q.d2, r)
	var a, b, tu, tv mat.Dense
	sv.UTo(&a)
	sv.VTo(&b)
	half := make([]float64, r)
	for k, x := range sig {
		half[k] = math.Sqrt(x)
	}
	scaleCols := func(m *mat.Dense) {
		m.Apply(func(_, j int, x float64) float64 { return x * half[j] }, m)
	}
	scaleCols(&a)
	scaleCols(&b)
	if tu.Solve(ru0, &a) != nil || tv.Solve(rv0, &b) != nil || !finite(&tu) || !finite(&tv) {
		kernels.Dense(u).Copy(w.U)
		kernels.Dense(v).Copy(w.V)
		return u, v, sigma1, nil
	}
	kernels.Dense(u).Mul(w.U, &tu)
	kernels.Dense(v).Mul(w.V, &tv)
	return u, v, sigma1, nil
}

// DefaultSVDTol is the default accuracy of Algorithm 1's initial SVD. The
// starting point it gives is only as good as T_α's estimate of S
// (relative error about 0.2 on the paper's model at d = 2000), so a
// tighter SVD buys nothing; at d = 5000 the SVD takes 128 ms at 1e-6
// against 177 ms at 1e-10 (docs/performance.md).
const DefaultSVDTol = 1e-6

// DefaultSVDTolPartial is the default accuracy of Algorithm 2's initial
// SVD. Its starting point is further off still — relative error about 0.5
// at the paper's sampling rate (Figure 1(b)), from the 1/p scaling of a
// sparse sample — so 1e-3 loses nothing: at d = 10⁵ it cut the
// initialization from 4.7 s to 3.3 s against 1e-6, with the same
// starting error (0.544) and the same 115 iterations to 1e-4.
const DefaultSVDTolPartial = 1e-3

// Default step constants c of η = c/σ̂₁, chosen by measurement on the
// paper's synthetic model (see docs/performance.md).
const (
	DefaultStepDense = 0.5
	// DefaultStepPartial: c = 0.75 needs about 35% fewer iterations than
	// 0.5 on every partial problem measured, and c = 1 stalls or
	// diverges on three of five problem families.
	DefaultStepPartial = 0.75
)

// NoiseChange: a run stops with rpca.StopNoiseFloor once the steps have
// stopped shrinking and their relative squared change is below
// (NoiseChange·ρ)², ρ the relative residual, for the gradient updates
// with α > 0 (without a sparse part the steps shrink to rounding and
// FactorTol applies; ALS's steps include its drift along the
// factorizations of one U·Vᵀ, which plateaus on exact data too). On
// noisy data ρ stays at the noise level while the support of S keeps
// changing among entries near the threshold, so the factors never settle to FactorTol; a fit is
// accurate only to about ρ, and steps of a thousandth of that, no longer
// shrinking, change nothing a user can see. A slow approach (κ ≫ 1),
// whose steps are as small but still shrink, is left to run; a method
// stuck at a wrong point, whose steps also plateau, is told apart by the
// verification, which accepts the stop only when the residual is noise.
const NoiseChange = 1e-3

// DefaultGDStop are the default stopping rules of GD: at most 1000
// iterations, relative residual 1e-9, or relative factor change 1e-16 (a step of 1e-8 relative to the factors).
var DefaultGDStop = rpca.Stop{MaxIter: 1000, ResidualTol: 1e-9, FactorTol: 1e-16}

// DefaultALSStop is the stopping rule of GD with UpdateALS when Settings.Stop
// leaves a field 0: 200 iterations, relative residual 1e-9, or relative
// factor change 1e-14 (a sweep that moves the factors by 1e-7 of their
// size; at 1e-10 a rank-3 matrix plus an offset of 10³, condition number
// about 10⁴, stopped 3·10⁻⁶ away from it). Each sweep solves for the factors exactly, so it needs tens of
// sweeps where the gradient steps need hundreds (docs/performance.md).
// The rule is global, and the error of the worst line lags it: rpca.Solve
// lets a converged answer that fails the verification go on once. A
// tighter rule is not reachable everywhere: with Biases the factors keep
// drifting above 1e-15 on exact data.
var DefaultALSStop = rpca.Stop{MaxIter: 200, ResidualTol: 1e-9, FactorTol: 1e-14}

// Backtracking line search (StepBacktracking): the Armijo constant and
// the largest number of step halvings per iteration.
const (
	armijo        = 1e-4
	maxBacktracks = 50
)

const gdDivergenceHint = "the step size may be too large (lower StepConst, or use Step = StepBacktracking), or the rank or alpha may be wrong for this data"

// StepRule selects how GD sets the length of each step.
type StepRule string

// The step rules of GD.
const (
	StepFixed        StepRule = "fixed"
	StepBacktracking StepRule = "backtracking"
)

// Name returns "gd" for the paper's update, "scaledgd" for the scaled one
// and "als" for alternating least squares.
func (g *GD) Name() string {
	switch g.Update {
	case UpdateScaled:
		return "scaledgd"
	case UpdateALS:
		return "als"
	}
	return "gd"
}

// Capabilities: GD works on full and partial observations, uses α and
// returns rank-r factors (r + 2 with Biases). UpdateALS on a dense Y
// keeps all of it as observed entries: Φ in both orders (16 bytes an
// entry), the residual, S_t's support and T's column copy (17), and its
// own column copy (13), besides Y (counted from the arrays, not
// measured).
func (g *GD) Capabilities() rpca.Capabilities {
	if g.Update == UpdateALS {
		return rpca.Capabilities{UsesAlpha: true, FixedRank: !g.Biases, FitsOffset: g.Biases, BytesPerEntry: 54}
	}
	return rpca.Capabilities{UsesAlpha: true, FixedRank: true, BytesPerEntry: 5 * 8}
}

// gdParams are the effective parameters of one run.
type gdParams struct {
	partial       bool
	scaled        bool
	als           bool
	biases        bool // GD.Biases: two more factor columns (see alsUpdate)
	backtrack     bool
	gamma, c, mu  float64
	balance, p    float64
	ridge         float64
	ridgeDecay    float64 // GD.RidgeDecay: ρ of the ridge λ·ρᵗ of ALS sweep t, 1 for a fixed λ
	project       bool
	rank, workers int
	alpha         float64
	huber         float64 // GD.Huber: the multiple of the median absolute residual, or 0
	implicit      float64 // GD.Implicit: λ_y, or 0
	svdTol        float64
	seed          uint64
	kRow, kCol    int     // counts of T in the iterations
	kRow0, kCol0  int     // counts of T in the initialization (0 when α = 0)
	frac, frac0   float64 // > 0 (GD.PerLine): T keeps these fractions of each line's observed entries instead
	d1, d2        int
}

// CheckParams checks g's fields and their combination for p and s
// ([ParamChecker]).
func (g *GD) CheckParams(p *rpca.Problem, s rpca.Settings) error {
	_, err := g.params(p, s)
	return err
}

func (g *GD) params(p *rpca.Problem, s rpca.Settings) (gdParams, error) {
	d1, d2 := p.Dims()
	rate := 0.0 // a dense Y
	if p.Observed != nil {
		// The paper's p: the probability of the draw when it is known,
		// else the fraction observed.
		rate = cmp.Or(p.Observed.Probability(), p.Observed.Rate())
	}
	return g.paramsFor(d1, d2, rate, s)
}

// paramsFor validates g's fields and fills in the defaults for a d1×d2
// problem observed at rate (0: a dense Y).
func (g *GD) paramsFor(d1, d2 int, rate float64, s rpca.Settings) (gdParams, error) {
	name := "gd" // the package the user built the method from
	if g.Update == UpdateALS {
		name = "als"
	}
	q := gdParams{
		rank: s.Rank, alpha: s.Alpha, workers: kernels.Workers(s.Workers), seed: s.Seed,
		gamma: g.Gamma, c: g.StepConst, mu: g.Mu, balance: g.Balance, project: !g.NoProjection,
		svdTol: g.SVDTol, d1: d1, d2: d2, p: 1, ridge: g.Ridge, ridgeDecay: 1,
	}
	if err := g.checkFields(); err != nil {
		return q, fmt.Errorf("%s: %w", name, err)
	}
	q.scaled, q.als = g.Update == UpdateScaled, g.Update == UpdateALS
	q.partial, q.p = rate > 0, cmp.Or(rate, 1)
	if err := g.resolveALS(&q, s.Alpha); err != nil {
		return q, fmt.Errorf("%s: %w", name, err)
	}
	q.defaults(g.Step)
	if q.gamma*q.alpha >= 1 {
		return q, fmt.Errorf("%s: γ·α = %g·%g ≥ 1: the sparse estimator T_{γα} would keep every entry and leave nothing to the low-rank part; lower α (--alpha) or γ (--gamma; default 2, or 3 with partial observations)", name, q.gamma, q.alpha)
	}
	q.counts(g.PerLine)
	return q, nil
}

// checkFields refuses a field no run can use: a number that is not
// finite and non-negative, an unknown step rule or update.
func (g *GD) checkFields() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"Gamma (--gamma)", g.Gamma}, {"StepConst (--step)", g.StepConst}, {"Mu (--mu)", g.Mu}, {"Balance (--balance)", g.Balance},
		{"SVDTol", g.SVDTol}, {"Ridge (--ridge)", g.Ridge}, {"Huber (--huber)", g.Huber}, {"Implicit (--implicit)", g.Implicit}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("%s must be a finite non-negative number, got %v", f.name, f.v)
		}
	}
	return g.checkChoices()
}

// checkChoices refuses an unknown step rule or update and a decay outside
// its range.
func (g *GD) checkChoices() error {
	switch {
	case g.Step != "" && g.Step != StepFixed && g.Step != StepBacktracking:
		return fmt.Errorf("unknown Step (--step-rule) %q (want %q or %q)", g.Step, StepFixed, StepBacktracking)
	case g.Update != "" && g.Update != UpdatePaper && g.Update != UpdateScaled && g.Update != UpdateALS:
		return fmt.Errorf("unknown update %q (want %q, %q or %q)", g.Update, UpdatePaper, UpdateScaled, UpdateALS)
	case !(g.RidgeDecay >= 0 && g.RidgeDecay <= 1):
		return fmt.Errorf("RidgeDecay (--ridge-decay) must be in [0, 1] (0: a fixed ridge), got %v", g.RidgeDecay)
	case g.Resume != nil && g.Start != nil:
		return ErrResumeStart
	}
	return nil
}

// DefaultDecayingRidge is the ridge λ₀ a decaying ridge (RidgeDecay < 1)
// starts from when Ridge is 0, in the units Solve scales the data to
// (largest magnitude in [1, 2)): the value measured with Huber weights on
// partial observations of a κ = 100 matrix, where λ₀ from 0.001 to 1
// changed only the number of sweeps (docs/performance.md, "A decaying
// ridge").
const DefaultDecayingRidge = 0.01

// resolveALS sets the least-squares options. Package gd has no Biases,
// Huber, Implicit or RidgeDecay, and package als no step: the only
// combination left to refuse is Huber at α = 0 (it weighs the fits
// against the corruptions that α = 0 says there are none of). A decay of
// no ridge starts from DefaultDecayingRidge; Huber weights with Implicit
// weigh the implicit factors' step too.
func (g *GD) resolveALS(q *gdParams, alpha float64) error {
	if g.Huber > 0 && alpha == 0 {
		return errors.New("Huber (--huber) weighs the fits against corruptions, and α = 0 says there are none")
	}
	q.biases = g.Biases && q.als
	q.huber, q.implicit = g.Huber, g.Implicit
	if g.RidgeDecay > 0 {
		q.ridgeDecay = g.RidgeDecay
	}
	if q.ridgeDecay < 1 && q.ridge == 0 {
		q.ridge = DefaultDecayingRidge
	}
	if q.als {
		q.partial = true  // every entry of a dense Y counts as observed
		q.project = false // no step to project, nor a step constant
	}
	return nil
}

// defaults fills in the zero fields: γ, the step constant, μ, the SVD's
// tolerance and the balancing weight, by algorithm and update, and the
// step rule.
func (q *gdParams) defaults(rule StepRule) {
	q.backtrack = !q.als && (rule == StepBacktracking || (rule == "" && q.partial))
	byAlg := func(v, full, partial float64) float64 {
		switch {
		case v != 0:
			return v
		case q.partial:
			return partial
		}
		return full
	}
	q.gamma = byAlg(q.gamma, 2, 3)
	switch {
	case q.als: // no step: StepConst is not read
		q.c = 0
	case q.scaled:
		q.c = cmp.Or(q.c, DefaultStepScaled)
	default:
		q.c = byAlg(q.c, DefaultStepDense, DefaultStepPartial)
	}
	q.mu = cmp.Or(q.mu, 10)
	q.svdTol = byAlg(q.svdTol, DefaultSVDTol, DefaultSVDTolPartial)
	if !q.scaled { // the scaled step balances only when asked to
		q.balance = byAlg(q.balance, 0.5, 1.0/16)
	}
}

// counts sets the entries T keeps per line: in the initialization
// (⌊α·d⌋, or ⌊2pα·d⌋ for Algorithm 2) and in the iterations (⌊γpα·d⌋),
// or the fractions of each line's observed entries with perLine.
func (q *gdParams) counts(perLine bool) {
	d1, d2 := q.d1, q.d2
	pa := q.p * q.alpha
	if q.partial {
		q.kRow0, q.kCol0 = sparsify.Count(2*pa, d2), sparsify.Count(2*pa, d1)
	} else {
		q.kRow0, q.kCol0 = sparsify.Count(q.alpha, d2), sparsify.Count(q.alpha, d1)
	}
	q.kRow, q.kCol = sparsify.Count(q.gamma*pa, d2), sparsify.Count(q.gamma*pa, d1)
	if q.partial && perLine && q.alpha > 0 {
		q.frac0, q.frac = 2*q.alpha, q.gamma*q.alpha
	}
}

// initTrims reports whether the initialization's T sets anything aside.
func (q *gdParams) initTrims() bool { return q.frac0 > 0 || q.kRow0 > 0 && q.kCol0 > 0 }

// GDParams are the effective parameters of a GD run (Result.Params).
type GDParams struct {
	Algorithm    int     `json:"algorithm"`     // 1 (dense Y) or 2 (observed entries)
	Scaled       bool    `json:"scaled"`        // the scaled update (UpdateScaled)
	ALS          bool    `json:"als"`           // alternating least squares (UpdateALS)
	Biases       bool    `json:"biases"`        // GD.Biases: U and V end with the bias columns
	Backtracking bool    `json:"backtracking"`  // the step rule StepBacktracking
	Projection   bool    `json:"projection"`    // the row-norm projections of Algorithm 1 line 7 / Algorithm 2 line 8
	Gamma        float64 `json:"gamma"`         // γ of T_γα in the iterations
	StepConst    float64 `json:"step_const"`    // c in η = c/σ̂₁
	Step         float64 `json:"step"`          // η
	Sigma1       float64 `json:"sigma1"`        // σ̂₁ of the initialization
	Mu           float64 `json:"mu"`            // μ of the projection's bound
	Balance      float64 `json:"balance"`       // weight of the balancing term ‖UᵀU − VᵀV‖²_F
	P            float64 `json:"p"`             // the sampling rate
	Ridge        float64 `json:"ridge"`         // λ of the ridge penalty
	RidgeDecay   float64 `json:"ridge_decay"`   // ρ of the ridge λ·ρᵗ of ALS sweep t (1: fixed)
	KRow         int     `json:"k_row"`         // entries T_γα keeps per row
	KCol         int     `json:"k_col"`         // entries T_γα keeps per column
	PerLine      bool    `json:"per_line"`      // GD.PerLine: T keeps ⌊γα·n⌋ of a line's n observed entries instead of KRow, KCol
	Huber        float64 `json:"huber"`         // GD.Huber: Huber weights at this multiple of the median absolute residual in place of T_γα, or 0
	Implicit     float64 `json:"implicit"`      // GD.Implicit: λ_y of SVD++'s implicit factors, or 0
	InitLocation float64 `json:"init_location"` // c of the initial T_α on Y − c·11ᵀ
}

// report returns the parameters with the step η and σ̂₁ of the run.
func (q *gdParams) report(eta, sigma1, loc float64) *GDParams {
	alg := 1
	if q.partial {
		alg = 2
	}
	return &GDParams{Algorithm: alg, Scaled: q.scaled, ALS: q.als, Biases: q.biases, Backtracking: q.backtrack, Projection: q.project,
		Gamma: q.gamma, StepConst: q.c, Step: eta, Sigma1: sigma1, Mu: q.mu, Balance: q.balance, P: q.p,
		Ridge: q.ridge, RidgeDecay: q.ridgeDecay, KRow: q.kRow, KCol: q.kCol, PerLine: q.frac > 0, Huber: q.huber, Implicit: q.implicit, InitLocation: loc}
}

// Solve runs Algorithm 1 (dense Y) or Algorithm 2 (observed entries).
func (g *GD) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	if err := p.CheckShape(); err != nil {
		return nil, rpca.BadInput(err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	q, err := g.params(p, s)
	if err != nil {
		return nil, rpca.BadSettings(err)
	}
	def := DefaultGDStop
	if q.als {
		def = DefaultALSStop
	}
	tr := track.New(ctx, p, s, def, gdDivergenceHint)
	st, err := g.state(p, s, &q)
	if err != nil {
		return nil, err
	}
	return g.run(ctx, tr, st, &q)
}

// state returns the data layout of Algorithm 1 (dense) or 2 (partial).
func (g *GD) state(p *rpca.Problem, s rpca.Settings, q *gdParams) (gdState, error) {
	if !q.partial {
		return newDenseState(p.Dense.RawMatrix(), q), nil
	}
	m, err := g.observedMatrix(p, s)
	if err != nil {
		return nil, err
	}
	if er, ec := m.EmptyLines(); er > 0 || ec > 0 {
		return nil, rpca.BadInput(fmt.Errorf("%d rows and %d columns have no observed entry; the low-rank part is not identifiable there (drop them or observe more entries)", er, ec))
	}
	return newObservedState(m, q), nil
}

// Initialize runs Phase I alone (Algorithm 1 or 2, lines 1–3: the
// initial sparse estimate T_α and the rank-r SVD, U₀ = LΣ^½ and
// V₀ = RΣ^½) on p, with the checks and the scaling of [Solve], and
// returns U₀ and V₀ in the units of the data, for [GD.Start]. g.Start is
// not read. The SVD's columns come in order of singular value, so the
// first r' columns of U₀ and V₀ are the rank-r' start (up to the SVD's
// tolerance, GD.SVDTol): one call at the largest rank serves several.
// A zero Y has no start; it is ErrBadInput.
func (g *GD) Initialize(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Start, error) {
	if err := rpca.CheckProblem(p, s); err != nil {
		return nil, err
	}
	ctx, err := liveContext(ctx)
	if err != nil {
		return nil, err
	}
	q0, c := access.Scaled(p)
	p = q0.(*rpca.Problem)
	q, err := g.params(p, s)
	if err != nil {
		return nil, rpca.BadSettings(err)
	}
	st, err := g.state(p, s, &q)
	if err != nil {
		return nil, err
	}
	u, v, _, err := st.initialize(ctx)
	if err != nil {
		return nil, err
	}
	w := &rpca.Start{U: kernels.Dense(u), V: kernels.Dense(v)}
	if c != 1 {
		w.U.Scale(c, w.U)
	}
	return w, nil
}

// run is Phase I (the warm start g.Start, or st's initialization) and
// Phase II.
func (g *GD) run(ctx context.Context, tr *track.Tracker, st gdState, q *gdParams) (*rpca.Result, error) {
	var (
		u, v   blas64.General
		sigma1 float64
		err    error
	)
	if c := g.Resume; c != nil {
		if err := c.check(q, st, st.entries()); err != nil {
			return nil, rpca.BadInput(err)
		}
		u, v = c.factors(q)
		st.setInitLocation(c.Location)
		return g.runGD(tr, st, q, u, v, c.Sigma1)
	}
	if g.Start != nil {
		u, v, sigma1, err = startFactors(g.Start, q)
		if err != nil && !errors.Is(err, rpca.ErrDiverged) {
			err = rpca.BadInput(err)
		}
	} else {
		u, v, sigma1, err = st.initialize(ctx)
	}
	if err != nil {
		return nil, err
	}
	return g.runGD(tr, st, q, u, v, sigma1)
}

// observedMatrix returns Φ for Algorithm 2: the problem's own, or a
// dense Y as observed entries, all of them (UpdateALS, which works on
// observed entries only).
func (g *GD) observedMatrix(p *rpca.Problem, s rpca.Settings) (*observed.Matrix, error) {
	if p.Observed != nil {
		return access.ObservedMatrix(p.Observed), nil
	}
	m, err := observed.SampleDense(p.Dense.RawMatrix(), 1, s.Seed, false)
	if err != nil {
		return nil, fmt.Errorf("rpca: %w", err)
	}
	return m, nil
}

// gdState is what differs between Algorithm 1 and Algorithm 2: the data
// layout, the initialization and the evaluation of the loss.
type gdState interface {
	// initialize runs Phase I (lines 1–3) up to U0, V0 (before
	// projection) and returns them with σ̂₁, the top singular value of
	// the initial SVD.
	initialize(ctx context.Context) (u, v blas64.General, sigma1 float64, err error)
	// evaluate is line 6 and the gradients of lines 7–8 in one step: it
	// forms S_t = T(Π_Φ(Y − UVᵀ)) and E = Π_Φ(Y − UVᵀ − S_t), sets
	// gu = E·V and gv = Eᵀ·U (the negated gradients of the loss, up to
	// the factor 1/p) and returns ‖E‖_F/‖Π_Φ Y‖_F.
	evaluate(u, v, gu, gv blas64.General) (float64, error)
	// trial returns ½‖Π_Φ(Y − UVᵀ − S)‖²_F at (u, v) with S the estimate
	// of the last evaluation (the loss the step descends), summed entry by
	// entry like evaluate's, and keeps the residual so that an evaluate at
	// the same (u, v) does not redo it.
	trial(u, v blas64.General) (float64, error)
	// normY returns ‖Π_Φ Y‖_F.
	normY() float64
	// initLocation returns the offset c that initialize removed before
	// T_α (see initLocation).
	initLocation() float64
	// sparse returns S_t of the last evaluation. It is called once, at the
	// end of the run, and may hand the state's storage over.
	sparse() *rpca.Sparse
	// entries returns |Φ| (d1·d2 for a dense Y).
	entries() int
	// setInitLocation sets what initLocation returns, for a run resumed
	// without its Phase I.
	setInitLocation(c float64)
}

// runGD is Phase II, shared by both algorithms: steps of the update rule
// on (U, V) until a stopping rule fires, from g.Resume's state when it is
// set (u, v and sigma1 are then its own), with g.OnCheckpoint called
// after every iteration that no rule stopped. q is not modified.
func (g *GD) runGD(tr *track.Tracker, st gdState, q *gdParams, u, v blas64.General, sigma1 float64) (*rpca.Result, error) {
	upd, eta, u, v, r, err := g.prepare(st, q, u, v, sigma1)
	if err != nil {
		return nil, err
	}
	var gu, gv blas64.General // the gradients; ALS does not form them
	if !q.als {
		gu, gv = kernels.NewGeneral(q.d1, r), kernels.NewGeneral(q.d2, r)
	}
	un := kernels.NewGeneral(q.d1, r)
	vn := kernels.NewGeneral(q.d2, r)

	res, err := st.evaluate(u, v, gu, gv)
	if err != nil {
		return nil, err
	}
	iter := 0
	minRes := res
	prevStep := math.NaN()
	t := 1.0 // step multiplier of the backtracking rule
	var (
		reason rpca.StopReason
		done   bool
	)
	if c := g.Resume; c != nil {
		iter, minRes, prevStep, t = c.Iteration, c.MinResidual, c.PrevStep, c.StepScale
		reason, done = tr.Resume(c.History)
	} else if reason, done, err = tr.Step(0, res, math.NaN(), kernels.Dense(u), kernels.Dense(v)); err != nil {
		return nil, err
	}
	probe := &scaledProbe{ridge: q.ridge, p: q.p}
	var cycle cycleWatch
	ny := st.normY()
	save := func() error {
		if !g.saves(done, iter) {
			return nil
		}
		return g.OnCheckpoint(newCheckpoint(q, st, upd, st.entries(), iter, u, v, sigma1, t, prevStep, minRes, tr.History()))
	}
	if err := save(); err != nil {
		return nil, err
	}
	for !done {
		// The objective the step descends, with S_t fixed: F = ½‖E‖²/p
		// plus the update rule's own regulariser (the balancing term);
		// only the backtracking rule needs it.
		var fOld float64
		if q.backtrack {
			fOld = 0.5*(res*ny)*(res*ny)/q.p + upd.penalty(u, v)
		}
		stationary, err := takeStep(st, upd, q, fOld, &t, un, vn, u, v, gu, gv)
		if err != nil {
			return nil, fmt.Errorf("%w at iteration %d", err, iter+1)
		}
		if stationary {
			// No step lowers the objective beyond rounding: the factors
			// are stationary for the step rule.
			reason = rpca.StopStationary
			break
		}
		step := factorStep(q, u, v, un, vn)
		change := remaining(step, prevStep)
		plateau := prevStep > 0 && step >= prevStep // the steps stopped shrinking
		prevStep = step
		u, un = un, u
		v, vn = vn, v
		iter++
		res, err = st.evaluate(u, v, gu, gv)
		if err != nil {
			return nil, err
		}
		floor := noiseFloor(q, res)
		if !q.scaled && !q.als && change <= max(tr.Rules().FactorTol, floor) {
			change = math.Max(change, probe.change(u, v, gu, gv))
		}
		reason, done, err = tr.Step(iter, res, change, kernels.Dense(u), kernels.Dense(v))
		if err != nil {
			return nil, err
		}
		if floor > 0 && !done && (plateau && change <= floor || cycle.closed(res, step)) {
			// At the noise floor: the factors still move (the support
			// of S changes among entries at the noise level), no longer
			// shrinking, and by far less than the noise lets any fit be
			// accurate to. A slow approach, whose steps still shrink, is
			// not stopped by this. Whether the residual is noise is for
			// the verification to say (rpca.StopNoiseFloor). So
			// with a cycle: the iterates go round the same few points.
			reason, done = rpca.StopNoiseFloor, true
		}
		if err := diverged(iter, res, minRes); err != nil {
			return nil, err
		}
		minRes = min(minRes, res)
		if err := save(); err != nil {
			return nil, err
		}
	}
	return gdResult(tr, st, q, u, v, iter, res, reason, eta, sigma1), nil
}

// prepare returns the update rule and its step η, the factors to start
// from (with the bias columns when q.biases; g.Resume's state restored
// into the rule) and their width.
func (g *GD) prepare(st gdState, q *gdParams, u, v blas64.General, sigma1 float64) (updater, float64, blas64.General, blas64.General, int, error) {
	upd, eta := newUpdater(st, q, u, v, sigma1, g.Resume == nil)
	r := q.rank
	if q.biases {
		if g.Resume == nil { // a saved state has its bias columns
			u, v = withBiasColumns(u, v)
		}
		r += 2
	}
	if c := g.Resume; c != nil {
		if err := c.restore(upd, q); err != nil {
			return nil, 0, u, v, 0, rpca.BadInput(err)
		}
	}
	return upd, eta, u, v, r, nil
}

// saves reports whether the state after iteration iter goes to
// g.OnCheckpoint: not after a stopping rule fired, and not the state a
// resumed run started from.
func (g *GD) saves(done bool, iter int) bool {
	return g.OnCheckpoint != nil && !done && (g.Resume == nil || iter != g.Resume.Iteration)
}

// factorStep is the relative squared change (‖ΔU‖²_F + ‖ΔV‖²_F)/
// (‖U‖²_F + ‖V‖²_F) from (u, v) to (un, vn); the columns held at 1 of
// q.biases (U = [U₀ b 1], V = [V₀ 1 c]), which do not change, are left
// out of the norm: summed without them, not subtracted, since on data of
// a small scale the other entries' squares are below the rounding of
// d1 + d2, and the difference came out 0 (a step of +Inf, taken for
// divergence). Factors that are zero and stay so make a step of 0.
func factorStep(q *gdParams, u, v, un, vn blas64.General) float64 {
	var norm float64
	if q.biases {
		norm = sumSqWithout(u, u.Cols-1) + sumSqWithout(v, v.Cols-2)
	} else {
		norm = kernels.SumSq(u, 1) + kernels.SumSq(v, 1)
	}
	diff := diffSq(un, u) + diffSq(vn, v)
	if diff == 0 {
		return 0
	}
	return diff / norm
}

// sumSqWithout is the sum of the squares of a's entries outside column
// skip.
func sumSqWithout(a blas64.General, skip int) float64 {
	s := 0.0
	for i := range a.Rows {
		for k, x := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			if k != skip {
				s += x * x
			}
		}
	}
	return s
}

// noiseFloor is the level of the squared factor change below which the
// gradient steps are at the noise of the fit, (NoiseChange·res)², or 0
// where that rule does not apply (α = 0, ALS).
func noiseFloor(q *gdParams, res float64) float64 {
	if q.alpha > 0 && !q.als {
		return NoiseChange * res * NoiseChange * res
	}
	return 0
}

// diverged returns ErrDiverged when the residual res of iteration iter
// rose tenfold above the smallest seen, minRes. A fixed-step gradient
// method inside its basin only ever shrinks the residual up to noise; such
// a rise means the step is unstable (measured: c ≥ 1 on the paper's
// model) or the model (r, α) does not fit the data.
func diverged(iter int, res, minRes float64) error {
	if res > 10*minRes && res > 1e-6 {
		return fmt.Errorf("%w at iteration %d (relative residual rose from %.3g to %.3g): %s",
			rpca.ErrDiverged, iter, minRes, res, gdDivergenceHint)
	}
	return nil
}

// gdResult is the Result of a run that ended at iteration iter for reason.
func gdResult(tr *track.Tracker, st gdState, q *gdParams, u, v blas64.General, iter int, res float64, reason rpca.StopReason, eta, sigma1 float64) *rpca.Result {
	hist := tr.History()
	sp := st.sparse()
	if q.huber > 0 && reason.Converged() && float64(len(sp.Val)) > huberExcess*q.alpha*float64(st.(*observedState).m.NNZ()) {
		reason = rpca.StopSparseExcess
	}
	return &rpca.Result{
		Method:     q.name(),
		U:          kernels.Dense(u),
		V:          kernels.Dense(v),
		S:          sp,
		Iterations: iter,
		Elapsed:    tr.Elapsed(),
		Stop:       reason,
		Residual:   res,
		History:    hist,
		Params:     q.report(eta, sigma1, st.initLocation()),
	}
}

// newUpdater returns the update rule of q and its step η (0 for ALS),
// projecting the start onto the constraint sets of the paper's step when
// project is set (a resumed state is already on them).
func newUpdater(st gdState, q *gdParams, u, v blas64.General, sigma1 float64, project bool) (updater, float64) {
	switch {
	case q.als:
		if ds, ok := st.(*distState); ok {
			return &distALSUpdate{st: ds, ridge: q.ridge}, 0
		}
		return newALSUpdate(st.(*observedState), q), 0
	case q.scaled:
		return newScaledUpdate(q, sigma1), q.c
	}
	pu := newPaperUpdate(q, sigma1)
	if pu.boundU > 0 && project {
		projectRows(u, pu.boundU)
		projectRows(v, pu.boundV)
	}
	return pu, q.c / sigma1
}

// takeStep writes the next factors into un, vn: one step of the update
// at multiplier *t, or, with backtracking, the first of the halved steps
// that lowers the objective fOld (Armijo: by at least armijo times the
// decrease its gradient predicts, any decrease when a projection makes
// the prediction useless, up to rounding), regaining the full step after
// a cut. It reports the factors stationary when no step does.
func takeStep(st gdState, upd updater, q *gdParams, fOld float64, t *float64, un, vn, u, v, gu, gv blas64.General) (bool, error) {
	for try := 0; ; try++ {
		if err := upd.step(un, vn, u, v, gu, gv, *t); err != nil || !q.backtrack {
			return false, err
		}
		f, err := st.trial(un, vn)
		if err != nil {
			return false, err
		}
		fNew := f/q.p + upd.penalty(un, vn)
		pred := math.Max(upd.predicted(un, vn, u, v, gu, gv), 0)
		switch {
		case fNew <= fOld-armijo*pred+1e-12*math.Abs(fOld):
			if try == 0 {
				*t = min(1, 2**t)
			}
			return false, nil
		case try == maxBacktracks:
			return true, nil
		}
		*t /= 2
	}
}

// name is the method's name in results: gd, scaledgd or als.
func (q *gdParams) name() string {
	switch {
	case q.scaled:
		return "scaledgd"
	case q.als:
		return "als"
	}
	return "gd"
}

// CycleChange bounds the steps of a cycle that ends a run with
// rpca.StopNoiseFloor: relative squared steps of at most (CycleChange·ρ)²,
// ρ the relative residual, a hundredth of the noise in amplitude.
const CycleChange = 1e-2

// cycleWatch sees the iterates of a gradient run go round a cycle: on
// noisy data the support of S can alternate among a few sets of
// entries near the threshold, and the factors with it, with steps that
// neither shrink nor stop (measured: a period of 3 at steps of 1e-9 on a
// 100×40 rank-1 matrix with 3% noise, to the iteration cap). A run is
// deterministic, so when the residual and the step of the last p
// iterations repeat those p before, for a period p ≤ maxPeriod, the
// iterates cycle and would do so to the cap. The repetition is exact to
// the rounding of the residual (1e-9 relative), and to 1e-6 for the
// steps, which the factors' drift along the factorizations of one
// U·Vᵀ moves by about 1e-9 a period; a run whose steps still shrink
// repeats neither.
type cycleWatch struct {
	res, step [2 * maxPeriod]float64
	n         int
}

// maxPeriod is the longest cycle cycleWatch looks for.
const maxPeriod = 4

// closed records an iteration's relative residual and step and reports
// whether the iterates now go round a cycle whose steps are at most
// (CycleChange·res)².
func (c *cycleWatch) closed(res, step float64) bool {
	copy(c.res[1:], c.res[:len(c.res)-1])
	copy(c.step[1:], c.step[:len(c.step)-1])
	c.res[0], c.step[0] = res, step
	c.n++
	if !(step <= CycleChange*res*CycleChange*res) {
		return false
	}
	for p := 1; p <= maxPeriod && 2*p <= c.n; p++ {
		same := true
		for i := 0; i < p && same; i++ {
			same = near(c.res[i], c.res[i+p], 1e-9) && near(c.step[i], c.step[i+p], 1e-6)
		}
		if same {
			return true
		}
	}
	return false
}

// near reports whether a and b agree to tol relative to a.
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(a) }

// remaining returns the relative squared change the steps still have to
// make, step/(1 − ρ)², and the rate ρ: step is the last step's relative
// squared change and ρ = √(step/prev) the rate at which the steps shrink,
// at most 0.99; a step that did not shrink is taken as it is (ρ = 0): the
// method has reached the floor of its steps (rounding, or ALS's drift
// along the factorizations of the same U·Vᵀ), not a slow approach.
// The steps of a linearly converging method sum to step/(1 − ρ), and it
// is that distance to the limit, not the last step, that the
// factor-change rule must bound: a slow method (ρ near 1: partial
// observations, an ill-conditioned M) otherwise stops with most of its
// way still ahead.
func remaining(step, prev float64) float64 {
	rho := 0.0
	if prev > 0 && step < prev {
		rho = min(math.Sqrt(step/prev), 0.99)
	}
	return step / ((1 - rho) * (1 - rho))
}

// huberExcess is the multiple of α|Φ| entries in S beyond which a GD.Huber
// run is reported as StopSparseExcess. S ∈ S_α has at most about α|Φ|
// corruptions, and with huberReport a clean entry is reported with
// probability 2e-9 under Gaussian noise. In the runs of docs/performance.md
// those that recovered M* reported about α|Φ|, and those that stopped on
// a wrong answer more than 1.5α|Φ|.
const huberExcess = 1.5

// withBiasColumns returns [U 0 1] and [V 1 0], the start of GD.Biases:
// the same product UVᵀ, with zero biases.
func withBiasColumns(u, v blas64.General) (ub, vb blas64.General) {
	r := u.Cols
	ub, vb = kernels.NewGeneral(u.Rows, r+2), kernels.NewGeneral(v.Rows, r+2)
	for i := range u.Rows {
		copy(ub.Data[i*ub.Stride:], u.Data[i*u.Stride:i*u.Stride+r])
		ub.Data[i*ub.Stride+r+1] = 1
	}
	for j := range v.Rows {
		copy(vb.Data[j*vb.Stride:], v.Data[j*v.Stride:j*v.Stride+r])
		vb.Data[j*vb.Stride+r] = 1
	}
	return ub, vb
}

// svdFactors turns a truncated SVD L·Σ·Rᵀ into U0 = L·Σ^½, V0 = R·Σ^½
// (Algorithm 1 line 3) and returns them with σ̂₁.
func svdFactors(sv *tsvd.Result, q *gdParams) (u, v blas64.General, sigma1 float64, err error) {
	if len(sv.S) == 0 || !(sv.S[0] > 0) {
		return u, v, 0, fmt.Errorf("rpca: the initial SVD found no signal (top singular value %v): the data are zero after removing the initial sparse estimate", firstOr(sv.S))
	}
	u = kernels.NewGeneral(q.d1, q.rank)
	v = kernels.NewGeneral(q.d2, q.rank)
	for k := 0; k < q.rank; k++ {
		sq := math.Sqrt(math.Max(sv.S[k], 0))
		for i := 0; i < q.d1; i++ {
			u.Data[i*u.Stride+k] = sv.U.Data[i*sv.U.Stride+k] * sq
		}
		for j := 0; j < q.d2; j++ {
			v.Data[j*v.Stride+k] = sv.V.Data[j*sv.V.Stride+k] * sq
		}
	}
	return u, v, sv.S[0], nil
}

func firstOr(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

// projectRows is the projection onto {A : ‖A‖_{2,∞} ≤ bound}: every row
// longer than bound is rescaled to length bound (eq. (set)).
func projectRows(a blas64.General, bound float64) {
	b2 := bound * bound
	for i := 0; i < a.Rows; i++ {
		r := a.Data[i*a.Stride : i*a.Stride+a.Cols]
		n2 := 0.0
		for _, x := range r {
			n2 += x * x
		}
		if n2 > b2 {
			f := bound / math.Sqrt(n2)
			for k := range r {
				r[k] *= f
			}
		}
	}
}

// axpyGeneral sets dst += alpha·x.
func axpyGeneral(dst blas64.General, alpha float64, x blas64.General) {
	for i := 0; i < x.Rows; i++ {
		d := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
		for k, xv := range x.Data[i*x.Stride : i*x.Stride+x.Cols] {
			d[k] += alpha * xv
		}
	}
}

func diffSq(a, b blas64.General) float64 {
	s := 0.0
	for i := 0; i < a.Rows; i++ {
		br := b.Data[i*b.Stride : i*b.Stride+b.Cols]
		for k, x := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			d := x - br[k]
			s += d * d
		}
	}
	return s
}

// initLocationSample is the largest number of entries initLocation reads
// (robust.SamplePositions reads as many, at the same positions: a
// distributed run takes its location from the frame's sample).
const initLocationSample = 1 << 16

// initLocation returns the median of up to initLocationSample of the n
// values at(0), …, at(n−1), read at an even stride (finite: Solve has
// checked the data), or 0 when the initialization sets nothing aside
// (trims false). Algorithm 1 line 1
// (and Algorithm 2 line 1) estimate S_init from the magnitudes of Y's
// entries, which presumes that M's entries are small beside the
// corruptions; a common offset (ratings around 3.5, a video's mean
// brightness, a constant matrix) breaks that presumption and T_α then
// keeps the largest entries of M itself. The initialization therefore
// applies T_α to Y − c·11ᵀ with c this median and fills the kept entries
// with c. On the paper's model (zero-mean M and S) c is close to 0 and
// the initialization is the paper's.
func initLocation(trims bool, n int, at func(k int) float64) float64 {
	if !trims || n == 0 {
		return 0
	}
	return stridedMedian(make([]float64, min(n, initLocationSample)), n, at)
}

// stridedMedian returns the (lower) median of at(q) over the len(buf)
// positions q of 0, …, n−1 at an even stride (robust.SamplePositions
// when len(buf) = min(n, initLocationSample)), by linear-time selection
// in buf, which it overwrites; 1 ≤ len(buf) ≤ n.
func stridedMedian(buf []float64, n int, at func(k int) float64) float64 {
	m := len(buf)
	for k := range buf {
		buf[k] = at(int(int64(k) * int64(n) / int64(m)))
	}
	return selection.SelectSmallest(buf, (m+1)/2)
}

// scaledProbe measures the relative squared change
// (‖ΔU‖²_F + ‖ΔV‖²_F)/(‖U‖²_F + ‖V‖²_F) that one scaled step (UpdateScaled,
// η = DefaultStepScaled) would make from (U, V):
// ΔU = η(gu − λU)(VᵀV)⁻¹/p, ΔV = η(gv − λV)(UᵀU)⁻¹/p, with gu = E·V and
// gv = Eᵀ·U as evaluate leaves them.
//
// The paper's update moves along a direction of singular value σ_k at the
// rate η·σ_k = c·σ_k/σ̂₁, so on an ill-conditioned M (a large offset or
// mean, κ ≫ 1) its steps are tiny long before it has converged, and its
// own factor change would stop it early with a wrong answer. The scaled
// step's rate does not depend on σ_k, so its size measures the distance
// to a stationary point; GD with UpdatePaper stops by Stop.FactorTol only
// when both changes are below it.
//
// Its buffers are allocated on first use and reused, so that a run that
// probes at every iteration allocates nothing more.
type scaledProbe struct {
	ridge, p float64
	rhs, x   [2]mat.Dense // (g − λf) and (OᵀO)⁻¹(g − λf)ᵀ, per side
	gram     mat.SymDense
	chol     mat.Cholesky
}

// change returns the relative squared change of a scaled step from
// (u, v), or +Inf when the Cholesky factorization of UᵀU or VᵀV fails
// (a factor of deficient rank).
func (sp *scaledProbe) change(u, v, gu, gv blas64.General) float64 {
	num := 0.0
	for s, side := range [2][3]blas64.General{{u, gu, v}, {v, gv, u}} {
		f, g, other := kernels.Dense(side[0]), kernels.Dense(side[1]), kernels.Dense(side[2])
		sp.gram.SymOuterK(1, other.T()) // OᵀO
		if !sp.chol.Factorize(&sp.gram) {
			return math.Inf(1)
		}
		rhs, x := &sp.rhs[s], &sp.x[s]
		rhs.Scale(-sp.ridge, f)
		rhs.Add(rhs, g)
		if err := sp.chol.SolveTo(x, rhs.T()); err != nil {
			return math.Inf(1)
		}
		n := mat.Norm(x, 2) / sp.p
		num += n * n
	}
	eta := DefaultStepScaled
	return eta * eta * num / (kernels.SumSq(u, 1) + kernels.SumSq(v, 1))
}
