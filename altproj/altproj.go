// Package altproj implements AltProj, the alternating projections method
// for robust PCA of Netrapalli, Niranjan, Sanghavi, Anandkumar and Jain,
// "Non-convex Robust PCA" (NIPS 2014, Algorithm 1). It is one of the two
// baselines the gradient method is compared with in Section 5 of Yi et al.
//
// AltProj alternates a rank-k projection L = P_k(Y − S) (truncated SVD)
// with elementwise hard thresholding S = H_ζ(Y − L), raising the target
// rank k stage by stage from 1 to r and lowering the threshold ζ
// geometrically within each stage.
package altproj

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
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
	// DefaultMu is the default incoherence parameter μ (see Method.Mu),
	// chosen by measurement on the paper's synthetic model (r = 10,
	// α = 0.1, d = 500): μ = 0.5 and 1 recover M*, while μ ≥ 1.5 fails
	// (error 0.66) because the final thresholds β·σ_{r+1}(Y − S) stay above
	// the corruption magnitude 5r/d, so no corruption is ever removed. The
	// theoretical β uses the true incoherence of M*, about 1.6 for these
	// Gaussian factors, and assumes α ≤ 1/(512μ²r), far below the α of the
	// experiments. μ = 1 is the middle of the working range. The authors'
	// MATLAB code also defaults its incoherence to 1 (there it scales a
	// threshold σ/√n rather than β·σ, so the two are not interchangeable).
	DefaultMu = 1.0

	// DefaultResidualTol is the default of Stop.ResidualTol: the paper's
	// Appendix B stops AltProj at ‖Y − L − S‖_F/‖Y‖_F ≤ 1e-3.
	DefaultResidualTol = 1e-3

	// DefaultStallTol is the default Method.StallTol, the value of the
	// authors' code (its effect on time is in docs/performance.md).
	DefaultStallTol = 0.1

	// DefaultMaxIter is the default cap on the total number of iterations
	// over all stages. It is far above the r·(T+1) iterations of Algorithm
	// 1 for realistic ε, so the algorithm's own schedule normally ends the run.
	DefaultMaxIter = 10000
)

// Method is AltProj (Algorithm 1 of Netrapalli et al.). The zero value uses
// the documented defaults. It needs a fully observed matrix (Problem.Dense).
//
// Correspondence with the shared settings: Settings.Rank is the target rank
// r (the number of stages); Settings.Alpha is not used (AltProj finds the
// support by thresholding, not by a sparsity level); Stop.FactorTol does
// not apply (the factors of a truncated SVD are defined only up to sign,
// so no factor change is recorded). Iterations count the inner iterations
// of all stages; record 0 of the history is the initial thresholding.
type Method struct {
	// Mu is the incoherence parameter μ of the low-rank part; it sets the
	// threshold parameter β = 4μ²r/√(d1·d2), the paper's β = 4μ²r/n
	// (Theorem 1, square n×n, L* μ-incoherent: ‖Uᵀe_i‖ ≤ μ√(r/n)) with n
	// replaced by √(d1·d2) for rectangular Y. 0 means DefaultMu.
	Mu float64

	// Beta, when positive, sets β directly and Mu is ignored.
	Beta float64

	// Eps is the accuracy ε of Algorithm 1 relative to ‖Y‖_F (the
	// algorithm's ε is Eps·‖Y‖_F). It sets the number of iterations per
	// stage T (line 6) and the early exit of line 11. 0 means the effective
	// Stop.ResidualTol, or DefaultResidualTol when that rule is disabled.
	Eps float64

	// InnerIters, when positive, fixes T, the last inner iteration index of
	// every stage (T+1 iterations t = 0…T, line 6). 0 means line 6's
	// T = ⌈10·ln(n·β·‖Y − S₀‖₂/ε)⌉ with n = √(d1·d2) and S₀ the sparse
	// estimate at the start of the stage, evaluated anew for each stage.
	InnerIters int

	// StallTol ends a stage before T when one iteration lowered the
	// residual ‖Y − L − S‖_F by less than this fraction. It is the
	// authors' code's shortcut (with 0.1), not part of Algorithm 1, and it
	// never ends the last stage. 0 means DefaultStallTol; a negative
	// value turns it off, for the published schedule of T + 1 iterations
	// in every stage.
	StallTol float64
}

// Capabilities: AltProj needs a fully observed Y, finds the support of S by
// thresholding (α unused) and returns rank-r factors.
func (m *Method) Capabilities() rpca.Capabilities {
	return rpca.Capabilities{DenseOnly: true, FixedRank: true, BytesPerEntry: 5 * 8}
}

// Name returns "altproj".
func (m *Method) Name() string { return "altproj" }

// CheckParams checks m's fields ([rpca.ParamChecker]); they do not
// depend on the problem.
func (m *Method) CheckParams(*rpca.Problem, rpca.Settings) error { return m.validate() }

// validate checks the method's own parameters.
func (m *Method) validate() error {
	bad := func(name string, v float64) error {
		return fmt.Errorf("altproj: %s must be a finite non-negative number, got %v", name, v)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Mu", m.Mu}, {"Beta", m.Beta}, {"Eps", m.Eps}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return bad(f.name, f.v)
		}
	}
	if math.IsNaN(m.StallTol) || math.IsInf(m.StallTol, 0) {
		return fmt.Errorf("altproj: StallTol must be finite, got %v", m.StallTol)
	}
	if m.Eps >= 1 {
		return fmt.Errorf("altproj: Eps must be below 1 (it is relative to ‖Y‖_F), got %v", m.Eps)
	}
	if m.StallTol >= 1 {
		return fmt.Errorf("altproj: StallTol must be below 1, got %v", m.StallTol)
	}
	if m.InnerIters < 0 {
		return fmt.Errorf("altproj: InnerIters must be non-negative, got %d", m.InnerIters)
	}
	return nil
}

// Solve runs Algorithm 1 on p.Dense. Partially observed problems are
// rejected with an error wrapping rpca.ErrDenseOnly.
func (m *Method) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	if _, err := p.DenseInput("altproj"); err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		return nil, rpca.BadSettings(err)
	}
	d1, d2 := p.Dense.Dims()
	r := s.Rank
	if r < 1 || r >= min(d1, d2) {
		return nil, fmt.Errorf("altproj: rank must be in [1, %d), got %d", min(d1, d2), r)
	}
	tr := track.New(ctx, p, s, rpca.Stop{MaxIter: DefaultMaxIter, ResidualTol: DefaultResidualTol},
		"AltProj's threshold is too low for these data; try a larger Mu or Beta")
	sv := &solver{
		y:       p.Dense.RawMatrix(),
		r:       r,
		workers: s.Workers,
		seed:    s.Seed,
		tr:      tr,
		ctx:     tr.Context(),
	}
	sv.setParams(m, tr.Rules())
	return sv.run()
}

// solver holds the state of one run.
type solver struct {
	// inputs and parameters
	y        blas64.General
	r        int
	workers  int
	seed     uint64
	tr       *track.Tracker
	ctx      context.Context
	mu, beta float64 // μ and β
	eps      float64 // relative ε
	fixedT   int     // InnerIters (0: line 6)
	stallTol float64
	floorBuf []float64 // fitNoise's sample

	// state
	w     blas64.General // Y − S, d1×d2
	bits  []uint64       // support of S, wpr words per row
	wpr   int
	nnz   []int // non-zeros of S per row
	fu    *mat.Dense
	fv    *mat.Dense
	iter  int
	lastT int
	rank  int
	stage int
}

// setParams fills in the effective parameters.
func (sv *solver) setParams(m *Method, rules rpca.Stop) {
	d1, d2 := sv.y.Rows, sv.y.Cols
	sv.mu = cmp.Or(m.Mu, DefaultMu)
	sv.beta = cmp.Or(m.Beta, 4*sv.mu*sv.mu*float64(sv.r)/math.Sqrt(float64(d1)*float64(d2)))
	sv.eps = cmp.Or(m.Eps, rules.ResidualTol, DefaultResidualTol)
	sv.fixedT = m.InnerIters
	sv.stallTol = cmp.Or(m.StallTol, DefaultStallTol)
}

// svdTol is the relative accuracy asked of each truncated SVD: well below
// the requested accuracy ε so that the SVD error does not limit recovery.
func (sv *solver) svdTol() float64 {
	return min(max(sv.eps*1e-3, 1e-12), 1e-6)
}

// run executes Algorithm 1.
func (sv *solver) run() (*rpca.Result, error) {
	y := sv.y
	d1, d2 := y.Rows, y.Cols
	n := math.Sqrt(float64(d1) * float64(d2))
	yF := math.Sqrt(kernels.SumSq(y, sv.workers))
	sv.w = blas64.General{Rows: d1, Cols: d2, Stride: d2, Data: make([]float64, d1*d2)}
	sv.wpr = (d2 + 63) / 64
	sv.bits = make([]uint64, d1*sv.wpr)
	sv.nnz = make([]int, d1)
	sv.fu, sv.fv = mat.NewDense(d1, 1, nil), mat.NewDense(d2, 1, nil)
	rel := func(ss float64) float64 {
		if yF == 0 {
			return 0
		}
		return math.Sqrt(ss) / yF
	}

	// Lines 3–4: ζ₀ = β·σ₁(Y), L⁽⁰⁾ = 0, S⁽⁰⁾ = H_ζ₀(Y).
	zeta0 := 0.0
	if yF > 0 {
		top, err := tsvd.Top(sv.ctx, y, 1, blas64.General{}, sv.svdTol(), sv.seed, sv.workers)
		if err != nil {
			return nil, tsvd.WrapError("altproj", err)
		}
		zeta0 = sv.beta * top.S[0]
	}
	for i := 0; i < d1; i++ {
		copy(sv.w.Data[i*d2:(i+1)*d2], y.Data[i*y.Stride:i*y.Stride+d2])
	}
	res := rel(sv.threshold(zeta0))
	if reason, done, err := sv.tr.Step(0, res, math.NaN(), sv.fu, sv.fv); err != nil {
		return nil, err
	} else if yF == 0 {
		return sv.result(res, rpca.StopExact) // Y = 0 = 0 + 0
	} else if done {
		return sv.result(res, reason)
	}

	var start blas64.General
	for k := 1; k <= sv.r; k++ { // line 5: stages
		sv.stage = k
		T := sv.fixedT
		prev := res
		var sig []float64
		for t := 0; ; t++ { // line 6: t = 0…T
			// Lines 7–8 share one rank-(k+1) SVD of Y − S⁽ᵗ⁾.
			tri, err := tsvd.Top(sv.ctx, sv.w, k+1, start, sv.svdTol(), sv.seed+uint64(sv.iter)+1, sv.workers)
			if err != nil {
				return nil, tsvd.WrapError("altproj", err)
			}
			start, sig = tri.V, tri.S
			if t == 0 && sv.fixedT == 0 {
				T = innerIters(n, sv.beta, sig[0], sv.eps*yF)
			}
			sv.lastT = T
			zeta := sv.beta * (sig[k] + math.Ldexp(sig[k-1], -t)) // line 7
			sv.fu = tsvd.ScaledFactor(tri.U, sig[:k])             // line 8: L = P_k(Y − S)
			sv.fv = tsvd.ScaledFactor(tri.V, sig[:k])
			sv.rank = k
			kernels.SubMulABt(sv.w, y, sv.fu.RawMatrix(), sv.fv.RawMatrix(), sv.workers)
			floor := noiseSpreads * sv.fitNoise()
			atFloor := zeta <= floor
			res = rel(sv.threshold(max(zeta, floor))) // line 9: S = H_ζ(Y − L)
			sv.iter++
			reason, done, err := sv.tr.Step(sv.iter, res, math.NaN(), sv.fu, sv.fv)
			if err != nil {
				return nil, err
			}
			if done {
				return sv.result(res, reason)
			}
			if atFloor && k == sv.r && prev-res <= 1e-6*prev {
				// The threshold is at the noise and L no longer moves:
				// what iterating can do is done (the verification
				// accepts the stop when the residual is noise).
				return sv.result(res, rpca.StopNoiseFloor)
			}
			if t >= T {
				break
			}
			if sv.stallTol > 0 && k < sv.r && prev-res <= sv.stallTol*prev {
				break
			}
			prev = res
		}
		// Line 11: stop at rank k when the next singular value of Y − S is
		// negligible (L has rank k, so σ_{k+1} is read off Y − S⁽ᵗ⁾, whose
		// projection gave L⁽ᵗ⁺¹⁾).
		if k < sv.r && sv.beta*sig[k] < sv.eps*yF/(2*n) {
			return sv.result(res, rpca.StopExact)
		}
	}
	// Line 17: the schedule of r stages is complete; this is not the
	// iteration cap, which the tracker reports as StopMaxIter.
	return sv.result(res, rpca.StopSchedule)
}

// noiseSpreads is the floor of the threshold in robust spreads of the
// fit's noise (fitNoise), as AccAltProj's: on noisy data line 7's
// threshold descends into the noise, and S takes it up.
const noiseSpreads = 3

// fitNoise returns the robust spread of D = Y − L, held in w
// (robust.SampledSpread): the noise of the fit, which corruptions on
// fewer than half of the entries do not move; on exact data the error
// of L on the clean entries.
func (sv *solver) fitNoise() float64 {
	w := sv.w
	var s float64
	s, sv.floorBuf = robust.SampledSpread(w.Rows*w.Cols, sv.floorBuf, func(q int) (float64, bool) {
		return w.Data[(q/w.Cols)*w.Stride+q%w.Cols], true
	})
	return s
}

// innerIters is line 6's T = ⌈10·ln(n·β·σ/ε)⌉, at least 1.
func innerIters(n, beta, sigma, eps float64) int {
	x := 10 * math.Log(n*beta*sigma/eps)
	if !(x >= 1) { // also catches NaN
		return 1
	}
	return int(math.Ceil(min(x, 1e6)))
}

// threshold replaces D = Y − L, held in w, by Y − H_ζ(D) and records the
// support of H_ζ(D) = {|D_ij| ≥ ζ}. It returns ‖Y − L − H_ζ(D)‖²_F.
func (sv *solver) threshold(zeta float64) float64 {
	w, y, wpr := sv.w, sv.y, sv.wpr
	parts := make([]float64, w.Rows)
	kernels.ParallelFor(w.Rows, sv.workers, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			wi := w.Data[i*w.Stride : i*w.Stride+w.Cols]
			yi := y.Data[i*y.Stride : i*y.Stride+y.Cols]
			bi := sv.bits[i*wpr : (i+1)*wpr]
			clear(bi)
			ss, nnz := 0.0, 0
			for j, d := range wi {
				if math.Abs(d) >= zeta {
					wi[j] = yi[j] - d
					bi[j>>6] |= 1 << (uint(j) & 63)
					nnz++
				} else {
					wi[j] = yi[j]
					ss += d * d
				}
			}
			parts[i], sv.nnz[i] = ss, nnz
		}
	})
	return floats.Sum(parts)
}

// result assembles the Result from the current factors and support; the
// sparse part is S = Y − U·Vᵀ on the support (zeros dropped).
func (sv *solver) result(res float64, reason rpca.StopReason) (*rpca.Result, error) {
	y := sv.y
	d1, d2 := y.Rows, y.Cols
	u, v := sv.fu.RawMatrix(), sv.fv.RawMatrix()
	k := u.Cols
	sp := &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)}
	total := 0
	for _, c := range sv.nnz {
		total += c
	}
	sp.ColIdx = make([]int32, 0, total)
	sp.Val = make([]float64, 0, total)
	for i := 0; i < d1; i++ {
		ui := u.Data[i*u.Stride : i*u.Stride+k]
		bi := sv.bits[i*sv.wpr : (i+1)*sv.wpr]
		for wi, word := range bi {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &= word - 1
				j := wi*64 + b
				vj := v.Data[j*v.Stride : j*v.Stride+k]
				l := 0.0
				for c, x := range ui {
					l += x * vj[c]
				}
				if val := y.Data[i*y.Stride+j] - l; val != 0 {
					sp.ColIdx = append(sp.ColIdx, int32(j))
					sp.Val = append(sp.Val, val)
				}
			}
		}
		sp.RowPtr[i+1] = len(sp.Val)
	}
	return sv.tr.Result("altproj", sv.fu, sv.fv, sp, sv.iter, reason, res, &Params{Mu: sv.mu, Beta: sv.beta, Eps: sv.eps,
		InnerIters: sv.lastT, StallTol: sv.stallTol, Stages: sv.stage, FinalRank: sv.rank}), nil
}

// Params are the effective parameters of a run (rpca.Result.Params).
type Params struct {
	Mu         float64 `json:"mu"`          // incoherence μ
	Beta       float64 `json:"beta"`        // β = 4μ²r/√(d1·d2) of the thresholds
	Eps        float64 `json:"eps"`         // ε, the target accuracy
	InnerIters int     `json:"inner_iters"` // inner iterations of the last stage
	StallTol   float64 `json:"stall_tol"`   // relative progress below which a stage ends
	Stages     int     `json:"stages"`      // stages run (the rank grows by one a stage)
	FinalRank  int     `json:"final_rank"`  // rank of the result
}

// Params are m's settings by name ([rpca.Configurable]).
func (m *Method) Params() []rpca.Param {
	return []rpca.Param{
		param.Float(&m.Mu, "mu", fmt.Sprintf("incoherence μ in the threshold β = 4μ²r/√(d1·d2) (0: %g)", DefaultMu), param.OrDefault),
	}
}
