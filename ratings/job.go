package ratings

import (
	"context"
	"fmt"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/outdir"
)

// Job is one run of rpca complete: hold out a fraction of the ratings,
// fit the rest, predict the pairs, and write the model, the predictions
// and the report into an output directory.
type Job struct {
	// Input and Predict name the files Ratings and Pairs came from, for
	// the report and the errors.
	Input, Predict string
	Ratings        *triples.Ratings
	// Pairs, when not nil, are predicted into predictions.tsv with the
	// Unknown policy.
	Pairs   *triples.Pairs
	Unknown Unknown
	// Holdout is the fraction of the ratings held out (HoldOut with Seed)
	// to measure the prediction error.
	Holdout float64
	Seed    uint64
	Options Options
	// Out is the output directory, created atomically (package outdir);
	// Force replaces one that rpca wrote; the input files may be neither
	// Out nor inside it. CSV writes the factors as CSV instead of .npy.
	Out   string
	Force bool
	CSV   bool
	// Fitted, when set, is called with the model before the predictions
	// (for a warning about an unconverged fit).
	Fitted func(*Model)
	// ModelFlags, for the report, name the options that chose the model
	// (a command line's flags), when the caller's default was another.
	ModelFlags []string
}

// Run does the job and returns the report (also written as
// summary.json). On an error, or when ctx is cancelled, Out is not
// created. A pair with an unknown id under UnknownError is an
// *UnknownIDError wrapped with the pairs' file name.
func Run(ctx context.Context, j Job) (*Report, error) {
	// The directory first, so that an output that cannot be written fails
	// before the fit.
	d, err := outdir.New(j.Out, j.Force, j.Input, j.Predict)
	if err != nil {
		return nil, err
	}
	defer d.Abort()
	r := j.Ratings
	if err := checkRatings(r); err != nil {
		return nil, err
	}
	held := HoldOut(r.Len(), j.Holdout, j.Seed)
	if j.Pairs != nil && (j.Unknown == UnknownError || j.Unknown == "") {
		// Before the fit, not after it: a pair no model could predict
		// is an error that should not cost a fit.
		if err := unknownPair(r, held, j.Pairs); err != nil {
			return nil, fmt.Errorf("%s: %w", j.Predict, err)
		}
	}
	model, err := Fit(ctx, r, held, j.Options)
	if err != nil {
		return nil, err
	}
	if j.Fitted != nil {
		j.Fitted(model)
	}
	rep := NewReport(r, held, j.Holdout, model)
	rep.Input, rep.Output, rep.ModelFlags = j.Input, j.Out, j.ModelFlags
	var preds []float64
	if j.Pairs != nil {
		var fromBiases int
		if preds, fromBiases, err = model.PredictPairs(j.Pairs, j.Unknown); err != nil {
			return nil, fmt.Errorf("%s: %w", j.Predict, err)
		}
		rep.AddPredictions(preds, fromBiases, j.Unknown)
	}
	files, err := model.Save(ctx, d.Path(), j.CSV, j.Pairs, preds)
	if err != nil {
		return nil, err
	}
	rep.Files = append(files, "summary.json")
	if err := outdir.WriteJSON(d.Join("summary.json"), rep); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rep, d.Commit()
}
