package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/progress"
	"github.com/rpca-gd/rpca/internal/solveflags"
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
	prog := newProgress(e, &f.Flags)
	defer prog.Done()
	j := ratings.PredictJob{Model: f.model, Pairs: f.pairs, Top: f.top, Users: f.users, Workers: f.Workers,
		Read:    triples.Options{Delimiter: triples.Delimiter(f.delim), Header: f.header},
		Unknown: ratings.Unknown(f.unknown), Out: f.out, Force: f.force, W: afterProgress{prog, e.stdout}, Stage: prog.Stage}
	if err := j.Check(); err != nil { // before the work
		return outFileError(err, f.out)
	}
	err := ratings.RunPredict(ctx, j)
	var in *ratings.InputError
	var idErr *ratings.UnknownIDError
	switch {
	case errors.Is(err, ratings.ErrNoBiases):
		return cliflag.Usagef("predict: --unknown bias needs a model fitted with biases (rpca complete's default, or --biases)")
	case errors.As(err, &in) && errors.As(err, &idErr) && in.Input == "pairs":
		return fmt.Errorf("%w (use --unknown nan to write NaN for such pairs, or --unknown bias for the bias model)", err)
	case errors.As(err, &in):
		return fmt.Errorf("--%s: %w", in.Input, headerHint(in.Err))
	}
	return outFileError(err, f.out)
}

// afterProgress ends the progress display before the first write to w,
// its terminal's other stream.
type afterProgress struct {
	p *progress.Printer
	w io.Writer
}

func (a afterProgress) Write(b []byte) (int, error) {
	a.p.Done()
	return a.w.Write(b)
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
