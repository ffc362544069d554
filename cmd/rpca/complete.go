package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/metrics"
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
	Command        string             `json:"command"`
	Method         string             `json:"method"`
	Input          string             `json:"input"`
	Ratings        int                `json:"ratings"`
	RowIDs         int                `json:"row_ids"`
	ColIDs         int                `json:"col_ids"`
	D1             int                `json:"d1"`
	D2             int                `json:"d2"`
	Observed       int                `json:"observed_entries"`
	Rank           int                `json:"rank"`
	Alpha          float64            `json:"alpha"`
	Seed           uint64             `json:"seed"`
	Params         map[string]float64 `json:"params"`
	Iterations     int                `json:"iterations"`
	Seconds        float64            `json:"seconds"`
	StopReason     string             `json:"stop_reason"`
	Residual       *number            `json:"residual"`
	TrainRMSE      *number            `json:"train_rmse"` // outliers excluded
	Outliers       int                `json:"outliers"`
	Offset         float64            `json:"offset"`
	Clip           []float64          `json:"clip,omitempty"`
	Holdout        float64            `json:"holdout,omitempty"`
	HoldoutRatings int                `json:"holdout_ratings,omitempty"`
	HoldoutSkipped int                `json:"holdout_skipped,omitempty"`
	HoldoutRMSE    *number            `json:"holdout_rmse,omitempty"`
	HoldoutMAE     *number            `json:"holdout_mae,omitempty"`
	BaselineRMSE   *number            `json:"baseline_rmse,omitempty"`
	BiasRMSE       *number            `json:"bias_baseline_rmse,omitempty"` // the bias model alone, with --biases
	Predictions    int                `json:"predictions,omitempty"`
	PredictionsNaN int                `json:"predictions_nan,omitempty"`
	// PredictionsFromBiases counts the pairs with an unknown id predicted
	// by the bias model alone (--unknown bias).
	PredictionsFromBiases int      `json:"predictions_from_biases,omitempty"`
	PredictUnknownAs      string   `json:"predict_unknown,omitempty"`
	Output                string   `json:"output"`
	Files                 []string `json:"files"`
}

// fitted maps the ids of the ratings file to the rows and columns of the
// fitted matrix: only ids with at least one training rating are fitted.
type fitted struct {
	rowIDs, colIDs []string       // fitted index → id
	row, col       map[string]int // id → fitted index
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
	opt := formats.RatingOptions{Delimiter: f.delimiter(), Header: f.header, IgnoreExtra: f.ignoreExtra}
	if err := checkReadable(f.in); err != nil {
		return err
	}
	r, err := formats.ReadRatingsFile(f.in, opt)
	if err != nil {
		return headerHint(err)
	}
	if err := r.CheckDuplicates(f.in); err != nil {
		return err
	}
	var pairs *formats.Pairs
	if f.predict != "" {
		if err := checkReadable(f.predict); err != nil {
			return fmt.Errorf("--predict: %v", err)
		}
		if pairs, err = formats.ReadPairsFile(f.predict, opt); err != nil {
			return headerHint(err)
		}
	}

	held := f.split(r.Len())
	fit, tr := trainingSet(r, held)
	d1, d2 := len(fit.rowIDs), len(fit.colIDs)
	if f.rank >= min(d1, d2) {
		return fmt.Errorf("--rank %d must be smaller than min(d1, d2) = %d: the training ratings have %d distinct rows and %d distinct columns: %w",
			f.rank, min(d1, d2), d1, d2, errUsage)
	}
	if need := 150 * float64(tr.Len()); need > availableMemory() {
		return fmt.Errorf("%s: %d ratings need about %.1f GB, more than this machine has free", f.in, tr.Len(), need/1e9)
	}
	offset := 0.0
	vals := tr.Val
	var bias *ratings.Biases
	if f.biases {
		var err error
		if bias, err = ratings.FitBiases(d1, d2, tr.Row, tr.Col, tr.Val, ratings.DefaultRegRow, ratings.DefaultRegCol, ratings.DefaultSweeps); err != nil {
			return fmt.Errorf("%s: %w", f.in, err)
		}
		vals = make([]float64, len(tr.Val))
		for k, v := range tr.Val {
			vals[k] = v - bias.Predict(tr.Row[k], tr.Col[k])
		}
	} else if f.center {
		offset = median(tr.Val)
		vals = make([]float64, len(tr.Val))
		for k, v := range tr.Val {
			vals[k] = v - offset
		}
	}
	obs, err := rpca.NewObserved(d1, d2, tr.Row, tr.Col, vals)
	if err != nil {
		return fmt.Errorf("%s: %v", f.in, strings.TrimPrefix(err.Error(), "rpca: "))
	}
	if g, ok := method.(*rpca.GD); ok {
		g.SampleRate = 0
	}
	s := f.settings()
	prog := newProgress(e, &f.solveFlags)
	s.Callback = prog.callback
	prog.stage("solving with %s on %d ratings (initialization, then iterations)", method.Name(), obs.Len())
	res, err := rpca.Solve(ctx, &rpca.Problem{Observed: obs}, s, method)
	prog.done()
	if err != nil {
		return err
	}
	prog.warnUnconverged(res)
	switch {
	case bias != nil:
		// M = mean + b_row·1ᵀ + 1·b_colᵀ + U·Vᵀ = [U, mean + b_row, 1]·[V, 1, b_col]ᵀ.
		rowPart := make([]float64, d1)
		for i := range rowPart {
			rowPart[i] = bias.Mean + bias.Row[i]
		}
		res.U = appendVector(appendVector(res.U, rowPart), constant(d1, 1))
		res.V = appendVector(appendVector(res.V, constant(d2, 1)), bias.Col)
	case f.center:
		// M = offset + U·Vᵀ = [U, offset·1]·[V, 1]ᵀ.
		res.U, res.V = appendColumn(res.U, offset), appendColumn(res.V, 1)
	}

	sum := &completeSummary{
		Command: "complete", Method: res.Method, Input: f.in, Ratings: r.Len(), RowIDs: r.D1, ColIDs: r.D2,
		D1: d1, D2: d2, Observed: obs.Len(), Rank: f.rank, Alpha: f.alpha, Seed: f.seed, Params: res.Params,
		Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop),
		Residual: finite(res.Residual), Outliers: res.S.NNZ(), Offset: offset, Output: f.out,
	}
	if f.clip != "" {
		sum.Clip = []float64{f.clipLo, f.clipHi}
	}
	predict := func(i, j int) float64 { return f.clipValue(dotRows(res.U, i, res.V, j)) }
	// Training RMSE over the ratings not set aside as outliers.
	var train metrics.RMS
	for k, v := range tr.Val {
		if res.S.NNZ() > 0 && res.S.At(tr.Row[k], tr.Col[k]) != 0 {
			continue
		}
		train.Add(v - dotRows(res.U, tr.Row[k], res.V, tr.Col[k]))
	}
	if train.Len() > 0 {
		sum.TrainRMSE = finite(train.Value())
	}
	if held != nil {
		f.evaluate(sum, r, held, fit, tr, predict, bias)
	}
	var preds []float64
	if pairs != nil {
		var fallback int
		if preds, fallback, err = f.predictPairs(pairs, fit, predict, bias); err != nil {
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

	err = f.outFlags.write(ctx, func(d *formats.AtomicDir) ([]string, error) {
		var files []string
		for _, m := range []struct {
			name string
			m    *mat.Dense
		}{{"U", res.U}, {"V", res.V}} {
			name, err := f.writeMatrix(d, m.name, m.m)
			if err != nil {
				return nil, err
			}
			files = append(files, name)
		}
		for _, l := range []struct {
			name string
			ids  []string
		}{{"rows.txt", fit.rowIDs}, {"cols.txt", fit.colIDs}} {
			if err := formats.WriteFileAtomic(d.Join(l.name), func(w io.Writer) error { return writeLines(w, l.ids) }); err != nil {
				return nil, err
			}
			files = append(files, l.name)
		}
		if pairs != nil {
			err := formats.WriteFileAtomic(d.Join("predictions.tsv"), func(w io.Writer) error {
				return formats.WriteRatings(w, "\t", pairs.Row, pairs.Col, preds)
			})
			if err != nil {
				return nil, err
			}
			files = append(files, "predictions.tsv")
		}
		if res.S.NNZ() > 0 {
			if err := formats.WriteFileAtomic(d.Join("outliers.tsv"), func(w io.Writer) error {
				return writeOutliers(w, res, obs, fit, offset)
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
		sum.Method, d1, d2, obs.Len(), f.rank, f.alpha, sum.Iterations, sum.Seconds, sum.StopReason, sum.TrainRMSE)
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
		return formats.Whitespace
	}
	return f.delim
}

// clipValue applies --clip.
func (f *completeFlags) clipValue(v float64) float64 {
	if f.clip == "" || math.IsNaN(v) {
		return v
	}
	return math.Min(math.Max(v, f.clipLo), f.clipHi)
}

// split returns which of n ratings are held out (nil: none), a random
// subset of round(holdout·n), at least one, drawn with --seed.
func (f *completeFlags) split(n int) []bool {
	if f.holdout == 0 {
		return nil
	}
	k := max(1, int(math.Round(f.holdout*float64(n))))
	if k >= n {
		k = n - 1
	}
	rng := rand.New(rand.NewPCG(f.seed, 0x6b0d0e7a11c0de))
	held := make([]bool, n)
	// Floyd's algorithm: k distinct indices uniformly at random.
	for j := n - k; j < n; j++ {
		t := rng.IntN(j + 1)
		if held[t] {
			t = j
		}
		held[t] = true
	}
	return held
}

// trainingSet returns the fitted ids and the training ratings in fitted
// indices: all ratings not held out, and only ids that have one.
func trainingSet(r *formats.Ratings, held []bool) (*fitted, *formats.Triplets) {
	fit := &fitted{row: map[string]int{}, col: map[string]int{}}
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
			rowMap[i] = len(fit.rowIDs)
			fit.rowIDs = append(fit.rowIDs, r.RowIDs[i])
			fit.row[r.RowIDs[i]] = rowMap[i]
		}
		if colMap[j] < 0 {
			colMap[j] = len(fit.colIDs)
			fit.colIDs = append(fit.colIDs, r.ColIDs[j])
			fit.col[r.ColIDs[j]] = colMap[j]
		}
		tr.Row, tr.Col, tr.Val = append(tr.Row, rowMap[i]), append(tr.Col, colMap[j]), append(tr.Val, v)
	}
	tr.D1, tr.D2 = len(fit.rowIDs), len(fit.colIDs)
	return fit, tr
}

// evaluate fills the held-out errors of sum.
func (f *completeFlags) evaluate(sum *completeSummary, r *formats.Ratings, held []bool, fit *fitted, tr *formats.Triplets, predict func(i, j int) float64, bias *ratings.Biases) {
	var mean float64 // running mean, which cannot overflow
	for k, v := range tr.Val {
		mean += (v - mean) / float64(k+1)
	}
	var sq, base, bsq metrics.RMS
	var abs float64
	n := 0
	for k, h := range held {
		if !h {
			continue
		}
		sum.HoldoutRatings++
		i, ok1 := fit.row[r.RowIDs[r.Row[k]]]
		j, ok2 := fit.col[r.ColIDs[r.Col[k]]]
		if !ok1 || !ok2 {
			sum.HoldoutSkipped++
			continue
		}
		d := predict(i, j) - r.Val[k]
		sq.Add(d)
		abs += math.Abs(d) / float64(len(held))
		base.Add(f.clipValue(mean) - r.Val[k])
		if bias != nil {
			bsq.Add(f.clipValue(bias.Predict(i, j)) - r.Val[k])
		}
		n++
	}
	sum.Holdout = f.holdout
	if n > 0 {
		sum.HoldoutRMSE = finite(sq.Value())
		sum.HoldoutMAE = finite(abs * float64(len(held)) / float64(n))
		sum.BaselineRMSE = finite(base.Value())
		if bias != nil {
			sum.BiasRMSE = finite(bsq.Value())
		}
	}
}

// predictPairs predicts every pair; unknown ids are an error, NaN, or the
// bias model's prediction (--unknown), whose count it returns.
func (f *completeFlags) predictPairs(p *formats.Pairs, fit *fitted, predict func(i, j int) float64, bias *ratings.Biases) ([]float64, int, error) {
	out := make([]float64, p.Len())
	fallback := 0
	for k := range out {
		i, ok1 := fit.row[p.Row[k]]
		j, ok2 := fit.col[p.Col[k]]
		if ok1 && ok2 {
			out[k] = predict(i, j)
			continue
		}
		switch {
		case f.unknown == "nan":
			out[k] = math.NaN()
			continue
		case f.unknown == "bias" && bias != nil:
			if !ok1 {
				i = -1 // no row bias
			}
			if !ok2 {
				j = -1
			}
			out[k] = f.clipValue(bias.Predict(i, j))
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

// dotRows returns U[i]·V[j].
func dotRows(u *mat.Dense, i int, v *mat.Dense, j int) float64 {
	a, b := u.RawRowView(i), v.RawRowView(j)
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
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

// writeOutliers writes the ratings in the support of S with ids, the
// rating and the fitted value U[i]·V[j].
func writeOutliers(w io.Writer, res *rpca.Result, obs *rpca.Observed, fit *fitted, offset float64) error {
	if _, err := io.WriteString(w, "# row\tcol\trating\tfitted\n"); err != nil {
		return err
	}
	var err error
	obs.Do(func(i, j int, y float64) {
		if err != nil || res.S.At(i, j) == 0 {
			return
		}
		line := fit.rowIDs[i] + "\t" + fit.colIDs[j] + "\t" + strconv.FormatFloat(y+offset, 'g', -1, 64) + "\t" +
			strconv.FormatFloat(dotRows(res.U, i, res.V, j), 'g', -1, 64) + "\n"
		_, err = io.WriteString(w, line)
	})
	return err
}

// median returns the median of x (the mean of the middle two for an even
// length); x is not modified.
func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	n := len(y)
	if n%2 == 1 {
		return y[n/2]
	}
	return (y[n/2-1] + y[n/2]) / 2
}

// appendColumn returns [m, c·1].
// appendVector returns m with the column c appended.
func appendVector(m *mat.Dense, c []float64) *mat.Dense {
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

func appendColumn(m *mat.Dense, c float64) *mat.Dense {
	r, k := m.Dims()
	out := mat.NewDense(r, k+1, nil)
	for i := 0; i < r; i++ {
		row := out.RawRowView(i)
		copy(row, m.RawRowView(i))
		row[k] = c
	}
	return out
}
