package ratings

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/outdir"
)

// The first lines of a PredictJob's output: they say that rpca wrote the
// file (so that a later job with Force may replace it) and name the
// columns.
const (
	PairsMarker = "# rpca predict: row\tcol\tprediction\n"
	TopMarker   = "# rpca predict: row\trank\tcol\tprediction\n"
)

// ErrNoBiases: the bias model was asked of a model fitted without biases.
var ErrNoBiases = errors.New("the model was fitted without biases")

// InputError is an error of one of a PredictJob's input files.
type InputError struct {
	Input string // "pairs" or "users": the job's field
	Err   error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// PredictJob is the workflow of rpca predict: a saved model's predictions
// for the pairs of a file, or the Top items of each user that the user
// has not rated, written as a table after its marker line.
type PredictJob struct {
	Model string // the directory a Run saved the model in
	// Pairs is a file of row col pairs (a third field is ignored), read
	// with Read; with Top > 0 instead, Users is a file of the row ids to
	// recommend for, one a line ("": every row of the model).
	Pairs string
	Read  triples.Options
	Top   int
	Users string
	// Unknown is the policy for ids without a training rating (Pairs).
	Unknown Unknown
	Workers int
	// Out is the file written atomically, replaced with Force only when
	// a PredictJob wrote it; "" writes to W.
	Out   string
	Force bool
	W     io.Writer
	Stage func(string) // called at the start of each stage (nil: none)
}

// marker is the first line of j's output.
func (j *PredictJob) marker() string {
	if j.Top > 0 {
		return TopMarker
	}
	return PairsMarker
}

// Check refuses an output file that the job may not write, before the
// work.
func (j *PredictJob) Check() error {
	if j.Out == "" {
		return nil
	}
	return outdir.CheckFile(j.Out, j.Force, j.marker(), j.Model, j.Pairs, j.Users)
}

// RunPredict runs j.
func RunPredict(ctx context.Context, j PredictJob) error {
	stage := func(format string, a ...any) {
		if j.Stage != nil {
			j.Stage(fmt.Sprintf(format, a...))
		}
	}
	if err := j.Check(); err != nil {
		return err
	}
	stage("loading the model in %s", j.Model)
	p, err := Load(j.Model)
	if err != nil {
		return err
	}
	var write func(io.Writer) error
	if j.Top > 0 {
		write, err = j.top(ctx, p, stage)
	} else {
		write, err = j.pairs(p, stage)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if j.Out != "" {
		return outdir.CreateFile(j.Out, j.Force, j.marker(), write, j.Model, j.Pairs, j.Users)
	}
	w := bufio.NewWriter(j.W)
	if _, err := io.WriteString(w, j.marker()); err != nil {
		return err
	}
	if err := write(w); err != nil {
		return err
	}
	return w.Flush()
}

// pairs predicts the pairs of j.Pairs with p and returns the writer of
// the table.
func (j *PredictJob) pairs(p *Predictor, stage func(string, ...any)) (func(io.Writer) error, error) {
	if j.Unknown == UnknownBias && p.Biases == nil {
		return nil, ErrNoBiases
	}
	if err := load.CheckReadable(j.Pairs); err != nil {
		return nil, &InputError{"pairs", err}
	}
	pairs, err := triples.ReadPairsFile(j.Pairs, j.Read)
	if err != nil {
		return nil, &InputError{"pairs", err}
	}
	stage("predicting %d pairs", pairs.Len())
	preds, _, err := p.PredictPairs(pairs, j.Unknown)
	var idErr *UnknownIDError
	if errors.As(err, &idErr) {
		return nil, &InputError{"pairs", fmt.Errorf("%s: %w", j.Pairs, err)}
	}
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return triples.Write(w, "\t", pairs.Row, pairs.Col, preds) }, nil
}

// top finds the Top items of the users of j.Users (every row of p when
// it is "") and returns the writer of the list.
func (j *PredictJob) top(ctx context.Context, p *Predictor, stage func(string, ...any)) (func(io.Writer) error, error) {
	var users []string
	var lines []int
	if j.Users != "" {
		var err error
		users, lines, err = ReadIDs(j.Users)
		switch {
		case errors.Is(err, ErrNoIDs):
			return nil, &InputError{"users", fmt.Errorf("%s lists no id", j.Users)}
		case err != nil:
			return nil, &InputError{"users", err}
		}
	}
	n := len(users)
	if users == nil {
		n = len(p.RowIDs)
	}
	stage("recommending %d items to each of %d users", j.Top, n)
	recs, err := p.TopN(ctx, users, j.Top, j.Workers)
	var idErr *UnknownIDError
	if errors.As(err, &idErr) {
		return nil, &InputError{"users", fmt.Errorf("%s: line %d: unknown row id %q: it has no training rating in the model", j.Users, lines[idErr.Line-1], idErr.ID)}
	}
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return WriteRecommendations(w, recs) }, nil
}
