package ratings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/triples"
)

// noisyRatings generates 3 + b_i + c_j + (A·Bᵀ)_ij + noise·N(0, 1) with A,
// B of the given rank, each entry observed with probability p.
func noisyRatings(t *testing.T, d1, d2, rank int, p, noise float64, seed uint64) *triples.Ratings {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	gauss := func(n int, s float64) [][]float64 {
		x := make([][]float64, n)
		for i := range x {
			x[i] = make([]float64, rank+1)
			for k := range x[i] {
				x[i][k] = s * rng.NormFloat64()
			}
		}
		return x
	}
	a, b := gauss(d1, 0.7), gauss(d2, 0.7) // last column: the bias
	var sb strings.Builder
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if rng.Float64() >= p {
				continue
			}
			v := 3 + a[i][rank] + b[j][rank] + noise*rng.NormFloat64()
			for k := 0; k < rank; k++ {
				v += a[i][k] * b[j][k]
			}
			fmt.Fprintf(&sb, "u%d,i%d,%.17g\n", i, j, v)
		}
	}
	r, err := triples.Read(strings.NewReader(sb.String()), "test", triples.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSelectChoosesByValidation: on rank-3 data with biases and noise
// 0.1, rank 1 underfits, so the choice must be a rank of at least 3; the
// best candidate is the smallest RMSE of the curve; the choice depends
// only on the seed; and each candidate's RMSE is what Model.Evaluate
// finds for a fit stopped at the candidate's iteration count (an
// independent path: the model's own prediction code instead of the
// validation closure). The final model's held-out RMSE must be within
// 1.5× the noise (its floor; the rest is the estimation error of about
// 3·(150 + 120) parameters from some 4,900 ratings).
func TestSelectChoosesByValidation(t *testing.T) {
	const noise = 0.1
	r := noisyRatings(t, 150, 120, 3, 0.3, noise, 1)
	held := HoldOut(r.Len(), 0.1, 2)
	opt := Options{Baseline: BaselineBiases, Model: &Gradient{gd.Method{Scaled: true}},
		Select: Selection{Ranks: []int{1, 3, 8}, Ridges: []float64{0.1, 1, 10}}, Settings: rpca.Settings{Seed: 5}}
	ch, err := Select(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Candidates) != 5 {
		t.Fatalf("%d candidates, want 3 ridges + 2 more ranks: %+v", len(ch.Candidates), ch.Candidates)
	}
	for _, c := range ch.Candidates {
		if c.RMSE < ch.Best.RMSE {
			t.Errorf("candidate %+v beats the best %+v", c, ch.Best)
		}
	}
	if ch.Best.Rank < 3 {
		t.Errorf("chose rank %d of rank-3 data (curve %+v)", ch.Best.Rank, ch.Candidates)
	}
	again, err := Select(context.Background(), r, held, opt)
	if err != nil || !reflect.DeepEqual(stripSeconds(again), stripSeconds(ch)) {
		t.Errorf("a second choice with the same seed differs: %+v vs %+v (%v)", again, ch, err)
	}
	// The candidate's RMSE, recomputed through Model.Evaluate.
	val, n := validationSet(r, held, DefaultValidationFraction, 5)
	if n != ch.Validation {
		t.Fatalf("validation set of %d, choice says %d", n, ch.Validation)
	}
	fitHeld := make([]bool, r.Len())
	for k := range fitHeld {
		fitHeld[k] = val[k] || held[k]
	}
	c := ch.Candidates[4]
	o := opt
	o.Rank, o.Model = c.Rank, &Gradient{gd.Method{Scaled: true, Ridge: c.Ridge}}
	o.Settings.Stop = rpca.Stop{MaxIter: c.Iterations, FactorTol: -1, ResidualTol: -1}
	m, err := Fit(context.Background(), r, fitHeld, o)
	if err != nil {
		t.Fatal(err)
	}
	if ev := m.Evaluate(r, val); math.Abs(ev.RMSE-c.RMSE) > 1e-9 || ev.Ratings-ev.Skipped != ch.Scored {
		t.Errorf("candidate %+v: Evaluate gives RMSE %v on %d ratings, the choice %v on %d", c, ev.RMSE, ev.Ratings-ev.Skipped, c.RMSE, ch.Scored)
	}
	// The final fit against an oracle at the true rank.
	auto, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	if auto.Chosen == nil || auto.Options.Rank != auto.Chosen.Best.Rank {
		t.Fatalf("model of the choice: rank %d, choice %+v", auto.Options.Rank, auto.Chosen)
	}
	got := auto.Evaluate(r, held).RMSE
	if !(got <= 1.5*noise) {
		t.Errorf("held-out RMSE %v with the chosen rank %d and ridge %v, want at most 1.5× the noise %v", got, auto.Chosen.Best.Rank, auto.Chosen.Best.Ridge, noise)
	}
	if under := ch.Candidates[3]; under.Rank != 1 || !(under.RMSE > 2*noise) {
		t.Errorf("rank 1 scores %v on rank-3 data", under.RMSE)
	}
	t.Logf("choice %+v: held-out RMSE %.4f", ch.Best, got)
}

func stripSeconds(c *Choice) *Choice {
	if c == nil {
		return nil
	}
	cp := *c
	cp.Candidates = append([]Candidate(nil), c.Candidates...)
	for k := range cp.Candidates {
		cp.Candidates[k].Seconds = 0
	}
	cp.Best.Seconds = 0
	return &cp
}

// TestSelectErrors: what the caller can get wrong is ErrSelect.
func TestSelectErrors(t *testing.T) {
	r := noisyRatings(t, 30, 20, 2, 0.5, 0.1, 1)
	for name, opt := range map[string]Options{
		"fraction 1":     {Select: Selection{Fraction: 1}},
		"fraction NaN":   {Select: Selection{Fraction: math.NaN()}},
		"negative ridge": {Select: Selection{Ridges: []float64{-1}}},
		"no ranks":       {Select: Selection{Ranks: []int{}}},
		"ranks too big":  {Select: Selection{Ranks: []int{20, 50}}},
		"patience −1":    {Select: Selection{Patience: -1}},
	} {
		if _, err := Fit(context.Background(), r, nil, opt); !errors.Is(err, ErrSelect) {
			t.Errorf("%s: %v, want ErrSelect", name, err)
		}
	}
	if _, err := Select(context.Background(), r, nil, Options{Model: &Gibbs{}}); !errors.Is(err, ErrSelect) {
		t.Errorf("Select with Gibbs (no ridge to choose): %v, want ErrSelect", err)
	}
	one := noisyRatings(t, 1, 1, 1, 1, 0, 1)
	if _, err := Select(context.Background(), one, nil, Options{}); !errors.Is(err, ErrSelect) {
		t.Errorf("one rating: %v, want ErrSelect", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, r, nil, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestSelectStartsFromOnePhaseI: a candidate below the largest rank starts
// from the leading columns of Phase I at the largest rank (one
// Initialize for the whole choice). After one sweep, its
// validation RMSE is that of a fit given that start to rounding (1e-13:
// Evaluate sums the errors in another order than the validation during
// the fit; they differed by 2e-16), and differs from that of a fit that
// runs its own rank-1 Phase I (by 9e-12 here: the two SVDs agree far
// beyond their tolerance on this small problem, but not to the last bit).
func TestSelectStartsFromOnePhaseI(t *testing.T) {
	ctx := context.Background()
	r := noisyRatings(t, 150, 120, 3, 0.3, 0.1, 1)
	held := HoldOut(r.Len(), 0.1, 2)
	// One sweep, so that the start shows in the validation RMSE.
	opt := Options{Baseline: BaselineBiases, FixedBiases: true, Select: Selection{Ranks: []int{1, 2, 8}, Ridges: []float64{1}},
		Settings: rpca.Settings{Seed: 5, Stop: rpca.Stop{MaxIter: 1}}}
	ch, err := Select(ctx, r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	c := ch.Candidates[1] // rank 1 (rank 2, the middle one, is first)
	if c.Rank != 1 {
		t.Fatalf("candidates %+v: want rank 1 second", ch.Candidates)
	}
	val, _ := validationSet(r, held, DefaultValidationFraction, 5)
	fitHeld := make([]bool, r.Len())
	for k := range fitHeld {
		fitHeld[k] = val[k] || held[k]
	}
	o := opt
	e := &ALS{als.Method{Ridge: c.Ridge}}
	o.Rank, o.Model = c.Rank, e
	o.Settings.Stop = rpca.Stop{MaxIter: c.Iterations, FactorTol: -1, ResidualTol: -1}
	if c.Iterations > 1 {
		t.Fatalf("candidate %+v: more than the one sweep asked for", c)
	}
	shared, err := fit(ctx, r, fitHeld, nil, o, e, -1, &startCache{rank: 8})
	if err != nil {
		t.Fatal(err)
	}
	own, err := fit(ctx, r, fitHeld, nil, o, e, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, ro := shared.Evaluate(r, val).RMSE, own.Evaluate(r, val).RMSE
	if math.Abs(rs-c.RMSE) > 1e-13 {
		t.Errorf("rank 1 from the rank-8 Phase I: RMSE %v, the choice says %v", rs, c.RMSE)
	}
	if math.Abs(ro-c.RMSE) <= 1e-13 || math.Abs(ro-c.RMSE) > 1e-6 {
		t.Errorf("rank 1 from its own Phase I: RMSE %v, from the shared one %v: want close but not the same", ro, c.RMSE)
	}
}

// TestSelectionPatience: the candidates' patience is Selection.Patience,
// else the settings', else ALSPatience for ALS and rpca.DefaultPatience
// for gradient steps; a negative one is ErrSelect.
func TestSelectionPatience(t *testing.T) {
	als, gd := &ALS{}, &Gradient{}
	withStop := Options{Settings: rpca.Settings{Stop: rpca.Stop{Patience: 7}}}
	for _, c := range []struct {
		sel  Selection
		opt  Options
		g    leastSquares
		want int
	}{
		{Selection{}, Options{}, als, ALSPatience},
		{Selection{}, Options{}, gd, rpca.DefaultPatience},
		{Selection{}, withStop, als, 7},
		{Selection{Patience: 2}, withStop, gd, 2},
	} {
		if got, err := c.sel.patience(c.opt, c.g); err != nil || got != c.want {
			t.Errorf("%+v, stop patience %d, estimator %s: %d (%v), want %d", c.sel, c.opt.Settings.Stop.Patience, c.g.Name(), got, err, c.want)
		}
	}
	if _, err := (Selection{Patience: -1}).patience(Options{}, als); !errors.Is(err, ErrSelect) {
		t.Errorf("patience −1: %v, want ErrSelect", err)
	}
}

// TestCandidateJSON: a candidate whose validation RMSE is not finite is
// written with "rmse": null (encoding/json refused +Inf, and the whole
// summary with it); a finite one as its value, with the other fields.
func TestCandidateJSON(t *testing.T) {
	for _, tc := range []struct {
		rmse float64
		want string
	}{
		{math.Inf(1), `{"rank":2,"ridge":0.5,"iterations":3,"seconds":1.5,"rmse":null}`},
		{0.25, `{"rank":2,"ridge":0.5,"iterations":3,"seconds":1.5,"rmse":0.25}`},
	} {
		b, err := json.Marshal(Candidate{Rank: 2, Ridge: 0.5, RMSE: tc.rmse, Iterations: 3, Seconds: 1.5})
		if err != nil || string(b) != tc.want {
			t.Errorf("RMSE %v: %s, %v; want %s", tc.rmse, b, err, tc.want)
		}
	}
}
