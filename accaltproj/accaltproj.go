// Package accaltproj implements AccAltProj, the accelerated alternating
// projections method for robust PCA of Cai, Cai and Wei, "Accelerated
// alternating projections for robust principal component analysis"
// (JMLR 20, 2019, Algorithm 1), as an [rpca.Method] on a fully observed Y.
//
// Like AltProj it alternates a low-rank step with hard thresholding of
// the residual at a decreasing threshold, but the low-rank step projects
// Y − S_k onto the tangent space of the rank-r manifold at L_k before the
// rank-r truncation. That truncation then costs two products with the
// d1×d2 residual, two thin QRs of d×r blocks and the SVD of a 2r×2r
// matrix, never a truncated SVD of a d1×d2 matrix, and the convergence
// rate does not depend on the condition number of L*.
//
// The trimming step of the paper (its line 5, which keeps the iterates
// incoherent for the proof) is left out, as the authors' experiments do.
package accaltproj

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	rpca "github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/param"
	"github.com/rpca-gd/rpca/internal/robust"
	"github.com/rpca-gd/rpca/internal/tsvd"
	"github.com/rpca-gd/rpca/track"
)

// Defaults of the method's parameters and stopping rules.
const (
	// DefaultMu is the default incoherence μ in β = μr/(2√(d1·d2)).
	// Chosen with DefaultGamma by a scan over μ ∈ {1.1, 2, 4} and
	// γ ∈ {0.5, 0.7, 0.85} on the ill-conditioned model (κ = 1, 10, 100;
	// 400×300 at r = 4 and 1000² at r = 5, α = 0.1): μ = 2, γ = 0.7 is the
	// only pair that recovered every instance (true error ≤ 3.2e-8).
	// Smaller μ or γ stops the threshold above the error of L while clean
	// entries are still being set aside, and the run settles on a wrong L
	// (error 0.04–0.05 at κ ≥ 10 with μ = 1.1, γ = 0.5 on 400×300).
	DefaultMu = 2

	// DefaultGamma is the default decay γ of the threshold,
	// ζ_{k+1} = β(σ_{r+1}(L̃_k) + γ^{k+1}σ₁(L̃_k)) (Algorithm 1, line 9);
	// see DefaultMu.
	DefaultGamma = 0.7

	// DefaultSVDTol is the accuracy of the initial truncated SVD
	// (Algorithm 1, line 3). What the first iteration needs of it is set
	// by the initial estimate's own error: L₀ is the rank-r part of
	// Y − S₀, whose corruptions beyond the first threshold leave an
	// error of the order of a few percent of L* on the paper's model,
	// and each iteration then projects afresh. An SVD accurate to 1e-2
	// of σ₁ is below that error; its Krylov iterations, which grow with
	// the condition number at tighter tolerances, no longer do
	// (docs/performance.md: κ = 100 took 1.3× κ = 1 at 1e-8, 1.06× at
	// 1e-2, with the same iterations and final errors).
	DefaultSVDTol = 1e-2
)

// zetaSettled: the factor-change rule applies only once the threshold ζ
// is below this fraction of the largest residual, so that the entries
// standing out most have been set aside with a margin.
const zetaSettled = 0.5

// DefaultStop are the default stopping rules: at most 300 iterations, a
// relative change ‖L_{k+1} − L_k‖²_F/‖L_k‖²_F of at most 1e-16 (the low-rank
// part changes by about 1e-8 of itself), or a residual of 1e-8 of the
// data's clean scale (rpca.ResidualScale). On exact data the residual is
// what is left of the corruptions below the threshold, which falls
// geometrically, and the run ends on it, 50 times below the verification's
// threshold for an exact answer (rpca.VerifyExact); the factor-change rule
// waits until the threshold has come down to the error of L on the clean
// entries (noiseFloor), and ends a run on noisy data.
var DefaultStop = rpca.Stop{MaxIter: 300, FactorTol: 1e-16, ResidualTol: 1e-8}

// Method is AccAltProj. The zero value uses the documented defaults.
//
// Correspondence with the shared settings: Settings.Rank is r;
// Settings.Alpha is not used (the support of S is found by thresholding);
// Stop.FactorTol bounds the relative squared change of the low-rank part
// per iteration. Record 0 of the history is the initialization (L_0, S_0).
type Method struct {
	// Mu is the incoherence parameter μ of L*; it sets β = μr/(2√(d1·d2))
	// (the paper's β = μr/(2√(mn))). 0 means DefaultMu, raised to the
	// incoherence of the initial factors, max(d1/r·max‖U₀ row‖²,
	// d2/r·max‖V₀ row‖²), when that is larger (at rank one, Gaussian
	// factors have μ ≈ 2 ln d, and DefaultMu set their largest entries
	// aside as corruptions).
	Mu float64

	// Beta, when positive, sets β directly and Mu is ignored.
	Beta float64

	// BetaInit is β_init of the initialization threshold
	// ζ_{−1} = β_init·σ₁(Y) (Algorithm 1, line 1). 0 means 4β.
	BetaInit float64

	// Gamma is the decay γ ∈ (0, 1) of the thresholds. 0 means DefaultGamma.
	Gamma float64

	// SVDTol is the accuracy of the initial truncated SVD. 0 means DefaultSVDTol.
	SVDTol float64
}

// Capabilities: AccAltProj needs a fully observed Y, finds the support of
// S by thresholding (α unused) and returns rank-r factors.
func (m *Method) Capabilities() rpca.Capabilities {
	return rpca.Capabilities{DenseOnly: true, FixedRank: true, BytesPerEntry: 5 * 8}
}

// Name returns "accaltproj".
func (m *Method) Name() string { return "accaltproj" }

// CheckParams checks m's fields for p and s ([rpca.ParamChecker]).
func (m *Method) CheckParams(p *rpca.Problem, s rpca.Settings) error {
	d1, d2 := p.Dims()
	_, err := m.params(d1, d2, s.Rank)
	return err
}

// params are the effective parameters of one run.
type params struct {
	beta, betaInit, gamma, svdTol float64
	// estimateMu: neither Mu nor Beta was set, so β is raised to the
	// incoherence of the initial factors when that is above DefaultMu.
	estimateMu bool
	mu         float64 // μ of β (the default, or the estimate)
}

func (m *Method) params(d1, d2, r int) (params, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"Mu", m.Mu}, {"Beta", m.Beta}, {"BetaInit", m.BetaInit}, {"Gamma", m.Gamma}, {"SVDTol", m.SVDTol}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return params{}, fmt.Errorf("accaltproj: %s must be a finite non-negative number, got %v", f.name, f.v)
		}
	}
	if m.Gamma >= 1 {
		return params{}, fmt.Errorf("accaltproj: Gamma must be in (0, 1), got %v", m.Gamma)
	}
	if m.SVDTol >= 1 {
		return params{}, fmt.Errorf("accaltproj: SVDTol must be below 1, got %v", m.SVDTol)
	}
	q := params{beta: m.Beta, betaInit: m.BetaInit, gamma: m.Gamma, svdTol: m.SVDTol}
	if q.beta == 0 {
		q.mu = cmp.Or(m.Mu, DefaultMu)
		q.estimateMu = m.Mu == 0
		q.beta = q.mu * float64(r) / (2 * math.Sqrt(float64(d1)*float64(d2)))
	}
	q.betaInit = cmp.Or(q.betaInit, 4*q.beta)
	q.gamma = cmp.Or(q.gamma, DefaultGamma)
	q.svdTol = cmp.Or(q.svdTol, DefaultSVDTol)
	return q, nil
}

// Solve runs Algorithm 1 of Cai, Cai and Wei on p.Dense. Partially
// observed problems are rejected with an error wrapping rpca.ErrDenseOnly.
func (m *Method) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	if _, err := p.DenseInput("accaltproj"); err != nil {
		return nil, err
	}
	d1, d2 := p.Dense.Dims()
	r := s.Rank
	if r < 1 || r >= min(d1, d2) {
		return nil, fmt.Errorf("accaltproj: rank must be in [1, %d), got %d", min(d1, d2), r)
	}
	q, err := m.params(d1, d2, r)
	if err != nil {
		return nil, rpca.BadSettings(err)
	}
	tr := track.New(ctx, p, s, DefaultStop,
		"the thresholds may be too low for these data; try a larger Mu or Beta, or a larger Gamma")
	sv := &solver{q: q, y: p.Dense.RawMatrix(), r: r, workers: kernels.Workers(s.Workers), seed: s.Seed}
	return sv.run(tr.Context(), tr)
}

// solver holds one run's state: Y, one d1×d2 work matrix, and
// L_k = U·diag(sig)·Vᵀ with orthonormal U (d1×r) and V (d2×r).
type solver struct {
	q        params
	y        blas64.General
	w        blas64.General // Y − S₋₁, then R = Y − L_k with S_k's entries zeroed (E)
	r        int
	workers  int
	seed     uint64
	u, v     blas64.General
	sig      []float64
	a        blas64.General // U·diag(sig), the left factor given to the kernels
	rowSS    []float64
	rowMax   []float64
	ynorm    float64
	floorBuf []float64 // noiseFloor's sample
}

func (sv *solver) run(ctx context.Context, tr *track.Tracker) (*rpca.Result, error) {
	d1, d2 := sv.y.Rows, sv.y.Cols
	sv.ynorm = math.Sqrt(kernels.SumSq(sv.y, sv.workers))
	sv.w = kernels.NewGeneral(d1, d2)
	sv.rowSS, sv.rowMax = make([]float64, d1), make([]float64, d1)
	sv.a = kernels.NewGeneral(d1, sv.r)
	if sv.ynorm == 0 {
		return sv.zeroResult(tr)
	}
	zeta, err := sv.initialize(ctx)
	if err != nil {
		return nil, err
	}
	if zeta == 0 { // Y − S₋₁ = 0: every entry was set aside
		return sv.zeroResult(tr)
	}
	g1, g2 := kernels.NewGeneral(d1, sv.r), kernels.NewGeneral(d2, sv.r)
	tan := newTangent(d1, d2, sv.r)
	change := math.NaN()
	raises, k0 := 0, 0
	for k := 0; ; k++ {
		sv.factorA()
		// At the floor of the noise the descent is over, and the
		// factor-change rule applies.
		floorZeta := noiseSpreads * sv.fitNoise()
		atFloor := zeta <= floorZeta
		zeta = max(zeta, floorZeta)
		ss, maxAbs := sv.residual(zeta)
		res := math.Sqrt(ss) / sv.ynorm
		if !atFloor && zeta >= zetaSettled*maxAbs {
			// The threshold is still above every residual, or above all
			// but the few largest: little or nothing is set aside yet and
			// L_k is about the truncation of Y − S_{k−1}. Its not changing
			// says nothing until the threshold has come down into the
			// residuals, so the factor-change rule waits. (On video at
			// rank ≥ 2, ζ₀ = βσ₁ sits just below the largest residuals;
			// the few entries that crossed it changed L by less than
			// rounding, and the run stopped after 1–3 iterations with
			// the foreground still in L.)
			change = math.NaN()
		}
		if floor := sv.noiseFloor(); !atFloor && zeta > settledFloor*floor {
			// The threshold is still far above the error of L on the
			// clean entries, and it keeps falling: corruptions between
			// the two are still in the residual, and L, fitted to them,
			// does not change until the threshold passes them. It
			// stopping to change says nothing yet either.
			change = math.NaN()
		}
		reason, done, err := tr.Step(k, res, change, kernels.Dense(sv.a), kernels.Dense(sv.v))
		if err != nil {
			return nil, err
		}
		if done {
			sp := sv.sparse(zeta)
			if reason != rpca.StopMaxIter && reason != rpca.StopTargetError && sv.q.estimateMu && raises < maxRaises && denseLine(sp) {
				// A row or column has more than half of its entries in
				// S: no sparse model allows that, the thresholds are
				// below the entries of L there (its incoherence is above
				// the estimate, which fitting L without those entries
				// keeps low). Double μ and go on.
				sv.q.beta *= 2
				sv.q.mu *= 2
				raises++
				sv.residual(zeta) // w back to E for the step below
				k0 = k + 1        // and the thresholds start their descent again
			} else {
				return sv.result(tr, k, zeta, reason, res, sp), nil
			}
		}
		// Lines 6–8: L̃ = P_T(Y − S_k), L_{k+1} = H_r(L̃). With
		// Y − S_k = L_k + E: (Y − S_k)·V = U·Σ + E·V and (Y − S_k)ᵀ·U = V·Σ + Eᵀ·U.
		kernels.MulAXAtY(g1, g2, sv.w, sv.v, sv.u, sv.workers)
		sigR1, sig1, ch, err := tan.step(sv, g1, g2)
		if err != nil {
			return nil, err
		}
		change = ch
		sv.raiseMu()
		// Line 9.
		zeta = sv.q.beta * (sigR1 + math.Pow(sv.q.gamma, float64(k+1-k0))*sig1)
	}
}

// settledFloor: the factor-change rule applies once the threshold is
// within this multiple of noiseFloor.
const settledFloor = 4

// noiseSpreads is the floor of the threshold in robust spreads of the
// fit's noise (fitNoise): a clean Gaussian entry lies beyond 3 with
// probability 0.27%; those few in S do not bias L, and Solve takes them
// out of the S it reports (rpca.SparseNoiseFactor). A floor of 5 kept
// objects of 3.5 spreads in the background of a generated clip whose
// residual at rank 3 is dense (TestNoEarlyStopAboveTheResiduals).
const noiseSpreads = 3

// floorFactor is the multiple of the residual's robust scale that
// noiseFloor returns: a Gaussian error of L exceeds 5 of its standard
// deviations with probability 6e-7.
const floorFactor = 5

// noiseFloor returns floorFactor·1.4826·median|E_ij| over up to
// robust.SampleSize entries of E (the residual after thresholding, W), evenly
// spaced, leaving out those the threshold set to zero: a robust scale of
// L_k's error on the entries taken as clean.
func (sv *solver) noiseFloor() float64 {
	w := sv.w
	var s float64
	s, sv.floorBuf = robust.SampledSpread(w.Rows*w.Cols, sv.floorBuf, func(q int) (float64, bool) {
		x := w.Data[(q/w.Cols)*w.Stride+q%w.Cols]
		return x, x != 0
	})
	return floorFactor * s
}

// fitNoise returns 1.4826·median|Y_ij − (L_k)_ij| over up to robust.SampleSize
// entries, evenly spaced: a robust scale of the noise of the fit, which
// the corruptions on fewer than half of the entries do not move. The
// threshold does not go below noiseSpreads times it. On exact data it is
// the error of L_k on the clean entries, which the iterations drive to
// 0, so the paper's descent of ζ is kept; on noisy data it is the noise,
// and without the floor ζ descended into it: S took up the noise,
// dense lines doubled μ and restarted the descent, and the run went to
// its cap with an L that is not a least-squares fit of Y − S.
func (sv *solver) fitNoise() float64 {
	y, a, v := sv.y, sv.a, sv.v
	var s float64
	s, sv.floorBuf = robust.SampledSpread(y.Rows*y.Cols, sv.floorBuf, func(q int) (float64, bool) {
		i, j := q/y.Cols, q%y.Cols
		l := 0.0
		for c := range sv.r {
			l += a.Data[i*a.Stride+c] * v.Data[j*v.Stride+c]
		}
		return y.Data[i*y.Stride+j] - l, true
	})
	return s
}

// initialize is lines 1–3: ζ₋₁ = β_init·σ₁(Y), S₋₁ = T_{ζ₋₁}(Y),
// L_0 = D_r(Y − S₋₁), ζ_0 = β·σ₁(Y − S₋₁). It returns ζ_0.
func (sv *solver) initialize(ctx context.Context) (float64, error) {
	top, err := tsvd.Compute(ctx, tsvd.Dense{A: sv.y, Workers: sv.workers},
		tsvd.Options{Rank: 1, Tol: 1e-6, Seed: sv.seed, Workers: sv.workers})
	if err != nil {
		return 0, fmt.Errorf("accaltproj: %w", err)
	}
	zetaInit := sv.q.betaInit * top.S[0]
	kernels.ParallelFor(sv.y.Rows, sv.workers, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			yi := sv.y.Data[i*sv.y.Stride : i*sv.y.Stride+sv.y.Cols]
			wi := sv.w.Data[i*sv.w.Stride : i*sv.w.Stride+sv.w.Cols]
			for j, x := range yi {
				if math.Abs(x) > zetaInit {
					x = 0
				}
				wi[j] = x
			}
		}
	})
	res, err := tsvd.Compute(ctx, tsvd.Dense{A: sv.w, Workers: sv.workers},
		tsvd.Options{Rank: sv.r, Tol: sv.q.svdTol, Seed: sv.seed, Workers: sv.workers})
	if err != nil {
		return 0, fmt.Errorf("accaltproj: %w", err)
	}
	if len(res.S) == 0 || !(res.S[0] > 0) {
		return 0, nil
	}
	sv.u, sv.v = compact(res.U, sv.r), compact(res.V, sv.r)
	sv.sig = append([]float64(nil), res.S[:sv.r]...)
	sv.raiseMu()
	return sv.q.beta * res.S[0], nil
}

// raiseMu raises μ in β = μr/(2√(d1·d2)) to the entrywise incoherence
// of the current L = U·Σ·Vᵀ when that is above the μ in use (and neither
// Mu nor Beta was set). The paper's thresholds ζ = β(…) must stay above
// the entries of an incoherent L, which its μ bounds by μr/√(d1·d2)·σ₁;
// with μ below the data's the thresholds fall under L's largest entries,
// which are then set aside as corruptions (rank one: whole rows, whose
// largest entry is about √(2 ln d) times the average, μ ≈ 2 ln d for
// Gaussian factors, against DefaultMu = 2). The estimate is the bound
// |L_ij| ≤ ‖Σ^½u_i‖·‖Σ^½v_j‖ (Cauchy–Schwarz), so
// μ̂ = max_i‖Σ^½u_i‖·max_j‖Σ^½v_j‖·√(d1·d2)/(r·σ₁), which weighs each
// direction by its singular value: an ill-conditioned L keeps μ near
// that of its top directions. The initial factors underestimate it,
// being fitted with corruptions left in Y, so it is made again at every
// iteration.
func (sv *solver) raiseMu() {
	if !sv.q.estimateMu || len(sv.sig) == 0 || !(sv.sig[0] > 0) {
		return
	}
	weighted := func(q blas64.General) float64 {
		mx := 0.0
		for i := range q.Rows {
			n := 0.0
			for k, x := range q.Data[i*q.Stride : i*q.Stride+q.Cols] {
				n += sv.sig[k] * x * x
			}
			mx = max(mx, n)
		}
		return mx
	}
	d1, d2 := float64(sv.u.Rows), float64(sv.v.Rows)
	mu := math.Sqrt(weighted(sv.u)*weighted(sv.v)) * math.Sqrt(d1*d2) / (float64(sv.r) * sv.sig[0])
	if mu > sv.q.mu {
		sv.q.beta *= mu / sv.q.mu
		sv.q.mu = mu
	}
}

// factorA sets a = U·diag(sig).
func (sv *solver) factorA() {
	for i := 0; i < sv.u.Rows; i++ {
		ui := sv.u.Data[i*sv.u.Stride : i*sv.u.Stride+sv.r]
		ai := sv.a.Data[i*sv.a.Stride : i*sv.a.Stride+sv.r]
		for k, x := range ui {
			ai[k] = x * sv.sig[k]
		}
	}
}

// residual forms E = Y − L_k − S_k in w, with S_k = T_ζ(Y − L_k) the hard
// thresholding of lines 4 and 10, in one pass over Y
// (kernels.SubMulABtClip), and returns ‖E‖²_F and max|Y − L_k|. Sums run
// per row and then over rows in order, so they do not depend on the
// worker count.
func (sv *solver) residual(zeta float64) (ss, maxAbs float64) {
	kernels.SubMulABtClip(sv.w, sv.y, sv.a, sv.v, kernels.Clip{Zeta: zeta, RowSS: sv.rowSS, RowMax: sv.rowMax}, sv.workers)
	for i := range sv.rowSS {
		ss += sv.rowSS[i]
		maxAbs = max(maxAbs, sv.rowMax[i])
	}
	return ss, maxAbs
}

// sparse returns S_k = T_ζ(Y − L_k) (w is left holding Y − L_k).
func (sv *solver) sparse(zeta float64) *rpca.Sparse {
	kernels.SubMulABt(sv.w, sv.y, sv.a, sv.v, sv.workers)
	return rpca.SparseWhere(sv.w.Rows, sv.w.Cols, sv.w.Data, sv.w.Stride, func(x float64) bool { return math.Abs(x) > zeta })
}

// maxRaises bounds the doublings of μ by denseLine.
const maxRaises = 6

// denseLine reports whether a row or a column holds more than half of its
// entries in sp.
func denseLine(sp *rpca.Sparse) bool {
	col := make([]int, sp.Cols)
	for i := range sp.Rows {
		if 2*(sp.RowPtr[i+1]-sp.RowPtr[i]) > sp.Cols {
			return true
		}
	}
	for _, j := range sp.ColIdx {
		col[j]++
		if 2*col[j] > sp.Rows {
			return true
		}
	}
	return false
}

// result assembles the result for L_k and S_k = sp.
func (sv *solver) result(tr *track.Tracker, iters int, zeta float64, reason rpca.StopReason, res float64, sp *rpca.Sparse) *rpca.Result {
	return tr.Result("accaltproj", kernels.Dense(sv.a), kernels.Dense(sv.v), sp, iters, reason, res,
		&Params{Beta: sv.q.beta, BetaInit: sv.q.betaInit, Gamma: sv.q.gamma, Mu: sv.q.mu, FinalThreshold: zeta})
}

// zeroResult is the answer for Y = 0 (or nothing left after the first
// thresholding): M = 0, S = 0, stop reason "exact".
func (sv *solver) zeroResult(tr *track.Tracker) (*rpca.Result, error) {
	d1, d2 := sv.y.Rows, sv.y.Cols
	u, v := kernels.NewGeneral(d1, sv.r), kernels.NewGeneral(d2, sv.r)
	reason, _, err := tr.Step(0, 0, math.NaN(), kernels.Dense(u), kernels.Dense(v))
	if err != nil {
		return nil, err
	}
	if reason == "" || reason == rpca.StopResidualTol {
		reason = rpca.StopExact
	}
	return &rpca.Result{Method: "accaltproj", U: kernels.Dense(u), V: kernels.Dense(v),
		S:    &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)},
		Stop: reason, Elapsed: tr.Elapsed(), History: tr.History(),
		Params: &Params{Beta: sv.q.beta, BetaInit: sv.q.betaInit, Gamma: sv.q.gamma}}, nil
}

// tangent holds the work space of the tangent-space step: one side for
// U (X1 = (I − UUᵀ)·(Y − S)·V) and one for V (X2 = (I − VVᵀ)·(Y − S)ᵀ·U),
// each with its own scratch so that the two run at once.
type tangent struct {
	r      int
	c      blas64.General // r×r
	sides  [2]*side
	un, vn blas64.General
}

// side is the scratch of one side of the tangent step.
type side struct {
	x    blas64.General // d×r: X1 or X2, then its Q
	t    blas64.General // r×r
	r    *mat.Dense     // its R
	tau  []float64
	work []float64
}

func newTangent(d1, d2, r int) *tangent {
	mk := func(d int) *side {
		return &side{x: kernels.NewGeneral(d, r), t: kernels.NewGeneral(r, r), r: mat.NewDense(r, r, nil), tau: make([]float64, r)}
	}
	return &tangent{r: r, c: kernels.NewGeneral(r, r), sides: [2]*side{mk(d1), mk(d2)},
		un: kernels.NewGeneral(d1, r), vn: kernels.NewGeneral(d2, r)}
}

// step replaces (U, sig, V) by the best rank-r approximation of
// L̃ = P_T(Y − S) = [U Q1]·[[C, R2ᵀ], [R1, 0]]·[V Q2]ᵀ, with g1 = E·V,
// g2 = Eᵀ·U, C = Σ + Uᵀ·E·V, Q1·R1 = (I − UUᵀ)·E·V and
// Q2·R2 = (I − VVᵀ)·Eᵀ·U (Cai, Cai and Wei, Section 2.1). It returns
// σ_{r+1}(L̃), σ₁(L̃) and ‖L_{k+1} − L_k‖²_F/‖L_k‖²_F.
func (t *tangent) step(sv *solver, g1, g2 blas64.General) (sigR1, sig1, change float64, err error) {
	r := t.r
	// C = Uᵀ·E·V + Σ.
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, sv.u, g1, 0, t.c)
	for k := 0; k < r; k++ {
		t.c.Data[k*t.c.Stride+k] += sv.sig[k]
	}
	// X1 = (I − UUᵀ)·E·V, X2 = (I − VVᵀ)·Eᵀ·U, each projected twice so
	// that they are orthogonal to U, V to rounding, and their thin QRs;
	// the two sides are independent and run at once.
	g, basis := [2]blas64.General{g1, g2}, [2]blas64.General{sv.u, sv.v}
	kernels.ForEach(2, sv.workers, func(k int) {
		h := t.sides[k]
		kernels.Copy(h.x, g[k])
		for pass := 0; pass < 2; pass++ {
			projectOut(h.x, basis[k], h.t)
		}
		h.thinQR()
	})
	r1, r2 := t.sides[0].r, t.sides[1].r
	mid := mat.NewDense(2*r, 2*r, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < r; j++ {
			mid.Set(i, j, t.c.Data[i*t.c.Stride+j])
			mid.Set(i, r+j, r2.At(j, i))
			mid.Set(r+i, j, r1.At(i, j))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(mid, mat.SVDFull) {
		return 0, 0, 0, fmt.Errorf("accaltproj: %w: SVD of the %d×%d tangent-space core failed", rpca.ErrDiverged, 2*r, 2*r)
	}
	vals := svd.Values(nil)
	var um, vm mat.Dense
	svd.UTo(&um)
	svd.VTo(&vm)
	// U⁺ = U·Um[0:r, 0:r] + Q1·Um[r:2r, 0:r], likewise V⁺.
	umr, vmr := um.RawMatrix(), vm.RawMatrix()
	top := func(m blas64.General) blas64.General {
		return blas64.General{Rows: r, Cols: r, Stride: m.Stride, Data: m.Data}
	}
	bottom := func(m blas64.General) blas64.General {
		return blas64.General{Rows: r, Cols: r, Stride: m.Stride, Data: m.Data[r*m.Stride:]}
	}
	kernels.ForEach(2, sv.workers, func(k int) {
		if k == 0 {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sv.u, top(umr), 0, t.un)
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, t.sides[0].x, bottom(umr), 1, t.un)
			return
		}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sv.v, top(vmr), 0, t.vn)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, t.sides[1].x, bottom(vmr), 1, t.vn)
	})
	// ‖L⁺ − L‖² = ‖Σ⁺‖² + ‖Σ‖² − 2·tr(Σ⁺·U⁺ᵀU·Σ·VᵀV⁺), with U⁺ᵀU = Um11ᵀ
	// and VᵀV⁺ = Vm11 because Q1 ⊥ U and Q2 ⊥ V.
	oldSS, newSS, cross := 0.0, 0.0, 0.0
	for a := 0; a < r; a++ {
		oldSS += sv.sig[a] * sv.sig[a]
		newSS += vals[a] * vals[a]
		for b := 0; b < r; b++ {
			cross += vals[a] * umr.Data[b*umr.Stride+a] * sv.sig[b] * vmr.Data[b*vmr.Stride+a]
		}
	}
	change = math.Max(oldSS+newSS-2*cross, 0) / oldSS
	sv.u, t.un = t.un, sv.u
	sv.v, t.vn = t.vn, sv.v
	copy(sv.sig, vals[:r])
	return vals[r], vals[0], change, nil
}

// thinQR overwrites h.x (n×r, n ≥ r) with the Q of its thin QR
// factorization and sets h.r to R (r×r). Householder QR keeps Q
// orthonormal also when x is rank deficient (as it is once E·V has
// converged).
func (h *side) thinQR() {
	x, r := h.x, h.x.Cols
	if len(h.work) == 0 {
		h.work = make([]float64, 1)
		lapack64.Geqrf(x, h.tau, h.work, -1)
		n := int(h.work[0])
		lapack64.Orgqr(x, h.tau, h.work, -1)
		h.work = make([]float64, max(n, int(h.work[0]), 1))
	}
	lapack64.Geqrf(x, h.tau, h.work, len(h.work))
	h.r.Zero()
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			h.r.Set(i, j, x.Data[i*x.Stride+j])
		}
	}
	lapack64.Orgqr(x, h.tau, h.work, len(h.work))
}

// projectOut sets x = x − b·(bᵀx) for orthonormal columns b; tmp is r×r.
func projectOut(x, b, tmp blas64.General) {
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, b, x, 0, tmp)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -1, b, tmp, 1, x)
}

// compact copies the first r columns of m into a new r-column matrix.
func compact(m blas64.General, r int) blas64.General {
	out := kernels.NewGeneral(m.Rows, r)
	for i := 0; i < m.Rows; i++ {
		copy(out.Data[i*r:(i+1)*r], m.Data[i*m.Stride:i*m.Stride+r])
	}
	return out
}

// Params are the effective parameters of a run (rpca.Result.Params).
type Params struct {
	Beta           float64 `json:"beta"`            // β of the thresholds ζ = β·σ
	Mu             float64 `json:"mu"`              // μ of β = μr/(2√(d1·d2)): Mu, DefaultMu, or the initial factors' incoherence when larger (0 when Beta was set)
	BetaInit       float64 `json:"beta_init"`       // β_init of the first thresholding
	Gamma          float64 `json:"gamma"`           // γ, the decay of the thresholds
	FinalThreshold float64 `json:"final_threshold"` // the last ζ
}

// Params are m's settings by name ([rpca.Configurable]).
func (m *Method) Params() []rpca.Param {
	return []rpca.Param{
		param.Float(&m.Mu, "mu", fmt.Sprintf("incoherence μ in the threshold β = μr/(2√(d1·d2)) (0: %g, or the initial factors' incoherence when larger)", float64(DefaultMu)), param.OrDefault),
	}
}
