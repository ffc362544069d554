package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/sample"
	"github.com/rpca-gd/rpca/ratings"
	"gonum.org/v1/plot"
)

// SyntheticRatings asks the ratings experiment for generated ratings
// instead of a file.
const SyntheticRatings = "synthetic"

// DefaultRatingsAlpha is α of the robust fits of the ratings experiment.
const DefaultRatingsAlpha = 0.05

// The junk of the ratings experiment.
const (
	flipFraction   = 0.05 // of the training ratings, flipped to the opposite extreme
	shillFraction  = 0.05 // fake users, as a fraction of the real ones
	shillTargets   = 5    // items every fake user rates at the top of the scale
	shillFillers   = 20   // popular items every fake user rates at the bottom
	shillPopular   = 200  // the fillers are drawn from this many most-rated items
	ratingsHoldout = 0.2  // clean ratings held out to score every fit
)

// DefaultRatings returns the shared MovieLens ratings,
// ../shared/data/ratings/ml-latest-small/ratings.csv next to the module
// root (see DefaultFrames), or "" when that file does not exist.
func DefaultRatings() string {
	data := DefaultFrames()
	if data == "" {
		return ""
	}
	p := filepath.Join(data, "ratings", "ml-latest-small", "ratings.csv")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// ratingsScenario is one version of the training ratings: the clean ones,
// or the clean ones with junk.
type ratingsScenario struct {
	name    string
	r       *triples.Ratings
	held    []bool // the clean held-out ratings, the same in every scenario
	junk    []bool // per rating of r: injected
	targets []int  // shilling: the target columns of r
}

// ratingsRun is one fit of one scenario.
type ratingsRun struct {
	scenario, method string
	alpha            float64
	junk             int
	rank             int
	ridge            float64
	iterations       int
	seconds          float64
	testRMSE         float64
	biasRMSE         float64
	flagged, correct int
	precision        float64
	recall           float64
	targetMean       float64 // mean prediction for real users on the shilling targets
}

// runRatings measures what junk ratings do to the two completion fits of
// rpca complete, each with α = 0 and with α > 0: the Gibbs fit of its
// defaults (ratings.Defaults) and alternating least squares with the rank
// and ridge chosen by validation and the bias model. A fifth of the clean ratings is held
// out to score every fit. The training part is used as it is, with a
// random 5% of it flipped to the opposite end of the rating scale, and
// with a shilling attack: fake users (5% of the real ones) who give the
// top rating to five target items and the bottom one to twenty popular
// items. Files: ratings.csv (one row per fit: held-out RMSE, the bias
// model's, precision and recall of the ratings set aside against the
// injected ones, the mean prediction on the targets, time), ratings.png,
// ratings_curve.csv and ratings_rank.png, ratings_ridge.png (the
// validation RMSE against rank and λ of the clean α = 0 choice of als).
func runRatings(ctx context.Context, w *writer, o *Options) error {
	r, src, err := loadRatings(o)
	if err != nil {
		return err
	}
	alpha := cmp.Or(o.Alpha, DefaultRatingsAlpha)
	lo, hi := slices.Min(r.Val), slices.Max(r.Val)
	if !(hi > lo) {
		return fmt.Errorf("experiment: the ratings of %s have a single value", src)
	}
	held := ratings.HoldOut(r.Len(), ratingsHoldout, o.Seed)
	w.logf("ratings: %s, %d ratings of %d rows and %d columns, scale %g–%g; %d held out", src, r.Len(), r.D1, r.D2, lo, hi, countTrue(held))
	rng := rand.New(rand.NewPCG(o.Seed, 0x4a11c))
	scenarios := []*ratingsScenario{
		{name: "clean", r: r, held: held, junk: make([]bool, r.Len())},
		flipRatings(rng, r, held, lo, hi),
		shillRatings(rng, r, held, lo, hi),
	}
	als := ratings.Options{Baseline: ratings.BaselineBiases, Clip: &[2]float64{lo, hi},
		Model: &ratings.ALS{}, Settings: rpca.Settings{Seed: o.Seed, Workers: o.Workers}}
	if o.MaxIter > 0 {
		als.Settings.Stop.MaxIter = o.MaxIter
	}
	if o.Quick {
		als.Select = ratings.Selection{Ranks: []int{2, 5, 10}, Ridges: []float64{1, 3, 10}}
	}
	gibbs := ratings.Defaults()
	gibbs.Clip, gibbs.Settings = als.Clip, rpca.Settings{Seed: o.Seed, Workers: o.Workers}
	shill := scenarios[2]
	var runs []ratingsRun
	var curve *ratings.Choice
	for _, sc := range scenarios {
		for _, fit := range []struct {
			method string
			opt    ratings.Options
		}{{"gibbs", gibbs}, {"als", als}} {
			method, opt := fit.method, fit.opt
			for _, a := range []float64{0, alpha} {
				if err := ctx.Err(); err != nil {
					return err
				}
				opt.Alpha = a
				start := time.Now()
				m, err := ratings.Fit(ctx, sc.r, sc.held, opt)
				if err != nil {
					return fmt.Errorf("experiment: ratings %s, %s, α = %g: %w", sc.name, method, a, err)
				}
				run := scoreRatings(sc, m, a, time.Since(start).Seconds())
				run.method, run.targetMean = method, targetMean(m, r, shill.targets)
				if curve == nil {
					curve = m.Chosen
				}
				runs = append(runs, run)
				w.logf("ratings: %-8s %-5s α = %-4g rank %2d λ %-4g held-out RMSE %.4f (biases %.4f), set aside %d (%d injected), targets %.3f, %.1f s",
					sc.name, method, a, run.rank, run.ridge, run.testRMSE, run.biasRMSE, run.flagged, run.correct, run.targetMean, run.seconds)
			}
		}
	}
	return writeRatings(w, src, runs, curve)
}

// countTrue counts the set flags.
func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// ErrNoRatings is returned by the ratings experiment when Options.Ratings
// is empty and DefaultRatings finds no file: it does not fall back to
// generated ratings unasked, since their figures are not MovieLens's.
var ErrNoRatings = errors.New("experiment ratings: no ratings to use: ../shared/data/ratings/ml-latest-small/ratings.csv is not beside the module; give a file of user item rating lines (--ratings FILE), or ask for generated ratings (--ratings synthetic)")

// loadRatings reads o.Ratings (a file of "user item rating" lines, with
// or without a header line, extra fields ignored), or generates ratings
// for SyntheticRatings. Empty means DefaultRatings, and ErrNoRatings when
// that file is absent.
func loadRatings(o *Options) (*triples.Ratings, string, error) {
	src := o.Ratings
	if src == "" {
		if src = DefaultRatings(); src == "" {
			return nil, "", ErrNoRatings
		}
	}
	if src == SyntheticRatings {
		d1, d2 := 600, 400
		if o.Quick {
			d1, d2 = 300, 200
		}
		return syntheticRatings(o.Seed, d1, d2), SyntheticRatings, nil
	}
	opt := triples.Options{IgnoreExtra: true}
	r, err := ratings.ReadFile(src, opt, math.Inf(1))
	var fe *formats.Error
	if errors.As(err, &fe) && fe.Hint == formats.HintHeader {
		opt.Header = true
		r, err = ratings.ReadFile(src, opt, math.Inf(1))
	}
	if err != nil {
		return nil, src, err
	}
	if r.Len() < 100 {
		return nil, src, fmt.Errorf("experiment: %s has %d ratings; the ratings experiment needs at least 100", src, r.Len())
	}
	return r, src, nil
}

// syntheticRatings generates ratings on a half-star scale from 0.5 to 5:
// a mean, user and item biases, a rank-3 interaction and noise, rounded,
// with item popularity falling off as a power law and users of varied
// activity, so that the sampling is far from uniform, as in real ratings.
func syntheticRatings(seed uint64, d1, d2 int) *triples.Ratings {
	rng := rand.New(rand.NewPCG(seed, 0x5ca1e))
	const rank = 3
	u := make([]float64, d1*rank)
	v := make([]float64, d2*rank)
	for k := range u {
		u[k] = 0.5 * rng.NormFloat64()
	}
	for k := range v {
		v[k] = 0.5 * rng.NormFloat64()
	}
	activity := make([]float64, d1)
	for i := range activity {
		activity[i] = math.Exp(0.8 * rng.NormFloat64())
	}
	r := &triples.Ratings{RowIndex: map[string]int{}, ColIndex: map[string]int{}}
	for i := range d1 {
		id := fmt.Sprintf("u%d", i+1)
		r.RowIDs, r.RowIndex[id] = append(r.RowIDs, id), i
	}
	for j := range d2 {
		id := fmt.Sprintf("m%d", j+1)
		r.ColIDs, r.ColIndex[id] = append(r.ColIDs, id), j
	}
	rowBias := make([]float64, d1)
	for i := range rowBias {
		rowBias[i] = 0.4 * rng.NormFloat64()
	}
	for j := range d2 {
		colBias := 0.5 * rng.NormFloat64()
		pop := 0.6 / math.Pow(float64(j+1), 0.7)
		for i := range d1 {
			if rng.Float64() >= min(1, pop*activity[i]) {
				continue
			}
			x := 3.5 + rowBias[i] + colBias + 0.3*rng.NormFloat64()
			for c := range rank {
				x += u[i*rank+c] * v[j*rank+c]
			}
			x = min(5, max(0.5, math.Round(2*x)/2))
			r.Row, r.Col, r.Val = append(r.Row, i), append(r.Col, j), append(r.Val, x)
		}
	}
	r.D1, r.D2 = d1, d2
	return r
}

// flipRatings returns the scenario with a random flipFraction of the
// training ratings moved to the opposite end of the scale [lo, hi].
func flipRatings(rng *rand.Rand, r *triples.Ratings, held []bool, lo, hi float64) *ratingsScenario {
	sc := &ratingsScenario{name: "flipped", held: held, junk: make([]bool, r.Len())}
	c := *r
	c.Val = slices.Clone(r.Val)
	var train []int
	for k := range c.Val {
		if !held[k] {
			train = append(train, k)
		}
	}
	pick := sample.Subset(rng, len(train), int(math.Round(flipFraction*float64(len(train)))))
	mid := (lo + hi) / 2
	for t, ok := range pick {
		if !ok {
			continue
		}
		k := train[t]
		if c.Val[k] >= mid {
			c.Val[k] = lo
		} else {
			c.Val[k] = hi
		}
		sc.junk[k] = true
	}
	sc.r = &c
	return sc
}

// shillRatings returns the scenario with fake users added to the training
// ratings: each gives hi to the shillTargets target items (drawn from the
// items with a training rating) and lo to shillFillers items drawn from
// the shillPopular most-rated ones.
func shillRatings(rng *rand.Rand, r *triples.Ratings, held []bool, lo, hi float64) *ratingsScenario {
	count := make([]int, r.D2)
	for k, j := range r.Col {
		if !held[k] {
			count[j]++
		}
	}
	var rated []int
	for j, n := range count {
		if n > 0 {
			rated = append(rated, j)
		}
	}
	popular := slices.Clone(rated)
	slices.SortStableFunc(popular, func(a, b int) int { return count[b] - count[a] })
	popular = popular[:min(len(popular), shillPopular)]
	targets := make([]int, 0, shillTargets)
	for _, t := range rng.Perm(len(rated))[:min(shillTargets, len(rated))] {
		targets = append(targets, rated[t])
	}
	c := *r
	c.RowIDs = slices.Clone(r.RowIDs)
	c.RowIndex = make(map[string]int, len(r.RowIndex))
	for id, i := range r.RowIndex {
		c.RowIndex[id] = i
	}
	c.Triplets = formats.Triplets{Row: slices.Clone(r.Row), Col: slices.Clone(r.Col), Val: slices.Clone(r.Val), D2: r.D2}
	sc := &ratingsScenario{name: "shilling", held: slices.Clone(held), junk: make([]bool, r.Len()), targets: targets}
	fakes := max(1, int(math.Round(shillFraction*float64(r.D1))))
	for f := range fakes {
		id := fmt.Sprintf("rpca-shill-%d", f+1)
		for _, taken := c.RowIndex[id]; taken; _, taken = c.RowIndex[id] {
			id += "x" // never an id of the data
		}
		i := len(c.RowIDs)
		c.RowIDs, c.RowIndex[id] = append(c.RowIDs, id), i
		add := func(j int, v float64) {
			c.Row, c.Col, c.Val = append(c.Row, i), append(c.Col, j), append(c.Val, v)
			sc.held, sc.junk = append(sc.held, false), append(sc.junk, true)
		}
		for _, j := range targets {
			add(j, hi)
		}
		fill := 0
		for _, t := range rng.Perm(len(popular)) {
			if fill == shillFillers {
				break
			}
			if j := popular[t]; !slices.Contains(targets, j) {
				add(j, lo)
				fill++
			}
		}
	}
	c.D1 = len(c.RowIDs)
	sc.r = &c
	return sc
}

// scoreRatings measures fit m of scenario sc.
func scoreRatings(sc *ratingsScenario, m *ratings.Model, alpha, seconds float64) ratingsRun {
	ev := m.Evaluate(sc.r, sc.held)
	run := ratingsRun{scenario: sc.name, alpha: alpha, rank: m.Options.Rank, iterations: m.Result.Iterations,
		seconds: seconds, testRMSE: ev.RMSE, biasRMSE: ev.BiasRMSE}
	if m.Chosen != nil {
		run.ridge = m.Chosen.Best.Ridge
	}
	t := 0 // index into m.Train: the training ratings in order
	for k, h := range sc.held {
		if h {
			continue
		}
		if sc.junk[k] {
			run.junk++
		}
		if m.IsOutlier(t) {
			run.flagged++
			if sc.junk[k] {
				run.correct++
			}
		}
		t++
	}
	run.precision, run.recall = math.NaN(), math.NaN()
	if run.flagged > 0 {
		run.precision = float64(run.correct) / float64(run.flagged)
	}
	if run.junk > 0 {
		run.recall = float64(run.correct) / float64(run.junk)
	}
	return run
}

// targetMean is the mean prediction of m for every real user of r with a
// fitted row on the target columns of r (NaN without targets).
func targetMean(m *ratings.Model, r *triples.Ratings, targets []int) float64 {
	sum, n := 0.0, 0
	for _, rowID := range r.RowIDs {
		for _, j := range targets {
			i, jj, okI, okJ := m.Index(rowID, r.ColIDs[j])
			if okI && okJ {
				sum += m.Predict(i, jj)
				n++
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// writeRatings writes the tables, the plots and the summary.
func writeRatings(w *writer, src string, runs []ratingsRun, curve *ratings.Choice) error {
	rows := make([][]string, len(runs))
	for k, x := range runs {
		rows[k] = []string{x.scenario, x.method, num(x.alpha), itoa(x.junk), itoa(x.rank), num(x.ridge), itoa(x.iterations), num(x.seconds),
			num(x.testRMSE), num(x.biasRMSE), itoa(x.flagged), itoa(x.correct), num(x.precision), num(x.recall), num(x.targetMean)}
	}
	if err := w.writeCSV("ratings.csv", []string{"scenario", "method", "alpha", "injected", "rank", "ridge", "iterations", "seconds",
		"heldout_rmse", "bias_rmse", "set_aside", "set_aside_injected", "precision", "recall", "target_mean"}, rows); err != nil {
		return err
	}
	if err := w.writeFile("ratings.png", func(f io.Writer) error { return ratingsBars(runs).writePNG(f) }); err != nil {
		return err
	}
	if curve != nil {
		var crow [][]string
		for _, c := range curve.Candidates {
			crow = append(crow, []string{itoa(c.Rank), num(c.Ridge), num(c.RMSE), itoa(c.Iterations), num(c.Seconds)})
		}
		if err := w.writeCSV("ratings_curve.csv", []string{"rank", "ridge", "validation_rmse", "iterations", "seconds"}, crow); err != nil {
			return err
		}
		byRank, byRidge := curveLines(curve)
		for _, c := range []*chart{byRank, byRidge} {
			if len(c.series[0].xs) < 2 {
				continue
			}
			name := map[*chart]string{byRank: "ratings_rank.png", byRidge: "ratings_ridge.png"}[c]
			if err := w.writeFile(name, c.writePNG); err != nil {
				return err
			}
		}
	}
	w.sumf("ratings: %s; held-out RMSE of the clean ratings (rank and λ chosen by validation):", src)
	for _, x := range runs {
		w.sumf("  %-8s α = %-4g RMSE %.4f (biases alone %.4f), rank %d λ %g, set aside %d: precision %s recall %s, targets %.3f, %.1f s",
			x.scenario, x.alpha, x.testRMSE, x.biasRMSE, x.rank, x.ridge, x.flagged, pct(x.precision), pct(x.recall), x.targetMean, x.seconds)
	}
	return nil
}

// pct formats a fraction as a percentage, "–" for NaN.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

// curveLines are the validation curves of a choice: RMSE against rank at
// the chosen λ, and against λ at the rank where the λ were compared (the
// first candidate's: Select tries every λ at one rank first).
func curveLines(c *ratings.Choice) (byRank, byRidge *chart) {
	rankRidge := c.Candidates[0].Rank
	var rs, rr, ls, lr []float64
	for _, x := range c.Candidates {
		if x.Ridge == c.Best.Ridge && !slices.Contains(rs, float64(x.Rank)) {
			rs, rr = append(rs, float64(x.Rank)), append(rr, x.RMSE)
		}
		if x.Rank == rankRidge {
			ls, lr = append(ls, x.Ridge), append(lr, x.RMSE)
		}
	}
	sortXY(rs, rr)
	sortXY(ls, lr)
	byRank = &chart{title: fmt.Sprintf("validation RMSE against rank (λ = %g)", c.Best.Ridge), xlabel: "rank", ylabel: "validation RMSE",
		logX: true, series: []series{{name: "clean, α = 0", xs: rs, ys: rr, points: true}}}
	byRidge = &chart{title: fmt.Sprintf("validation RMSE against λ (rank %d)", rankRidge), xlabel: "ridge λ", ylabel: "validation RMSE",
		logX: true, series: []series{{name: "clean, α = 0", xs: ls, ys: lr, points: true}}}
	return byRank, byRidge
}

// sortXY sorts the points (xs[k], ys[k]) by x.
func sortXY(xs, ys []float64) {
	idx := make([]int, len(xs))
	for k := range idx {
		idx[k] = k
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	x2, y2 := slices.Clone(xs), slices.Clone(ys)
	for k, i := range idx {
		xs[k], ys[k] = x2[i], y2[i]
	}
}

// ratingsBars plots the held-out RMSE of every scenario: the bias model
// of the α = 0 fit, the α = 0 fit and the α > 0 fit.
func ratingsBars(runs []ratingsRun) *chart {
	c := &chart{title: "held-out RMSE on clean ratings", ylabel: "RMSE"}
	bias := series{name: "biases alone", noLine: true}
	var fits []series // one per method and α, in the order of runs
	at := map[string]int{}
	var ticks []plot.Tick
	for _, x := range runs {
		if len(ticks) == 0 || ticks[len(ticks)-1].Label != x.scenario {
			ticks = append(ticks, plot.Tick{Value: float64(len(ticks)), Label: x.scenario})
			bias.xs, bias.ys = append(bias.xs, float64(len(ticks)-1)-0.3), append(bias.ys, x.biasRMSE)
		}
		name := fmt.Sprintf("%s, α = %g", x.method, x.alpha)
		k, ok := at[name]
		if !ok {
			k, at[name] = len(fits), len(fits)
			fits = append(fits, series{name: name, noLine: true})
		}
		s := &fits[k]
		s.xs, s.ys = append(s.xs, float64(len(ticks)-1)-0.15+0.1*float64(k)), append(s.ys, x.testRMSE)
	}
	c.series, c.xticks = append([]series{bias}, fits...), ticks
	return c
}
