package gdcore

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/testmat"
)

func denseOf(g blas64.General) *mat.Dense { return mat.DenseCopyOf(kernels.Dense(g)) }

// TestUpdateRulesOneStep checks one step of each update rule against a
// plain gonum evaluation of its formula. Both compute the same sums of
// products of O(1) numbers, so they agree to about 1e-13.
func TestUpdateRulesOneStep(t *testing.T) {
	const d1, d2, r = 30, 20, 3
	rng := rand.New(rand.NewPCG(5, 6))
	u, v, gu, gv := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r), testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r)
	U, V, GU, GV := denseOf(u), denseOf(v), denseOf(gu), denseOf(gv)
	q := gdParams{d1: d1, d2: d2, rank: r, p: 0.4, c: 0.3, balance: 0.25}
	const sigma1 = 2.0
	eta := q.c / sigma1 // the paper's η = c/σ̂₁

	// Paper: U⁺ = U + η/p·G_U − b·η·U(UᵀU − VᵀV), V⁺ = V + η/p·G_V + b·η·V(UᵀU − VᵀV).
	var utu, vtv, d, t1, wantU, wantV mat.Dense
	utu.Mul(U.T(), U)
	vtv.Mul(V.T(), V)
	d.Sub(&utu, &vtv)
	wantU.Scale(eta/q.p, GU)
	wantU.Add(&wantU, U)
	t1.Mul(U, &d)
	t1.Scale(q.balance*eta, &t1)
	wantU.Sub(&wantU, &t1)
	wantV.Scale(eta/q.p, GV)
	wantV.Add(&wantV, V)
	var t2 mat.Dense
	t2.Mul(V, &d)
	t2.Scale(q.balance*eta, &t2)
	wantV.Add(&wantV, &t2)
	un, vn := kernels.NewGeneral(d1, r), kernels.NewGeneral(d2, r)
	if err := newPaperUpdate(&q, sigma1).step(un, vn, u, v, gu, gv, 1); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "paper U⁺", denseOf(un), &wantU, 1e-13)
	checkClose(t, "paper V⁺", denseOf(vn), &wantV, 1e-13)

	// Scaled: U⁺ = U + c/p·G_U(VᵀV)⁻¹, V⁺ = V + c/p·G_V(UᵀU)⁻¹.
	var ivtv, iutu, sU, sV mat.Dense
	if err := ivtv.Inverse(&vtv); err != nil {
		t.Fatal(err)
	}
	if err := iutu.Inverse(&utu); err != nil {
		t.Fatal(err)
	}
	sU.Mul(GU, &ivtv)
	sU.Scale(q.c/q.p, &sU)
	sU.Add(&sU, U)
	sV.Mul(GV, &iutu)
	sV.Scale(q.c/q.p, &sV)
	sV.Add(&sV, V)
	qs := q
	qs.balance = 0 // the scaled step's default: no balancing term
	if err := newScaledUpdate(&qs, sigma1).step(un, vn, u, v, gu, gv, 1); err != nil {
		t.Fatal(err)
	}
	// The ridge of gramInverse (1e-13 of the mean diagonal) perturbs the
	// step by about 1e-13 relative to the condition of the Gram matrix.
	checkClose(t, "scaled U⁺", denseOf(un), &sU, 1e-11)
	checkClose(t, "scaled V⁺", denseOf(vn), &sV, 1e-11)

	// Scaled with a balancing term b (GD.Balance with UpdateScaled):
	// U⁺ = U + c/p·(G_U − b·p·U·D)(VᵀV)⁻¹, V⁺ = V + c/p·(G_V + b·p·V·D)(UᵀU)⁻¹.
	var bU, bV, ud, vd mat.Dense
	ud.Mul(U, &d)
	vd.Mul(V, &d)
	bU.Scale(-q.balance*q.p, &ud)
	bU.Add(&bU, GU)
	bU.Mul(&bU, &ivtv)
	bU.Scale(q.c/q.p, &bU)
	bU.Add(&bU, U)
	bV.Scale(q.balance*q.p, &vd)
	bV.Add(&bV, GV)
	bV.Mul(&bV, &iutu)
	bV.Scale(q.c/q.p, &bV)
	bV.Add(&bV, V)
	if err := newScaledUpdate(&q, sigma1).step(un, vn, u, v, gu, gv, 1); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "scaled U⁺ with balance", denseOf(un), &bU, 1e-11)
	checkClose(t, "scaled V⁺ with balance", denseOf(vn), &bV, 1e-11)
	// Its predicted decrease is −⟨∇f, Δ⟩ with f's balancing part ¼·b·‖D‖²
	// (the paper's formula, whatever the direction): checked against a
	// central difference of the penalty along the step.
	su := newScaledUpdate(&q, sigma1)
	zero := kernels.NewGeneral(d1, r)
	zv := kernels.NewGeneral(d2, r)
	predicted := su.predicted(un, vn, u, v, zero, zv) // the balancing part alone (gu = gv = 0)
	const h = 1e-6
	at := func(s float64) float64 {
		a, b := mat.DenseCopyOf(U), mat.DenseCopyOf(V)
		var du, dv mat.Dense
		du.Sub(denseOf(un), U)
		dv.Sub(denseOf(vn), V)
		du.Scale(s, &du)
		dv.Scale(s, &dv)
		a.Add(a, &du)
		b.Add(b, &dv)
		ar, br := a.RawMatrix(), b.RawMatrix()
		return su.penalty(blas64.General{Rows: ar.Rows, Cols: ar.Cols, Stride: ar.Stride, Data: ar.Data},
			blas64.General{Rows: br.Rows, Cols: br.Cols, Stride: br.Stride, Data: br.Data})
	}
	if fd := -(at(h) - at(-h)) / (2 * h); math.Abs(fd-predicted) > 1e-6*math.Abs(predicted) {
		t.Errorf("scaled balancing part of the predicted decrease %.10g, central difference %.10g", predicted, fd)
	}
}

func checkClose(t *testing.T, name string, got, want *mat.Dense, tol float64) {
	t.Helper()
	var d mat.Dense
	d.Sub(got, want)
	if e := mat.Norm(&d, 2) / mat.Norm(want, 2); e > tol {
		t.Errorf("%s: relative difference %.3g > %.3g", name, e, tol)
	}
}

// TestScaledConditioning: at κ = 10 the paper's update needs several
// times the iterations of the scaled one (691 against 118 at d = 1000,
// r = 5); here, at 300×300, r = 3, the scaled update must reach the true
// error 1e-5 in at most half of the paper update's iterations, and in at
// most 200.
func TestScaledConditioning(t *testing.T) {
	in := kappaInstance(t, 300, 3, 10)
	its := map[UpdateRule]int{}
	for _, rule := range []UpdateRule{UpdatePaper, UpdateScaled} {
		s := rpca.Settings{Rank: 3, Alpha: 0.1, Stop: rpca.Stop{TargetError: 1e-5, MaxIter: 3000}}
		res, err := rpca.Solve(context.Background(), in, s, &GD{Update: rule})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stop != rpca.StopTargetError {
			t.Fatalf("%s: stopped by %s at error %.3g", rule, res.Stop, res.History[len(res.History)-1].Error)
		}
		its[rule] = res.Iterations
	}
	t.Logf("iterations to 1e-5 at κ=10: %v", its)
	if its[UpdateScaled] > 200 || 2*its[UpdateScaled] > its[UpdatePaper] {
		t.Errorf("scaled update took %d iterations, paper %d", its[UpdateScaled], its[UpdatePaper])
	}
}

// kappaInstance builds a d×d problem with M* = Q_A·diag(s)·Q_Bᵀ, s evenly
// spaced from 1 to 1/κ, and 10% of the entries corrupted by values
// uniform on ±[0, 5r/d] (the paper's magnitude).
func kappaInstance(t *testing.T, d, r int, kappa float64) *rpca.Problem {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, uint64(kappa)))
	orth := func() *mat.Dense {
		var qr mat.QR
		qr.Factorize(denseOf(testmat.NormalGeneral(rng, d, r)))
		var q mat.Dense
		qr.QTo(&q)
		return mat.DenseCopyOf(q.Slice(0, d, 0, r))
	}
	qa, qb := orth(), orth()
	for k := 0; k < r; k++ {
		s := 1 + float64(k)/float64(r-1)*(1/kappa-1)
		for i := 0; i < d; i++ {
			qa.Set(i, k, qa.At(i, k)*s)
		}
	}
	y := mat.NewDense(d, d, nil)
	y.Mul(qa, qb.T())
	mag := 5 * float64(r) / float64(d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if rng.Float64() < 0.1 {
				y.Set(i, j, y.At(i, j)+mag*(2*rng.Float64()-1))
			}
		}
	}
	return &rpca.Problem{Dense: y, Truth: &rpca.Truth{A: qa, B: qb}}
}

// TestRidgeOneStep checks the ridge terms of both update rules against
// gonum: the paper's step gains −η·λ/p·U (and −η·λ/p·V), the scaled step
// preconditions E·V − λU by (VᵀV)⁻¹.
func TestRidgeOneStep(t *testing.T) {
	const d1, d2, r = 25, 18, 3
	rng := rand.New(rand.NewPCG(7, 8))
	u, v, gu, gv := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r), testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r)
	const sigma1, lambda = 2.0, 0.7
	q := gdParams{d1: d1, d2: d2, rank: r, p: 0.3, c: 0.4, balance: 0.25}
	un0, vn0 := kernels.NewGeneral(d1, r), kernels.NewGeneral(d2, r)
	if err := newPaperUpdate(&q, sigma1).step(un0, vn0, u, v, gu, gv, 1); err != nil {
		t.Fatal(err)
	}
	q.ridge = lambda
	un, vn := kernels.NewGeneral(d1, r), kernels.NewGeneral(d2, r)
	if err := newPaperUpdate(&q, sigma1).step(un, vn, u, v, gu, gv, 1); err != nil {
		t.Fatal(err)
	}
	eta := q.c / sigma1
	var wantU, wantV mat.Dense
	wantU.Scale(-eta*lambda/q.p, denseOf(u))
	wantU.Add(&wantU, denseOf(un0))
	wantV.Scale(-eta*lambda/q.p, denseOf(v))
	wantV.Add(&wantV, denseOf(vn0))
	checkClose(t, "paper U⁺ with ridge", denseOf(un), &wantU, 1e-13)
	checkClose(t, "paper V⁺ with ridge", denseOf(vn), &wantV, 1e-13)

	U := denseOf(u)
	sU := refScaledStep(t, U, denseOf(gu), denseOf(v), lambda, q.c/q.p)
	sU.Add(sU, U)
	q.balance = 0 // the scaled step's default
	if err := newScaledUpdate(&q, sigma1).step(un, vn, u, v, gu, gv, 1); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "scaled U⁺ with ridge", denseOf(un), sU, 1e-11)
}

// refScaledStep is the scaled step of one factor F written densely with
// gonum, scale·(G − λF)(OᵀO)⁻¹, where G is F's gradient and O the other
// factor (ScaledGD's preconditioned step, with the ridge λ).
func refScaledStep(t *testing.T, f, g, o *mat.Dense, ridge, scale float64) *mat.Dense {
	t.Helper()
	var gram, inv, rhs, step mat.Dense
	gram.Mul(o.T(), o)
	if err := inv.Inverse(&gram); err != nil {
		t.Fatal(err)
	}
	rhs.Scale(-ridge, f)
	rhs.Add(&rhs, g)
	step.Mul(&rhs, &inv)
	step.Scale(scale, &step)
	return &step
}
