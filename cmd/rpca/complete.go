package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/ratings"
)

func init() {
	register(&command{
		name:    "complete",
		summary: "fill in a partially observed matrix of ratings (row col value triplets), robust to outliers",
		run:     runComplete,
	})
}

// completeFlags are the flags of "rpca complete".
type completeFlags struct {
	solveFlags
	outFlags
	in          string
	header      bool
	delim       string
	ignoreExtra bool
	predict     string
	unknown     string
	holdout     float64
	clip        string
	clipLo      float64
	clipHi      float64
	center      bool
	biases      bool
}

func (f *completeFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "complete", "--in RATINGS --rank R --out DIR [flags]", `
Fits a rank-r matrix M = U·Vᵀ to the observed entries of a partially
observed matrix with the paper's gradient method for partial observations
(Algorithm 2), and predicts the missing entries from it. With --alpha > 0
up to a fraction α of the entries of every row and column may be gross
outliers (for example spam ratings): they are set aside into a sparse part
S instead of bending the fit. The default --alpha 0 is plain matrix
completion, right for data without gross outliers.

Input (--in): one "row col value" triplet per line, separated by tabs,
commas or white space (detected from the first line, or --delim). Row and
column ids are arbitrary strings; values are numbers. Lines starting with
'#' and blank lines are skipped; --header skips a first line of names;
--ignore-extra ignores further fields (e.g. MovieLens timestamps). A
(row, col) pair given twice is an error naming both lines.

Output in DIR (written to a temporary directory and renamed into place;
an existing non-empty DIR needs --force):
  U.npy, V.npy      the factors: the prediction for (row i, col j) is
                    U[i]·V[j] (U.csv, V.csv with --format csv); with
                    --center (the default) they have r+1 columns, the last
                    of U holding the median rating m and that of V ones
  rows.txt          the row ids, one a line, in the order of U's rows
  cols.txt          the column ids in the order of V's rows
  predictions.tsv   with --predict: row id, col id, predicted value
  outliers.tsv      with --alpha > 0: row id, col id, rating, fitted value
                    of the ratings the method set aside as outliers
  summary.json      sizes, parameters, iterations, time, errors

The ratings are centered by default: the method fits the rank-r matrix
to the ratings minus their median m, so that a rating scale far from 0
(say 1 to 5) does not dominate the fit, and adds m back to predictions.
This matters in particular with --alpha > 0, whose outlier detection
compares the ratings' deviations.

--holdout F fits on a random fraction 1−F of the ratings (chosen by
--seed) and reports the root mean square error (RMSE) and mean absolute
error (MAE) of the predictions on the held-out rest, next to the RMSE of
always predicting the training mean. Rows and columns with no training
rating cannot be predicted: their held-out ratings are skipped and counted.

Unknown ids in --predict (not among the training ratings) are an error
naming the line, or with --unknown nan give NaN predictions.

Example:
  rpca complete --in ratings.tsv --rank 10 --holdout 0.1 --out model
  rpca complete --in ratings.tsv --rank 10 --predict pairs.tsv --clip 1:5 --out model

See docs/cli.md for details.`)
	f.solveFlags.register(fs, 0, 0)
	fs.Lookup("rank").Usage = "rank r of the fitted matrix (required)"
	fs.Lookup("alpha").Usage = "α, the largest fraction of outlier ratings per row/column, in [0, 1); 0: plain matrix completion"
	fs.Lookup("method").Usage = "method: only gd (Algorithm 2) works on partial data"
	fs.Lookup("p").Usage = "not used by complete: the ratings are already partial (see --holdout)"
	fs.Lookup("lambda").Usage = "not used by complete (ialm only)"
	f.outFlags.register(fs)
	fs.StringVar(&f.in, "in", "", "ratings file of row col value triplets (required)")
	fs.BoolVar(&f.header, "header", false, "skip the first line of --in and --predict (column names)")
	fs.StringVar(&f.delim, "delim", "", "field separator: tab, comma, space (runs of white space) or any string (default: detected)")
	fs.BoolVar(&f.ignoreExtra, "ignore-extra", false, "ignore fields after the third (e.g. timestamps)")
	fs.StringVar(&f.predict, "predict", "", "file of row col pairs (a third field is ignored) to predict into predictions.tsv")
	fs.StringVar(&f.unknown, "unknown", "error", "ids in --predict that have no training rating: error, nan, or bias (with --biases: the mean plus the known id's bias)")
	fs.Float64Var(&f.holdout, "holdout", 0, "fraction in [0, 1) of the ratings held out to measure the prediction error")
	fs.StringVar(&f.clip, "clip", "", "clip predictions to the rating scale lo:hi, e.g. 1:5")
	fs.BoolVar(&f.center, "center", true, "fit the ratings minus their median (U and V get one more column holding it); --center=false fits the raw values")
	fs.BoolVar(&f.biases, "biases", false, "fit a global mean and regularised user and item biases first (Surprise's BaselineOnly: ALS, reg 15 and 10, 10 sweeps) and the low-rank part to what they leave; U and V get two more columns holding them; replaces --center")
	return fs
}

// completeSummary is summary.json of "rpca complete" and its --json output.
type completeSummary struct {
	Command        string    `json:"command"`
	Method         string    `json:"method"`
	Input          string    `json:"input"`
	Ratings        int       `json:"ratings"`
	RowIDs         int       `json:"row_ids"`
	ColIDs         int       `json:"col_ids"`
	D1             int       `json:"d1"`
	D2             int       `json:"d2"`
	Observed       int       `json:"observed_entries"`
	Rank           int       `json:"rank"`
	Alpha          float64   `json:"alpha"`
	Seed           uint64    `json:"seed"`
	Params         any       `json:"params"`
	Iterations     int       `json:"iterations"`
	Seconds        float64   `json:"seconds"`
	StopReason     string    `json:"stop_reason"`
	Residual       *number   `json:"residual"`
	TrainRMSE      *number   `json:"train_rmse"` // outliers excluded
	Outliers       int       `json:"outliers"`
	Offset         float64   `json:"offset"`
	Clip           []float64 `json:"clip,omitempty"`
	Holdout        float64   `json:"holdout,omitempty"`
	HoldoutRatings int       `json:"holdout_ratings,omitempty"`
	HoldoutSkipped int       `json:"holdout_skipped,omitempty"`
	HoldoutRMSE    *number   `json:"holdout_rmse,omitempty"`
	HoldoutMAE     *number   `json:"holdout_mae,omitempty"`
	BaselineRMSE   *number   `json:"baseline_rmse,omitempty"`
	BiasRMSE       *number   `json:"bias_baseline_rmse,omitempty"` // the bias model alone, with --biases
	Predictions    int       `json:"predictions,omitempty"`
	PredictionsNaN int       `json:"predictions_nan,omitempty"`
	// PredictionsFromBiases counts the pairs with an unknown id predicted
	// by the bias model alone (--unknown bias).
	PredictionsFromBiases int      `json:"predictions_from_biases,omitempty"`
	PredictUnknownAs      string   `json:"predict_unknown,omitempty"`
	Output                string   `json:"output"`
	Files                 []string `json:"files"`
}

func runComplete(ctx context.Context, e *env, args []string) error {
	var f completeFlags
	fs := f.register(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.validate(fs); err != nil {
		return err
	}
	method, err := f.newMethod()
	if err != nil {
		return err
	}
	f.outFlags.inputs = []string{f.in, f.predict}
	if err := f.outFlags.checkTarget(); err != nil {
		return err
	}
	opt := triples.Options{Delimiter: f.delimiter(), Header: f.header, IgnoreExtra: f.ignoreExtra}
	if err := load.CheckReadable(f.in); err != nil {
		return err
	}
	r, err := triples.ReadFile(f.in, opt)
	if err != nil {
		return headerHint(err)
	}
	if err := r.CheckDuplicates(f.in); err != nil {
		return err
	}
	var pairs *triples.Pairs
	if f.predict != "" {
		if err := load.CheckReadable(f.predict); err != nil {
			return fmt.Errorf("--predict: %v", err)
		}
		if pairs, err = triples.ReadPairsFile(f.predict, opt); err != nil {
			return headerHint(err)
		}
	}

	if need := 150 * float64(r.Len()); need > load.AvailableMemory() {
		return fmt.Errorf("%s: %d ratings need about %.1f GB, more than this machine has free", f.in, r.Len(), need/1e9)
	}
	held := ratings.HoldOut(r.Len(), f.holdout, f.seed)
	fitOpt := ratings.Options{Rank: f.rank, Alpha: f.alpha, Method: method, Settings: f.settings(), Baseline: ratings.BaselineMedian}
	switch {
	case f.biases:
		fitOpt.Baseline = ratings.BaselineBiases
	case !f.center:
		fitOpt.Baseline = ratings.BaselineNone
	}
	if f.clip != "" {
		fitOpt.Clip = &[2]float64{f.clipLo, f.clipHi}
	}
	if g, ok := method.(*rpca.GD); ok {
		g.SampleRate = 0
	}
	prog := newProgress(e, &f.solveFlags)
	fitOpt.Settings.Callback = prog.callback
	prog.stage("solving with %s on the training ratings (initialization, then iterations)", method.Name())
	model, err := ratings.Fit(ctx, r, held, fitOpt)
	prog.done()
	var rankErr *ratings.RankError
	switch {
	case errors.As(err, &rankErr):
		return fmt.Errorf("--rank %d must be smaller than min(d1, d2) = %d: the training ratings have %d distinct rows and %d distinct columns: %w",
			f.rank, min(rankErr.D1, rankErr.D2), rankErr.D1, rankErr.D2, errUsage)
	case err != nil:
		return err
	}
	res := model.Result
	prog.warnUnconverged(res)
	d1, d2 := model.Train.D1, model.Train.D2

	sum := &completeSummary{
		Command: "complete", Method: res.Method, Input: f.in, Ratings: r.Len(), RowIDs: r.D1, ColIDs: r.D2,
		D1: d1, D2: d2, Observed: model.Train.Len(), Rank: f.rank, Alpha: f.alpha, Seed: f.seed, Params: res.Params,
		Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop),
		Residual: finite(res.Residual), Outliers: res.S.NNZ(), Offset: model.Offset, Output: f.out,
		TrainRMSE: finite(model.TrainRMSE()),
	}
	if f.clip != "" {
		sum.Clip = []float64{f.clipLo, f.clipHi}
	}
	if held != nil {
		ev := model.Evaluate(r, held)
		sum.Holdout = f.holdout
		sum.HoldoutRatings, sum.HoldoutSkipped = ev.Ratings, ev.Skipped
		if ev.Ratings > ev.Skipped {
			sum.HoldoutRMSE, sum.HoldoutMAE, sum.BaselineRMSE = finite(ev.RMSE), finite(ev.MAE), finite(ev.MeanRMSE)
			if model.Biases != nil {
				sum.BiasRMSE = finite(ev.BiasRMSE)
			}
		}
	}
	var preds []float64
	if pairs != nil {
		var fallback int
		if preds, fallback, err = f.predictPairs(pairs, model); err != nil {
			return err
		}
		sum.PredictionsFromBiases = fallback
		sum.Predictions = len(preds)
		sum.PredictUnknownAs = f.unknown
		for _, v := range preds {
			if math.IsNaN(v) {
				sum.PredictionsNaN++
			}
		}
	}

	err = f.outFlags.write(ctx, func(d *outdir.Dir) ([]string, error) {
		var files []string
		for _, m := range []struct {
			name string
			m    *mat.Dense
		}{{"U", model.U}, {"V", model.V}} {
			name, err := f.writeMatrix(d, m.name, m.m)
			if err != nil {
				return nil, err
			}
			files = append(files, name)
		}
		for _, l := range []struct {
			name string
			ids  []string
		}{{"rows.txt", model.RowIDs}, {"cols.txt", model.ColIDs}} {
			if err := outdir.WriteFile(d.Join(l.name), func(w io.Writer) error { return writeLines(w, l.ids) }); err != nil {
				return nil, err
			}
			files = append(files, l.name)
		}
		if pairs != nil {
			err := outdir.WriteFile(d.Join("predictions.tsv"), func(w io.Writer) error {
				return triples.Write(w, "\t", pairs.Row, pairs.Col, preds)
			})
			if err != nil {
				return nil, err
			}
			files = append(files, "predictions.tsv")
		}
		if res.S.NNZ() > 0 {
			if err := outdir.WriteFile(d.Join("outliers.tsv"), func(w io.Writer) error {
				return writeOutliers(w, model)
			}); err != nil {
				return nil, err
			}
			files = append(files, "outliers.tsv")
		}
		files = append(files, "summary.json")
		sum.Files = files
		return files, writeJSONFile(d.Join("summary.json"), sum)
	})
	if err != nil {
		return err
	}
	if f.jsonOut {
		return writeJSON(e.stdout, sum)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %d×%d with %d ratings, r=%d, α=%g: %d iterations in %.2fs (%s); training RMSE %.4g",
		sum.Method, d1, d2, model.Train.Len(), f.rank, f.alpha, sum.Iterations, sum.Seconds, sum.StopReason, sum.TrainRMSE)
	if held != nil {
		fmt.Fprintf(&b, "; held-out RMSE %.4g, MAE %.4g on %d ratings (training-mean RMSE %.4g", sum.HoldoutRMSE, sum.HoldoutMAE, sum.HoldoutRatings-sum.HoldoutSkipped, sum.BaselineRMSE)
		if sum.BiasRMSE != nil {
			fmt.Fprintf(&b, ", biases alone %.4g", sum.BiasRMSE)
		}
		if sum.HoldoutSkipped > 0 {
			fmt.Fprintf(&b, "; %d skipped: no training rating for their row or column", sum.HoldoutSkipped)
		}
		b.WriteString(")")
	}
	if sum.Outliers > 0 {
		fmt.Fprintf(&b, "; %d ratings set aside as outliers (not in the training RMSE)", sum.Outliers)
	}
	if pairs != nil {
		fmt.Fprintf(&b, "; %d predictions", sum.Predictions)
		if sum.PredictionsFromBiases > 0 {
			fmt.Fprintf(&b, " (%d from the biases alone for unknown ids)", sum.PredictionsFromBiases)
		}
		if sum.PredictionsNaN > 0 {
			fmt.Fprintf(&b, " (%d NaN for unknown ids)", sum.PredictionsNaN)
		}
	}
	fmt.Fprintf(&b, "; wrote %s\n", f.out)
	_, err = io.WriteString(e.stdout, b.String())
	return err
}

// validate checks the flags that do not need the data.
func (f *completeFlags) validate(fs *flag.FlagSet) error {
	if f.in == "" {
		return fmt.Errorf("complete: --in FILE is required (run 'rpca complete -h' for help): %w", errUsage)
	}
	if err := f.outFlags.validate("complete"); err != nil {
		return err
	}
	if !flagSet(fs, "rank") {
		return fmt.Errorf("complete: --rank R is required, the rank of the fitted matrix (run 'rpca complete -h' for help): %w", errUsage)
	}
	if f.method != "gd" && f.method != "scaledgd" {
		return fmt.Errorf("complete: --method %s needs a fully observed matrix; complete works with --method gd (Algorithm 2) or scaledgd only: %w", f.method, errUsage)
	}
	if f.p != 1 {
		return fmt.Errorf("complete: --p is not used by complete (the ratings are already a partial matrix); use --holdout to leave ratings out: %w", errUsage)
	}
	if math.IsNaN(f.holdout) || f.holdout < 0 || f.holdout >= 1 {
		return fmt.Errorf("--holdout must be in [0, 1), got %v: %w", f.holdout, errUsage)
	}
	if f.unknown == "bias" && !f.biases {
		return fmt.Errorf("--unknown bias needs --biases (the bias model it falls back to): %w", errUsage)
	}
	if f.unknown != "error" && f.unknown != "nan" && f.unknown != "bias" {
		return fmt.Errorf("--unknown must be error, nan or bias, got %q: %w", f.unknown, errUsage)
	}
	if f.clip != "" {
		lo, hi, ok := strings.Cut(f.clip, ":")
		var err1, err2 error
		if ok {
			f.clipLo, err1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
			f.clipHi, err2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
		}
		if !ok || err1 != nil || err2 != nil || !(f.clipLo < f.clipHi) || math.IsInf(f.clipLo, 0) || math.IsInf(f.clipHi, 0) {
			return fmt.Errorf("--clip must be lo:hi with finite numbers lo < hi, e.g. 1:5; got %q: %w", f.clip, errUsage)
		}
	}
	return f.check()
}

// delimiter maps --delim to a formats delimiter.
func (f *completeFlags) delimiter() string {
	switch f.delim {
	case "tab", `\t`:
		return "\t"
	case "comma":
		return ","
	case "space", "whitespace":
		return delim.Whitespace
	}
	return f.delim
}

// predictPairs predicts every pair; unknown ids are an error, NaN, or the
// bias model's prediction (--unknown), whose count it returns.
func (f *completeFlags) predictPairs(p *triples.Pairs, m *ratings.Model) ([]float64, int, error) {
	out := make([]float64, p.Len())
	fallback := 0
	for k := range out {
		i, j, ok1, ok2 := m.Index(p.Row[k], p.Col[k])
		if ok1 && ok2 {
			out[k] = m.Predict(i, j)
			continue
		}
		switch {
		case f.unknown == "nan":
			out[k] = math.NaN()
			continue
		case f.unknown == "bias" && m.Biases != nil:
			if !ok1 {
				i = -1 // no row bias
			}
			if !ok2 {
				j = -1
			}
			out[k] = m.PredictBiases(i, j)
			fallback++
			continue
		}
		what, id := "row", p.Row[k]
		if ok1 {
			what, id = "column", p.Col[k]
		}
		return nil, 0, fmt.Errorf("%s: line %d: unknown %s id %q: it has no training rating, so it cannot be predicted (use --unknown nan to write NaN for such pairs, or --biases --unknown bias for the bias model)",
			f.predict, p.Line[k], what, id)
	}
	return out, fallback, nil
}

// writeLines writes one string a line.
func writeLines(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// writeOutliers writes the training ratings that the model set aside as
// outliers, with ids, the rating and the fitted value U[i]·V[j].
func writeOutliers(w io.Writer, m *ratings.Model) error {
	if _, err := io.WriteString(w, "# row\tcol\trating\tfitted\n"); err != nil {
		return err
	}
	tr := m.Train
	for k, v := range tr.Val {
		if !m.IsOutlier(k) {
			continue
		}
		i, j := tr.Row[k], tr.Col[k]
		line := m.RowIDs[i] + "\t" + m.ColIDs[j] + "\t" + strconv.FormatFloat(v, 'g', -1, 64) + "\t" +
			strconv.FormatFloat(m.Fitted(i, j), 'g', -1, 64) + "\n"
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}
