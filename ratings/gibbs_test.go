package ratings

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/triples"
)

// TestGibbsDrawMatchesPosterior checks drawLine, in its k1×k1 form (more
// ratings than unknowns) and its n×n dual form (fewer), with two gross
// ratings of the line marked to be skipped, against the normal it must
// draw from, computed with gonum without them: precision
// Λ = diag(prec) + τ·XᵀWX and mean Λ⁻¹(prec∘m₀ + τ·XᵀWy) for
// X = [1, f_other], y the ratings less the other side's bias and W the
// ratings' t-noise weights (the identity without weights). Over N draws the sample
// mean must be within 5 standard errors (√(Σ_aa/N)) of the mean and each
// sample covariance within 5 of its own (√((Σ_aa·Σ_bb + Σ_ab²)/N), exact
// for normal draws); a draw with the wrong square root of Λ⁻¹ or a
// dropped prior term misses by far more.
func TestGibbsDrawMatchesPosterior(t *testing.T) {
	const k1, tau, draws = 4, 2.0, 40000
	rng := rand.New(rand.NewPCG(11, 12))
	prior := gibbsPrior{make([]float64, k1), make([]float64, k1), make([]float64, k1)}
	for a := range k1 {
		prior.mean[a] = rng.NormFloat64()
		prior.prec[a] = 0.5 + rng.Float64()
		prior.cov[a] = 1 / prior.prec[a]
	}
	other := make([]float64, 9*k1)
	for x := range other {
		other[x] = rng.NormFloat64()
	}
	for _, tc := range []struct {
		n        int
		weighted bool
	}{{7, false}, {2, false}, {7, true}, {2, true}} { // primal, dual
		n := tc.n
		idx := make([]int32, n)
		val := make([]float64, n)
		w := make([]float64, n)
		for e := range n {
			idx[e] = int32(e)
			val[e] = rng.NormFloat64()
			w[e] = 1
			if tc.weighted {
				r := float64(float32(math.Sqrt(0.1 + 2*rng.Float64()))) // √w, as drawLine reads it
				w[e] = r * r
			}
		}
		var sw []float32 // √w, with the two skipped ratings first and last
		if tc.weighted {
			sw = []float32{1}
			for _, x := range w {
				sw = append(sw, float32(math.Sqrt(x)))
			}
			sw = append(sw, 1)
		}
		// The exact posterior.
		lam := mat.NewSymDense(k1, nil)
		b := mat.NewVecDense(k1, nil)
		for a := range k1 {
			lam.SetSym(a, a, prior.prec[a])
			b.SetVec(a, prior.prec[a]*prior.mean[a])
		}
		for e := range n {
			o := other[e*k1 : (e+1)*k1]
			x := mat.NewVecDense(k1, append([]float64{1}, o[1:]...))
			lam.SymRankOne(lam, tau*w[e], x)
			b.AddScaledVec(b, tau*w[e]*(val[e]-o[0]), x)
		}
		var chol mat.Cholesky
		if !chol.Factorize(lam) {
			t.Fatal("posterior precision not positive definite")
		}
		var cov mat.SymDense
		if err := chol.InverseTo(&cov); err != nil {
			t.Fatal(err)
		}
		var mean mat.VecDense
		if err := chol.SolveVecTo(&mean, b); err != nil {
			t.Fatal(err)
		}
		// Two more ratings, first and last, that the draws must skip.
		idx = append(append([]int32{7}, idx...), 8)
		val = append(append([]float64{50}, val...), -50)
		skip := make([]bool, n+2)
		skip[0], skip[n+1] = true, true

		// The draws.
		pcg := rand.NewPCG(0, 0)
		ws := &gibbsWork{g: make([]float64, k1*k1), b: make([]float64, k1), x: make([]float64, k1), z: make([]float64, k1), gw: make([]float64, (k1+1)*(k1+1)), pcg: pcg, rng: rand.New(pcg)}
		sum := make([]float64, k1)
		sq := make([]float64, k1*k1)
		dst := make([]float64, k1)
		for s := range draws {
			pcg.Seed(3, uint64(s))
			if !ws.drawLine(dst, other, k1, idx, val, skip, sw, prior, tau) {
				t.Fatal("drawLine failed")
			}
			for a := range k1 {
				sum[a] += dst[a]
				for c := range k1 {
					sq[a*k1+c] += dst[a] * dst[c]
				}
			}
		}
		for a := range k1 {
			m := sum[a] / draws
			if se := math.Sqrt(cov.At(a, a) / draws); math.Abs(m-mean.AtVec(a)) > 5*se {
				t.Errorf("n=%d weighted %v: mean[%d] = %.5f, want %.5f ± %.5f", n, tc.weighted, a, m, mean.AtVec(a), 5*se)
			}
			for c := range k1 {
				got := sq[a*k1+c]/draws - m*sum[c]/draws
				want := cov.At(a, c)
				if se := math.Sqrt((cov.At(a, a)*cov.At(c, c) + want*want) / draws); math.Abs(got-want) > 5*se {
					t.Errorf("n=%d weighted %v: cov[%d][%d] = %.5f, want %.5f ± %.5f", n, tc.weighted, a, c, got, want, 5*se)
				}
			}
		}
	}
}

// biasedRatings returns ratings μ + b_i + c_j + u_i·v_j + noise (rank 2,
// noise σ) on a random share p of a d1×d2 grid, every row and column
// rated at least once.
func biasedRatings(d1, d2 int, p, sigma float64, seed uint64) *triples.Ratings {
	rng := rand.New(rand.NewPCG(seed, 5))
	row, col := make([]float64, d1), make([]float64, d2)
	u, v := make([][2]float64, d1), make([][2]float64, d2)
	for i := range d1 {
		row[i] = 0.5 * rng.NormFloat64()
		u[i] = [2]float64{rng.NormFloat64(), rng.NormFloat64()}
	}
	for j := range d2 {
		col[j] = 0.5 * rng.NormFloat64()
		v[j] = [2]float64{0.5 * rng.NormFloat64(), 0.5 * rng.NormFloat64()}
	}
	r := &triples.Ratings{RowIndex: map[string]int{}, ColIndex: map[string]int{}}
	r.D1, r.D2 = d1, d2
	for i := range d1 {
		r.RowIDs = append(r.RowIDs, "u"+strconv.Itoa(i))
		r.RowIndex[r.RowIDs[i]] = i
	}
	for j := range d2 {
		r.ColIDs = append(r.ColIDs, "i"+strconv.Itoa(j))
		r.ColIndex[r.ColIDs[j]] = j
	}
	for i := range d1 {
		for j := range d2 {
			if rng.Float64() < p || j == i%d2 || i == j%d1 {
				r.Row, r.Col = append(r.Row, i), append(r.Col, j)
				r.Val = append(r.Val, 3.5+row[i]+col[j]+u[i][0]*v[j][0]+u[i][1]*v[j][1]+sigma*rng.NormFloat64())
			}
		}
	}
	return r
}

// heldRMSE returns the RMSE of m on the held ratings whose row and column
// were fitted (Evaluate, itself checked against a direct sum in
// TestFitExactLowRank), and how many those are.
func heldRMSE(m *Model, r *triples.Ratings, held []bool) (float64, int) {
	ev := m.Evaluate(r, held)
	return ev.RMSE, ev.Ratings - ev.Skipped
}

// TestGibbsFit: on ratings of a rank-2 biased model with noise σ = 0.1,
// the Gibbs fit's held-out RMSE is within 1.5σ (the noise itself plus
// the estimation error of a posterior mean at this density), far below
// the biases alone (whose error includes the interaction, about 0.7);
// τ is calibrated near 1/σ²; the summary fields are filled; the fit is
// the same with one worker and with four (each line draws from its own
// stream), and another seed gives another chain.
func TestGibbsFit(t *testing.T) {
	const sigma = 0.1
	r := biasedRatings(120, 90, 0.3, sigma, 1)
	held := HoldOut(r.Len(), 0.1, 2)
	opt := Defaults()
	opt.Settings.Seed, opt.Settings.Workers = 3, 1
	var sweeps int
	opt.Settings.Callback = func(rpca.Record) { sweeps++ }
	m, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	rmse, n := heldRMSE(m, r, held)
	ev := m.Evaluate(r, held)
	if !(rmse <= 1.5*sigma) || n < 100 || !(ev.BiasRMSE > 3*rmse) {
		t.Errorf("held-out RMSE %.4f on %d ratings (σ = %v), biases alone %.4f", rmse, n, sigma, ev.BiasRMSE)
	}
	p := m.Result.Params.(*GibbsParams)
	if tau := 1 / (p.NoiseSD * p.NoiseSD); !(tau > 0.5/(sigma*sigma) && tau < 2/(sigma*sigma)) {
		t.Errorf("calibrated τ = %.1f, want near 1/σ² = %.1f", tau, 1/(sigma*sigma))
	}
	if p.Rank != DefaultGibbsRank || p.Samples != DefaultGibbsSamples || p.Keep != (DefaultGibbsSamples-DefaultGibbsBurnIn)/2 || sweeps != p.Samples ||
		m.Result.Stop != rpca.StopSchedule || m.Result.Method != "gibbs" || m.Result.S.NNZ() != 0 || m.Biases == nil {
		t.Errorf("params %+v, %d callbacks, stop %q, method %q, %d outliers", *p, sweeps, m.Result.Stop, m.Result.Method, m.Result.S.NNZ())
	}
	var num, den float64 // the residual from the model itself
	for k, v := range m.Train.Val {
		e := v - m.Fitted(m.Train.Row[k], m.Train.Col[k])
		num, den = num+e*e, den+v*v
	}
	if want := math.Sqrt(num / den); math.Abs(m.Result.Residual-want) > 1e-9*want {
		t.Errorf("Result.Residual %v, recomputed from U·Vᵀ %v", m.Result.Residual, want)
	}
	if _, c := m.U.Dims(); c != p.Keep*p.Rank+2 {
		t.Errorf("U has %d columns, want %d draws of rank %d plus 2", c, p.Keep, p.Rank)
	}
	opt.Settings.Workers, opt.Settings.Callback = 4, nil
	m4, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m.U, m4.U) || !mat.Equal(m.V, m4.V) {
		t.Error("the fit depends on the number of workers")
	}
	opt.Settings.Seed = 4
	m5, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(m.U, m5.U) {
		t.Error("another seed gives the same chain")
	}
}

// TestGibbsScaleFree: the fit of the ratings times 1000 plus 10⁴ predicts
// 1000 times the fit of the ratings plus 10⁴, to 1% of the held-out
// error: the calibrated noise and the learned priors follow the scale
// (the hyperpriors' fixed constants are outweighed by the data). With
// all ratings equal every prediction is that rating.
func TestGibbsScaleFree(t *testing.T) {
	r := biasedRatings(60, 50, 0.3, 0.1, 7)
	held := HoldOut(r.Len(), 0.1, 2)
	opt := Defaults()
	m, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	big := *r
	big.Val = slices.Clone(r.Val)
	for k := range big.Val {
		big.Val[k] = 1e4 + 1000*big.Val[k]
	}
	mb, err := Fit(context.Background(), &big, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	rmse, _ := heldRMSE(m, r, held)
	rmseBig, _ := heldRMSE(mb, &big, held)
	if math.Abs(rmseBig/1000-rmse) > 0.01*rmse {
		t.Errorf("held-out RMSE %.5f, scaled by 1000: %.5f", rmse, rmseBig/1000)
	}
	// At the ends of the float64 range: the ratings times 2^±1000 run
	// the same chain on the same scaled values, so the error scales
	// exactly (to rounding), and the summary's noise level is finite.
	for _, e := range []int{1000, -1000} {
		ext := *r
		ext.Val = slices.Clone(r.Val)
		for k := range ext.Val {
			ext.Val[k] = math.Ldexp(ext.Val[k], e)
		}
		me, err := Fit(context.Background(), &ext, held, opt)
		if err != nil {
			t.Fatal(err)
		}
		rmseExt, _ := heldRMSE(me, &ext, held)
		sd, sd0 := me.Result.Params.(*GibbsParams).NoiseSD, m.Result.Params.(*GibbsParams).NoiseSD
		if got := math.Ldexp(rmseExt, -e); math.Abs(got-rmse) > 1e-9*rmse || math.Abs(math.Ldexp(sd, -e)-sd0) > 1e-9*sd0 {
			t.Errorf("ratings × 2^%d: held-out RMSE %v, noise %v (scaled back); unscaled %v, %v", e, got, math.Ldexp(sd, -e), rmse, sd0)
		}
	}
	flat := *r
	flat.Val = slices.Repeat([]float64{4}, r.Len())
	mf, err := Fit(context.Background(), &flat, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range held {
		if i, j, okI, okJ := mf.Index(r.RowIDs[r.Row[k]], r.ColIDs[r.Col[k]]); h && okI && okJ {
			if p := mf.Predict(i, j); math.Abs(p-4) > 1e-6 {
				t.Fatalf("all ratings 4: predicts %v", p)
			}
		}
	}
}

// TestGibbsErrors: settings Gibbs cannot use are ErrGibbs, too few
// ratings ErrTooFewRatings, a given rank too large a *RankError, and a
// cancelled context stops the chain.
func TestGibbsErrors(t *testing.T) {
	r := biasedRatings(30, 20, 0.5, 0.1, 1)
	cases := []struct {
		name string
		opt  Options
		want error
	}{
		{"alpha 1", Options{Model: &Gibbs{}, Alpha: 1}, ErrGibbs},
		{"alpha negative", Options{Model: &Gibbs{}, Alpha: -0.1}, ErrGibbs},
		{"alpha NaN", Options{Model: &Gibbs{}, Alpha: math.NaN()}, ErrGibbs},
		{"median baseline", Options{Model: &Gibbs{}, Baseline: BaselineMedian}, ErrGibbs},
		{"burn-in too short", Options{Model: &Gibbs{BurnIn: 20}}, ErrGibbs},
		{"burn-in not below samples", Options{Model: &Gibbs{Samples: 30, BurnIn: 30}}, ErrGibbs},
		{"keep too many", Options{Model: &Gibbs{Samples: 50, BurnIn: 30, Keep: 21}}, ErrGibbs},
		{"negative samples", Options{Model: &Gibbs{Samples: -1}}, ErrGibbs},
		{"calibration 0.5", Options{Model: &Gibbs{Calibration: 0.5}}, ErrGibbs},
		{"tail negative", Options{Model: &Gibbs{Tail: -1}}, ErrGibbs},
		{"tail below 1", Options{Model: &Gibbs{Tail: 0.9}}, ErrGibbs},
		{"tail NaN", Options{Model: &Gibbs{Tail: math.NaN()}}, ErrGibbs},
		{"tail -Inf", Options{Model: &Gibbs{Tail: math.Inf(-1)}}, ErrGibbs},
		{"calibration NaN", Options{Model: &Gibbs{Calibration: math.NaN()}}, ErrGibbs},
	}
	for _, c := range cases {
		if _, err := Fit(context.Background(), r, nil, c.opt); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	tiny := biasedRatings(4, 3, 0, 0.1, 1) // one rating per row and column
	if _, err := Fit(context.Background(), tiny, nil, Defaults()); !errors.Is(err, ErrTooFewRatings) {
		t.Errorf("%d ratings: error %v, want ErrTooFewRatings", tiny.Len(), err)
	}
	var rankErr *RankError
	if _, err := Fit(context.Background(), r, nil, Options{Model: &Gibbs{}, Rank: 20}); !errors.As(err, &rankErr) {
		t.Errorf("rank 20 of 30×20: error %v, want a *RankError", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opt := Defaults()
	opt.Settings.Callback = func(rec rpca.Record) {
		if rec.Iter == 2 {
			cancel()
		}
	}
	if _, err := Fit(ctx, r, nil, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled after sweep 2: error %v", err)
	}
}

// TestGibbsRobust: with 3% of the training ratings of TestGibbsFit's
// model moved by ±3 (30σ, gross errors), the fit with α = 0.1 (lines
// have 27–36 ratings, so T keeps 2 or 3 of each, room for the junk's 1
// on average) finds most of the junk (recall ≥ 0.8: a junk residual is
// about 3 and a clean one about σ, so T ranks junk first in its lines;
// junk is missed where a line holds more than its count). T sets aside
// its count whatever the residuals, so precision is bounded by the junk
// share of the count: the test asks for 10× the 3% base rate. The
// held-out RMSE on clean ratings is within 2σ and below the α = 0 fit's,
// which the junk bends. The sparse part holds each set-aside rating
// minus its fitted value, and the fit is the same with one worker and
// with three.
func TestGibbsRobust(t *testing.T) {
	const sigma = 0.1
	r := biasedRatings(120, 90, 0.3, sigma, 1)
	held := HoldOut(r.Len(), 0.1, 2)
	rng := rand.New(rand.NewPCG(7, 7))
	junk := make([]bool, r.Len())
	for k := range r.Val {
		if !held[k] && rng.Float64() < 0.03 {
			junk[k] = true
			r.Val[k] += float64(1-2*rng.IntN(2)) * 3
		}
	}
	opt := Defaults()
	opt.Settings.Seed, opt.Settings.Workers = 3, 1
	plain, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Alpha = 0.1
	m, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	rmse, _ := heldRMSE(m, r, held)
	rmse0, _ := heldRMSE(plain, r, held)
	if !(rmse <= 2*sigma && rmse < rmse0) {
		t.Errorf("held-out RMSE %.4f with α = 0.1, %.4f with α = 0 (σ = %v)", rmse, rmse0, sigma)
	}
	var flagged, correct, nJunk int
	for k, tk := 0, 0; k < r.Len(); k++ {
		if held[k] {
			continue
		}
		if junk[k] {
			nJunk++
		}
		if m.IsOutlier(tk) {
			flagged++
			if junk[k] {
				correct++
			}
			i, j := m.Train.Row[tk], m.Train.Col[tk]
			if s, want := m.Result.S.At(i, j), m.Train.Val[tk]-m.Fitted(i, j); math.Abs(s-want) > 1e-12*math.Abs(want) {
				t.Errorf("S(%d, %d) = %v, want rating − fitted = %v", i, j, s, want)
			}
		}
		tk++
	}
	if !(float64(correct) >= 0.3*float64(flagged) && float64(correct) >= 0.8*float64(nJunk)) || plain.Result.S.NNZ() != 0 {
		t.Errorf("set aside %d, %d of them among the %d junk ratings; α = 0 set aside %d", flagged, correct, nJunk, plain.Result.S.NNZ())
	}
	opt.Settings.Workers = 3
	m3, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m.U, m3.U) || !mat.Equal(m.V, m3.V) || m3.Result.S.NNZ() != flagged {
		t.Error("the robust fit differs between one worker and three")
	}
}

// TestGibbsSweepsFollowData checks the default chain length: 200 sweeps
// (40 burn-in) up to 4 million training ratings, then DefaultGibbsWork/n
// down to 40 (26 burn-in), and a burn-in of 20 plus a third of the rest
// for a short chain given without one.
func TestGibbsSweepsFollowData(t *testing.T) {
	for _, c := range []struct {
		g              Gibbs
		n              int
		samples, burnI int
	}{
		{Gibbs{}, 100_000, 200, 40},
		{Gibbs{}, 4_000_000, 200, 40},
		{Gibbs{}, 8_000_000, 100, 40},
		{Gibbs{}, 16_000_000, 50, 30},
		{Gibbs{}, 20_000_000, 40, 26},
		{Gibbs{}, 1 << 40, 40, 26},
		{Gibbs{Samples: 300}, 20_000_000, 300, 40},
		{Gibbs{Samples: 32}, 100, 32, 24},
		{Gibbs{BurnIn: 25}, 20_000_000, 40, 25},
	} {
		g, err := c.g.withDefaults(c.n)
		if err != nil || g.Samples != c.samples || g.BurnIn != c.burnI {
			t.Errorf("%+v with %d ratings: %d sweeps, burn-in %d, %v; want %d, %d", c.g, c.n, g.Samples, g.BurnIn, err, c.samples, c.burnI)
		}
	}
}

// TestGibbsTailShortLines: with junk (5% of the training ratings moved by
// ±3, σ = 0.1) on items of about nine ratings each, T's count per item is
// ⌊0.05·9⌋ = 0, so T alone leaves the junk in; the Student-t noise of the
// robust fit weighs it down instead. With α = 0.05, the default tail's
// held-out RMSE must be below 0.6 of the normal-noise fit's (Tail =
// +Inf), and within 3σ (three data seeds gave 0.20–0.23 against
// 0.48–0.49). The summary reports the tail it used, and 0 for
// the normal noise.
func TestGibbsTailShortLines(t *testing.T) {
	const sigma = 0.1
	r := biasedRatings(60, 600, 0.15, sigma, 4)
	held := HoldOut(r.Len(), 0.1, 5)
	rng := rand.New(rand.NewPCG(8, 8))
	for k := range r.Val {
		if !held[k] && rng.Float64() < 0.05 {
			r.Val[k] += float64(1-2*rng.IntN(2)) * 3
		}
	}
	opt := Defaults()
	opt.Alpha, opt.Settings.Seed = 0.05, 3
	heavy, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Model = &Gibbs{Tail: math.Inf(1)}
	normal, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	rmseT, _ := heldRMSE(heavy, r, held)
	rmseN, _ := heldRMSE(normal, r, held)
	if !(rmseT < 0.6*rmseN && rmseT < 3*sigma) {
		t.Errorf("held-out RMSE %.4f with t noise, %.4f with normal noise (σ = %v)", rmseT, rmseN, sigma)
	}
	if pt, pn := heavy.Result.Params.(*GibbsParams).Tail, normal.Result.Params.(*GibbsParams).Tail; pt != DefaultGibbsTail || pn != 0 {
		t.Errorf("reported tails %v and %v, want %v and 0", pt, pn, float64(DefaultGibbsTail))
	}
	if st, sn := NewReport(r, held, 0.1, heavy).String(), NewReport(r, held, 0.1, normal).String(); !strings.Contains(st, "Student-t noise, ν = 5") || strings.Contains(sn, "Student-t") {
		t.Errorf("summary lines %q and %q: only the first should name the t noise", st, sn)
	}
	// The largest tail is the normal noise: its weights are all exactly
	// 1 and its t scale the mean square, so the fit is the normal one to
	// the bit.
	opt.Model = &Gibbs{Tail: math.MaxFloat64}
	huge, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(huge.U, normal.U) || !mat.Equal(huge.V, normal.V) {
		t.Error("the fit with ν = math.MaxFloat64 differs from the normal-noise fit")
	}
}

// TestTScale2: the fixed point is the maximum-likelihood scale of a
// Student-t. On 20,000 draws of a t with ν = 5 and scale 2 (gonum's
// StudentsT, an independent sampler) it must give s² within 5% of 4:
// the estimate's relative standard error is about √(2(ν+3)/(ν·n)) ≈ 1.3%.
// The mean square of those draws is ν/(ν−2) = 5/3 times larger, which
// the same bound rejects. A single error returns its start unchanged
// when it is 0 (no scale to fit).
func TestTScale2(t *testing.T) {
	const n, nu, scale = 20000, 5.0, 2.0
	d := distuv.StudentsT{Mu: 0, Sigma: scale, Nu: nu, Src: rand.NewPCG(9, 9)}
	e2 := make([]float64, n)
	var ms float64
	for k := range e2 {
		x := d.Rand()
		e2[k] = x * x
		ms += e2[k] / n
	}
	if got := tScale2(e2, nu, ms); math.Abs(got/(scale*scale)-1) > 0.05 {
		t.Errorf("t scale² %.4f, want %v ± 5%% (mean square %.4f)", got, scale*scale, ms)
	}
	if got := tScale2([]float64{0}, nu, 0); got != 0 {
		t.Errorf("t scale² of a zero error %v, want 0", got)
	}
}
