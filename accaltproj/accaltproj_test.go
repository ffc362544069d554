package accaltproj

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/methodtest"
	"github.com/rpca-gd/rpca/internal/testmat"
	"github.com/rpca-gd/rpca/synth"
)

// TestTangentStepMatchesDense checks one low-rank step (lines 6–8) against
// the obvious dense computation: form P_T(Z) = UUᵀZ + ZVVᵀ − UUᵀZVVᵀ
// with gonum, take its full SVD and keep the top r triplets. The two agree
// to rounding (the 2r×2r core is an exact factorization of P_T(Z)), so the
// tolerance is a few hundred ulps of ‖Z‖.
func TestTangentStepMatchesDense(t *testing.T) {
	const d1, d2, r = 40, 30, 3
	rng := rand.New(rand.NewPCG(3, 4))
	var qu, qv mat.QR
	qu.Factorize(mat.NewDense(d1, r, testmat.NormalGeneral(rng, d1, r).Data))
	qv.Factorize(mat.NewDense(d2, r, testmat.NormalGeneral(rng, d2, r).Data))
	var uq, vq mat.Dense
	qu.QTo(&uq)
	qv.QTo(&vq)
	sv := &solver{r: r, u: compact(uq.RawMatrix(), r), v: compact(vq.RawMatrix(), r), sig: []float64{5, 2, 0.5}}
	u, v := kernels.Dense(sv.u), kernels.Dense(sv.v)
	var us, l mat.Dense
	us.Mul(u, mat.NewDiagDense(r, sv.sig))
	l.Mul(&us, v.T())
	z := mat.NewDense(d1, d2, testmat.NormalGeneral(rng, d1, d2).Data)
	z.Scale(0.3, z)
	z.Add(z, &l)

	// Reference: P_T(Z), then its best rank-r approximation.
	var pu, pv, puz, zpv, pupv, pt mat.Dense
	pu.Mul(u, u.T())
	pv.Mul(v, v.T())
	puz.Mul(&pu, z)
	zpv.Mul(z, &pv)
	pupv.Mul(&puz, &pv)
	pt.Add(&puz, &zpv)
	pt.Sub(&pt, &pupv)
	var svd mat.SVD
	if !svd.Factorize(&pt, mat.SVDThin) {
		t.Fatal("reference SVD failed")
	}
	vals := svd.Values(nil)
	var ru, rv mat.Dense
	svd.UTo(&ru)
	svd.VTo(&rv)
	var ws, want mat.Dense
	ws.Mul(ru.Slice(0, d1, 0, r), mat.NewDiagDense(r, vals[:r]))
	want.Mul(&ws, rv.Slice(0, d2, 0, r).T())

	// The method: g1 = E·V, g2 = Eᵀ·U with E = Z − L.
	var e, g1, g2 mat.Dense
	e.Sub(z, &l)
	g1.Mul(&e, v)
	g2.Mul(e.T(), u)
	tan := newTangent(d1, d2, r)
	sigR1, sig1, _, err := tan.step(sv, g1.RawMatrix(), g2.RawMatrix())
	if err != nil {
		t.Fatal(err)
	}
	var gs, got mat.Dense
	gs.Mul(kernels.Dense(sv.u), mat.NewDiagDense(r, sv.sig))
	got.Mul(&gs, kernels.Dense(sv.v).T())
	tol := 1e-12 * mat.Norm(z, 2)
	if d := diffNorm(&got, &want); d > tol {
		t.Errorf("rank-r truncation of P_T(Z) differs by %.3g (tol %.3g)", d, tol)
	}
	if math.Abs(sig1-vals[0]) > tol || math.Abs(sigR1-vals[r]) > tol {
		t.Errorf("σ₁, σ_{r+1} = %v, %v; want %v, %v", sig1, sigR1, vals[0], vals[r])
	}
	// U⁺ and V⁺ stay orthonormal.
	for _, f := range []*mat.Dense{kernels.Dense(sv.u), kernels.Dense(sv.v)} {
		var g mat.Dense
		g.Mul(f.T(), f)
		if d := diffNorm(&g, identity(r)); d > 1e-13 {
			t.Errorf("factor not orthonormal: ‖FᵀF − I‖ = %.3g", d)
		}
	}
}

func identity(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, 1)
	}
	return m
}

func diffNorm(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2)
}

// TestRecoveryAnyConditioning: on the ill-conditioned model (singular
// values of M* evenly spaced over [1/κ, 1]) the method reaches the true
// error 1e-6 at κ = 1, 10 and 100 within a number of iterations that does
// not grow with κ. The bound of 40 iterations is 1.6 times what the runs
// take (23–25); the error is checked independently with gonum. The
// defaults stop on a relative change of L of about 1e-8, which leaves a
// true error near 3e-8, hence the 1e-6 bound.
func TestRecoveryAnyConditioning(t *testing.T) {
	for _, kappa := range []float64{1, 10, 100} {
		in, err := synth.Dense(synth.Config{D1: 400, D2: 300, Rank: 4, Alpha: 0.1, Kappa: kappa, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		res, err := rpca.Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 4, Alpha: 0.1}, &Method{})
		if err != nil {
			t.Fatalf("κ=%g: %v", kappa, err)
		}
		e := testmat.RelErr(res.U, res.V, in.A, in.B)
		t.Logf("κ=%g: %d iterations, stop %s, error %.3g", kappa, res.Iterations, res.Stop, e)
		if e > 1e-6 {
			t.Errorf("κ=%g: relative error %.3g > 1e-6", kappa, e)
		}
		if res.Iterations > 40 {
			t.Errorf("κ=%g: %d iterations", kappa, res.Iterations)
		}
		// S is T_ζ(Y − L): every corruption of S* larger than the final
		// threshold is found.
		if res.S.NNZ() < in.S.NNZ()/2 {
			t.Errorf("κ=%g: S has %d entries, S* %d", kappa, res.S.NNZ(), in.S.NNZ())
		}
	}
}

func TestZeroMatrix(t *testing.T) { methodtest.ZeroMatrix(t, &Method{}) }
func TestCancel(t *testing.T)     { methodtest.Cancel(t, &Method{}) }

func TestBadInput(t *testing.T) {
	y := mat.NewDense(20, 30, nil) // not zero: rpca.Solve answers Y = 0 itself
	y.Set(1, 2, 1)
	for _, m := range []*Method{{Mu: -1}, {Gamma: 1}, {Gamma: math.NaN()}, {Beta: math.Inf(1)}, {SVDTol: 2}} {
		for _, y := range []*mat.Dense{y, mat.NewDense(20, 30, nil)} { // Y = 0 too: Solve still checks the settings
			if _, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 2}, m); !errors.Is(err, rpca.ErrBadSettings) {
				t.Errorf("%+v: got %v, want ErrBadSettings", *m, err)
			}
		}
	}
	obs, err := rpca.NewObserved(3, 3, []int{0, 1, 2}, []int{0, 1, 2}, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rpca.Solve(context.Background(), &rpca.Problem{Observed: obs}, rpca.Settings{Rank: 1}, &Method{}); err == nil {
		t.Error("partial observations accepted")
	}
}

// TestSmallShapes runs every rank of every shape up to 9×9 on random data
// (and on data with a few huge entries): no panic, and either a finite
// result of the right shape or an error.
func TestSmallShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 78))
	for d1 := 2; d1 <= 9; d1++ {
		for d2 := 2; d2 <= 9; d2++ {
			for r := 1; r < min(d1, d2); r++ {
				y := mat.NewDense(d1, d2, nil)
				for i := 0; i < d1; i++ {
					for j := 0; j < d2; j++ {
						y.Set(i, j, rng.NormFloat64())
						if rng.Float64() < 0.05 {
							y.Set(i, j, 1e6*rng.NormFloat64())
						}
					}
				}
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("%d×%d r=%d: panic %v", d1, d2, r, p)
						}
					}()
					res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: r, Alpha: 0.1}, &Method{})
					if err != nil {
						return
					}
					if c := res.U.RawMatrix().Cols; c != r {
						t.Errorf("%d×%d r=%d: %d factor columns", d1, d2, r, c)
					}
					for _, x := range res.LowRank().RawMatrix().Data {
						if math.IsNaN(x) || math.IsInf(x, 0) {
							t.Fatalf("%d×%d r=%d: non-finite low-rank part", d1, d2, r)
						}
					}
				}()
			}
		}
	}
}

// TestRankOne: at rank one the default μ put the thresholds under the
// largest entries of L (its entrywise incoherence is about 2 ln d), whole
// rows went into S, and the run stopped "converged" at error 0.21
// (rpca synth --d 500 --rank 1). The paper's model at rank one, d = 300
// to 1500, is now recovered to 1e-6 and verified.
func TestRankOne(t *testing.T) {
	for _, d := range []int{300, 500, 1500} {
		in, err := synth.Dense(synth.Config{D1: d, D2: d, Rank: 1, Alpha: 0.1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := rpca.Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 1, Alpha: 0.1}, &Method{})
		if err != nil {
			t.Fatal(err)
		}
		if e := testmat.RelErr(res.U, res.V, in.A, in.B); e > 1e-6 || !res.Verification.Verified {
			t.Errorf("d = %d: error %.3g, verified %v (%s)", d, e, res.Verification.Verified, res.Verification.Reason)
		}
	}
}

// TestTargetErrorEndsTheRun: the caller's target error ends the run at
// the first record that meets it, even when S then holds a dense line,
// which otherwise raises μ and goes on. The data: a rank-one matrix with
// one row 40 times the others, which the first thresholds set aside whole.
func TestTargetErrorEndsTheRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const d1, d2 = 120, 100
	u, v := mat.NewDense(d1, 1, nil), mat.NewDense(d2, 1, nil)
	for i := range d1 {
		u.Set(i, 0, rng.NormFloat64())
	}
	u.Set(0, 0, 40)
	for j := range d2 {
		v.Set(j, 0, rng.NormFloat64())
	}
	var y mat.Dense
	y.Mul(u, v.T())
	p := &rpca.Problem{Dense: &y, Truth: &rpca.Truth{A: u, B: v}}
	s := rpca.Settings{Rank: 1, Alpha: 0.1, Stop: rpca.Stop{TargetError: 10}}
	res, err := (&Method{}).Solve(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	first := -1
	for _, h := range res.History {
		if h.Error <= s.Stop.TargetError {
			first = h.Iter
			break
		}
	}
	if res.Stop != rpca.StopTargetError || res.Iterations != first {
		t.Errorf("stop %q after %d iterations; the target was met at iteration %d", res.Stop, res.Iterations, first)
	}
}
