// Package ialm implements the inexact augmented Lagrange multiplier method
// of Lin, Chen and Ma, "The Augmented Lagrange Multiplier Method for Exact
// Recovery of Corrupted Low-Rank Matrices" (2010; Algorithm 5 there), for
// principal component pursuit
//
//	min ‖M‖_* + λ‖S‖₁  subject to  Y = M + S,
//
// one of the two baselines the gradient method is compared with in
// Section 5 of Yi et al.
//
// Each iteration takes one singular value thresholding step for M, one
// soft thresholding step for S and one dual ascent step:
//
//	M_{k+1} = SVT_{1/μ_k}(Y − S_k + Λ_k/μ_k)
//	S_{k+1} = soft_{λ/μ_k}(Y − M_{k+1} + Λ_k/μ_k)
//	Λ_{k+1} = Λ_k + μ_k(Y − M_{k+1} − S_{k+1})
//	μ_{k+1} = min(ρ·μ_k, μ̄)
//
// starting from Λ₀ = Y/J(Y) with J(Y) = max(‖Y‖₂, λ⁻¹‖Y‖_∞), S₀ = 0,
// μ₀ = 1.25/‖Y‖₂, ρ = 1.5 and μ̄ = 10⁷·μ₀ as published.
package ialm

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	rpca "github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/param"
	"github.com/rpca-gd/rpca/internal/tsvd"
	"github.com/rpca-gd/rpca/track"
)

// Defaults of the method's parameters and stopping rules.
const (
	DefaultRho      = 1.5 // growth factor ρ of the penalty μ
	DefaultMu0Scale = 1.25
	DefaultMuMax    = 1e7 // μ̄/μ₀

	// DefaultResidualTol is the published stopping tolerance on
	// ‖Y − M − S‖_F/‖Y‖_F. The paper's video comparison (Appendix B) used
	// 1e-3; pass it through Settings.Stop.ResidualTol.
	DefaultResidualTol = 1e-7

	// DefaultMaxIter is the published cap on the number of iterations.
	DefaultMaxIter = 1000
)

// Method is the inexact ALM solver of principal component pursuit. The zero
// value uses the documented defaults. It needs a fully observed matrix
// (Problem.Dense).
//
// Correspondence with the shared settings: the rank of M is found by the
// thresholding, not imposed; Settings.Rank only sets the first predicted
// rank (the first truncated SVD computes Rank+1 triplets). Settings.Alpha
// is not used (λ plays its role). Stop.FactorTol does not apply (no factor
// change is recorded: the rank and the SVD signs vary between iterations).
// Record 0 of the history is the start M = S = 0.
type Method struct {
	// Lambda is λ, the weight of ‖S‖₁; 0 means 1/√d1, d1 the number of
	// rows of Y, the setting of Yi et al. (Appendix B, video frames as
	// columns). Lin, Chen and Ma use 1/√max(d1, d2); the two agree for
	// square and tall matrices.
	Lambda float64

	// Rho is the factor ρ > 1 by which μ grows each iteration; 0 means 1.5.
	Rho float64

	// Mu0 is the initial penalty μ₀ > 0; 0 means 1.25/‖Y‖₂.
	Mu0 float64

	// MuMax is the cap μ̄ relative to μ₀ (μ̄ = MuMax·μ₀, MuMax ≥ 1); 0 means 1e7.
	MuMax float64
}

// Capabilities: IALM needs a fully observed Y, ignores α (its ‖S‖₁ weight
// is Lambda) and finds the rank itself.
func (m *Method) Capabilities() rpca.Capabilities {
	return rpca.Capabilities{DenseOnly: true, BytesPerEntry: 8 * 8}
}

// Name returns "ialm".
func (m *Method) Name() string { return "ialm" }

// CheckParams checks m's fields ([rpca.ParamChecker]); they do not
// depend on the problem.
func (m *Method) CheckParams(*rpca.Problem, rpca.Settings) error { return m.validate() }

// validate checks the method's own parameters.
func (m *Method) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"Lambda", m.Lambda}, {"Rho", m.Rho}, {"Mu0", m.Mu0}, {"MuMax", m.MuMax}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("ialm: %s must be positive and finite (0 for the default), got %v", f.name, f.v)
		}
	}
	if m.Rho != 0 && m.Rho <= 1 {
		return fmt.Errorf("ialm: Rho must be greater than 1, got %v", m.Rho)
	}
	if m.MuMax != 0 && m.MuMax < 1 {
		return fmt.Errorf("ialm: MuMax must be at least 1, got %v", m.MuMax)
	}
	return nil
}

// Solve runs the inexact ALM iteration on p.Dense. Partially observed
// problems are rejected with an error wrapping rpca.ErrDenseOnly.
func (m *Method) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	res, _, err := m.solve(ctx, p, s)
	return res, err
}

// solve is Solve that also returns the final state, for tests.
func (m *Method) solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, *solver, error) {
	if _, err := p.DenseInput("ialm"); err != nil {
		return nil, nil, err
	}
	if err := m.validate(); err != nil {
		return nil, nil, rpca.BadSettings(err)
	}
	d1, d2 := p.Dense.Dims()
	if s.Rank < 1 || s.Rank >= min(d1, d2) {
		return nil, nil, fmt.Errorf("ialm: rank hint must be in [1, %d), got %d", min(d1, d2), s.Rank)
	}
	tr := track.New(ctx, p, s, rpca.Stop{MaxIter: DefaultMaxIter, ResidualTol: DefaultResidualTol},
		"check Lambda, Mu0 and Rho")
	sv := &solver{
		d:       p.Dense.RawMatrix(),
		workers: s.Workers,
		seed:    s.Seed,
		tr:      tr,
		ctx:     tr.Context(),
		sv:      s.Rank + 1,
	}
	sv.lambda = cmp.Or(m.Lambda, 1/math.Sqrt(float64(d1)))
	sv.rho = cmp.Or(m.Rho, DefaultRho)
	sv.mu0 = m.Mu0
	sv.muMax = cmp.Or(m.MuMax, DefaultMuMax)
	sv.tol = tr.Rules().ResidualTol
	res, err := sv.run()
	return res, sv, err
}

// solver holds the state of one run.
type solver struct {
	d       blas64.General // the data Y (read only)
	workers int
	seed    uint64
	tr      *track.Tracker
	ctx     context.Context
	tol     float64 // effective residual tolerance (0: disabled)

	lambda, rho, mu0, muMax float64 // muMax relative to μ₀ until run scales it

	e      blas64.General // S_k (dense while iterating)
	lam    blas64.General // Λ_k
	w      blas64.General // Y − S_k + Λ_k/μ_k, then that minus M_{k+1}
	mu     float64        // μ of the next iteration
	muUsed float64        // μ used by the last iteration
	sv     int            // predicted rank for the next SVD
	fu, fv *mat.Dense     // factors of M
	rank   int            // rank of M
	iter   int
}

// svdTol is the relative accuracy asked of each truncated SVD, well below
// the residual tolerance so that SVD errors do not stall convergence.
func (sv *solver) svdTol() float64 {
	t := cmp.Or(sv.tol, DefaultResidualTol)
	return min(max(t*1e-3, 1e-12), 1e-6)
}

func newMat(r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
}

// run executes the iteration.
func (sv *solver) run() (*rpca.Result, error) {
	d := sv.d
	d1, d2 := d.Rows, d.Cols
	mn := min(d1, d2)
	sv.sv = min(sv.sv, mn)
	sv.fu, sv.fv = mat.NewDense(d1, 1, nil), mat.NewDense(d2, 1, nil)
	sv.e, sv.lam, sv.w = newMat(d1, d2), newMat(d1, d2), newMat(d1, d2)

	dF, dInf := 0.0, 0.0
	for i := 0; i < d1; i++ {
		for _, x := range d.Data[i*d.Stride : i*d.Stride+d2] {
			dF += x * x
			dInf = max(dInf, math.Abs(x))
		}
	}
	dF = math.Sqrt(dF)
	reason, done, err := sv.tr.Step(0, 1, math.NaN(), sv.fu, sv.fv)
	if err != nil {
		return nil, err
	}
	if dF == 0 {
		return sv.result(0, rpca.StopExact) // Y = 0 = 0 + 0
	}
	if done {
		return sv.result(1, reason)
	}

	// ‖Y‖₂ from a rank-1 truncated SVD; Λ₀ = Y/J(Y); μ₀ = 1.25/‖Y‖₂.
	top, err := tsvd.Top(sv.ctx, d, 1, blas64.General{}, sv.svdTol(), sv.seed, sv.workers)
	if err != nil {
		return nil, tsvd.WrapError("ialm", err)
	}
	norm2 := top.S[0]
	j := max(norm2, dInf/sv.lambda)
	kernels.ParallelFor(d1, sv.workers, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			li := sv.lam.Data[i*d2 : (i+1)*d2]
			for c, x := range d.Data[i*d.Stride : i*d.Stride+d2] {
				li[c] = x / j
			}
		}
	})
	sv.mu0 = cmp.Or(sv.mu0, DefaultMu0Scale/norm2)
	sv.muMax *= sv.mu0
	sv.mu = sv.mu0

	var start blas64.General
	grow := max(1, int(math.Round(0.05*float64(mn))))
	for {
		mu := sv.mu
		sv.muUsed = mu
		// W = Y − S_k + Λ_k/μ_k.
		sv.parallelRows(func(di, ei, li, wi []float64) float64 {
			for c := range wi {
				wi[c] = di[c] - ei[c] + li[c]/mu
			}
			return 0
		})
		// M_{k+1} = SVT_{1/μ}(W) from the top sv triplets.
		tri, err := tsvd.Top(sv.ctx, sv.w, sv.sv, start, sv.svdTol(), sv.seed+uint64(sv.iter)+1, sv.workers)
		if err != nil {
			return nil, tsvd.WrapError("ialm", err)
		}
		start = tri.V
		svp := 0
		for _, s := range tri.S {
			if s > 1/mu {
				svp++
			}
		}
		// Predicted rank of the next SVD (the rule of Lin, Chen and Ma):
		// one more than found, or a jump of 5% of min(d1, d2) (at least 1)
		// when every computed singular value was above the threshold.
		if svp < sv.sv {
			sv.sv = min(svp+1, mn)
		} else {
			sv.sv = min(svp+grow, mn)
		}
		sv.rank = svp
		if svp == 0 {
			sv.fu, sv.fv = mat.NewDense(d1, 1, nil), mat.NewDense(d2, 1, nil)
		} else {
			shrunk := make([]float64, svp)
			for c := range shrunk {
				shrunk[c] = tri.S[c] - 1/mu
			}
			sv.fu = tsvd.ScaledFactor(tri.U, shrunk)
			sv.fv = tsvd.ScaledFactor(tri.V, shrunk)
			// W ← W − M_{k+1} = Y − M_{k+1} − S_k + Λ_k/μ_k.
			kernels.SubMulABt(sv.w, sv.w, sv.fu.RawMatrix(), sv.fv.RawMatrix(), sv.workers)
		}
		// S_{k+1} = soft_{λ/μ}(Y − M_{k+1} + Λ_k/μ) and Λ_{k+1} = Λ_k + μ·Z
		// with Z = Y − M_{k+1} − S_{k+1}, summing ‖Z‖²_F. W is left as is:
		// μ·W is the subgradient of ‖·‖_* at M_{k+1} that SVT produces.
		tau := sv.lambda / mu
		ss := sv.parallelRows(func(di, ei, li, wi []float64) float64 {
			acc := 0.0
			for c, x := range wi {
				t := x + ei[c] // Y − M_{k+1} + Λ_k/μ
				s := 0.0
				switch {
				case t > tau:
					s = t - tau
				case t < -tau:
					s = t + tau
				}
				z := t - li[c]/mu - s
				ei[c] = s
				li[c] += mu * z
				acc += z * z
			}
			return acc
		})
		sv.mu = min(sv.rho*mu, sv.muMax)
		sv.iter++
		res := math.Sqrt(ss) / dF
		reason, done, err := sv.tr.Step(sv.iter, res, math.NaN(), sv.fu, sv.fv)
		if err != nil {
			return nil, err
		}
		if done {
			return sv.result(res, reason)
		}
	}
}

// parallelRows calls fn on the rows of Y, S, Λ and W in parallel and
// returns the sum of its results.
func (sv *solver) parallelRows(fn func(di, ei, li, wi []float64) float64) float64 {
	d := sv.d
	n := d.Cols
	parts := make([]float64, d.Rows)
	kernels.ParallelFor(d.Rows, sv.workers, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parts[i] = fn(d.Data[i*d.Stride:i*d.Stride+n], sv.e.Data[i*n:(i+1)*n],
				sv.lam.Data[i*n:(i+1)*n], sv.w.Data[i*n:(i+1)*n])
		}
	})
	return floats.Sum(parts)
}

// result assembles the Result; S is the soft-thresholded iterate, whose
// zeros are exact.
func (sv *solver) result(res float64, reason rpca.StopReason) (*rpca.Result, error) {
	e := sv.e
	sp := rpca.SparseWhere(e.Rows, e.Cols, e.Data, e.Stride, func(x float64) bool { return x != 0 })
	return sv.tr.Result("ialm", sv.fu, sv.fv, sp, sv.iter, reason, res,
		&Params{Lambda: sv.lambda, Rho: sv.rho, Mu0: sv.mu0, MuMax: sv.muMax, MuFinal: sv.muUsed, FinalRank: sv.rank}), nil
}

// Params are the effective parameters of a run (rpca.Result.Params).
type Params struct {
	Lambda    float64 `json:"lambda"`     // λ, the weight of ‖S‖₁
	Rho       float64 `json:"rho"`        // ρ, the growth of the penalty μ
	Mu0       float64 `json:"mu0"`        // the first μ
	MuMax     float64 `json:"mu_max"`     // the cap on μ
	MuFinal   float64 `json:"mu_final"`   // the last μ
	FinalRank int     `json:"final_rank"` // rank of the result
}

// Params are m's settings by name ([rpca.Configurable]).
func (m *Method) Params() []rpca.Param {
	return []rpca.Param{
		param.Float(&m.Lambda, "lambda", "weight λ of ‖S‖₁ (0: 1/√d1)", param.OrDefault),
	}
}
