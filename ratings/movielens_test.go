package ratings

import (
	"context"
	"fmt"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats/triples"
)

// TestMovieLensCV is the 5-fold cross-validation of the ratings issue, an
// experiment rather than a unit test; it runs only with RPCA_MOVIELENS set
// to a MovieLens ratings.csv (userId,movieId,rating,timestamp):
//
//	RPCA_MOVIELENS=$PWD/../shared/data/ratings/ml-latest-small/ratings.csv go test -run TestMovieLensCV -timeout 30m -v ./ratings
//
// Every rating is in one of five folds (a seeded permutation). For each
// fold it fits the other four with Fit at its defaults (rank and ridge
// chosen by validation, the bias model, alternating least squares, α = 0, clipped
// to 0.5–5) and scores every rating of the fold: a rating whose user or
// movie has no training rating gets the bias model's prediction (the
// known biases only), as in the bias baseline, which is the same model's
// biases alone. It also scores a plain reference, biased matrix
// factorisation fitted jointly by alternating ridge regressions
// (refALS), at RPCA_MOVIELENS_REF="rank,λ,λ_bias" (default 50,14,3).
// RPCA_MOVIELENS_SVDPP="rank,λ,λ_bias,λ_y" adds the SVD++ reference
// (refSVDpp, 25 sweeps of 5 conjugate-gradient steps for Y), whose fits
// take about 25 s a fold.
// RPCA_MOVIELENS_IMPLICIT=λ_y fits with rpca.GD.Implicit (alternating
// least squares with SVD++'s implicit factors).
// By default the fits are Fit's at Defaults() (rpca complete's defaults:
// the Gibbs fit); RPCA_MOVIELENS_ALS=1 fits by alternating least squares
// with the rank and ridge chosen by validation instead, and
// RPCA_MOVIELENS_GIBBS="samples,burn-in,keep" sets the Gibbs schedule.
// RPCA_MOVIELENS_SEED sets Settings.Seed.
// RPCA_MOVIELENS_UPDATE sets the update rule of the fits (default: Fit's
// own, alternating least squares; "scaled" or "paper" for the gradient
// steps). RPCA_MOVIELENS_PATIENCE sets Selection.Patience (default:
// Select's own).
// It prints the RMSE per fold and the means.
func TestMovieLensCV(t *testing.T) {
	r := movieLens(t)
	refRank, refLambda, refBias := 50, 14.0, 3.0
	if s := os.Getenv("RPCA_MOVIELENS_REF"); s != "" {
		v := envFloatList(t, s, 3)
		refRank, refLambda, refBias = int(v[0]), v[1], v[2]
	}
	var pp []float64 // the SVD++ reference's rank, λ, λ_bias, λ_y, or nil
	if s := os.Getenv("RPCA_MOVIELENS_SVDPP"); s != "" {
		pp = envFloatList(t, s, 4)
	}
	var method Estimator // nil: alternating least squares
	if u := os.Getenv("RPCA_MOVIELENS_UPDATE"); u != "" {
		method = &Gradient{gd.Method{Scaled: u == "scaled"}}
	}
	if v := os.Getenv("RPCA_MOVIELENS_IMPLICIT"); v != "" {
		lambdaY, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("RPCA_MOVIELENS_IMPLICIT=%q: %v", v, err)
		}
		method = &ALS{als.Method{Implicit: lambdaY}}
	}
	var sel Selection
	if s := os.Getenv("RPCA_MOVIELENS_PATIENCE"); s != "" {
		var err error
		if sel.Patience, err = strconv.Atoi(s); err != nil {
			t.Fatalf("RPCA_MOVIELENS_PATIENCE=%q: %v", s, err)
		}
	}
	const folds = 5
	fold := make([]int, r.Len())
	for k, p := range rand.New(rand.NewPCG(1, 2)).Perm(r.Len()) {
		fold[p] = k % folds
	}
	clip := &[2]float64{0.5, 5}
	var sumModel, sumBias, sumRef, sumPP, sumSecs float64
	t.Logf("%4s %8s %8s %8s %6s %6s %7s", "fold", "biases", "rpca", "ref ALS", "rank", "ridge", "fit(s)")
	for f := 0; f < folds; f++ {
		held := make([]bool, r.Len())
		for k := range held {
			held[k] = fold[k] == f
		}
		start := time.Now()
		opt := Defaults() // rpca complete's defaults
		if method != nil || os.Getenv("RPCA_MOVIELENS_ALS") != "" {
			opt = Options{Baseline: BaselineBiases, Model: method, Select: sel}
		}
		if _, gibbs := opt.Model.(*Gibbs); gibbs && os.Getenv("RPCA_MOVIELENS_GIBBS") != "" {
			g := os.Getenv("RPCA_MOVIELENS_GIBBS")
			v := envFloatList(t, g, 3)
			opt.Model = &Gibbs{Samples: int(v[0]), BurnIn: int(v[1]), Keep: int(v[2])}
		}
		opt.Clip = clip
		opt.Settings.Seed = 1 // rpca complete's default --seed, so that --cv 5 gives these folds
		if s := os.Getenv("RPCA_MOVIELENS_SEED"); s != "" {
			var err error
			if opt.Settings.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
				t.Fatalf("RPCA_MOVIELENS_SEED=%q: %v", s, err)
			}
		}
		m, err := Fit(context.Background(), r, held, opt)
		if err != nil {
			t.Fatalf("fold %d: %v", f, err)
		}
		secs := time.Since(start).Seconds()
		ref := refALS(r, held, refRank, refLambda, refBias, 25)
		var svdpp *svdppFit
		if pp != nil {
			svdpp = refSVDpp(r, held, int(pp[0]), pp[1], pp[2], pp[3], 25, 5)
		}
		var em, eb, er, ep float64
		n := 0
		for k, h := range held {
			if !h {
				continue
			}
			i, j, okI, okJ := m.Index(r.RowIDs[r.Row[k]], r.ColIDs[r.Col[k]])
			if !okI {
				i = -1
			}
			if !okJ {
				j = -1
			}
			pb := m.PredictBiases(i, j)
			pm := pb
			if okI && okJ {
				pm = m.Predict(i, j)
			}
			pr := math.Min(math.Max(ref(r.Row[k], r.Col[k]), clip[0]), clip[1])
			want := r.Val[k]
			em += (pm - want) * (pm - want)
			eb += (pb - want) * (pb - want)
			er += (pr - want) * (pr - want)
			if svdpp != nil {
				pp := math.Min(math.Max(svdpp.Predict(r.Row[k], r.Col[k]), clip[0]), clip[1])
				ep += (pp - want) * (pp - want)
			}
			n++
		}
		rm, rb, rr := math.Sqrt(em/float64(n)), math.Sqrt(eb/float64(n)), math.Sqrt(er/float64(n))
		if math.IsNaN(rm) || rm > rb {
			t.Errorf("fold %d: RMSE %v, above the biases' %v", f, rm, rb)
		}
		rp, extra := math.Sqrt(ep/float64(n)), ""
		if svdpp != nil {
			extra = fmt.Sprintf(" svd++ %.4f", rp)
		}
		ridge := math.NaN()
		if m.Chosen != nil {
			ridge = m.Chosen.Best.Ridge
		}
		t.Logf("%4d %8.4f %8.4f %8.4f %6d %6g %7.2f%s", f, rb, rm, rr, m.Options.Rank, ridge, secs, extra)
		sumModel, sumBias, sumRef, sumPP, sumSecs = sumModel+rm, sumBias+rb, sumRef+rr, sumPP+rp, sumSecs+secs
	}
	mb, mm, mr := sumBias/folds, sumModel/folds, sumRef/folds
	t.Logf("mean: biases %.4f, rpca %.4f (%.2f%% below), reference ALS rank %d λ %g λ_bias %g %.4f (%.2f%% below); mean fit %.2f s",
		mb, mm, 100*(mb-mm)/mb, refRank, refLambda, refBias, mr, 100*(mb-mr)/mb, sumSecs/folds)
	if pp != nil {
		mp := sumPP / folds
		t.Logf("SVD++ reference rank %g λ %g λ_bias %g λ_y %g: %.4f (%.2f%% below the biases)", pp[0], pp[1], pp[2], pp[3], mp, 100*(mb-mp)/mb)
	}
}

// envFloatList parses n comma-separated numbers.
func envFloatList(t *testing.T, s string, n int) []float64 {
	fields := strings.Split(s, ",")
	if len(fields) != n {
		t.Fatalf("%q: want %d comma-separated numbers", s, n)
	}
	v := make([]float64, n)
	for k, f := range fields {
		var err error
		if v[k], err = strconv.ParseFloat(f, 64); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	return v
}

// trainingLines returns the positions of the training ratings (those not
// held) of each row and of each column, and their mean.
func trainingLines(r *triples.Ratings, held []bool) (byRow, byCol [][]int, mean float64) {
	byRow, byCol = make([][]int, r.D1), make([][]int, r.D2)
	n := 0
	for k := range r.Len() {
		if held[k] {
			continue
		}
		byRow[r.Row[k]] = append(byRow[r.Row[k]], k)
		byCol[r.Col[k]] = append(byCol[r.Col[k]], k)
		mean += r.Val[k]
		n++
	}
	return byRow, byCol, mean / float64(n)
}

// refALS is a plain reference for the cross-validation: the biased
// factorisation r̂_ij = μ + b_i + c_j + p_i·q_j fitted to the ratings of r
// not in held by alternating exact ridge regressions (per row: b_i and
// p_i given the columns; per column: c_j and q_j given the rows), with
// penalty lambda on p and q and lambdaBias on b and c, from a seeded
// random start, for the given sweeps. It returns the predictor over r's
// indices (no clipping).
func refALS(r *triples.Ratings, held []bool, rank int, lambda, lambdaBias float64, sweeps int) func(i, j int) float64 {
	byRow, byCol, mu := trainingLines(r, held)
	// P[i] = [b_i, p_i], Q[j] = [c_j, q_j]; r̂ = μ + b_i + c_j + p_i·q_j.
	rng := rand.New(rand.NewPCG(3, 4))
	newFactor := func(d int) [][]float64 {
		f := make([][]float64, d)
		for i := range f {
			f[i] = make([]float64, rank+1)
			for a := 1; a <= rank; a++ {
				f[i][a] = 0.1 * rng.NormFloat64()
			}
		}
		return f
	}
	P, Q := newFactor(r.D1), newFactor(r.D2)
	a := mat.NewSymDense(rank+1, nil)
	b := mat.NewVecDense(rank+1, nil)
	var x mat.VecDense
	var chol mat.Cholesky
	// solve sets dst to the minimiser over [bias, factor] of
	// Σ_k (target_k − bias − factor·other_k)² + λ_bias·bias² + λ‖factor‖².
	solve := func(dst []float64, ks []int, other func(k int) []float64, target func(k int) float64) {
		a.Zero()
		b.Zero()
		design := make([]float64, rank+1)
		for _, k := range ks {
			o := other(k)
			design[0] = 1
			copy(design[1:], o[1:])
			a.SymRankOne(a, 1, mat.NewVecDense(rank+1, design))
			b.AddScaledVec(b, target(k), mat.NewVecDense(rank+1, design))
		}
		a.SetSym(0, 0, a.At(0, 0)+lambdaBias)
		for c := 1; c <= rank; c++ {
			a.SetSym(c, c, a.At(c, c)+lambda)
		}
		if !chol.Factorize(a) {
			panic("refALS: the regularised normal equations are not positive definite")
		}
		if err := chol.SolveVecTo(&x, b); err != nil {
			panic(err)
		}
		copy(dst, x.RawVector().Data)
	}
	for range sweeps {
		for i, ks := range byRow {
			solve(P[i], ks, func(k int) []float64 { return Q[r.Col[k]] }, func(k int) float64 { return r.Val[k] - mu - Q[r.Col[k]][0] })
		}
		for j, ks := range byCol {
			solve(Q[j], ks, func(k int) []float64 { return P[r.Row[k]] }, func(k int) float64 { return r.Val[k] - mu - P[r.Row[k]][0] })
		}
	}
	return func(i, j int) float64 {
		s := mu + P[i][0] + Q[j][0]
		for c := 1; c <= rank; c++ {
			s += P[i][c] * Q[j][c]
		}
		return s
	}
}

// movieLens reads the MovieLens ratings.csv named by RPCA_MOVIELENS, and
// skips the test or benchmark when the variable is not set.
func movieLens(tb testing.TB) *triples.Ratings {
	tb.Helper()
	path := os.Getenv("RPCA_MOVIELENS")
	if path == "" {
		tb.Skip("set RPCA_MOVIELENS to a MovieLens ratings.csv")
	}
	r, err := ReadFile(path, triples.Options{Header: true, IgnoreExtra: true}, 1e10)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
