// Package experiment reproduces the experiments of Section 5 of Yi, Park,
// Chen and Caramanis, "Fast Algorithms for Robust PCA via Gradient
// Descent": the synthetic studies of Figure 1 (a)–(c) and the
// foreground–background separation of Figures 2–3. Each experiment writes
// CSV tables and PNG plots into a new output directory, atomically.
//
//   - fig1a: log error against iteration of the gradient method for
//     several sampling rates p, with the fitted contraction factor per p.
//   - fig1b: running time of Algorithm 2 to a relative error of 1e-4
//     against d, with p = 0.15·r²·log(d)/d, and the fitted log-log slope.
//   - fig1c: log error against wall-clock time for GD (p = 1 and a
//     subsampled p), AltProj and IALM on one instance.
//   - video: backgrounds of real or generated clips by the four methods
//     with the paper's Appendix B settings, with run times and, where a
//     ground-truth mask exists, precision, recall and F-measure.
//   - scenes: the video defaults on generated clips of changing scenes.
//   - ratings: rating completion (package ratings) on clean ratings and
//     on ratings with injected junk, with α = 0 and α > 0.
//
// [Run] runs one experiment by name; [Options] selects the sizes: the
// paper's by default, small ones with Quick.
package experiment

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/outdir"
)

// Options configure a run. Zero fields take the defaults of the
// experiment and mode (Quick or the paper's sizes), as documented.
type Options struct {
	// Out is the output directory to create (required). It must not
	// exist as a non-empty directory unless Force is set.
	Out   string
	Force bool

	// Quick selects small sizes that run in seconds.
	Quick bool

	// Seed drives the synthetic data and the methods' random choices;
	// 0 means 1.
	Seed uint64

	// Workers bounds the goroutines of the solvers; 0 means all cores.
	Workers int

	// Log receives progress lines; nil discards them.
	Log io.Writer

	// D is the matrix size d of fig1a and fig1c (paper: 5000).
	D int

	// Rank is r (paper: 10 everywhere; fig1a–c quick: 5).
	Rank int

	// Dims are the sizes of fig1b (paper: 1e4, 2e4, 5e4, 1e5, 2e5).
	Dims []int

	// Rates are the sampling rates p of fig1a (default 1, 0.5, 0.2, 0.1);
	// for fig1c and video the first rate below 1 is the subsampled GD
	// run (default 0.2).
	Rates []float64

	// Gamma is γ of every GD run (0: rpca.GD's defaults, 2 for Algorithm
	// 1 and 3 for Algorithm 2; video: the paper's 1).
	Gamma float64

	// Step is the step constant c of η = c/σ̂₁ of the GD runs of fig1a–c
	// (0: rpca.GD's defaults, DefaultStepDense and DefaultStepPartial; the
	// video runs use the paper's 0.5 unless it is set).
	Step float64

	// FactorTol is the factor-change stopping rule of the video GD runs
	// (0: the paper's 4e-4; negative: off, so that MaxIter ends the run).
	FactorTol float64

	// MaxIter caps the iterations of every solver run (0: per experiment).
	MaxIter int

	// TimeCap caps the wall-clock time of each solver run in fig1c and
	// fig1b (0: 300 s, 30 s with Quick; negative: no cap). A run cut by
	// the cap keeps its history up to that point.
	TimeCap time.Duration

	// Frames is the video input: a directory of frames, a directory
	// whose subdirectories are clips, or "synthetic" for a generated clip
	// (static background and a moving square). Empty means the shared
	// clips (DefaultFrames) when present, else the generated clip.
	Frames string

	// Scale downscales the video frames by 1/n (0: 1, 0.5 with Quick).
	Scale float64

	// MaxFrames keeps at most this many frames per clip (0: all, 30 with
	// Quick).
	MaxFrames int

	// Ratings is the input of the ratings experiment: a file of "user item
	// rating" lines (a header line and extra fields are skipped), or
	// SyntheticRatings. Empty means DefaultRatings, and the error
	// ErrNoRatings when that file is absent.
	Ratings string

	// Alpha is α of the ratings experiment's robust fits (0:
	// DefaultRatingsAlpha).
	Alpha float64
}

// Report is what a run produced.
type Report struct {
	Dir     string   // the committed output directory
	Files   []string // files written, relative to Dir
	Summary string   // a short human-readable summary of the results
}

// Experiment describes one runnable experiment.
type Experiment struct {
	Name    string // the name given to Run, e.g. "fig1a"
	Summary string // one line: what the experiment measures
	run     func(ctx context.Context, w *writer, o *Options) error
}

var experiments = []*Experiment{
	{Name: "fig1a", Summary: "log error vs iteration of GD for several sampling rates p (Figure 1a)", run: runFig1a},
	{Name: "fig1b", Summary: "time of Algorithm 2 to error 1e-4 vs d, p = 0.15·r²·log(d)/d (Figure 1b)", run: runFig1b},
	{Name: "fig1c", Summary: "log error vs time of GD, subsampled GD, AltProj and IALM (Figure 1c)", run: runFig1c},
	{Name: "video", Summary: "foreground–background separation of video clips by the four methods (Figures 2–3)", run: runVideo},
	{Name: "scenes", Summary: "foreground F of the video defaults, AccAltProj and the temporal median on generated clips of six kinds of changing background", run: runScenes},
	{Name: "ratings", Summary: "held-out RMSE of rating completion with flipped and shilling junk ratings, α = 0 against α > 0; outliers found; RMSE against rank and λ", run: runRatings},
}

// List returns the experiments in their canonical order.
func List() []*Experiment { return slices.Clone(experiments) }

// Lookup returns the experiment with the given name, or nil.
func Lookup(name string) *Experiment {
	for _, e := range experiments {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// ErrUnknown is wrapped by the error of [Run] for an unknown name.
var ErrUnknown = errors.New("unknown experiment")

// Run runs the named experiment and commits its output directory. On
// error or cancellation nothing is left behind (and an existing directory
// replaced with Force is kept).
func Run(ctx context.Context, name string, o Options) (*Report, error) {
	e := Lookup(name)
	if e == nil {
		names := make([]string, len(experiments))
		for i, x := range experiments {
			names[i] = x.Name
		}
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknown, name, strings.Join(names, ", "))
	}
	if o.Out == "" {
		return nil, errors.New("experiment: no output directory")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	o.Seed = cmp.Or(o.Seed, 1)
	if o.Log == nil {
		o.Log = io.Discard
	}
	if ctx == nil {
		ctx = context.Background()
	}
	dir, err := outdir.New(o.Out, o.Force, o.Frames, o.Ratings)
	if err != nil {
		return nil, err
	}
	defer dir.Abort()
	w := &writer{dir: dir, log: o.Log}
	if err := e.run(ctx, w, &o); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := w.writeSummary(); err != nil {
		return nil, err
	}
	if err := dir.Commit(); err != nil {
		return nil, err
	}
	return &Report{Dir: dir.Final(), Files: w.files, Summary: w.summary.String()}, nil
}

// check validates the options a caller can get wrong.
func (o *Options) check() error {
	if o.D < 0 || o.Rank < 0 || o.MaxIter < 0 || o.MaxFrames < 0 || o.Workers < 0 {
		return errors.New("experiment: sizes, rank, iteration and frame limits and workers must be non-negative")
	}
	for _, d := range o.Dims {
		if d < 2 {
			return fmt.Errorf("experiment: size %d in Dims is too small", d)
		}
	}
	for _, p := range o.Rates {
		if !(p > 0 && p <= 1) {
			return fmt.Errorf("experiment: sampling rate %v must be in (0, 1]", p)
		}
	}
	if math.IsNaN(o.FactorTol) || math.IsInf(o.FactorTol, 0) {
		return fmt.Errorf("experiment: factor tolerance %v must be finite", o.FactorTol)
	}
	if !(o.Gamma >= 0) || math.IsInf(o.Gamma, 1) {
		return fmt.Errorf("experiment: gamma %v must be a finite non-negative number", o.Gamma)
	}
	if !(o.Step >= 0) || math.IsInf(o.Step, 1) {
		return fmt.Errorf("experiment: step constant %v must be a finite non-negative number", o.Step)
	}
	if !(o.Alpha >= 0 && o.Alpha < 1) {
		return fmt.Errorf("experiment: alpha %v must be in [0, 1)", o.Alpha)
	}
	if !(o.Scale >= 0 && o.Scale <= 1) {
		return fmt.Errorf("experiment: scale %v must be in (0, 1]", o.Scale)
	}
	return nil
}

// pick returns v if set, else the quick or the full default.
func pick[T comparable](v T, quick bool, q, full T) T {
	var zero T
	if v != zero {
		return v
	}
	if quick {
		return q
	}
	return full
}

// timeCap returns the per-run time limit (0: none).
func (o *Options) timeCap() time.Duration {
	switch {
	case o.TimeCap < 0:
		return 0
	case o.TimeCap > 0:
		return o.TimeCap
	case o.Quick:
		return 30 * time.Second
	}
	return 300 * time.Second
}

// subRate returns the subsampled GD rate of fig1c and video.
func (o *Options) subRate() float64 {
	for _, p := range o.Rates {
		if p < 1 {
			return p
		}
	}
	return 0.2
}

// writer collects the files of a run in its temporary directory.
type writer struct {
	dir     *outdir.Dir
	log     io.Writer
	files   []string
	summary strings.Builder
	mu      sync.Mutex
}

// logf writes one progress line.
func (w *writer) logf(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.log, format+"\n", args...)
}

// sumf appends a line to the summary.
func (w *writer) sumf(format string, args ...any) {
	fmt.Fprintf(&w.summary, format+"\n", args...)
}

// create opens a new file in the output directory.
func (w *writer) create(name string) (*os.File, error) {
	f, err := os.OpenFile(w.dir.Join(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	w.files = append(w.files, name)
	return f, nil
}

// writeFile writes a file with fn.
func (w *writer) writeFile(name string, fn func(io.Writer) error) error {
	f, err := w.create(name)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return f.Close()
}

// writeCSV writes a table with a header row.
func (w *writer) writeCSV(name string, header []string, rows [][]string) error {
	return w.writeFile(name, func(f io.Writer) error {
		cw := csv.NewWriter(f)
		if err := cw.Write(header); err != nil {
			return err
		}
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
}

// writeSummary writes summary.txt.
func (w *writer) writeSummary() error {
	return w.writeFile("summary.txt", func(f io.Writer) error {
		_, err := io.WriteString(f, w.summary.String())
		return err
	})
}

// num formats a float for CSV: six significant digits, "NaN" for NaN.
func num(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// itoa formats an int for CSV.
func itoa(n int) string { return strconv.Itoa(n) }

// trace records the history of one solver run through the callback, so
// that a run cut by a time cap keeps what it computed, and prints
// throttled progress lines.
type trace struct {
	w     *writer
	label string
	recs  []rpca.Record
	last  time.Time
	// offset is work done for the run before the solve (subsampling a
	// dense Y), added to every record's time and to the run's.
	offset time.Duration
}

func newTrace(w *writer, label string) *trace { return &trace{w: w, label: label} }

// callback is passed to rpca.Settings.Callback.
func (t *trace) callback(r rpca.Record) {
	r.Elapsed += t.offset
	t.recs = append(t.recs, r)
	if now := time.Now(); now.Sub(t.last) >= 2*time.Second {
		t.last = now
		t.w.logf("  %s: iter %d, error %.3g, residual %.3g, %.1fs", t.label, r.Iter, r.Error, r.Residual, r.Elapsed.Seconds())
	}
}

// runSummary is what the figures keep of one solver run.
type runSummary struct {
	recs       []rpca.Record
	iterations int
	seconds    float64
	stop       string
}

// summary returns the traced records with the iterations, time and stop
// reason of res, or, for a run the time cap cut (capped, res nil), those
// of its last record and the stop "time-cap".
func (t *trace) summary(res *rpca.Result, capped bool) runSummary {
	r := runSummary{recs: t.recs}
	if !capped {
		r.iterations, r.seconds, r.stop = res.Iterations, (res.Elapsed + t.offset).Seconds(), string(res.Stop)
		return r
	}
	r.iterations, r.stop = len(t.recs)-1, "time-cap"
	if len(t.recs) > 0 {
		r.seconds = t.recs[len(t.recs)-1].Elapsed.Seconds()
	}
	return r
}

// solveCapped runs rpca.Solve with an optional time cap. When the cap (and
// not the parent context) ends the run, it returns a nil result, capped
// true and no error; the trace keeps the history.
func solveCapped(ctx context.Context, cap time.Duration, p *rpca.Problem, s rpca.Settings, m rpca.Method, t *trace) (res *rpca.Result, capped bool, err error) {
	s.Callback = t.callback
	cctx := ctx
	if cap > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, cap)
		defer cancel()
	}
	res, err = rpca.Solve(cctx, p, s, m)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		return nil, true, nil
	}
	return res, false, err
}

// fitRate fits log10(error) = a + b·iter by least squares over the
// records whose error lies in [lo, hi] (the geometric phase, past the
// initial transient and before the floor) and returns the contraction
// factor 10^b per iteration and the number of points used. It returns
// NaN when fewer than three records qualify.
func fitRate(recs []rpca.Record, lo, hi float64) (rate float64, n int) {
	var xs, ys []float64
	for _, r := range recs {
		if r.Error >= lo && r.Error <= hi && r.Error > 0 {
			xs = append(xs, float64(r.Iter))
			ys = append(ys, math.Log10(r.Error))
		}
	}
	if len(xs) < 3 {
		return math.NaN(), len(xs)
	}
	_, b := lineFit(xs, ys)
	return math.Pow(10, b), len(xs)
}

// lineFit returns the least-squares intercept a and slope b of y = a + b·x.
func lineFit(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= n
	my /= n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return my, math.NaN()
	}
	b = sxy / sxx
	return my - b*mx, b
}

// altprojStallTol is the early end of an AltProj stage used by the
// authors' code (altproj.Method.StallTol), with which the paper ran it.
const altprojStallTol = 0.1

// gammaText describes the γ and step constant of the GD runs for titles
// and summaries.
func gammaText(o *Options) string {
	g := "gamma 2 (p=1), 3 (p<1)"
	if o.Gamma != 0 {
		g = fmt.Sprintf("gamma %g", o.Gamma)
	}
	c := fmt.Sprintf("step %g/sigma1 (p=1), %g/sigma1 (p<1)", gd.DefaultStepDense, gd.DefaultStepPartial)
	if gd.DefaultStepDense == gd.DefaultStepPartial {
		c = fmt.Sprintf("step %g/sigma1", gd.DefaultStepDense)
	}
	if o.Step != 0 {
		c = fmt.Sprintf("step %g/sigma1", o.Step)
	}
	return g + "; " + c
}

// lastError returns the error of the last record (NaN if none).
func lastError(recs []rpca.Record) float64 {
	if len(recs) == 0 {
		return math.NaN()
	}
	return recs[len(recs)-1].Error
}
