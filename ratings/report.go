package ratings

import (
	"fmt"
	"math"
	"strings"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/metrics"
)

// Report summarises a completion run (summary.json of rpca complete).
// Values that are not available (NaN or ±Inf, which JSON cannot hold)
// are nil.
type Report struct {
	Command    string   `json:"command"`
	Method     string   `json:"method"`
	Input      string   `json:"input"`
	Ratings    int      `json:"ratings"`
	RowIDs     int      `json:"row_ids"`
	ColIDs     int      `json:"col_ids"`
	D1         int      `json:"d1"`
	D2         int      `json:"d2"`
	Observed   int      `json:"observed_entries"`
	Rank       int      `json:"rank"`
	Alpha      float64  `json:"alpha"`
	Seed       uint64   `json:"seed"`
	Params     any      `json:"params"`
	Iterations int      `json:"iterations"`
	Seconds    float64  `json:"seconds"`
	StopReason string   `json:"stop_reason"`
	Residual   *float64 `json:"residual"`
	TrainRMSE  *float64 `json:"train_rmse"` // outliers excluded
	Outliers   int      `json:"outliers"`
	// ModelFlags name the options that chose the method (Job.ModelFlags).
	ModelFlags []string `json:"model_chosen_by,omitempty"`
	// SetAside counts the ratings left out of the fit as gross
	// corruptions (Model.SetAside).
	SetAside       int       `json:"set_aside,omitempty"`
	Offset         float64   `json:"offset"`
	Clip           []float64 `json:"clip,omitempty"`
	Holdout        float64   `json:"holdout,omitempty"`
	HoldoutRatings int       `json:"holdout_ratings,omitempty"`
	HoldoutSkipped int       `json:"holdout_skipped,omitempty"`
	HoldoutRMSE    *float64  `json:"holdout_rmse,omitempty"`
	HoldoutMAE     *float64  `json:"holdout_mae,omitempty"`
	BaselineRMSE   *float64  `json:"baseline_rmse,omitempty"`
	BiasRMSE       *float64  `json:"bias_baseline_rmse,omitempty"` // the bias model alone
	Predictions    int       `json:"predictions,omitempty"`
	PredictionsNaN int       `json:"predictions_nan,omitempty"`
	// PredictionsFromBiases counts the pairs with an unknown id predicted
	// by the bias model alone (UnknownBias).
	PredictionsFromBiases int    `json:"predictions_from_biases,omitempty"`
	PredictUnknownAs      string `json:"predict_unknown,omitempty"`
	// Chosen is the choice of the rank and ridge by validation (rank
	// auto), with the validation curve.
	Chosen *Choice `json:"chosen,omitempty"`
	// Warnings name what makes the model doubtful, for a person to read:
	// a fit that stopped before converging, held-out ratings predicted
	// worse than by the mean training rating.
	Warnings []string `json:"warnings,omitempty"`
	Output   string   `json:"output"`
	Files    []string `json:"files"`
}

// NewReport describes the model m fitted to r, with held (from HoldOut
// at the fraction holdout; nil for none) evaluated.
func NewReport(r *triples.Ratings, held []bool, holdout float64, m *Model) *Report {
	res := m.Result
	rep := &Report{
		Command: "complete", Method: res.Method, Ratings: r.Len(), RowIDs: r.D1, ColIDs: r.D2,
		D1: m.Train.D1, D2: m.Train.D2, Observed: m.Train.Len(), Rank: m.Options.Rank, Alpha: m.Options.Alpha,
		Seed: m.Options.Settings.Seed, Params: res.Params,
		Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop),
		Residual: metrics.Finite(res.Residual), Outliers: res.S.NNZ(), SetAside: m.SetAside, Offset: m.Offset, TrainRMSE: metrics.Finite(m.TrainRMSE()),
	}
	if c := m.Options.Clip; c != nil {
		rep.Clip = []float64{c[0], c[1]}
	}
	rep.Chosen = m.Chosen
	rep.Warnings = m.Warnings()
	if held == nil {
		return rep
	}
	ev := m.Evaluate(r, held)
	rep.Holdout = holdout
	rep.HoldoutRatings, rep.HoldoutSkipped = ev.Ratings, ev.Skipped
	if ev.Ratings > ev.Skipped {
		rep.HoldoutRMSE, rep.HoldoutMAE, rep.BaselineRMSE = metrics.Finite(ev.RMSE), metrics.Finite(ev.MAE), metrics.Finite(ev.MeanRMSE)
		if m.Biases != nil {
			rep.BiasRMSE = metrics.Finite(ev.BiasRMSE)
		}
		if !(ev.RMSE <= ev.MeanRMSE) {
			w := fmt.Sprintf("the model predicts the held-out ratings worse than the mean training rating does (RMSE %.4g against %.4g)", ev.RMSE, ev.MeanRMSE)
			if _, gibbs := m.Options.Model.(*Gibbs); !gibbs && m.Chosen == nil {
				w += ": a fit at a given rank has no ridge unless one is asked for, and overfits sparse ratings; add a ridge or let the rank and ridge be chosen"
			}
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	return rep
}

// AddPredictions records the predictions of PredictPairs.
func (rep *Report) AddPredictions(preds []float64, fromBiases int, policy Unknown) {
	rep.Predictions, rep.PredictionsFromBiases, rep.PredictUnknownAs = len(preds), fromBiases, string(policy)
	for _, v := range preds {
		if math.IsNaN(v) {
			rep.PredictionsNaN++
		}
	}
}

// String is the one-line summary of the report.
func (rep *Report) String() string {
	var b strings.Builder
	method := rep.Method
	if len(rep.ModelFlags) > 0 {
		method += " (chosen by " + strings.Join(rep.ModelFlags, ", ") + ")"
	}
	fmt.Fprintf(&b, "%s on %d×%d with %d ratings, r=%d, α=%g: %d iterations in %.2fs (%s); training RMSE %s",
		method, rep.D1, rep.D2, rep.Observed, rep.Rank, rep.Alpha, rep.Iterations, rep.Seconds, rep.StopReason, metrics.Format("%.4g", rep.TrainRMSE))
	if c := rep.Chosen; c != nil {
		fmt.Fprintf(&b, "; rank %d and ridge %g chosen by validation (RMSE %.4g on %d ratings set aside, %d candidates)", c.Best.Rank, c.Best.Ridge, c.Best.RMSE, c.Scored, len(c.Candidates))
	}
	if rep.HoldoutRatings > 0 {
		fmt.Fprintf(&b, "; held-out RMSE %s, MAE %s on %d ratings (training-mean RMSE %s", metrics.Format("%.4g", rep.HoldoutRMSE), metrics.Format("%.4g", rep.HoldoutMAE), rep.HoldoutRatings-rep.HoldoutSkipped, metrics.Format("%.4g", rep.BaselineRMSE))
		if rep.BiasRMSE != nil {
			fmt.Fprintf(&b, ", biases alone %s", metrics.Format("%.4g", rep.BiasRMSE))
		}
		if rep.HoldoutSkipped > 0 {
			fmt.Fprintf(&b, "; %d skipped: no training rating for their row or column", rep.HoldoutSkipped)
		}
		b.WriteString(")")
	}
	if rep.SetAside > 0 {
		fmt.Fprintf(&b, "; %d ratings more than %d robust spreads from the median left out of the fit", rep.SetAside, rpca.GrossSpreads)
	}
	if rep.Outliers > 0 {
		fmt.Fprintf(&b, "; %d ratings set aside as outliers (not in the training RMSE)", rep.Outliers)
	}
	if p, ok := rep.Params.(*GibbsParams); ok && p.Tail > 0 {
		fmt.Fprintf(&b, "; Student-t noise, ν = %g", p.Tail)
	}
	if rep.PredictUnknownAs != "" {
		fmt.Fprintf(&b, "; %d predictions", rep.Predictions)
		if rep.PredictionsFromBiases > 0 {
			fmt.Fprintf(&b, " (%d from the biases alone for unknown ids)", rep.PredictionsFromBiases)
		}
		if rep.PredictionsNaN > 0 {
			fmt.Fprintf(&b, " (%d NaN for unknown ids)", rep.PredictionsNaN)
		}
	}
	fmt.Fprintf(&b, "; wrote %s", rep.Output)
	return b.String()
}

// Warnings name what makes the fit doubtful whatever the data held out:
// a solve that stopped before converging.
func (m *Model) Warnings() []string {
	res := m.Result
	if res.Stop.Converged() {
		return nil
	}
	return []string{fmt.Sprintf("%s stopped (%s) after %d iterations without converging (residual %s); its answer may be inaccurate: raise the iteration cap",
		res.Method, res.Stop, res.Iterations, metrics.Format("%.3g", metrics.Finite(res.Residual)))}
}
