package altproj

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	rpca "github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/methodtest"
)

// sparseErr is ‖S − S*‖_F/‖S*‖_F.
func sparseErr(s, st *rpca.Sparse) float64 {
	a, b := s.ToDense(), st.ToDense()
	n := mat.Norm(b, 2)
	a.Sub(a, b)
	return mat.Norm(a, 2) / n
}

func TestRecoverPaperModel(t *testing.T) {
	// d = 300, r = 5, α = 0.05 (the brief's small-size version of Section
	// 5.1). With ε = 1e-7 the residual ‖Y − L − S‖_F/‖Y‖_F ≤ 1e-7 holds at
	// the end; since the corruptions found are exact (S = Y − L on the
	// support) and the residual is made of entries of L* − L below the
	// threshold, the error of L is of the order of the residual times
	// ‖Y‖_F/‖M*‖_F (about 1.5 here), far below the 1e-4 asked.
	in := methodtest.Instance(t, 300, 300, 5, 0.05, 1)
	s := rpca.Settings{Rank: 5, Alpha: 0.05, Stop: rpca.Stop{ResidualTol: 1e-7}, Seed: 3}
	res, err := rpca.Solve(context.Background(), in.Problem(), s, &Method{})
	if err != nil {
		t.Fatal(err)
	}
	methodtest.Recovered(t, res, in, 1e-4)
	if res.Stop != rpca.StopResidualTol || res.Residual > 1e-7 {
		t.Errorf("stop %s with residual %.3g, want residual-tol ≤ 1e-7", res.Stop, res.Residual)
	}
	// The stages must have reached the true rank.
	if _, k := res.U.Dims(); k != 5 || res.Params.(*Params).FinalRank != 5 || res.Params.(*Params).Stages != 5 {
		t.Errorf("rank %d, params %v; want 5 stages and rank 5", k, res.Params)
	}
	// The sparse part is the corruption: corruptions of S* smaller than
	// the final threshold (≈ β·2^{-t}σ_r) may be missed, but they carry a
	// negligible part of ‖S*‖_F.
	if se := sparseErr(res.S, in.S); se > 1e-3 {
		t.Errorf("‖S − S*‖_F/‖S*‖_F = %.3g > 1e-3", se)
	}
	methodtest.CheckResult(t, res, in.Y, rpca.ResidualScale(in.Problem(), s))
}

// checkResult checks the bookkeeping of a result against Y.
func TestRectangular(t *testing.T) {
	for _, dims := range [][2]int{{180, 300}, {300, 180}} {
		in := methodtest.Instance(t, dims[0], dims[1], 4, 0.05, 7)
		s := rpca.Settings{Rank: 4, Alpha: 0.05, Stop: rpca.Stop{ResidualTol: 1e-7}}
		res, err := rpca.Solve(context.Background(), in.Problem(), s, &Method{})
		if err != nil {
			t.Fatal(err)
		}
		u1, k := res.U.Dims()
		v1, _ := res.V.Dims()
		if u1 != dims[0] || v1 != dims[1] || k != 4 {
			t.Fatalf("%v: factors %d×%d and %d×%d", dims, u1, k, v1, k)
		}
		// Same justification as TestRecoverPaperModel.
		methodtest.Recovered(t, res, in, 1e-4)
		methodtest.CheckResult(t, res, in.Y, rpca.ResidualScale(in.Problem(), s))
	}
}

func TestEarlyExitAtTrueRank(t *testing.T) {
	// Y has rank 2 (no corruption) but the target rank is 5: after stage 2
	// the third singular value of Y − S is at rounding level, so line 11
	// must return the rank-2 estimate instead of running stages 3–5.
	in := methodtest.Instance(t, 120, 100, 2, 0, 5)
	s := rpca.Settings{Rank: 5, Alpha: 0.05, Stop: rpca.Stop{ResidualTol: -1}}
	res, err := rpca.Solve(context.Background(), in.Problem(), s, &Method{Eps: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != rpca.StopExact || res.Params.(*Params).FinalRank != 2 {
		t.Fatalf("stop %s, params %v; want exact stop at rank 2", res.Stop, res.Params)
	}
	methodtest.Recovered(t, res, in, 1e-8)
	// Two full stages of T+1 iterations each, T from line 6.
	if want := 2 * (res.Params.(*Params).InnerIters + 1); res.Iterations > want {
		t.Errorf("%d iterations, want at most %d", res.Iterations, want)
	}
}

// reference is a literal transcription of Algorithm 1 with gonum's full
// SVD, fixed T and no stopping rule other than the schedule (the slow,
// obvious version).
func reference(y *mat.Dense, r, T int, beta float64) (l, s *mat.Dense) {
	d1, d2 := y.Dims()
	svals := func(a *mat.Dense) (*mat.SVD, []float64) {
		var svd mat.SVD
		svd.Factorize(a, mat.SVDThin)
		return &svd, svd.Values(nil)
	}
	hard := func(a *mat.Dense, zeta float64) *mat.Dense {
		out := mat.NewDense(d1, d2, nil)
		for i := 0; i < d1; i++ {
			for j := 0; j < d2; j++ {
				if v := a.At(i, j); math.Abs(v) >= zeta {
					out.Set(i, j, v)
				}
			}
		}
		return out
	}
	_, sy := svals(y)
	s = hard(y, beta*sy[0])
	l = mat.NewDense(d1, d2, nil)
	for k := 1; k <= r; k++ {
		for t := 0; t <= T; t++ {
			var ms mat.Dense
			ms.Sub(y, s)
			svd, sig := svals(&ms)
			zeta := beta * (sig[k] + math.Pow(0.5, float64(t))*sig[k-1])
			var u, v mat.Dense
			svd.UTo(&u)
			svd.VTo(&v)
			uk := mat.DenseCopyOf(u.Slice(0, d1, 0, k))
			for c := 0; c < k; c++ {
				for i := 0; i < d1; i++ {
					uk.Set(i, c, uk.At(i, c)*sig[c])
				}
			}
			l.Mul(uk, v.Slice(0, d2, 0, k).T())
			var d mat.Dense
			d.Sub(y, l)
			s = hard(&d, zeta)
		}
	}
	return l, s
}

func TestMatchesReference(t *testing.T) {
	// On a small problem with a fixed T the solver must follow Algorithm 1
	// step by step: same L and S as the literal transcription above. The
	// two differ only by the accuracy of the SVDs (≈1e-12 relative); hard
	// thresholding is discontinuous, but on random data no entry of Y − L
	// lies that close to ζ, so the supports agree and the tolerance 1e-8
	// leaves a wide margin.
	in := methodtest.Instance(t, 60, 50, 3, 0.1, 11)
	const T = 6
	beta := 4 * 3 / math.Sqrt(60*50)
	lr, sr := reference(in.Y, 3, T, beta)
	s := rpca.Settings{Rank: 3, Alpha: 0.05, Stop: rpca.Stop{ResidualTol: -1}}
	res, err := rpca.Solve(context.Background(), in.Problem(), s, &Method{InnerIters: T, Eps: 1e-10, StallTol: -1}) // tiny ε: accurate SVDs; Algorithm 1 has no stall rule
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 3*(T+1) || res.Stop != rpca.StopSchedule {
		t.Fatalf("%d iterations, stop %s; want %d, schedule", res.Iterations, res.Stop, 3*(T+1))
	}
	if res.Params.(*Params).Beta != beta {
		t.Errorf("beta %v, want %v", res.Params.(*Params).Beta, beta)
	}
	methodtest.MatchesReference(t, res, lr, sr, 1e-8)
}

func TestInnerIters(t *testing.T) {
	// Line 6: T = ⌈10·ln(n·β·σ/ε)⌉, at least 1.
	if got, want := innerIters(100, 0.2, 3, 0.01), int(math.Ceil(10*math.Log(100*0.2*3/0.01))); got != want {
		t.Errorf("innerIters = %d, want %d", got, want)
	}
	if got := innerIters(100, 0.2, 0, 0.01); got != 1 {
		t.Errorf("innerIters with σ = 0 is %d, want 1", got)
	}
}

func TestZeroMatrix(t *testing.T) { methodtest.ZeroMatrix(t, &Method{}) }

func TestCancel(t *testing.T) { methodtest.Cancel(t, &Method{}) }

func TestBadInput(t *testing.T) {
	y := methodtest.BadSettings(t, &Method{}, []*Method{
		{Mu: -1}, {Mu: math.NaN()}, {Beta: -0.1}, {Beta: math.Inf(1)},
		{Eps: -1e-3}, {Eps: 1}, {InnerIters: -1}, {StallTol: math.NaN()}, {StallTol: 1},
	})
	// Calling the method directly bypasses rpca.Solve's checks.
	if _, err := (&Method{}).Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 30}); err == nil {
		t.Error("rank 30 of a 30×30 matrix: no error")
	}
}
