package ratings

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/triples"
)

// refSVDpp is a second reference for the cross-validation, with implicit
// feedback: Koren's SVD++ model (KDD 2008),
//
//	r̂_ij = μ + b_i + c_j + q_j·(p_i + z_i),  z_i = |N(i)|^(−½) Σ_{l∈N(i)} y_l,
//
// where N(i) is the set of movies user i rated in training: which movies a
// user chose to rate says something of the user beyond the ratings'
// values. It is fitted by alternating least squares, not by the
// stochastic gradient of the paper: each sweep computes z, fits every
// [b_i p_i] (targets r_ij − μ − c_j − q_j·z_i, regressors q_j) and then
// every [c_j q_j] (targets r_ij − μ − b_i, regressors p_i + z_i) by exact
// ridge regression (λ on p and q, λ_bias on b and c), and then moves Y by
// cgIters conjugate-gradient steps on the least-squares problem in Y
// with everything else fixed (penalty λ_y‖Y‖²), which couples all the
// y_l of a user through z_i.
func refSVDpp(r *triples.Ratings, held []bool, rank int, lambda, lambdaBias, lambdaY float64, sweeps, cgIters int) *svdppFit {
	byRow, byCol, mu := trainingLines(r, held)
	rng := rand.New(rand.NewPCG(3, 4))
	block := func(d, w int, scale float64) [][]float64 {
		f := make([][]float64, d)
		for i := range f {
			f[i] = make([]float64, w)
			for a := range f[i] {
				f[i][a] = scale * rng.NormFloat64()
			}
		}
		return f
	}
	// P[i] = [b_i p_i], Q[j] = [c_j q_j], biases starting at 0.
	P, Q := block(r.D1, rank+1, 0.1), block(r.D2, rank+1, 0.1)
	for _, f := range [][][]float64{P, Q} {
		for _, row := range f {
			row[0] = 0
		}
	}
	Y, Z := block(r.D2, rank, 0), block(r.D1, rank, 0)
	norm := make([]float64, r.D1) // |N(i)|^(−½)
	for i, ks := range byRow {
		if len(ks) > 0 {
			norm[i] = 1 / math.Sqrt(float64(len(ks)))
		}
	}
	// implicit sets dst_i = |N(i)|^(−½) Σ_{l∈N(i)} y_l.
	implicit := func(dst, y [][]float64) {
		for i, ks := range byRow {
			clear(dst[i])
			for _, k := range ks {
				for a, x := range y[r.Col[k]] {
					dst[i][a] += x
				}
			}
			for a := range dst[i] {
				dst[i][a] *= norm[i]
			}
		}
	}
	w := rank + 1
	g, b, design := make([]float64, w*w), make([]float64, w), make([]float64, w)
	var x mat.VecDense
	var chol mat.Cholesky
	fit := func(dst []float64, ks []int, regressors func(k int, d []float64), target func(k int) float64) {
		clear(g)
		clear(b)
		for _, k := range ks {
			regressors(k, design)
			t := target(k)
			for a := range w {
				for c := range w {
					g[a*w+c] += design[a] * design[c]
				}
				b[a] += t * design[a]
			}
		}
		g[0] += lambdaBias
		for c := 1; c < w; c++ {
			g[c*w+c] += lambda
		}
		if !chol.Factorize(mat.NewSymDense(w, g)) {
			panic("refSVDpp: the regularised normal equations are not positive definite")
		}
		if err := chol.SolveVecTo(&x, mat.NewVecDense(w, b)); err != nil {
			panic(err)
		}
		copy(dst, x.RawVector().Data)
	}
	// The Y step. With s_i = Σ_{l∈N(i)} y_l and e_ij the residual without
	// the implicit term, user i contributes
	//   Σ_j (e_ij − norm_i·q_j·s_i)² = const − 2 s_iᵀ g_i + s_iᵀ A_i s_i,
	// A_i = norm_i² Σ_j q_j q_jᵀ, g_i = norm_i Σ_j e_ij q_j, so the
	// normal equations are H Y = Nᵀg with H Y = Nᵀ(A_i (N Y)_i) + λ_y Y.
	A := block(r.D1, rank*rank, 0)
	G := block(r.D1, rank, 0)
	S := block(r.D1, rank, 0)
	applyH := func(out, d [][]float64) {
		implicit(S, d) // norm_i (N d)_i
		for l := range out {
			for a := range out[l] {
				out[l][a] = lambdaY * d[l][a]
			}
		}
		v := make([]float64, rank)
		for i, ks := range byRow {
			for a := range rank {
				s := 0.0
				for c := range rank {
					s += A[i][a*rank+c] * S[i][c]
				}
				v[a] = norm[i] * s
			}
			for _, k := range ks {
				for a, va := range v {
					out[r.Col[k]][a] += va
				}
			}
		}
	}
	residuals := func() {
		for i, ks := range byRow {
			clear(A[i])
			clear(G[i])
			for _, k := range ks {
				q := Q[r.Col[k]]
				e := r.Val[k] - mu - P[i][0] - q[0]
				for a := range rank {
					e -= q[a+1] * P[i][a+1]
				}
				for a := range rank {
					for c := range rank {
						A[i][a*rank+c] += q[a+1] * q[c+1]
					}
					G[i][a] += e * q[a+1]
				}
			}
			for a := range G[i] {
				G[i][a] *= norm[i]
			}
		}
	}
	dot := func(u, v [][]float64) float64 {
		s := 0.0
		for l := range u {
			for a := range u[l] {
				s += u[l][a] * v[l][a]
			}
		}
		return s
	}
	res, dir, hd := block(r.D2, rank, 0), block(r.D2, rank, 0), block(r.D2, rank, 0)
	stepY := func() {
		residuals()
		applyH(hd, Y)
		for l := range res {
			clear(res[l])
		}
		for i, ks := range byRow {
			for _, k := range ks {
				for a := range rank {
					res[r.Col[k]][a] += G[i][a]
				}
			}
		}
		for l := range res {
			for a := range res[l] {
				res[l][a] -= hd[l][a]
				dir[l][a] = res[l][a]
			}
		}
		rr := dot(res, res)
		for range cgIters {
			if rr == 0 {
				return
			}
			applyH(hd, dir)
			alpha := rr / dot(dir, hd)
			for l := range Y {
				for a := range Y[l] {
					Y[l][a] += alpha * dir[l][a]
					res[l][a] -= alpha * hd[l][a]
				}
			}
			next := dot(res, res)
			for l := range dir {
				for a := range dir[l] {
					dir[l][a] = res[l][a] + next/rr*dir[l][a]
				}
			}
			rr = next
		}
	}
	for range sweeps {
		implicit(Z, Y)
		for i, ks := range byRow {
			fit(P[i], ks, func(k int, d []float64) { d[0] = 1; copy(d[1:], Q[r.Col[k]][1:]) }, func(k int) float64 {
				q := Q[r.Col[k]]
				t := r.Val[k] - mu - q[0]
				for a := range rank {
					t -= q[a+1] * Z[i][a]
				}
				return t
			})
		}
		for j, ks := range byCol {
			fit(Q[j], ks, func(k int, d []float64) {
				i := r.Row[k]
				d[0] = 1
				for a := range rank {
					d[a+1] = P[i][a+1] + Z[i][a]
				}
			}, func(k int) float64 { return r.Val[k] - mu - P[r.Row[k]][0] })
		}
		if cgIters > 0 {
			stepY()
		}
	}
	implicit(Z, Y)
	predict := func(i, j int) float64 {
		s := mu + P[i][0] + Q[j][0]
		for c := range rank {
			s += Q[j][c+1] * (P[i][c+1] + Z[i][c])
		}
		return s
	}
	objective := func() float64 {
		implicit(Z, Y)
		f := lambdaY * dot(Y, Y)
		for k := range r.Len() {
			if !held[k] {
				d := r.Val[k] - predict(r.Row[k], r.Col[k])
				f += d * d
			}
		}
		return f
	}
	return &svdppFit{Predict: predict, Objective: objective, Y: Y}
}

// svdppFit is a fitted refSVDpp.
type svdppFit struct {
	// Predict is r̂_ij over the ratings' indices, without clipping.
	Predict func(i, j int) float64
	// Objective is the loss the Y step minimises, at the current Y (which
	// a test may move): Σ over the training ratings of (r − r̂)² plus
	// λ_y‖Y‖², with P, Q and the biases fixed.
	Objective func() float64
	// Y holds the implicit factors y_l, one row per movie.
	Y [][]float64
}

// TestRefSVDppYStep checks the Y step of refSVDpp against its objective.
// The objective is quadratic in Y, so moving Y by ±h·D changes it by
// h²DᵀHD ± h∇f·D. After one sweep whose conjugate gradients run to
// convergence (200 steps for 60 unknowns), Y minimises it, ∇f = 0, and
// the two moves must change it alike: |f₊ − f₋| at most 1e-3 of
// f₊ + f₋ − 2f (the rounding of f, about 1e-13 of 500, is 1e-6 of that
// quadratic term at h = 1e-3). With a single conjugate-gradient step from
// Y = 0 the same check must fail, so that it can. Generated ratings, 40
// users × 30 movies, 40% observed, rank 2, five random directions.
func TestRefSVDppYStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	r := &triples.Ratings{Triplets: formats.Triplets{D1: 40, D2: 30}}
	for i := range r.D1 {
		for j := range r.D2 {
			if rng.Float64() < 0.4 {
				r.Row, r.Col = append(r.Row, i), append(r.Col, j)
				r.Val = append(r.Val, float64(1+rng.IntN(5)))
			}
		}
	}
	held := make([]bool, len(r.Val))
	const h = 1e-3
	for _, cg := range []int{200, 1} {
		fit := refSVDpp(r, held, 2, 1, 1, 0.5, 1, cg)
		f := fit.Objective()
		worst := 0.0 // the largest |f₊ − f₋| / (f₊ + f₋ − 2f)
		for range 5 {
			move := func(s float64, d [][]float64) {
				for l := range fit.Y {
					for a := range fit.Y[l] {
						fit.Y[l][a] += s * d[l][a]
					}
				}
			}
			d := make([][]float64, len(fit.Y))
			for l := range d {
				d[l] = []float64{rng.NormFloat64(), rng.NormFloat64()}
			}
			move(h, d)
			fp := fit.Objective()
			move(-2*h, d)
			fm := fit.Objective()
			move(h, d)
			worst = math.Max(worst, math.Abs(fp-fm)/(fp+fm-2*f))
		}
		t.Logf("%d conjugate-gradient steps: objective %.6g, worst |f₊ − f₋|/(f₊ + f₋ − 2f) %.3g", cg, f, worst)
		switch {
		case cg == 200 && !(worst <= 1e-3):
			t.Errorf("converged Y step: the objective is not stationary in Y (ratio %.3g)", worst)
		case cg == 1 && !(worst > 1e-3):
			t.Errorf("one conjugate-gradient step: ratio %.3g, the check cannot tell a stationary Y", worst)
		}
	}
}
