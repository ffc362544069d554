package ratings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/metrics"
)

// Fold is the score of one fold of a cross-validation: the model's and
// the bias baseline's errors on the fold's ratings, and the fit's time.
type Fold struct {
	Ratings  int     `json:"ratings"`   // the fold's ratings, all scored
	RMSE     float64 `json:"rmse"`      // the model's
	MAE      float64 `json:"mae"`       // the model's
	BiasRMSE float64 `json:"bias_rmse"` // the bias model's, fitted with the model (NaN without BaselineBiases)
	BiasMAE  float64 `json:"bias_mae"`
	Seconds  float64 `json:"seconds"` // the fit, on the other folds
	Rank     int     `json:"rank"`    // the rank fitted
}

// CrossValidation is the outcome of CrossValidate: each fold and the mean
// and the (sample) standard deviation of each figure over the folds.
type CrossValidation struct {
	Folds []Fold `json:"folds"`
	Mean  Fold   `json:"mean"`
	Std   Fold   `json:"std"`
	Seed  uint64 `json:"seed"`
}

// ErrFolds is a number of folds CrossValidate cannot use.
var ErrFolds = errors.New("ratings: cross-validation needs at least 2 folds and a rating in each")

// CrossValidate scores opt's model by k-fold cross-validation, as
// recommender libraries do (Surprise's cross_validate): the ratings are
// dealt into k folds at random (a permutation drawn from seed), and each
// fold is predicted by the model fitted to the others. A rating whose
// user or item has no rating in the other folds is predicted by the bias
// model (the mean plus the known bias; the training mean without one), so
// every rating is scored.
// progress, when not nil, is called after each fold.
func CrossValidate(ctx context.Context, r *triples.Ratings, k int, seed uint64, opt Options, progress func(f int, fold Fold)) (*CrossValidation, error) {
	if err := checkRatings(r); err != nil {
		return nil, err
	}
	if k < 2 || k > r.Len() {
		return nil, fmt.Errorf("%w: %d folds for %d ratings", ErrFolds, k, r.Len())
	}
	fold := make([]int, r.Len())
	for n, p := range randPerm(r.Len(), seed) {
		fold[p] = n % k
	}
	cv := &CrossValidation{Seed: seed}
	for f := range k {
		held := make([]bool, r.Len())
		for n := range held {
			held[n] = fold[n] == f
		}
		start := time.Now()
		m, err := Fit(ctx, r, held, opt)
		if err != nil {
			return nil, fmt.Errorf("ratings: fold %d of %d: %w", f+1, k, err)
		}
		sc := m.score(r, held)
		sc.Seconds, sc.Rank = time.Since(start).Seconds(), m.Options.Rank
		cv.Folds = append(cv.Folds, sc)
		if progress != nil {
			progress(f, sc)
		}
	}
	cv.Mean, cv.Std = foldStats(cv.Folds)
	return cv, nil
}

// score predicts every rating of r marked in held, by the bias model
// where the user or the item has no training rating.
func (m *Model) score(r *triples.Ratings, held []bool) Fold {
	var sq, bsq metrics.RMS
	var abs, babs float64
	n := 0
	for k, h := range held {
		if !h {
			continue
		}
		want := r.Val[k]
		pm, _ := m.PredictAny(r.RowIDs[r.Row[k]], r.ColIDs[r.Col[k]])
		i, j, okI, okJ := m.Index(r.RowIDs[r.Row[k]], r.ColIDs[r.Col[k]])
		if !okI {
			i = -1
		}
		if !okJ {
			j = -1
		}
		pb := m.PredictBiases(i, j)
		n++
		sq.Add(pm - want)
		abs += (math.Abs(pm-want) - abs) / float64(n)
		bsq.Add(pb - want)
		babs += (math.Abs(pb-want) - babs) / float64(n)
	}
	f := Fold{Ratings: n, RMSE: sq.Value(), MAE: abs, BiasRMSE: math.NaN(), BiasMAE: math.NaN()}
	if m.Biases != nil {
		f.BiasRMSE, f.BiasMAE = bsq.Value(), babs
	}
	return f
}

// foldStats returns the mean and the sample standard deviation of each
// figure over the folds.
func foldStats(folds []Fold) (mean, std Fold) {
	get := []func(*Fold) *float64{
		func(f *Fold) *float64 { return &f.RMSE }, func(f *Fold) *float64 { return &f.MAE },
		func(f *Fold) *float64 { return &f.BiasRMSE }, func(f *Fold) *float64 { return &f.BiasMAE },
		func(f *Fold) *float64 { return &f.Seconds },
	}
	n := float64(len(folds))
	for _, g := range get {
		s := 0.0
		for k := range folds {
			s += *g(&folds[k])
		}
		mu := s / n
		v := 0.0
		for k := range folds {
			d := *g(&folds[k]) - mu
			v += d * d
		}
		*g(&mean), *g(&std) = mu, math.Sqrt(v/max(n-1, 1))
	}
	for _, f := range folds {
		mean.Ratings += f.Ratings
	}
	return mean, std
}

// randPerm is the permutation CrossValidate deals the folds from.
func randPerm(n int, seed uint64) []int { return rand.New(rand.NewPCG(seed, 2)).Perm(n) }

// MarshalJSON writes a figure that is not a number (the bias baseline's
// without BaselineBiases) as null.
func (f Fold) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Ratings  int      `json:"ratings"`
		RMSE     *float64 `json:"rmse"`
		MAE      *float64 `json:"mae"`
		BiasRMSE *float64 `json:"bias_rmse"`
		BiasMAE  *float64 `json:"bias_mae"`
		Seconds  float64  `json:"seconds"`
		Rank     int      `json:"rank"`
	}{f.Ratings, metrics.Finite(f.RMSE), metrics.Finite(f.MAE), metrics.Finite(f.BiasRMSE), metrics.Finite(f.BiasMAE), f.Seconds, f.Rank})
}

// Table is cv as text: a row per fold with model's RMSE and MAE, the bias
// baseline's and the fit's seconds, then the mean and the standard
// deviation.
func (cv *CrossValidation) Table(model string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %9s %9s %11s %11s %9s\n", "fold", model+" RMSE", "MAE", "biases RMSE", "biases MAE", "fit (s)")
	row := func(name string, f Fold) {
		fmt.Fprintf(&b, "%-6s %9.4f %9.4f %11.4f %11.4f %9.2f\n", name, f.RMSE, f.MAE, f.BiasRMSE, f.BiasMAE, f.Seconds)
	}
	for k, f := range cv.Folds {
		row(strconv.Itoa(k+1), f)
	}
	row("mean", cv.Mean)
	row("std", cv.Std)
	return b.String()
}
