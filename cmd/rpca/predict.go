package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/progress"
	"github.com/rpca-gd/rpca/internal/solveflags"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/ratings"
)

func init() {
	register(&command{
		name:    "predict",
		summary: "predict ratings, or recommend the top N items per user, with a model that 'rpca complete' saved",
		run:     withFlags(runPredict),
	})
}

// The first lines of predict's outputs: they say that rpca wrote the
// file (so that --force may replace it) and name the columns.
const (
	predictPairsMarker = "# rpca predict: row\tcol\tprediction\n"
	predictTopMarker   = "# rpca predict: row\trank\tcol\tprediction\n"
)

// predictFlags are the flags of "rpca predict".
type predictFlags struct {
	solveflags.Flags                         // --quiet and --progress only
	model, pairs, users, out, delim, unknown string
	header, force                            bool
	top                                      int
}

func (f *predictFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "predict", "--model DIR (--pairs FILE | --top N) [flags]", nil)
	f.Flags.Register(fs, solveflags.Quiet|solveflags.Workers)
	fs.StringVar(&f.model, "model", "", "output directory of 'rpca complete' that holds the model (required)")
	fs.StringVar(&f.pairs, "pairs", "", "file of row col pairs to predict (a third field is ignored)")
	fs.BoolVar(&f.header, "header", false, "skip the first line of --pairs (column names)")
	fs.StringVar(&f.delim, "delim", "", "field separator of --pairs: tab, comma, space (runs of white space) or any string (default: detected)")
	cliflag.Var(fs, &f.unknown, "unknown", "error", cliflag.OneOf("error", "nan", "bias"), "error, nan or bias", "ids in --pairs that have no training rating: error, nan, or bias (the mean plus the known id's bias; models fitted with biases)")
	cliflag.Var(fs, &f.top, "top", 0, cliflag.AtLeast(0), "a positive number of items", "recommend the N items with the highest predictions that each user has not rated in training")
	fs.StringVar(&f.users, "users", "", "with --top: file of the row ids to recommend for, one a line (default: every row of the model)")
	fs.StringVar(&f.out, "out", "", "write to this file, atomically (default: standard output)")
	fs.BoolVar(&f.force, "force", false, "replace --out if 'rpca predict' wrote it (its first line says so); never another file")
	return fs
}

func runPredict(ctx context.Context, e *env, f *predictFlags, fs *flag.FlagSet) error {
	if err := firstBroken(
		rule{f.model == "", "predict: --model DIR is required (run 'rpca predict -h' for help)"},
		rule{(f.pairs == "") == (f.top == 0), "predict: give either --pairs FILE or --top N"},
		rule{f.users != "" && f.top == 0, "predict: --users chooses the users of --top"},
		rule{f.top > 0 && (flagSet(fs, "unknown") || f.header || f.delim != ""), "predict: --unknown, --header and --delim describe --pairs, not --top"},
	); err != nil {
		return err
	}
	inputs := []string{f.model, f.pairs, f.users}
	marker := predictPairsMarker
	if f.top > 0 {
		marker = predictTopMarker
	}
	if f.out != "" { // fail before the work
		if err := outFileError(outdir.CheckFile(f.out, f.force, marker, inputs...), f.out); err != nil {
			return err
		}
	}
	prog := newProgress(e, &f.Flags)
	defer prog.Done()
	prog.Stagef("loading the model in %s", f.model)
	p, err := ratings.Load(f.model)
	if err != nil {
		return err
	}
	var write func(io.Writer) error
	if f.pairs != "" {
		write, err = predictPairsWriter(f, p, prog)
	} else {
		write, err = predictTopWriter(ctx, f, p, prog)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	prog.Done()
	if f.out == "" {
		w := bufio.NewWriter(e.stdout)
		if _, err := io.WriteString(w, marker); err != nil {
			return err
		}
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}
	return outFileError(outdir.CreateFile(f.out, f.force, marker, write, inputs...), f.out)
}

// predictPairsWriter predicts the pairs of --pairs with model p and
// returns the writer of the table.
func predictPairsWriter(f *predictFlags, p *ratings.Predictor, prog *progress.Printer) (func(io.Writer) error, error) {
	if f.unknown == "bias" && p.Biases == nil {
		return nil, cliflag.Usagef("predict: --unknown bias needs a model fitted with biases (rpca complete's default, or --biases)")
	}
	if err := load.CheckReadable(f.pairs); err != nil {
		return nil, fmt.Errorf("--pairs: %v", err)
	}
	pairs, err := triples.ReadPairsFile(f.pairs, triples.Options{Delimiter: triples.Delimiter(f.delim), Header: f.header})
	if err != nil {
		return nil, headerHint(err)
	}
	prog.Stagef("predicting %d pairs", pairs.Len())
	preds, _, err := p.PredictPairs(pairs, ratings.Unknown(f.unknown))
	var idErr *ratings.UnknownIDError
	if errors.As(err, &idErr) {
		return nil, fmt.Errorf("%s: %w (use --unknown nan to write NaN for such pairs, or --unknown bias for the bias model)", f.pairs, err)
	}
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return triples.Write(w, "\t", pairs.Row, pairs.Col, preds) }, nil
}

// predictTopWriter finds the --top items of the users of --users (all
// when it is not given) with model p and returns the writer of the list.
func predictTopWriter(ctx context.Context, f *predictFlags, p *ratings.Predictor, prog *progress.Printer) (func(io.Writer) error, error) {
	var users []string
	var lines []int
	var err error
	if f.users != "" {
		users, lines, err = ratings.ReadIDs(f.users)
		switch {
		case errors.Is(err, ratings.ErrNoIDs):
			return nil, fmt.Errorf("--users %s lists no id", f.users)
		case err != nil:
			return nil, fmt.Errorf("--users: %w", err)
		}
	}
	n := len(users)
	if users == nil {
		n = len(p.RowIDs)
	}
	prog.Stagef("recommending %d items to each of %d users", f.top, n)
	recs, err := p.TopN(ctx, users, f.top, f.Workers)
	var idErr *ratings.UnknownIDError
	if errors.As(err, &idErr) {
		return nil, fmt.Errorf("%s: line %d: unknown row id %q: it has no training rating in the model", f.users, lines[idErr.Line-1], idErr.ID)
	}
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return ratings.WriteRecommendations(w, recs) }, nil
}

// outFileError rewords outdir.CheckFile's errors for --out path in the
// command line's words.
func outFileError(err error, path string) error {
	switch {
	case errors.Is(err, outdir.ErrIsDir):
		return fmt.Errorf("--out %s is a directory; predict writes one file", path)
	case errors.Is(err, outdir.ErrFileExists):
		return fmt.Errorf("--out %s exists; use --force to replace a file that 'rpca predict' wrote, or choose another name", path)
	case errors.Is(err, outdir.ErrNotOurs):
		return fmt.Errorf("--out %s was not written by 'rpca predict' (its first line does not say so), so --force will not replace it; choose another name", path)
	case errors.Is(err, outdir.ErrContainsInput):
		return fmt.Errorf("--out %s is an input of this command, or lies in one; write elsewhere", path)
	}
	return err
}
