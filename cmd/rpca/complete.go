package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/progress"
	"github.com/rpca-gd/rpca/internal/solveflags"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/ratings"
)

func init() {
	register(&command{
		name:    "complete",
		summary: "fill in a partially observed matrix of ratings (row col value triplets), robust to outliers",
		run:     withFlags(runComplete),
	})
}

// completeMethods are the methods complete fits by rpca.Solve, whose
// settings it takes.
var completeMethods = []string{ratings.ModelGD, ratings.ModelScaledGD, ratings.ModelALS}

// completeFlags are the flags of "rpca complete".
type completeFlags struct {
	solveflags.Flags
	outFlags
	in, delim, predict, unknown, clip   string
	header, ignoreExtra, center, biases bool
	predictHeader                       bool
	// model is the model's choice (ratings.Choose).
	model         ratings.ModelChoice
	holdout, tail float64
	cv            int // --cv K: K-fold cross-validation instead of a model
	clipRange     *[2]float64
}

func (f *completeFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "complete", "--in RATINGS --out DIR [--rank R|auto] [flags]", nil)
	f.RankAuto = true
	f.ParamMethods = completeMethods
	f.Flags.Register(fs, solveflags.Solve&^solveflags.Sample)
	fs.Lookup("rank").Usage = "rank `r` of the fitted matrix, a positive integer, or auto (the default): 10 with --method gibbs; with als, rank and --ridge chosen by validation on 10% of the training ratings, with early stopping. A rank alone keeps the default model"
	fs.Lookup("alpha").Usage = "α, the largest fraction of outlier ratings per row/column, in [0, 1); 0: plain matrix completion"
	fs.Lookup("method").Usage = "method: gibbs (the default: the biased low-rank model's posterior mean by Gibbs sampling; with --alpha, T_α sets outliers aside and the noise is Student-t), als (the default when a flag only it takes is given, such as --ridge or --center: alternating least squares with Algorithm 2's sparse estimator T; the summary names the flag), gd (Algorithm 2) or scaledgd (its scaled steps)"
	fs.Lookup("method").DefValue = ratings.ModelGibbs // what runs when neither --method nor a flag of als is given
	f.outFlags.register(fs)
	fs.StringVar(&f.in, "in", "", "ratings file of row col value triplets (required)")
	fs.BoolVar(&f.header, "header", false, "skip the first line of --in (column names)")
	fs.BoolVar(&f.predictHeader, "predict-header", false, "skip the first line of --predict (column names)")
	fs.StringVar(&f.delim, "delim", "", "field separator: tab, comma, space (runs of white space) or any string (default: detected)")
	fs.BoolVar(&f.ignoreExtra, "ignore-extra", false, "ignore fields after the third (e.g. timestamps)")
	fs.StringVar(&f.predict, "predict", "", "file of row col pairs (a third field is ignored) to predict into predictions.tsv")
	cliflag.Var(fs, &f.unknown, "unknown", "error", cliflag.OneOf("error", "nan", "bias"), "error, nan or bias", "ids in --predict that have no training rating: error, nan, or bias (with --biases: the mean plus the known id's bias)")
	cliflag.Var(fs, &f.tail, "tail", 0, cliflag.AtLeast(1.0), "at least 1, or inf", "degrees of freedom ν of the Student-t noise of --method gibbs with --alpha (default 5; inf: normal noise, which the shilling attack of docs/experiments.md moves less)")
	cliflag.Var(fs, &f.holdout, "holdout", 0, cliflag.Fraction, "in [0, 1)", "fraction in [0, 1) of the ratings held out to measure the prediction error")
	cliflag.Var(fs, &f.cv, "cv", 0, cliflag.AtLeast(0), "a number of folds (0: off)", "K-fold cross-validation of the model instead of a fit: a table of RMSE, MAE and fit seconds per fold, their mean and standard deviation, for the model and the bias baseline (--json: as JSON); writes no --out")
	fs.StringVar(&f.clip, "clip", "", "clip predictions to the rating scale lo:hi, e.g. 1:5")
	fs.BoolVar(&f.center, "center", true, "fit the ratings minus their median (U and V get one more column holding it); --center=false fits the raw values")
	fs.BoolVar(&f.biases, "biases", false, "fit a global mean and regularised user and item biases first (Surprise's BaselineOnly: ALS, reg 15 and 10, 10 sweeps) and the low-rank part to what they leave; U and V get two more columns holding them; replaces --center (default: on with --rank auto, off with a given rank)")
	return fs
}

func runComplete(ctx context.Context, e *env, f *completeFlags, fs *flag.FlagSet) error {
	if err := f.resolve(fs); err != nil {
		return err
	}
	r, pairs, err := f.read()
	if err != nil {
		return err
	}
	prog := newProgress(e, &f.Flags)
	defer prog.Done() // stops the heartbeat on every return
	if f.cv > 0 {
		return f.crossValidate(ctx, e, r, prog)
	}
	prog.Stagef("solving with %s on the training ratings, then writing %s", f.Method, f.out)
	rep, err := ratings.Run(ctx, ratings.Job{Input: f.in, Predict: f.predict, Ratings: r, Pairs: pairs, Unknown: ratings.Unknown(f.unknown),
		Holdout: f.holdout, Seed: f.Seed, Options: f.fitOptions(prog), Out: f.out, Force: f.force, CSV: f.format == "csv",
		ModelFlags: dashed(f.model.ChosenBy),
	})
	prog.Done()
	if err != nil {
		return f.runError(err)
	}
	for _, w := range rep.Warnings {
		if !f.Quiet {
			fmt.Fprintln(e.stderr, "rpca: warning: "+w)
		}
	}
	return printReport(e, f.JSON, rep)
}

// resolve checks the flags and the output directory, and has the
// library choose the model from the flags given (ratings.Choose).
func (f *completeFlags) resolve(fs *flag.FlagSet) error {
	if err := f.validate(); err != nil {
		return err
	}
	var given []string
	fs.Visit(func(fl *flag.Flag) { given = append(given, fl.Name) })
	method := f.Method
	if !flagSet(fs, "method") {
		method = ""
	}
	var err error
	f.model, err = ratings.Choose(ratings.Request{Model: method, Rank: f.Rank, Alpha: f.Alpha, Given: given,
		Center: f.center, Biases: f.biases, Params: f.Params, Tail: f.tail})
	var re *ratings.RequestError
	errors.As(err, &re)
	switch {
	case errors.Is(err, ratings.ErrUnknownModel):
		return cliflag.Usagef("complete: --method %s needs a fully observed matrix; complete works with --method gibbs, als, gd (Algorithm 2) or scaledgd only", re.Model)
	case errors.Is(err, ratings.ErrNotTaken):
		return cliflag.Usagef("complete: --method gibbs takes none of --%s (they tune als, gd and scaledgd)", strings.Join(re.Options, ", --"))
	case errors.Is(err, ratings.ErrGibbsBaseline):
		return cliflag.Usagef("complete: --method gibbs fits the biases with the factors: drop --biases=false and --center")
	case errors.Is(err, ratings.ErrTail):
		return cliflag.Usagef("complete: --tail sets the noise of --method gibbs with --alpha > 0")
	case err != nil:
		return solveflags.ParamError(err, f.Method)
	}
	f.Method = f.model.Model
	if f.unknown == "bias" && f.model.Options.Baseline != ratings.BaselineBiases {
		return cliflag.Usagef("--unknown bias needs --biases (the bias model it falls back to)")
	}
	if err := checkOutputDir(f.out, f.force, f.in, f.predict); f.cv == 0 && err != nil {
		return err
	}
	return nil
}

// dashed returns the option names as flags.
func dashed(names []string) []string {
	out := make([]string, len(names))
	for k, n := range names {
		out[k] = "--" + n
	}
	return out
}

// crossValidate runs --cv and prints its table (or JSON).
func (f *completeFlags) crossValidate(ctx context.Context, e *env, r *triples.Ratings, prog *progress.Printer) error {
	o := f.fitOptions(prog)
	o.Settings.Callback = nil // a line per fold instead
	prog.Stagef("%d-fold cross-validation of %s on %d ratings", f.cv, f.Method, r.Len())
	cv, err := ratings.CrossValidate(ctx, r, f.cv, f.Seed, o, func(k int, fold ratings.Fold) {
		prog.Stagef("fold %d of %d: RMSE %.4f, %.1fs", k+1, f.cv, fold.RMSE, fold.Seconds)
	})
	prog.Done()
	if err != nil {
		return f.runError(err)
	}
	if f.JSON {
		return writeJSON(e.stdout, struct {
			Command string `json:"command"`
			Model   string `json:"model"`
			*ratings.CrossValidation
		}{"complete", f.Method, cv})
	}
	_, err = fmt.Fprint(e.stdout, cv.Table(f.Method))
	return err
}

// runError adds the command line's remedies to an error of ratings.Run.
func (f *completeFlags) runError(err error) error {
	var rankErr *ratings.RankError
	var idErr *ratings.UnknownIDError
	switch {
	case errors.As(err, &rankErr):
		return cliflag.Usagef("--rank %d must be smaller than min(d1, d2) = %d: the training ratings have %d distinct rows and %d distinct columns",
			f.Rank, min(rankErr.D1, rankErr.D2), rankErr.D1, rankErr.D2)
	case errors.As(err, &idErr):
		return fmt.Errorf("%w (use --unknown nan to write NaN for such pairs, or --biases --unknown bias for the bias model)", err)
	}
	return outDirError(err, f.out)
}

// read reads the ratings and the pairs to predict (nil without
// --predict).
func (f *completeFlags) read() (*triples.Ratings, *triples.Pairs, error) {
	opt := triples.Options{Delimiter: triples.Delimiter(f.delim), Header: f.header, IgnoreExtra: f.ignoreExtra}
	r, err := ratings.ReadFile(f.in, opt, load.AvailableMemory())
	if err != nil || f.predict == "" {
		return r, nil, headerHint(err)
	}
	if err := load.CheckReadable(f.predict); err != nil {
		return nil, nil, fmt.Errorf("--predict: %v", err)
	}
	opt.Header = f.predictHeader
	pairs, err := triples.ReadPairsFile(f.predict, opt)
	return r, pairs, headerHint(err)
}

// fitOptions are the options of ratings.Fit: the model's choice
// (resolve) with the settings, the progress and the clipping.
func (f *completeFlags) fitOptions(prog *progress.Printer) ratings.Options {
	o := f.model.Options
	o.Settings = f.Settings()
	o.Settings.Callback = prog.Record
	o.Clip = f.clipRange
	if ridge, _ := strconv.ParseFloat(f.Params["ridge"], 64); f.Method != ratings.ModelGibbs && f.Rank == 0 && ridge > 0 { // auto: the rank only
		o.Select.Ridges = []float64{ridge}
	}
	return o
}

// validate checks the flags that do not need the data.
func (f *completeFlags) validate() error {
	err := firstBroken(
		rule{f.in == "", "complete: --in FILE is required (run 'rpca complete -h' for help)"},
		rule{f.out == "" && f.cv == 0, "complete: --out DIR is required (run 'rpca complete -h' for help)"},
		rule{f.cv == 1, "complete: --cv needs at least 2 folds"},
		rule{f.cv > 0 && (f.out != "" || f.predict != "" || f.holdout > 0), "complete: --cv scores the model by cross-validation and writes nothing: drop --out, --predict and --holdout"},
	)
	if f.cv == 0 { // --cv writes nothing
		err = cmp.Or(err, f.outFlags.validate("complete")) // the first that is not nil
	}
	if err != nil {
		return err
	}
	if f.clip != "" {
		if f.clipRange, err = ratings.ParseClip(f.clip); err != nil {
			return cliflag.Usagef("--clip: %w", err)
		}
	}
	return nil
}
