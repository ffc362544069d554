package gdcore

import (
	"fmt"
	"github.com/rpca-gd/rpca"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// UpdateRule selects the Phase II step of [GD]: how the factors move
// along the gradients E·V and Eᵀ·U of the loss once S_t is fixed.
type UpdateRule string

// The update rules of GD.
const (
	// UpdatePaper is the paper's projected step with the balancing term
	// (Algorithm 1 lines 7–8, Algorithm 2 lines 7–8):
	//   U⁺ = Π_𝒰(U + η/p·E·V − b·η·U(UᵀU − VᵀV)), η = c/σ̂₁,
	// and symmetrically for V. Its contraction rate per step is about
	// 1 − c/κ, so it slows down in proportion to the condition number κ
	// of M.
	UpdatePaper UpdateRule = "paper"

	// UpdateScaled is the scaled (preconditioned) step of Tong, Ma and Chi,
	// "Accelerating ill-conditioned low-rank matrix estimation via scaled
	// gradient descent" (JMLR 2021), with the paper's sparse estimator
	// unchanged:
	//   U⁺ = U + η/p·E·V·(VᵀV)⁻¹,  V⁺ = V + η/p·Eᵀ·U·(UᵀU)⁻¹,
	// η = c (no σ̂₁: the preconditioner makes the step scale-free). Its
	// contraction rate does not depend on κ. With the projection on, rows
	// are kept within the bound of the low-rank part itself,
	// ‖U_i·Vᵀ‖ ≤ √(2μr/d1)·σ̂₁ (and ‖V_j·Uᵀ‖ ≤ √(2μr/d2)·σ̂₁), the scaled
	// form of eq. (set).
	UpdateScaled UpdateRule = "scaled"

	// UpdateALS replaces the gradient step by alternating least squares,
	// in Algorithm 2's setting (a dense Y counts as observed everywhere):
	// with S_t's
	// support Ω_t fixed by line 6, every row of U is the exact minimiser
	// of ½Σ_{Φ∖Ω_t}(y_ij − u_iᵀv_j)² + (λ/2)‖u_i‖² given V, then every row
	// of V given the new U (λ = GD.Ridge). It is not in the paper: it is
	// how recommender systems fit factor models (alternating least
	// squares), and on ratings, where a few users and items hold most of
	// the entries, one step of it does what hundreds of gradient steps
	// do, whose single step size has to suit the busiest rows. It costs
	// O(r²) per observed entry and O(r³) per line, has no step size, and
	// lowers the loss at every half-step. StepConst, Step, Balance, Mu
	// and the projection do not apply.
	UpdateALS UpdateRule = "als"
)

// DefaultStepScaled is the default step η of [UpdateScaled], for full and
// partial observations alike (Tong, Ma and Chi prove contraction for
// η ≤ 2/3 and use 0.5).
const DefaultStepScaled = 0.5

// updater forms the next factors un, vn from u, v and the negated
// gradients gu = E·V, gv = Eᵀ·U, with its step η multiplied by t ∈ (0, 1]
// (the backtracking rule). It owns its r×r work space.
type updater interface {
	step(un, vn, u, v, gu, gv blas64.General, t float64) error
	// penalty is the rule's own term of the objective at (u, v).
	penalty(u, v blas64.General) float64
	// predicted is −⟨∇F, (un − u, vn − v)⟩, the first-order decrease of
	// the objective F = ½‖E‖²/p + penalty along the step just taken.
	predicted(un, vn, u, v, gu, gv blas64.General) float64
}

// dotDiff returns ⟨g, a − b⟩.
func dotDiff(g, a, b blas64.General) float64 {
	s := 0.0
	for i := 0; i < g.Rows; i++ {
		gi, ai, bi := g.Data[i*g.Stride:i*g.Stride+g.Cols], a.Data[i*a.Stride:], b.Data[i*b.Stride:]
		for k, x := range gi {
			s += x * (ai[k] - bi[k])
		}
	}
	return s
}

// paperUpdate is UpdatePaper.
type paperUpdate struct {
	eta, balance, gscale float64        // η, b and 1/p
	ridge                float64        // λ (the penalty is λ/(2p)·(‖U‖² + ‖V‖²))
	ud, vd               blas64.General // U·D and V·D of predicted, reused
	boundU, boundV       float64        // row bounds of eq. (set); 0 = no projection
	d                    blas64.General
}

// newPaperUpdate is the paper's rule for a run whose initial SVD had top
// singular value sigma1: η = c/σ̂₁ and, with the projection on, the row
// bounds √(2μr/d)·√σ̂₁ of eq. (set) (‖U0‖op = ‖V0‖op = √σ̂₁ since
// U0 = LΣ^½).
func newPaperUpdate(q *gdParams, sigma1 float64) *paperUpdate {
	pu := &paperUpdate{eta: q.c / sigma1, balance: q.balance, gscale: 1 / q.p, ridge: q.ridge, d: kernels.NewGeneral(q.rank, q.rank),
		ud: kernels.NewGeneral(q.d1, q.rank), vd: kernels.NewGeneral(q.d2, q.rank)}
	if q.project {
		pu.boundU = math.Sqrt(2*q.mu*float64(q.rank)/float64(q.d1)) * math.Sqrt(sigma1)
		pu.boundV = math.Sqrt(2*q.mu*float64(q.rank)/float64(q.d2)) * math.Sqrt(sigma1)
	}
	return pu
}

func (pu *paperUpdate) step(un, vn, u, v, gu, gv blas64.General, t float64) error {
	d := pu.d
	eta := t * pu.eta
	gramDiff(d, u, v) // D = UᵀU − VᵀV
	// U+ = U + η/p·E·V − b·η·U·D ; V+ = V + η/p·Eᵀ·U + b·η·V·D
	kernels.Copy(un, u)
	axpyGeneral(un, eta*pu.gscale, gu)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -pu.balance*eta, u, d, 1, un)
	kernels.Copy(vn, v)
	axpyGeneral(vn, eta*pu.gscale, gv)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, pu.balance*eta, v, d, 1, vn)
	if pu.ridge > 0 { // − η·λ/p·U, − η·λ/p·V
		axpyGeneral(un, -eta*pu.ridge*pu.gscale, u)
		axpyGeneral(vn, -eta*pu.ridge*pu.gscale, v)
	}
	if pu.boundU > 0 {
		projectRows(un, pu.boundU)
		projectRows(vn, pu.boundV)
	}
	return nil
}

// penalty is the balancing term ¼·b·‖UᵀU − VᵀV‖²_F, whose gradient
// b·U(UᵀU − VᵀV) (and −b·V(UᵀU − VᵀV)) is the step's balancing part.
func (pu *paperUpdate) penalty(u, v blas64.General) float64 {
	return balancePenalty(pu.balance, pu.d, u, v) + ridgePenalty(pu.ridge*pu.gscale, u, v)
}

// ridgePenalty is (λ/2)(‖U‖²_F + ‖V‖²_F).
func ridgePenalty(lambda float64, u, v blas64.General) float64 {
	if lambda == 0 {
		return 0
	}
	return 0.5 * lambda * (kernels.SumSq(u, 1) + kernels.SumSq(v, 1))
}

// ridgePredicted is −λ(⟨U, ΔU⟩ + ⟨V, ΔV⟩), the ridge part of the
// predicted decrease.
func ridgePredicted(lambda float64, un, vn, u, v blas64.General) float64 {
	if lambda == 0 {
		return 0
	}
	return -lambda * (dotDiff(u, un, u) + dotDiff(v, vn, v))
}

// predicted is (1/p)(⟨E·V, ΔU⟩ + ⟨Eᵀ·U, ΔV⟩) − b(⟨U·D, ΔU⟩ − ⟨V·D, ΔV⟩)
// with D = UᵀU − VᵀV at (u, v).
func (pu *paperUpdate) predicted(un, vn, u, v, gu, gv blas64.General) float64 {
	return pu.gscale*(dotDiff(gu, un, u)+dotDiff(gv, vn, v)) + balancePredicted(pu.balance, pu.d, pu.ud, pu.vd, un, vn, u, v) +
		ridgePredicted(pu.ridge*pu.gscale, un, vn, u, v)
}

// scaledUpdate is UpdateScaled.
type scaledUpdate struct {
	eta, gscale    float64        // η and 1/p
	ridge          float64        // λ
	balance        float64        // b of the balancing term, 0 unless given
	d, ud, vd      blas64.General // UᵀU − VᵀV, U·D and V·D
	boundU, boundV float64        // bounds on the rows of UVᵀ and VUᵀ; 0 = no projection
	gu, gv         blas64.General
	pu, pv         blas64.General // (VᵀV)⁻¹ and (UᵀU)⁻¹
}

// newScaledUpdate is the scaled rule, η = c, with row bounds on UVᵀ of
// √(2μr/d)·σ̂₁ when the projection is on.
func newScaledUpdate(q *gdParams, sigma1 float64) *scaledUpdate {
	su := &scaledUpdate{eta: q.c, gscale: 1 / q.p, ridge: q.ridge, balance: q.balance,
		gu: kernels.NewGeneral(q.d1, q.rank), gv: kernels.NewGeneral(q.d2, q.rank),
		pu: kernels.NewGeneral(q.rank, q.rank), pv: kernels.NewGeneral(q.rank, q.rank),
		d: kernels.NewGeneral(q.rank, q.rank), ud: kernels.NewGeneral(q.d1, q.rank), vd: kernels.NewGeneral(q.d2, q.rank)}
	if q.project {
		su.boundU = math.Sqrt(2*q.mu*float64(q.rank)/float64(q.d1)) * sigma1
		su.boundV = math.Sqrt(2*q.mu*float64(q.rank)/float64(q.d2)) * sigma1
	}
	return su
}

func (su *scaledUpdate) step(un, vn, u, v, gu, gv blas64.General, t float64) error {
	if err := gramInverse(su.pu, v); err != nil {
		return err
	}
	if err := gramInverse(su.pv, u); err != nil {
		return err
	}
	// U+ = U + η/p·(E·V − λU − b·p·U·D)(VᵀV)⁻¹ ;
	// V+ = V + η/p·(Eᵀ·U − λV + b·p·V·D)(UᵀU)⁻¹, D = UᵀU − VᵀV: the
	// paper's direction (with its balancing term when b > 0), in the
	// metric of the scaled step.
	gU, gV := gu, gv
	if su.ridge > 0 || su.balance > 0 {
		kernels.Copy(su.gu, gu)
		kernels.Copy(su.gv, gv)
		gU, gV = su.gu, su.gv
	}
	if su.ridge > 0 {
		axpyGeneral(su.gu, -su.ridge, u)
		axpyGeneral(su.gv, -su.ridge, v)
	}
	if su.balance > 0 {
		d, bp := su.d, su.balance/su.gscale
		gramDiff(d, u, v)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, -bp, u, d, 1, su.gu)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, bp, v, d, 1, su.gv)
	}
	kernels.Copy(un, u)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, t*su.eta*su.gscale, gU, su.pu, 1, un)
	kernels.Copy(vn, v)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, t*su.eta*su.gscale, gV, su.pv, 1, vn)
	if su.boundU > 0 {
		// The bounds are on the rows of U⁺V⁺ᵀ, whose norms are
		// ‖U⁺_i (V⁺ᵀV⁺)^½‖; both factors are rescaled from the same
		// Gram matrices, formed before either is changed.
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, vn, vn, 0, su.pu)
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, un, un, 0, su.pv)
		projectRowsMetric(un, su.pu, su.boundU)
		projectRowsMetric(vn, su.pv, su.boundV)
	}
	return nil
}

// penalty is the ridge term (λ/2p)(‖U‖² + ‖V‖²), if any, and the
// balancing term ¼·b·‖UᵀU − VᵀV‖²_F when b > 0 (by default the scaled
// rule has none).
func (su *scaledUpdate) penalty(u, v blas64.General) float64 {
	return balancePenalty(su.balance, su.d, u, v) + ridgePenalty(su.ridge*su.gscale, u, v)
}

// predicted is (1/p)(⟨E·V, ΔU⟩ + ⟨Eᵀ·U, ΔV⟩) plus the ridge and
// balancing parts.
func (su *scaledUpdate) predicted(un, vn, u, v, gu, gv blas64.General) float64 {
	return su.gscale*(dotDiff(gu, un, u)+dotDiff(gv, vn, v)) + ridgePredicted(su.ridge*su.gscale, un, vn, u, v) +
		balancePredicted(su.balance, su.d, su.ud, su.vd, un, vn, u, v)
}

// gramDiff sets d = UᵀU − VᵀV (r×r), the imbalance of the factors.
func gramDiff(d, u, v blas64.General) {
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, u, u, 0, d)
	blas64.Gemm(blas.Trans, blas.NoTrans, -1, v, v, 1, d)
}

// balancePenalty is ¼·b·‖UᵀU − VᵀV‖²_F (0 for b = 0), with d r×r scratch.
func balancePenalty(b float64, d, u, v blas64.General) float64 {
	if b == 0 {
		return 0
	}
	gramDiff(d, u, v)
	s := 0.0
	for _, x := range d.Data[:d.Rows*d.Stride] {
		s += x * x
	}
	return 0.25 * b * s
}

// balancePredicted is −b(⟨U·D, ΔU⟩ − ⟨V·D, ΔV⟩), D = UᵀU − VᵀV at (u, v):
// the balancing part of the predicted decrease (0 for b = 0).
func balancePredicted(b float64, d, ud, vd, un, vn, u, v blas64.General) float64 {
	if b == 0 {
		return 0
	}
	gramDiff(d, u, v)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, u, d, 0, ud)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, v, d, 0, vd)
	return -b * (dotDiff(ud, un, u) - dotDiff(vd, vn, v))
}

// gramInverse sets dst = (AᵀA + εI)⁻¹ for the r-column matrix a, with a
// ridge ε of 1e-13 of the mean diagonal so that a rank-deficient factor
// (a zero column, as the initial SVD gives when the data have fewer than
// r non-zero singular values) leaves its dead directions alone instead of
// failing. The ridge changes only the metric of the step, not its fixed
// points.
func gramInverse(dst, a blas64.General) error {
	r := a.Cols
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, a, a, 0, dst)
	tr := 0.0
	for k := 0; k < r; k++ {
		tr += dst.Data[k*dst.Stride+k]
	}
	eps := 1e-13 * tr / float64(r)
	if !(eps > 0) || math.IsInf(eps, 0) {
		return fmt.Errorf("%w: a factor is zero or non-finite (trace of its Gram matrix %v)", rpca.ErrDiverged, tr)
	}
	for k := 0; k < r; k++ {
		dst.Data[k*dst.Stride+k] += eps
	}
	sym := blas64.Symmetric{N: r, Stride: dst.Stride, Data: dst.Data, Uplo: blas.Upper}
	var ch blas64.Triangular
	ch.N, ch.Stride, ch.Data, ch.Uplo, ch.Diag = r, dst.Stride, dst.Data, blas.Upper, blas.NonUnit
	if _, ok := lapack64.Potrf(sym); !ok {
		return fmt.Errorf("%w: the Gram matrix of a factor is not positive definite", rpca.ErrDiverged)
	}
	if _, ok := lapack64.Potri(ch); !ok {
		return fmt.Errorf("%w: the Gram matrix of a factor is singular", rpca.ErrDiverged)
	}
	// Potri fills the upper triangle; mirror it.
	for i := 0; i < r; i++ {
		for j := 0; j < i; j++ {
			dst.Data[i*dst.Stride+j] = dst.Data[j*dst.Stride+i]
		}
	}
	return nil
}

// projectRowsMetric rescales every row a_i with a_i·G·a_iᵀ > bound² to
// a_i·G·a_iᵀ = bound², for a symmetric positive semi-definite r×r G.
func projectRowsMetric(a, g blas64.General, bound float64) {
	b2 := bound * bound
	r := a.Cols
	for i := 0; i < a.Rows; i++ {
		row := a.Data[i*a.Stride : i*a.Stride+r]
		n2 := 0.0
		for k := 0; k < r; k++ {
			gk := g.Data[k*g.Stride : k*g.Stride+r]
			s := 0.0
			for l, x := range row {
				s += gk[l] * x
			}
			n2 += row[k] * s
		}
		if n2 > b2 {
			f := bound / math.Sqrt(n2)
			for k := range row {
				row[k] *= f
			}
		}
	}
}
