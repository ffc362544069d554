package ratings

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/robust"
	"github.com/rpca-gd/rpca/internal/sample"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/metrics"
)

// Baseline is the part of the model fitted before the low-rank part.
type Baseline string

// The baselines of [Fit].
const (
	// BaselineMedian subtracts the median training rating m, so that a
	// rating scale far from 0 (say 1 to 5) does not dominate the fit and
	// the outlier estimate T_α compares deviations; the zero value.
	BaselineMedian Baseline = "median"
	// BaselineBiases subtracts the regularised bias model of [FitBiases]
	// (mean, row and column biases with the default regularisation).
	BaselineBiases Baseline = "biases"
	// BaselineNone fits the raw ratings.
	BaselineNone Baseline = "none"
)

// ALSFactorTol is the stop on the relative factor change of fits with
// *ALS when Settings.Stop.FactorTol is 0: a sweep that moves
// the factors by about 0.1% of their size ((‖ΔU‖² + ‖ΔV‖²)/(‖U‖² + ‖V‖²)
// ≤ 1e-6). The solver's own default (rpca.DefaultALSStop) is meant for
// exact low-rank data; on ratings the held-out error settles long before
// it is met (docs/performance.md, "Ratings at scale").
const ALSFactorTol = 1e-6

// Options configures [Fit].
type Options struct {
	// Rank is r, the rank of the low-rank part (below the number of
	// distinct training rows and columns); 0 chooses it, with the ridge
	// λ, by validation (see [Select]).
	Rank int
	// Select configures the choice of Rank 0; the zero value takes the
	// defaults of [Selection].
	Select Selection
	// Alpha is α, the largest fraction of outlier ratings per row and
	// column; 0 is plain matrix completion.
	Alpha float64
	// Baseline is what is fitted before the low-rank part; "" means
	// BaselineMedian. With BaselineBiases, *ALS and Alpha 0 the biases
	// are then refitted jointly with the factors (als.Method.Biases, with
	// the factors' ridge, starting from the baseline's) unless FixedBiases
	// is set. With Alpha > 0 they stay
	// fixed: refitted without the ratings T sets aside, a fixed share
	// of every line, the biases follow the trimmed lines (measured on
	// flipped ratings: worse held-out RMSE, docs/experiments.md).
	Baseline Baseline
	// FixedBiases keeps the biases of BaselineBiases as they are fitted
	// first, without the joint refit.
	FixedBiases bool
	// Model is the estimator: nil means *ALS with its defaults
	// (alternating least squares with the paper's sparse estimator, T's
	// counts taken per user and item). With *Gibbs (see [Gibbs]) Rank 0
	// means DefaultGibbsRank, Select is not used, Alpha is below 1, and the
	// Baseline is BaselineBiases (or ""); Settings.Seed seeds the chain
	// and Settings.Callback is called after every sweep.
	Model Estimator
	// Settings are passed to rpca.Solve, with Rank and Alpha replaced by
	// the fields above (and, for *ALS, a Stop.FactorTol of 0 replaced by
	// ALSFactorTol).
	Settings rpca.Settings
	// Clip, when non-nil, bounds every prediction to [Clip[0], Clip[1]].
	Clip *[2]float64
}

// Defaults returns the options of rpca complete at its defaults: the
// Gibbs fit of the biased low-rank model, rank DefaultGibbsRank (measured
// against alternating least squares with the rank and ridge chosen by
// validation in docs/cli.md).
func Defaults() Options {
	return Options{Baseline: BaselineBiases, Model: &Gibbs{}}
}

// RankError reports a rank that the training ratings cannot support.
type RankError struct {
	Rank, D1, D2 int
}

func (e *RankError) Error() string {
	return fmt.Sprintf("ratings: rank %d must be smaller than min(d1, d2) = %d: the training ratings have %d distinct rows and %d distinct columns",
		e.Rank, min(e.D1, e.D2), e.D1, e.D2)
}

// Model is a fitted completion model: its Predictor (the factors, the
// ids, the clip range and the bias model) and what the fit reports. Only
// ids with at least one training rating are fitted.
type Model struct {
	Predictor
	// Offset is the median subtracted by BaselineMedian (0 otherwise).
	Offset float64
	// Result is the solver's result on the ratings minus the baseline
	// (its U and V are replaced by the Predictor's); Result.S holds the
	// ratings set aside as outliers, in fitted indices.
	Result *rpca.Result
	// Options are the options of the fit (with the chosen rank when
	// Rank was 0).
	Options Options
	// Chosen is the outcome of the choice by validation when Options.Rank
	// was 0, nil otherwise.
	Chosen *Choice
	// SetAside counts the ratings Fit left out of training as gross
	// corruptions (more than rpca.GrossSpreads robust spreads from the
	// median).
	SetAside int

	scored int // validation ratings with a fitted row and column
}

// HoldOut returns which of n ratings to hold out: a uniformly random
// subset of round(frac·n) of them (at least one, at most n − 1), drawn
// from seed; nil when frac is 0.
func HoldOut(n int, frac float64, seed uint64) []bool {
	if frac == 0 || n < 2 {
		return nil
	}
	k := min(max(1, int(math.Round(frac*float64(n)))), n-1)
	return sample.Subset(rand.New(rand.NewPCG(seed, 0x6b0d0e7a11c0de)), n, k)
}

// Fit fits the model to the ratings of r that are not held out (held may
// be nil): it maps the ids that have a training rating to rows and
// columns, subtracts the baseline, and solves for the low-rank part and
// the outliers with opt.Method. Errors from the solver are returned as
// they are (rpca.ErrBadInput, rpca.ErrDiverged, context.Canceled, …); a
// rank too large for the training ratings is a *RankError.
//
// Ratings more than rpca.GrossSpreads robust spreads from the median of
// the training ratings (a rating of 1e308 among ratings of 1 to 5) are set
// aside before the fit, as rpca.Solve sets gross entries aside: no model
// can use them, and one of them would dominate every sum of squares. They
// are neither fitted nor evaluated; Model.SetAside counts them. A nil
// context is context.Background().
func Fit(ctx context.Context, r *triples.Ratings, held []bool, opt Options) (*Model, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := checkRatings(r); err != nil {
		return nil, err
	}
	if held != nil && len(held) != r.Len() {
		return nil, fmt.Errorf("ratings: %d held-out flags for %d ratings", len(held), r.Len())
	}
	if opt.Rank < 0 {
		return nil, fmt.Errorf("ratings: rank %d must be at least 1, or 0 to choose it", opt.Rank)
	}
	skip, gross := setAsideGross(r, held)
	var m *Model
	var err error
	switch e := opt.model().(type) {
	case *Gibbs:
		m, err = fitBayes(ctx, r, skip, opt, e)
	case leastSquares:
		if opt.Rank == 0 {
			m, err = fitChosen(ctx, r, skip, opt, e)
		} else {
			m, err = fit(ctx, r, skip, nil, opt, e, -1, nil)
		}
	default:
		return nil, fmt.Errorf("ratings: unknown estimator %s", e.Name())
	}
	if err != nil {
		return nil, err
	}
	m.SetAside = gross
	return m, nil
}

// checkRatings returns an error for ratings Fit cannot read: nil, slices
// of different lengths, indices outside the ids, or values that are not
// finite.
func checkRatings(r *triples.Ratings) error {
	if r == nil {
		return errors.New("ratings: no ratings (nil)")
	}
	n := len(r.Val)
	if len(r.Row) != n || len(r.Col) != n {
		return fmt.Errorf("ratings: %d row indices, %d column indices and %d values; want equal counts", len(r.Row), len(r.Col), n)
	}
	if n == 0 {
		return errors.New("ratings: no ratings")
	}
	if len(r.RowIDs) < r.D1 || len(r.ColIDs) < r.D2 {
		return fmt.Errorf("ratings: %d row ids and %d column ids for a %d×%d matrix", len(r.RowIDs), len(r.ColIDs), r.D1, r.D2)
	}
	for k, v := range r.Val {
		switch i, j := r.Row[k], r.Col[k]; {
		case i < 0 || i >= r.D1 || j < 0 || j >= r.D2:
			return fmt.Errorf("ratings: rating %d is at (%d, %d), outside the %d×%d matrix", k, i, j, r.D1, r.D2)
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("ratings: rating %d (row %s, column %s) is %v", k, r.RowIDs[i], r.ColIDs[j], v)
		}
	}
	return nil
}

// setAsideGross returns held with the training ratings more than
// rpca.GrossSpreads robust spreads from their median marked too, and how
// many it marked.
func setAsideGross(r *triples.Ratings, held []bool) ([]bool, int) {
	var train []float64
	for k, v := range r.Val {
		if held == nil || !held[k] {
			train = append(train, v)
		}
	}
	if len(train) == 0 {
		return held, 0
	}
	c, spreadHalf := robust.Half(train)
	n := 0
	var skip []bool
	for k, v := range r.Val {
		if (held != nil && held[k]) || !(math.Abs(v/2-c/2) > rpca.GrossSpreads*spreadHalf) {
			continue
		}
		if skip == nil {
			skip = make([]bool, len(r.Val))
			copy(skip, held)
		}
		skip[k] = true
		n++
	}
	if skip == nil {
		return held, 0
	}
	return skip, n
}

// fit is Fit with the least-squares estimator e at a given rank and
// ridge (< 0: e's own). With val (flags over r, disjoint from held) it
// stops early on the RMSE of the ratings marked in val
// (Stop.Validation), those of fitted rows and columns. With starts Phase
// I is taken from it rather than run.
func fit(ctx context.Context, r *triples.Ratings, held, val []bool, opt Options, e leastSquares, ridge float64, starts *startCache) (*Model, error) {
	m, err := prepare(r, held, opt)
	if err != nil {
		return nil, err
	}
	tr := m.Train
	d1, d2 := tr.D1, tr.D2
	vals := tr.Val
	switch opt.Baseline {
	case BaselineBiases:
		b, err := FitBiases(d1, d2, tr.Row, tr.Col, tr.Val, DefaultRegRow, DefaultRegCol, DefaultSweeps)
		if err != nil {
			return nil, err
		}
		m.Biases = b
		vals = make([]float64, len(tr.Val))
		for k, v := range tr.Val {
			vals[k] = v - b.Predict(tr.Row[k], tr.Col[k])
		}
	case BaselineMedian, "":
		m.Offset = median(tr.Val)
		vals = make([]float64, len(tr.Val))
		for k, v := range tr.Val {
			vals[k] = v - m.Offset
		}
	case BaselineNone:
	default:
		return nil, fmt.Errorf("ratings: unknown baseline %q (want %q, %q or %q)", opt.Baseline, BaselineMedian, BaselineBiases, BaselineNone)
	}
	obs, err := rpca.NewObserved(d1, d2, tr.Row, tr.Col, vals)
	if err != nil {
		return nil, err
	}
	joint := e.exact() && opt.Baseline == BaselineBiases && !opt.FixedBiases && opt.Alpha == 0
	s := opt.Settings
	s.Rank, s.Alpha = opt.Rank, opt.Alpha
	if e.exact() && s.Stop.FactorTol == 0 {
		s.Stop.FactorTol = ALSFactorTol
	}
	if val != nil {
		s.Stop.Validation = m.validation(r, val)
	}
	prob := &rpca.Problem{Observed: obs}
	var start *rpca.Start
	if starts != nil {
		start = starts.start(ctx, prob, s, e)
	}
	res, err := rpca.Solve(ctx, prob, s, e.solver(ridge, joint, start))
	if err != nil {
		return nil, err
	}
	m.Result = res
	switch {
	case m.Biases != nil:
		// M = mean + b_row·1ᵀ + 1·b_colᵀ + U·Vᵀ = [U, mean + b_row, 1]·[V, 1, b_col]ᵀ.
		rowPart := make([]float64, d1)
		colPart := slices.Clone(m.Biases.Col)
		for i := range rowPart {
			rowPart[i] = m.Biases.Mean + m.Biases.Row[i]
		}
		if joint && res.U.RawMatrix().Cols == opt.Rank+2 {
			// res is [U₀ Δb 1]·[V₀ 1 Δc]ᵀ (U times DataScale): the refit
			// moves the biases by Δb and Δc; keep U₀ and V₀. (When the
			// residuals are all zero, Solve answers M = 0 without the
			// method, at the rank asked: the biases stand as they are.)
			r := opt.Rank
			for i := range rowPart {
				rowPart[i] += res.U.At(i, r)
			}
			for j := range colPart {
				colPart[j] += res.V.At(j, r+1) * res.DataScale
			}
			res.U, res.V = res.U.Slice(0, d1, 0, r).(*mat.Dense), res.V.Slice(0, d2, 0, r).(*mat.Dense)
		}
		m.U = appendColumn(appendColumn(res.U, rowPart), constant(d1, 1))
		m.V = appendColumn(appendColumn(res.V, constant(d2, 1)), colPart)
	case opt.Baseline == BaselineNone:
		m.U, m.V = res.U, res.V
	default:
		// M = m + U·Vᵀ = [U, m·1]·[V, 1]ᵀ.
		m.U, m.V = appendColumn(res.U, constant(d1, m.Offset)), appendColumn(res.V, constant(d2, 1))
	}
	res.U, res.V = m.U, m.V
	return m, nil
}

// prepare returns the model of trainingSet with its options, clip range
// and mean training rating, after the checks that need the training set.
func prepare(r *triples.Ratings, held []bool, opt Options) (*Model, error) {
	if c := opt.Clip; c != nil && !(c[0] <= c[1]) {
		return nil, fmt.Errorf("ratings: clip range [%v, %v] is empty", c[0], c[1])
	}
	m := trainingSet(r, held)
	m.clip, m.Options = opt.Clip, opt
	tr := m.Train
	if tr.Len() == 0 {
		return nil, errors.New("ratings: no training ratings")
	}
	if opt.Rank >= min(tr.D1, tr.D2) {
		return nil, &RankError{Rank: opt.Rank, D1: tr.D1, D2: tr.D2}
	}
	for k, v := range tr.Val {
		m.TrainMean += (v - m.TrainMean) / float64(k+1) // cannot overflow
	}
	return m, nil
}

// fitBayes is Fit with the estimator g: the bias model first (the
// chain's start and the fallback for unknown ids), then the sampler.
func fitBayes(ctx context.Context, r *triples.Ratings, held []bool, opt Options, g *Gibbs) (*Model, error) {
	switch {
	case !(opt.Alpha >= 0 && gibbsGamma*opt.Alpha < 1):
		return nil, fmt.Errorf("%w: Options.Alpha %v must be in [0, 1)", ErrGibbs, opt.Alpha)
	case opt.Baseline != "" && opt.Baseline != BaselineBiases:
		return nil, fmt.Errorf("%w: Options.Baseline %q: Gibbs fits the biases with the factors (BaselineBiases)", ErrGibbs, opt.Baseline)
	}
	opt.Baseline = BaselineBiases
	m, err := prepare(r, held, opt) // Rank 0 passes its check
	if err != nil {
		return nil, err
	}
	tr := m.Train
	if m.Options.Rank == 0 {
		d := min(tr.D1, tr.D2)
		if d < 2 {
			return nil, fmt.Errorf("%w: they need two distinct rows and two distinct columns, and have %d of one", ErrTooFewRatings, d)
		}
		m.Options.Rank = min(DefaultGibbsRank, d-1)
	}
	if m.Biases, err = FitBiases(tr.D1, tr.D2, tr.Row, tr.Col, tr.Val, DefaultRegRow, DefaultRegCol, DefaultSweeps); err != nil {
		return nil, err
	}
	if err := fitGibbs(ctx, m, m.Options, g); err != nil {
		return nil, err
	}
	return m, nil
}

// trainingSet returns a model holding the fitted ids and the training
// ratings in fitted indices: all ratings not held out, and only ids that
// have one, in order of first appearance.
func trainingSet(r *triples.Ratings, held []bool) *Model {
	m := &Model{Predictor: Predictor{rowIndex: map[string]int{}, colIndex: map[string]int{}}}
	rowMap := make([]int, r.D1)
	colMap := make([]int, r.D2)
	for i := range rowMap {
		rowMap[i] = -1
	}
	for j := range colMap {
		colMap[j] = -1
	}
	n := r.Len()
	tr := &formats.Triplets{Row: make([]int, 0, n), Col: make([]int, 0, n), Val: make([]float64, 0, n)}
	for k, v := range r.Val {
		if held != nil && held[k] {
			continue
		}
		i, j := r.Row[k], r.Col[k]
		if rowMap[i] < 0 {
			rowMap[i] = len(m.RowIDs)
			m.RowIDs = append(m.RowIDs, r.RowIDs[i])
			m.rowIndex[r.RowIDs[i]] = rowMap[i]
		}
		if colMap[j] < 0 {
			colMap[j] = len(m.ColIDs)
			m.ColIDs = append(m.ColIDs, r.ColIDs[j])
			m.colIndex[r.ColIDs[j]] = colMap[j]
		}
		tr.Row, tr.Col, tr.Val = append(tr.Row, rowMap[i]), append(tr.Col, colMap[j]), append(tr.Val, v)
	}
	tr.D1, tr.D2 = len(m.RowIDs), len(m.ColIDs)
	m.Train = tr
	return m
}

// IsOutlier reports whether training rating k (an index into Train) was
// set aside into the sparse part.
func (m *Model) IsOutlier(k int) bool {
	s := m.Result.S
	return s.NNZ() > 0 && s.At(m.Train.Row[k], m.Train.Col[k]) != 0
}

// TrainRMSE returns the root mean square error of the fit on the training
// ratings that were not set aside as outliers (NaN if there are none).
func (m *Model) TrainRMSE() float64 {
	var a metrics.RMS
	for k, v := range m.Train.Val {
		if !m.IsOutlier(k) {
			a.Add(v - m.Fitted(m.Train.Row[k], m.Train.Col[k]))
		}
	}
	return a.Value()
}

// Evaluation holds the errors of a model on held-out ratings.
type Evaluation struct {
	// Ratings is the number of held-out ratings; Skipped of them have a
	// row or column without a training rating and are not scored.
	Ratings, Skipped int
	// RMSE and MAE are the model's errors on the scored ratings.
	RMSE, MAE float64
	// MeanRMSE is the RMSE of always predicting the mean training rating.
	MeanRMSE float64
	// BiasRMSE is the RMSE of the bias model alone (NaN without
	// BaselineBiases).
	BiasRMSE float64
}

// Evaluate scores the model on the ratings of r marked in held, which
// must be the r and held of [Fit].
func (m *Model) Evaluate(r *triples.Ratings, held []bool) Evaluation {
	ev := Evaluation{BiasRMSE: math.NaN()}
	var sq, base, bsq metrics.RMS
	var abs float64 // running mean of |error|, which cannot overflow
	for k, h := range held {
		if !h {
			continue
		}
		ev.Ratings++
		i, j, okRow, okCol := m.Index(r.RowIDs[r.Row[k]], r.ColIDs[r.Col[k]])
		if !okRow || !okCol {
			ev.Skipped++
			continue
		}
		d := m.Predict(i, j) - r.Val[k]
		sq.Add(d)
		abs += (math.Abs(d) - abs) / float64(sq.Len())
		base.Add(m.Clip(m.TrainMean) - r.Val[k])
		if m.Biases != nil {
			bsq.Add(m.PredictBiases(i, j) - r.Val[k])
		}
	}
	ev.RMSE, ev.MAE, ev.MeanRMSE = sq.Value(), abs, base.Value()
	if sq.Len() == 0 {
		ev.MAE = math.NaN()
	}
	if m.Biases != nil {
		ev.BiasRMSE = bsq.Value()
	}
	return ev
}

// median returns the median of x (the mean of the middle two for an even
// length) by linear-time selection on a copy; x is not modified.
func median(x []float64) float64 {
	y := slices.Clone(x)
	n := len(y)
	lo := selection.SelectSmallest(y, (n+1)/2)
	if n%2 == 1 {
		return lo
	}
	// y[n/2:] now holds the values ≥ lo; the next order statistic is
	// their minimum.
	return lo/2 + slices.Min(y[n/2:])/2
}

// appendColumn returns m with the column c appended.
func appendColumn(m *mat.Dense, c []float64) *mat.Dense {
	r, k := m.Dims()
	out := mat.NewDense(r, k+1, nil)
	for i := 0; i < r; i++ {
		row := out.RawRowView(i)
		copy(row, m.RawRowView(i))
		row[k] = c[i]
	}
	return out
}

// constant returns n copies of c.
func constant(n int, c float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = c
	}
	return out
}
