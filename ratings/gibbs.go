package ratings

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/sample"
	"github.com/rpca-gd/rpca/internal/sparsify"
)

// Defaults of [Gibbs].
const (
	DefaultGibbsRank = 10
	// DefaultGibbsSamples is the number of sweeps for up to
	// DefaultGibbsWork/DefaultGibbsSamples training ratings; more ratings
	// get proportionally fewer sweeps, down to DefaultGibbsMinSamples: the
	// posterior narrows as ratings accumulate, so fewer draws average
	// out its spread.
	DefaultGibbsSamples    = 200
	DefaultGibbsMinSamples = 40
	DefaultGibbsWork       = 8e8 // training ratings × sweeps
	DefaultGibbsBurnIn     = 40
	// DefaultGibbsKeepBytes bounds the model's factors when Gibbs.Keep
	// is 0: every second draw after the burn-in is kept unless their
	// factors would take more bytes than this.
	DefaultGibbsKeepBytes   = 256 << 20
	DefaultGibbsCalibration = 0.05
	DefaultGibbsTail        = 5
)

// gibbsCalibrationStart is the first sweep whose predictions enter the
// noise calibration: the chain leaves its start in fewer.
const gibbsCalibrationStart = 20

// Gibbs configures the Bayesian fit of the biased low-rank model
// r̂_ij = μ + b_i + c_j + p_i·q_j (an Estimator). The model is the one
// alternating least squares fits; instead of one point estimate with a
// ridge λ chosen by validation, a Gibbs sampler draws the factors and
// biases from their posterior under Gaussian priors whose means and
// precisions are drawn too (Salakhutdinov and Mnih's Bayesian
// probabilistic matrix factorisation, with a diagonal prior covariance),
// and the model predicts the posterior mean, averaged over the draws.
// So there is no λ to choose: the priors learn the regularisation.
//
// The noise precision τ is not drawn from the training residuals, which
// the factors fit too closely; it is calibrated on a Calibration share of
// the training ratings left out of the burn-in: τ⁻¹ is their mean square
// error under the running posterior mean, less the posterior variance of
// the predictions (a held-out rating's error is noise plus the
// posterior's own spread). After the burn-in those ratings rejoin the
// fit and τ stays fixed.
//
// With Options.Alpha > 0, Algorithm 2's sparse estimator sets ratings
// aside after every sweep, with counts per line (⌊α·n⌋ of a line's n
// ratings, γ = 1): they leave the next sweep's draws and the noise
// estimates, and the model's sparse part is T applied to the residuals
// of the posterior mean. The noise is then heavy-tailed too (Tail), so
// that junk on lines too short for a count of their own weighs little.
type Gibbs struct {
	// Samples is the number of sweeps (one draw of every row, then every
	// column); 0 means DefaultGibbsSamples, or for n training ratings
	// above DefaultGibbsWork/DefaultGibbsSamples, DefaultGibbsWork/n but
	// at least DefaultGibbsMinSamples.
	Samples int
	// BurnIn sweeps come first and are not averaged; 0 means
	// DefaultGibbsBurnIn, or, when Samples is below 80, 20 plus a third
	// of the sweeps after those 20. It must exceed the 20 sweeps the
	// calibration skips.
	BurnIn int
	// Keep is how many draws after the burn-in, evenly spaced, the model
	// averages (its factors hold them side by side, rank·Keep columns);
	// at most Samples − BurnIn. 0 means every second one, or as many as
	// fit in DefaultGibbsKeepBytes of factors.
	Keep int
	// Calibration is the share of the training ratings that sets τ; 0
	// means DefaultGibbsCalibration.
	Calibration float64
	// Tail is the degrees of freedom ν of the Student-t noise of the
	// robust fit (Options.Alpha > 0), as a scale mixture of normals: a
	// rating's noise precision is τ·w with w ~ Gamma(ν/2, rate ν/2) a
	// priori, and every second sweep draws w from its conditional
	// Gamma((ν+1)/2, rate (ν + τe²)/2) given the rating's residual e, so a
	// rating far from the fit weighs little however short its lines; τ is
	// then calibrated as the scale of a t distribution. 0 means
	// DefaultGibbsTail; math.Inf(1) keeps the noise normal; below 1 (tails
	// heavier than Cauchy's) is an error, as a weight's mean (ν+1)/ν for a
	// fitted rating has no bound there. Unused with Alpha = 0.
	Tail float64
}

// GibbsParams are the effective parameters of a Gibbs fit
// (rpca.Result.Params of the model).
type GibbsParams struct {
	Rank        int     `json:"rank"`
	Samples     int     `json:"samples"`
	BurnIn      int     `json:"burn_in"`
	Keep        int     `json:"keep"`
	Calibration float64 `json:"calibration"`
	// CalibrationRatings is the number of ratings left out of the
	// burn-in to set τ, and NoiseSD the noise standard deviation 1/√τ
	// they gave, in the units of the ratings.
	CalibrationRatings int     `json:"calibration_ratings"`
	NoiseSD            float64 `json:"noise_sd"`
	// Tail is the degrees of freedom of the Student-t noise (Gibbs.Tail),
	// 0 when the noise was normal; NoiseSD is then its scale 1/√τ.
	Tail float64 `json:"tail,omitempty"`
}

// ErrGibbs marks bad Gibbs settings.
var ErrGibbs = errors.New("ratings: bad Gibbs settings")

// ErrTooFewRatings marks training ratings too few for the Gibbs fit: it
// needs two distinct rows and columns, and sets at least
// gibbsMinCalibration ratings aside, no more than half of them.
var ErrTooFewRatings = errors.New("ratings: too few training ratings for the Gibbs fit")

// gibbsMaxCorrection bounds the calibration's correction: τ is at most
// this many times 1/MSE. The posterior variance it subtracts counts the
// spread of directions the ratings do not need (a model of higher rank
// than the data), which does not raise the error of the mean, so the
// uncorrected rule overstates τ on ratings of low rank (measured in
// docs/cli.md).
const gibbsMaxCorrection = 1.5

// gibbsMinCalibration is the least number of ratings that calibrate τ.
const gibbsMinCalibration = 10

// withDefaults returns g with zero fields replaced by the defaults for n
// training ratings, checked.
func (g Gibbs) withDefaults(n int) (Gibbs, error) {
	if g.Samples == 0 {
		g.Samples = DefaultGibbsSamples
		if float64(n)*DefaultGibbsSamples > DefaultGibbsWork {
			g.Samples = max(DefaultGibbsMinSamples, int(DefaultGibbsWork/float64(n)))
		}
	}
	g.BurnIn = cmp.Or(g.BurnIn, min(DefaultGibbsBurnIn, gibbsCalibrationStart+max(0, g.Samples-gibbsCalibrationStart)/3))
	g.Calibration = cmp.Or(g.Calibration, DefaultGibbsCalibration)
	g.Tail = cmp.Or(g.Tail, DefaultGibbsTail)
	switch {
	case g.Samples < 0 || g.BurnIn < 0 || g.Keep < 0:
		return g, fmt.Errorf("%w: Samples %d, BurnIn %d and Keep %d must be positive", ErrGibbs, g.Samples, g.BurnIn, g.Keep)
	case g.BurnIn <= gibbsCalibrationStart:
		return g, fmt.Errorf("%w: BurnIn %d must exceed %d, the sweeps the calibration of τ skips", ErrGibbs, g.BurnIn, gibbsCalibrationStart)
	case g.BurnIn >= g.Samples:
		return g, fmt.Errorf("%w: BurnIn %d must be below Samples %d", ErrGibbs, g.BurnIn, g.Samples)
	case g.Keep > g.Samples-g.BurnIn:
		return g, fmt.Errorf("%w: Keep %d is more than the %d draws after the burn-in", ErrGibbs, g.Keep, g.Samples-g.BurnIn)
	case !(g.Calibration > 0 && g.Calibration < 0.5):
		return g, fmt.Errorf("%w: Calibration %v must be in (0, 0.5)", ErrGibbs, g.Calibration)
	case !(g.Tail >= 1):
		return g, fmt.Errorf("%w: Tail %v must be at least 1, the Cauchy distribution (+Inf for normal noise)", ErrGibbs, g.Tail)
	}
	return g, nil
}

// gibbsLines are the ratings of each row (or column) of the training
// set: line l has entries ptr[l]:ptr[l+1], each the index of the other
// side, the rating minus μ, the rating's training index (key), whether
// the sweep leaves it out (skip, set by mark) and, with Student-t noise,
// the square root of its weight w (sw, set by mark; nil otherwise).
type gibbsLines struct {
	ptr   []int
	other []int32
	val   []float64
	key   []int32
	skip  []bool
	sw    []float32
}

// mark sets the skip flags of the entries that a sweep leaves out: those
// T has set aside (out, by training index) and, with burn, the
// calibration ratings (cal); and, when sw (√w by training index) is not
// nil, the entries' √w.
func (g *gibbsLines) mark(out, cal []bool, burn bool, sw []float32, workers int) {
	if sw != nil && g.sw == nil {
		g.sw = make([]float32, len(g.key))
	}
	kernels.ParallelFor(len(g.key), workers, 1<<16, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			k := g.key[p]
			g.skip[p] = out[k] || burn && cal[k]
			if sw != nil {
				g.sw[p] = sw[k]
			}
		}
	})
}

// newGibbsLines groups the ratings by line (line(k)).
func newGibbsLines(n int, line, other []int, vals []float64, mu float64) gibbsLines {
	g := gibbsLines{ptr: make([]int, n+1), other: make([]int32, len(vals)), val: make([]float64, len(vals)), key: make([]int32, len(vals)), skip: make([]bool, len(vals))}
	for k := range vals {
		g.ptr[line[k]+1]++
	}
	for l := range n {
		g.ptr[l+1] += g.ptr[l]
	}
	next := append([]int(nil), g.ptr[:n]...)
	for k, v := range vals {
		p := next[line[k]]
		g.other[p], g.val[p], g.key[p] = int32(other[k]), v-mu, int32(k)
		next[line[k]]++
	}
	return g
}

// gibbsGamma is γ of the sparse estimator T_{γα} of the Gibbs fit: 1, so
// that α is the largest share of a line's ratings set aside. The theory's
// γ > 1 (Theorem 4's 3, rpca.GD's default for partial observations) sets
// aside real ratings that the posterior mean needs (measured in
// docs/experiments.md).
const gibbsGamma = 1

// gibbsOutliers is Algorithm 2's sparse estimator T_{γα} (lines 1 and 6)
// on the residuals of the training ratings, with the fraction taken of
// each line's own ratings as rpca.GD.PerLine does: a rating is set aside
// when its residual is among the ⌊γα·n⌋ largest in magnitude of both its
// row's n ratings and its column's.
type gibbsOutliers struct {
	t    *sparsify.Observed
	pat  *observed.Matrix // the training ratings' pattern; Val holds their training indices
	abs  []float64        // |residual| in CSR order
	keep []bool           // T's selection in CSR order
	out  []bool           // by training index: set aside
	frac float64
}

// newGibbsOutliers returns T_{γα} for the pattern of the training
// ratings grouped by row and by column: the rows' CSR arrays come from
// visiting the columns in order, so each row's columns arrive sorted and
// nothing is sorted again.
func newGibbsOutliers(rowLines, colLines *gibbsLines, alpha float64, workers int) (*gibbsOutliers, error) {
	d1, d2, n := len(rowLines.ptr)-1, len(colLines.ptr)-1, len(rowLines.key)
	rowPtr := slices.Clone(rowLines.ptr)
	next := slices.Clone(rowPtr[:d1])
	colIdx, idx := make([]int32, n), make([]float64, n)
	for j := range d2 {
		for p := colLines.ptr[j]; p < colLines.ptr[j+1]; p++ {
			i := colLines.other[p]
			q := next[i]
			next[i]++
			colIdx[q], idx[q] = int32(j), float64(colLines.key[p]) // exact: n < 2³¹
		}
	}
	pat, err := observed.FromCSR(d1, d2, rowPtr, colIdx, idx)
	if err != nil {
		return nil, err
	}
	return &gibbsOutliers{t: sparsify.NewObserved(pat, workers), pat: pat,
		abs: make([]float64, n), keep: make([]bool, n), out: make([]bool, n), frac: gibbsGamma * alpha}, nil
}

// update sets aside the ratings whose residuals res (by training index)
// T_{γα} selects.
func (o *gibbsOutliers) update(res []float64) error {
	for q, k := range o.pat.Val {
		o.abs[q] = math.Abs(res[int(k)])
	}
	if err := o.t.ApplyFraction(o.abs, o.frac, o.keep); err != nil {
		return err
	}
	for q, k := range o.pat.Val {
		o.out[int(k)] = o.keep[q]
	}
	return nil
}

// sparse returns the ratings set aside as a matrix of their residuals res.
func (o *gibbsOutliers) sparse(res []float64) *rpca.Sparse {
	p := o.pat
	s := &rpca.Sparse{Rows: p.Rows, Cols: p.Cols, RowPtr: make([]int, p.Rows+1)}
	for i := range p.Rows {
		for q := p.RowPtr[i]; q < p.RowPtr[i+1]; q++ {
			if k := int(p.Val[q]); o.out[k] {
				s.ColIdx, s.Val = append(s.ColIdx, p.ColIdx[q]), append(s.Val, res[k])
			}
		}
		s.RowPtr[i+1] = len(s.Val)
	}
	return s
}

// gibbsPrior is the prior of one side's factor rows [bias, f_1..f_r]:
// independent normals per coordinate with these means and precisions.
// (cov holds the reciprocals of prec).
type gibbsPrior struct{ mean, prec, cov []float64 }

// gibbsSide is one side's factor rows, k1 = rank + 1 values each, the
// bias first.
type gibbsSide struct {
	f     []float64
	prior gibbsPrior
}

// gibbsWork is one worker's scratch space for drawing lines.
type gibbsWork struct {
	g, b, x, z []float64
	gw         []float64 // (k1+1)², the Gram matrix of rows
	rows       []float64 // a line's ratings as rows of width k1 + 1
	pcg        *rand.PCG
	rng        *rand.Rand
}

// fitGibbs fits m (from trainingSet, with the bias baseline fitted) by
// Gibbs sampling and sets m.U, m.V and m.Result.
func fitGibbs(ctx context.Context, m *Model, opt Options, est *Gibbs) error {
	start := time.Now()
	g, err := est.withDefaults(m.Train.Len())
	if err != nil {
		return err
	}
	if m.Train.Len() > observed.MaxEntries { // the lines index ratings by int32
		return fmt.Errorf("%w: %d training ratings, more than the Gibbs fit's %d", rpca.ErrBadInput, m.Train.Len(), observed.MaxEntries)
	}
	c, err := newGibbsChain(m, opt, g)
	if err != nil {
		return err
	}
	for s := range c.g.Samples {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.sweep(s); err != nil {
			return err
		}
		if cb := opt.Settings.Callback; cb != nil {
			cb(gibbsRecord(s, start))
		}
	}
	return c.finish(m, start)
}

// gibbsChain is the state of one Gibbs fit: the training ratings scaled
// by unit, their lines, the two sides' draws, T's selection, the noise and
// the kept draws.
type gibbsChain struct {
	g                  Gibbs
	tr                 *formats.Triplets // the training ratings divided by unit
	unit, mu, scale    float64           // unit (a power of two), μ/unit and the RMS deviation (see newGibbsChain)
	rank, k1           int
	seed               uint64
	workers            int
	nCal               int
	cal, out           []bool // by training index: calibration ratings, and those T has set aside
	rowLines, colLines gibbsLines
	outl               *gibbsOutliers // nil with α = 0
	rows, cols         *gibbsSide
	workRows, workCols []float64 // the sides' buffers for draws that are not kept
	keptRows, keptCols [][]float64
	every              int // sweeps between kept draws
	res, resSum        []float64
	noise              *gibbsNoise
	tau                float64
	tn                 tNoise
	sw                 []float32 // by training index, √w of the t noise's weights; nil: normal noise
	rng                *rand.Rand
	pool               sync.Pool
}

// newGibbsChain sets up the chain for m's training ratings: scaled,
// grouped in lines, T's first selection with α > 0 (Algorithm 2, line 1),
// and the start from the bias model.
func newGibbsChain(m *Model, opt Options, g Gibbs) (*gibbsChain, error) {
	// The chain runs on the ratings divided by unit, a power of two at
	// or above their largest magnitude, so that no square or precision
	// overflows or underflows however the ratings are scaled; the factors,
	// the sparse part and τ are scaled back at the end (exactly: a power
	// of two).
	tr, unit := scaledByPowerOfTwo(m.Train)
	c := &gibbsChain{tr: tr, unit: unit, mu: m.TrainMean / unit, rank: opt.Rank, k1: opt.Rank + 1,
		seed: opt.Settings.Seed, workers: opt.Settings.Workers, res: make([]float64, tr.Len()), resSum: make([]float64, tr.Len())}
	d1, d2, k1 := tr.D1, tr.D2, c.k1
	if g.Keep == 0 {
		g.Keep = max(1, min((g.Samples-g.BurnIn)/2, DefaultGibbsKeepBytes/(8*(d1+d2)*c.rank)))
	}
	c.g, c.every = g, (g.Samples-g.BurnIn)/g.Keep
	c.nCal = max(gibbsMinCalibration, int(math.Round(g.Calibration*float64(tr.Len()))))
	if 2*c.nCal > tr.Len() {
		return nil, fmt.Errorf("%w: %d, and it sets %d aside to calibrate the noise (use alternating least squares with a given rank)", ErrTooFewRatings, tr.Len(), c.nCal)
	}
	c.cal = sample.Subset(rand.New(rand.NewPCG(c.seed, 0x61bb5)), tr.Len(), c.nCal)
	var wg sync.WaitGroup
	wg.Go(func() { c.rowLines = newGibbsLines(d1, tr.Row, tr.Col, tr.Val, c.mu) })
	c.colLines = newGibbsLines(d2, tr.Col, tr.Row, tr.Val, c.mu)
	wg.Wait()
	// With α > 0, T_{γα} sets ratings aside, first on the residuals of
	// the bias model (Algorithm 2, line 1), then after every sweep on
	// those of its draw (line 6); they leave the lines of the next sweep
	// and the noise estimates.
	if opt.Alpha == 0 {
		c.out = make([]bool, tr.Len())
	} else {
		var err error
		if c.outl, err = newGibbsOutliers(&c.rowLines, &c.colLines, opt.Alpha, c.workers); err != nil {
			return nil, err
		}
		c.out = c.outl.out
		for k, v := range tr.Val {
			c.res[k] = v - m.Biases.Predict(tr.Row[k], tr.Col[k])/unit
		}
		if err := c.outl.update(c.res); err != nil {
			return nil, err
		}
	}
	// scale is the root mean square rating deviation, the unit of the
	// hyperpriors and of the start, so that the fit follows the ratings'
	// scale (a factor coordinate has the unit √scale, a bias scale); the
	// floor keeps ratings that are all equal finite.
	for _, v := range tr.Val {
		c.scale += (v - c.mu) * (v - c.mu)
	}
	c.scale = math.Max(math.Sqrt(c.scale/float64(tr.Len())), math.Max(1e-9*math.Abs(c.mu), 1e-150))
	// The chain starts from the bias model and small random factors.
	c.rng = rand.New(rand.NewPCG(c.seed, 0x9e3779b97f4a7c15))
	c.rows = newGibbsSide(c.rng, m.Biases.Row, k1, unit, c.scale)
	c.cols = newGibbsSide(c.rng, m.Biases.Col, k1, unit, c.scale)
	c.workRows, c.workCols = c.rows.f, c.cols.f
	c.pool.New = func() any {
		pcg := rand.NewPCG(0, 0)
		return &gibbsWork{g: make([]float64, k1*k1), b: make([]float64, k1), x: make([]float64, k1), z: make([]float64, k1),
			gw: make([]float64, (k1+1)*(k1+1)), rows: make([]float64, 0, 256*(k1+1)), pcg: pcg, rng: rand.New(pcg)}
	}
	nu := 0.0 // the t noise's degrees of freedom; 0: normal noise
	if opt.Alpha > 0 && !math.IsInf(g.Tail, 1) {
		nu = g.Tail
		c.tn = newTNoise(nu)
		c.sw = make([]float32, tr.Len())
		for k := range c.sw {
			c.sw[k] = 1
		}
	}
	clip := func(x float64) float64 { return m.Clip(x*unit) / unit }
	c.noise = newGibbsNoise(c.cal, c.nCal, c.scale, clip, nu)
	c.tau = 1 / (c.scale * c.scale)
	return c, nil
}

// scaledByPowerOfTwo returns a copy of tr with its values divided by
// unit, the least power of two at or above their largest magnitude (1
// when they are all 0).
func scaledByPowerOfTwo(tr *formats.Triplets) (*formats.Triplets, float64) {
	var maxAbs float64
	for _, v := range tr.Val {
		maxAbs = math.Max(maxAbs, math.Abs(v))
	}
	unit := 1.0
	if maxAbs > 0 {
		_, e := math.Frexp(maxAbs)
		unit = math.Ldexp(1, e)
	}
	scaled := *tr
	scaled.Val = make([]float64, len(tr.Val))
	for k, v := range tr.Val {
		scaled.Val[k] = v / unit
	}
	return &scaled, unit
}

// newGibbsSide returns the start of one side: each line's bias (divided
// by unit) and k1 − 1 factor coordinates of standard deviation 0.1·√scale
// drawn from rng. Its prior is drawn before the first draw of the lines.
func newGibbsSide(rng *rand.Rand, bias []float64, k1 int, unit, scale float64) *gibbsSide {
	n := len(bias)
	s := &gibbsSide{f: make([]float64, n*k1), prior: gibbsPrior{make([]float64, k1), make([]float64, k1), make([]float64, k1)}}
	for l := range n {
		s.f[l*k1] = bias[l] / unit
		for a := 1; a < k1; a++ {
			s.f[l*k1+a] = 0.1 * math.Sqrt(scale) * rng.NormFloat64()
		}
	}
	return s
}

// sweep runs sweep s: the priors, every row, every column, and after
// them T's selection, the t weights and the noise as their schedules ask.
func (c *gibbsChain) sweep(s int) error {
	g, d1, d2, k1 := c.g, c.tr.D1, c.tr.D2, c.k1
	if s == 0 || s == g.BurnIn || c.outl != nil {
		// A sweep leaves out the ratings T has set aside and, during
		// the burn-in, the calibration ratings; it takes the t weights
		// when they are new.
		var fresh []float32
		if s%tNoiseEvery == 1 || s == 0 {
			fresh = c.sw
		}
		c.rowLines.mark(c.out, c.cal, s < g.BurnIn, fresh, c.workers)
		c.colLines.mark(c.out, c.cal, s < g.BurnIn, fresh, c.workers)
	}
	drawPrior(c.rng, c.rows, c.scale)
	drawPrior(c.rng, c.cols, c.scale)
	// A row's draw does not depend on its previous value, so each
	// sweep draws into a buffer of its own: a new one when the draw
	// is kept, else the working one.
	// (The columns' buffer changes only after the rows are drawn from
	// the columns' last draw.)
	keep := s >= g.BurnIn && (s-g.BurnIn)%c.every == c.every-1 && len(c.keptRows) < g.Keep
	c.rows.f = c.workRows
	if keep {
		c.rows.f = make([]float64, d1*k1)
		c.keptRows = append(c.keptRows, c.rows.f)
	}
	skipping := s < g.BurnIn || c.outl != nil // else nothing is left out
	okRows := drawSide(&c.pool, c.workers, c.rows, c.cols, c.rowLines, skipping, k1, c.tau, c.seed, uint64(2*s))
	c.cols.f = c.workCols
	if keep {
		c.cols.f = make([]float64, d2*k1)
		c.keptCols = append(c.keptCols, c.cols.f)
	}
	if !okRows || !drawSide(&c.pool, c.workers, c.cols, c.rows, c.colLines, skipping, k1, c.tau, c.seed, uint64(2*s+1)) {
		return fmt.Errorf("%w: Gibbs sweep %d met a posterior precision that is not positive definite in floating point (τ = %g)", rpca.ErrDiverged, s+1, c.tau)
	}
	moreT := c.outl != nil && s < g.Samples-1 // T for the next sweep
	if s < g.BurnIn || keep || moreT {
		gibbsResiduals(c.res, c.tr, c.mu, c.rows.f, c.cols.f, k1, c.workers)
	}
	if keep {
		for k, e := range c.res {
			c.resSum[k] += e
		}
	}
	if moreT {
		if err := c.outl.update(c.res); err != nil {
			return err
		}
		if c.sw != nil && s%tNoiseEvery == 0 {
			c.tn.draw(c.sw, c.res, c.tau, c.seed, uint64(s), c.workers)
		}
	}
	if s < g.BurnIn { // the noise precision: drawn, then calibrated, then fixed
		c.tau = c.noise.step(s, c.res, c.tr.Val, c.out, c.rng)
	}
	return nil
}

// finish sets m's factors, the posterior mean over the kept draws scaled
// back to the ratings' units, and its result, with the sparse part T
// gives on the posterior mean's residuals when α > 0.
func (c *gibbsChain) finish(m *Model, start time.Time) error {
	d1, d2, unit := c.tr.D1, c.tr.D2, c.unit
	U := stackDraws(c.keptRows, c.rank, 1, c.mu, false, c.workers)
	V := stackDraws(c.keptCols, c.rank, 1/float64(c.g.Keep), 0, true, c.workers)
	if unit != 1 { // U = [unit·p…, unit·(μ + b̄), 1], V = [q…/K, 1, unit·c̄]
		for i := range d1 {
			u := U.RawRowView(i)
			for a := range len(u) - 1 {
				u[a] *= unit
			}
		}
		for j := range d2 {
			v := V.RawRowView(j)
			v[len(v)-1] *= unit
		}
	}
	g := c.g
	m.U, m.V = U, V
	m.Result = &rpca.Result{
		Method: "gibbs", U: U, V: V, S: &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)},
		Iterations: g.Samples, Elapsed: time.Since(start), Stop: rpca.StopSchedule, DataScale: 1,
		Params: &GibbsParams{Rank: c.rank, Samples: g.Samples, BurnIn: g.BurnIn, Keep: g.Keep, Calibration: g.Calibration,
			CalibrationRatings: c.nCal, NoiseSD: unit / math.Sqrt(c.tau), Tail: c.tn.nu},
	}
	// The residual of the posterior mean, in the ratings' units; with
	// α > 0 the sparse part is T_{γα} on it.
	var num, den float64
	res := c.res
	for k, e := range c.resSum {
		e /= float64(len(c.keptRows))
		res[k] = e * unit
		num += e * e
		den += c.tr.Val[k] * c.tr.Val[k]
	}
	m.Result.Residual = math.Sqrt(num / den)
	if c.outl != nil {
		if err := c.outl.update(res); err != nil {
			return err
		}
		m.Result.S = c.outl.sparse(res)
	}
	return nil
}

// gibbsNoise sets the noise precision τ during the burn-in: drawn from
// the training residuals for the first gibbsCalibrationStart sweeps, then
// calibrated on the calibration ratings left out of them (see Gibbs).
type gibbsNoise struct {
	cal      []bool    // by training index: a calibration rating
	idx      []int     // the calibration ratings
	mean, sq []float64 // running moments of their predictions (decay 0.9)
	errs     []float64 // their squared errors, for the t scale
	scale    float64   // the ratings' RMS deviation (fitGibbs)
	nu       float64   // the t noise's degrees of freedom; 0: normal
	clip     func(float64) float64
}

func newGibbsNoise(cal []bool, n int, scale float64, clip func(float64) float64, nu float64) *gibbsNoise {
	nz := &gibbsNoise{cal: cal, idx: make([]int, 0, n), mean: make([]float64, n), sq: make([]float64, n), scale: scale, clip: clip, nu: nu}
	for k, in := range cal {
		if in {
			nz.idx = append(nz.idx, k)
		}
	}
	return nz
}

// step returns τ after burn-in sweep s, from the residuals res of its
// draw (ratings vals minus their predictions), without the ratings T
// has set aside (out). With t noise the calibration takes the t scale of
// the calibration errors instead of their mean square; the draws before
// it ignore the t weights (the scale mixture's conditional would weigh
// each square by its w, which raises τ with the weights it sets: worse on
// the ratings experiment, docs/cli.md).
func (nz *gibbsNoise) step(s int, res, vals []float64, out []bool, rng *rand.Rand) float64 {
	var mse, spread float64
	var n int
	nz.errs = nz.errs[:0]
	for c, k := range nz.idx {
		if out[k] {
			continue
		}
		v := vals[k] - res[k]
		const decay = 0.9
		if s == 0 {
			nz.mean[c], nz.sq[c] = v, v*v
		}
		nz.mean[c] = decay*nz.mean[c] + (1-decay)*v
		nz.sq[c] = decay*nz.sq[c] + (1-decay)*v*v
		if s >= gibbsCalibrationStart {
			pm := nz.clip(nz.mean[c])
			e2 := (vals[k] - pm) * (vals[k] - pm)
			mse += e2
			spread += max(nz.sq[c]-nz.mean[c]*nz.mean[c], 0)
			nz.errs = append(nz.errs, e2)
			n++
		}
	}
	if s >= gibbsCalibrationStart {
		mse, spread = mse/float64(max(n, 1)), spread/float64(max(n, 1))
		if nz.nu > 0 {
			mse = tScale2(nz.errs, nz.nu, mse)
		}
		return 1 / math.Max(mse-spread, math.Max(mse/gibbsMaxCorrection, 1e-18*nz.scale*nz.scale))
	}
	var sse float64
	var nTrain int
	for k, e := range res {
		if !out[k] && !nz.cal[k] {
			sse, nTrain = sse+e*e, nTrain+1
		}
	}
	return distuv.Gamma{Alpha: 1 + float64(nTrain)/2, Beta: nz.scale*nz.scale + sse/2, Src: rng}.Rand() // a Gamma(1, scale²) prior
}

// tScale2 returns the squared scale s² of a Student-t distribution with
// ν degrees of freedom fitted to the squared errors e2 by maximum
// likelihood, starting from start (their mean): the fixed point of
// s² = mean((ν+1)·e²/(ν + e²/s²)), the weighted mean square of the
// scale-mixture's expectation step.
func tScale2(e2 []float64, nu, start float64) float64 {
	s2 := start
	for range 30 {
		if !(s2 > 0) || len(e2) == 0 {
			return start
		}
		var t float64
		for _, e := range e2 {
			t += e * ((nu + 1) / (nu + e/s2)) // the weight first: ν may be near the largest float64
		}
		s2 = t / float64(len(e2))
	}
	return s2
}

// gibbsRecord is the progress record of sweep s: the sweep and the time.
func gibbsRecord(s int, start time.Time) rpca.Record {
	return rpca.Record{Iter: s + 1, Elapsed: time.Since(start), Residual: math.NaN(), FactorChange: math.NaN(), Error: math.NaN(), Validation: math.NaN()}
}

// gibbsResiduals sets res[k] to training rating k minus its prediction by
// the draw (rows, cols) and μ.
func gibbsResiduals(res []float64, tr *formats.Triplets, mu float64, rows, cols []float64, k1, workers int) {
	kernels.ParallelFor(len(res), workers, 1<<14, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			res[k] = tr.Val[k] - mu - gibbsPredict(rows[tr.Row[k]*k1:][:k1], cols[tr.Col[k]*k1:][:k1])
		}
	})
}

// stackDraws returns the factor of the posterior mean over the kept
// draws, n rows of rank·K + 2 columns: for each draw its factor rows
// times scale, then (for the row side, biasLast false) μ plus the mean
// bias and a column of ones, or (for the column side) ones and the mean
// bias. So [U]·[V]ᵀ = μ + b̄_i + c̄_j + (1/K)·Σ_s p_i⁽ˢ⁾·q_j⁽ˢ⁾.
func stackDraws(draws [][]float64, rank int, scale, mu float64, biasLast bool, workers int) *mat.Dense {
	n := len(draws[0]) / (rank + 1)
	out := mat.NewDense(n, len(draws)*rank+2, nil)
	kernels.ParallelFor(n, workers, 256, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			stackLine(out.RawRowView(l), draws, l, rank, scale, mu, biasLast)
		}
	})
	return out
}

// stackLine sets o to line l of stackDraws.
func stackLine(o []float64, draws [][]float64, l, rank int, scale, mu float64, biasLast bool) {
	k1, K := rank+1, len(draws)
	var bias float64
	for s, d := range draws {
		f := d[l*k1 : (l+1)*k1]
		bias += f[0]
		for a := 1; a < k1; a++ {
			o[s*rank+a-1] = scale * f[a]
		}
	}
	bias /= float64(K)
	if biasLast {
		o[K*rank], o[K*rank+1] = 1, bias
	} else {
		o[K*rank], o[K*rank+1] = mu+bias, 1
	}
}

// gibbsPredict is b_i + c_j + p_i·q_j for the rows [b_i, p_i] and
// [c_j, q_j].
func gibbsPredict(u, v []float64) float64 {
	s := u[0] + v[0]
	for a := 1; a < len(u); a++ {
		s += u[a] * v[a]
	}
	return s
}

// drawPrior draws the prior's means and precisions given the side's rows,
// under a normal–gamma hyperprior per coordinate: mean 0 with relative
// weight 1, precision Gamma(1, rate) with the rate scale² for the bias
// and scale for a factor coordinate (their units; see fitGibbs).
func drawPrior(rng *rand.Rand, s *gibbsSide, scale float64) {
	const shape0, weight0 = 1.0, 1.0
	k1 := len(s.prior.mean)
	n := len(s.f) / k1
	for a := range k1 {
		rate0 := scale
		if a == 0 {
			rate0 = scale * scale
		}
		var sum, sq float64
		old := s.prior.mean[a]
		for l := range n {
			x := s.f[l*k1+a]
			sum += x
			sq += (x - old) * (x - old)
		}
		prec := distuv.Gamma{Alpha: shape0 + float64(n+1)/2, Beta: rate0 + 0.5*(weight0*old*old+sq), Src: rng}.Rand()
		s.prior.prec[a], s.prior.cov[a] = prec, 1/prec
		s.prior.mean[a] = sum/(float64(n)+weight0) + rng.NormFloat64()/math.Sqrt((float64(n)+weight0)*prec)
	}
}

// drawSide draws every row of s given the other side o: row l is normal
// with precision Λ = diag(prior precisions) + τ·Σ x xᵀ and mean
// Λ⁻¹(diag(prior precisions)·prior mean + τ·Σ y x) over its ratings,
// where x = [1, f_other] and y is the rating minus μ and the other's
// bias. Each line draws from its own stream (seed, sweep, line), so the
// result does not depend on the number of workers. It reports false when
// a precision matrix failed its Cholesky factorisation (that row is left
// as it was).
func drawSide(pool *sync.Pool, workers int, s, o *gibbsSide, lines gibbsLines, skipping bool, k1 int, tau float64, seed, sweep uint64) bool {
	n := len(lines.ptr) - 1
	const chunk = 64
	var failed atomic.Bool
	kernels.ForEach((n+chunk-1)/chunk, workers, func(t int) {
		ws := pool.Get().(*gibbsWork)
		defer pool.Put(ws)
		for l := t * chunk; l < min(n, (t+1)*chunk); l++ {
			ws.pcg.Seed(seed^sweep<<32, uint64(l))
			lo, hi := lines.ptr[l], lines.ptr[l+1]
			var skip []bool
			if skipping {
				skip = lines.skip[lo:hi]
			}
			var sw []float32
			if lines.sw != nil {
				sw = lines.sw[lo:hi]
			}
			if !ws.drawLine(s.f[l*k1:(l+1)*k1], o.f, k1, lines.other[lo:hi], lines.val[lo:hi], skip, sw, s.prior, tau) {
				failed.Store(true)
			}
		}
	})
	return !failed.Load()
}

// drawLine draws one row dst (see drawSide) from the ratings of its line
// that skip does not mark (all of them when skip is nil), each with noise
// precision τ·sw² (τ when sw is nil); false when the precision matrix is
// not positive definite in floating point.
func (ws *gibbsWork) drawLine(dst, other []float64, k1 int, idx []int32, val []float64, skip []bool, sw []float32, prior gibbsPrior, tau float64) bool {
	// Each rating becomes a row [1, q_j, r − c_j] of width w = k1 + 1:
	// the Gram matrix of these rows holds the normal equations' matrix and,
	// in its last row, their right-hand side.
	w := k1 + 1
	n := len(idx)
	ws.rows = slices.Grow(ws.rows[:0], n*w)[:n*w]
	c := 0
	for e, j := range idx {
		if skip != nil && skip[e] {
			continue
		}
		o := other[int(j)*k1:][:k1]
		x := ws.rows[c*w:][:w]
		if sw == nil {
			x[0] = 1
			for a := 1; a < k1; a++ { // a loop, not copy: memmove's call costs more for ten values
				x[a] = o[a]
			}
			x[k1] = val[e] - o[0]
		} else { // the row times √w gives w·x·xᵀ in the Gram matrix
			r := float64(sw[e])
			x[0] = r
			for a := 1; a < k1; a++ {
				x[a] = r * o[a]
			}
			x[k1] = r * (val[e] - o[0])
		}
		c++
	}
	ws.rows = ws.rows[:c*w]
	if c < k1 {
		return ws.drawDual(dst, k1, prior, tau)
	}
	clear(ws.gw)
	kernels.Gram(ws.gw, ws.rows, w)
	for a := range k1 {
		for c := 0; c <= a; c++ {
			ws.g[a*k1+c] = tau * ws.gw[a*w+c]
		}
		ws.g[a*k1+a] += prior.prec[a]
		ws.b[a] = tau*ws.gw[k1*w+a] + prior.prec[a]*prior.mean[a]
	}
	if !kernels.CholeskySolve(ws.g, k1, ws.b, ws.x, 0) {
		return false
	}
	// x + L⁻ᵀz with z standard normal has covariance (L·Lᵀ)⁻¹ = Λ⁻¹.
	for a := range k1 {
		ws.z[a] = ws.rng.NormFloat64()
	}
	for i := k1 - 1; i >= 0; i-- {
		v := ws.z[i]
		for c := i + 1; c < k1; c++ {
			v -= ws.g[c*k1+i] * ws.z[c]
		}
		ws.z[i] = v / ws.g[i*k1+i]
	}
	for a := range k1 {
		dst[a] = ws.x[a] + ws.z[a]
	}
	return true
}

// drawDual is drawLine's draw for a line with fewer ratings n than
// unknowns k1, in the n×n dual form of Bhattacharya, Chakraborty and
// Mallick (2016): with D the prior covariance, Φ = √τ·X and
// α = √τ·(y − X·m₀), draw u ~ N(0, D) and δ ~ N(0, I_n), solve
// (Φ·D·Φᵀ + I)·w = α − Φu − δ; then m₀ + u + D·Φᵀ·w is a draw of the
// same normal as drawLine's, for an n×n factorisation instead of k1×k1.
func (ws *gibbsWork) drawDual(dst []float64, k1 int, prior gibbsPrior, tau float64) bool {
	w := k1 + 1
	n := len(ws.rows) / w
	st := math.Sqrt(tau)
	u := ws.z
	for a := range k1 {
		u[a] = ws.rng.NormFloat64() * math.Sqrt(prior.cov[a])
	}
	m := ws.g[:n*n] // n ≤ k1 − 1, so n² < k1²
	rhs, v := ws.b[:n], ws.x[:n]
	for t := range n {
		xt := ws.rows[t*w:][:k1]
		var xm, xu float64
		for a, v := range xt {
			xm += v * prior.mean[a]
			xu += v * u[a]
		}
		rhs[t] = st*(ws.rows[t*w+k1]-xm) - st*xu - ws.rng.NormFloat64()
		for c := 0; c <= t; c++ {
			xc := ws.rows[c*w:][:k1]
			var g float64
			for a, v := range xt {
				g += v * xc[a] * prior.cov[a]
			}
			m[t*n+c] = tau * g
		}
		m[t*n+t]++
	}
	if !kernels.CholeskySolve(m, n, rhs, v, 0) {
		return false
	}
	for a := range k1 {
		var s float64
		for t := range n {
			s += ws.rows[t*w+a] * v[t]
		}
		dst[a] = prior.mean[a] + u[a] + st*s*prior.cov[a]
	}
	return true
}
