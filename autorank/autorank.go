// Package autorank solves a problem whose rank is not known: it chooses
// the rank r of the low-rank part from the data and returns the answer at
// that rank (rpca decompose --rank auto).
//
// No single rule finds the rank of corrupted data. The spectrum of Y
// shows it only when the corruptions are small against the smallest
// component; a non-convex method run above the rank absorbs corruptions
// into the extra components, so the spectrum of its answer shows no gap;
// and a fit below the rank leaves a residual that hides the missed
// components among the corruptions. The choice therefore combines three
// rules, each checked by the next, and ends with an answer that
// rpca.Solve verified:
//
//  1. the spectrum: the last clear gap σ_k/σ_{k+1} ≥ MinGap among the
//     leading singular values of a sample of Y (of the observed entries
//     filled in, for partial data), the first guess;
//  2. the robust spectrum: after a fit at rank k, the same rule on
//     M + clip(Y − M), the residual clipped per column at three robust
//     spreads; clipping takes out the corruptions but leaves missed
//     components that cover many entries, and a larger rank found here
//     is solved again;
//  3. for fully observed data whose fit is not verified, principal
//     component pursuit (IALM, Options.Convex), whose nuclear norm finds
//     the rank itself (Candès, Li, Ma and Wright 2011); the rank is read
//     off the robust spectrum of its answer and the method is run again
//     at it. For partial data, where IALM does not apply, the rank grows
//     by the robust spectrum or by one until an answer is verified.
//
// The rank of an answer is the width of its factors, location included:
// rank 3 plus a constant offset is rank 4 (rpca.Solve removes the
// location and adds it back within the rank).
package autorank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/internal/spectrum"
)

// Defaults of [Options].
const (
	// DefaultMaxRank is the largest rank considered.
	DefaultMaxRank = 50
	// DefaultMinGap is the smallest ratio σ_k/σ_{k+1} taken as the end of
	// the low-rank spectrum.
	DefaultMinGap = 2
	// DefaultMaxSolves caps the number of solves.
	DefaultMaxSolves = 8
	// SampleCols and SampleRows bound the sample whose spectrum is
	// computed: evenly spaced columns and rows of Y.
	SampleCols = 400
	SampleRows = 40000
	// ClipSpreads is the clipping level of the robust spectrum, in robust
	// spreads (1.4826·median absolute value) of each column's residual.
	ClipSpreads = 3
	// EdgeFactor is the margin over the noise edge of the robust
	// spectrum (robustRank) that a singular value must clear to count as
	// a component.
	EdgeFactor = 1.5
)

// Options tune the choice. The zero value uses the defaults.
type Options struct {
	// MaxRank is the largest rank considered (0: DefaultMaxRank); it is
	// also capped at min(d1, d2) − 1 and, for a fully observed Y with
	// α > 0, at [rpca.MaxSeparableRank], above which Solve refuses the
	// problem as unidentifiable.
	MaxRank int
	// MinGap is the gap rule's threshold, above 1 (0: DefaultMinGap).
	MinGap float64
	// MaxSolves caps the number of solves (0: DefaultMaxSolves).
	MaxSolves int
	// Convex is the method that finds the rank itself, run once when a
	// fully observed answer is not verified: principal component pursuit
	// (ialm.Method, as the command line passes). nil skips that rule, and
	// the rank grows by search as for partial data.
	Convex rpca.Method
	// Stage, when set, receives one line before each step.
	Stage func(string)
}

// Rules by which the rank was chosen ([Choice].Rule).
const (
	RuleSpectrum = "spectrum" // the first guess was verified and confirmed
	RuleRobust   = "robust"   // the robust spectrum of a fit raised the rank
	RuleConvex   = "convex"   // principal component pursuit found the rank
	RuleSearch   = "search"   // partial data: the rank grew until verified
	RuleNone     = "none"     // no answer was verified
)

// Choice says which rank was chosen and why.
type Choice struct {
	// Rank is the rank of the answer returned.
	Rank int `json:"rank"`
	// Rule is how it was found (RuleSpectrum, …), and Reason says so in
	// one line with the figures.
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	// Guess is the rank the spectrum of Y gave, and Sigma the leading
	// singular values it was read from (of the sample).
	Guess int       `json:"guess"`
	Sigma []float64 `json:"sigma"`
	// Tried lists the ranks solved at, in order, and Methods the method
	// whose answer was kept at each.
	Tried   []int    `json:"tried"`
	Methods []string `json:"methods"`
	// MaxRank is the cap that applied.
	MaxRank int `json:"max_rank"`
}

// ErrTooSmall is a matrix with fewer than two rows or columns: there is
// no rank to choose.
var ErrTooSmall = errors.New("autorank: the matrix needs at least 2 rows and 2 columns for a rank choice")

// attempt is one solve.
type attempt struct {
	asked int
	res   *rpca.Result
	// robust is the rank the robust spectrum reads off the answer: the
	// larger of gapRank, its last gap, and the count above its noise edge;
	// gap is σ_k/σ_{k+1} there.
	robust, gapRank int
	gap             float64
}

func (a *attempt) rank() int {
	_, k := a.res.U.Dims()
	return k
}

func (a *attempt) verified() bool {
	return a.res.Verification != nil && a.res.Verification.Verified
}

// Solve chooses the rank and solves p at it with method m under s
// (s.Rank is ignored). The result is rpca.Solve's at the chosen rank;
// when no rank gave a verified answer, the answer that fit best is
// returned, its Verification says it is not verified, and the Choice's
// Rule is RuleNone.
func Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings, m rpca.Method, o Options) (*rpca.Result, *Choice, error) {
	if p == nil || m == nil {
		return nil, nil, errors.New("autorank: no problem or no method")
	}
	d1, d2 := dims(p)
	if d1 < 2 || d2 < 2 {
		return nil, nil, fmt.Errorf("%w (got %d×%d)", ErrTooSmall, d1, d2)
	}
	o = o.withDefaults(d1, d2)
	if p.Dense != nil {
		// Above this rank Solve refuses the problem as unidentifiable;
		// a gap in the spectrum's tail there is noise.
		o.MaxRank = max(1, min(o.MaxRank, rpca.MaxSeparableRank(d1, d2, s.Alpha)))
	}
	sr := &search{ctx: ctx, p: p, s: s, m: m, o: o, tried: map[int]bool{}}
	sr.stage("choosing the rank: the spectrum of a sample of %d×%d", d1, d2)
	guess, guessGap, guessFrom, sigma, err := firstGuess(ctx, p, o)
	if err != nil {
		return nil, nil, err
	}
	sr.c = &Choice{Guess: guess, Sigma: sigma, MaxRank: o.MaxRank}
	sr.r, sr.rule = guess, RuleSpectrum
	sr.reason = fmt.Sprintf("the spectrum of %s has its last gap σk/σk+1 ≥ %g at k = %d (%.3g)", guessFrom, o.MinGap, guess, guessGap)
	if !(guessGap >= o.MinGap) {
		sr.reason = fmt.Sprintf("the spectrum of %s has no gap σk/σk+1 ≥ %g for k ≤ %d (σ1/σ2 = %.3g), so the search starts at k = %d", guessFrom, o.MinGap, o.MaxRank, guessGap, guess)
	}
	sr.convexDone = p.Observed != nil || o.Convex == nil || m.Name() == o.Convex.Name()
	if err := sr.run(); err != nil {
		return nil, nil, err
	}
	if sr.kept != nil && sr.contradicted(sr.kept) != nil {
		sr.kept = nil // a later attempt fit much of what it left
	}
	if sr.kept == nil {
		return sr.bestUnverified(), sr.c, nil
	}
	c := sr.c
	c.Rank, c.Rule = sr.kept.rank(), sr.keptRule
	c.Reason = sr.keptReason + fmt.Sprintf("; verified at rank %d", c.Rank)
	if sr.kept.robust <= c.Rank {
		c.Reason += fmt.Sprintf(", and M + clip(Y − M) has no gap beyond it (last at k = %d)", sr.kept.robust)
	}
	return sr.kept.res, c, nil
}

// withDefaults returns o with its zero fields set to the defaults and the
// rank capped at min(d1, d2) − 1.
func (o Options) withDefaults(d1, d2 int) Options {
	if o.MaxRank <= 0 {
		o.MaxRank = DefaultMaxRank
	}
	o.MaxRank = min(o.MaxRank, min(d1, d2)-1)
	if !(o.MinGap > 1) {
		o.MinGap = DefaultMinGap
	}
	if o.MaxSolves <= 0 {
		o.MaxSolves = DefaultMaxSolves
	}
	return o
}

// search is the state of Solve's search for the rank.
type search struct {
	ctx context.Context
	p   *rpca.Problem
	s   rpca.Settings
	m   rpca.Method
	o   Options
	c   *Choice

	tries []*attempt
	tried map[int]bool
	// r is the next rank to solve at, and rule and reason why.
	r            int
	rule, reason string
	convexDone   bool
	// kept is the verified answer to return; once there is one, an answer
	// at another rank that is not verified ends the search.
	kept                 *attempt
	keptRule, keptReason string
	pending              []int // ranks still to try, from the convex rule
	// jumped: the search last jumped by the robust spectrum; jumpFailed: a
	// jump led to an answer that was not verified; stepping: after a
	// jump that was verified, the search goes down one rank at a time
	// while the answer is still verified.
	jumped, jumpFailed, stepping bool
}

func (sr *search) stage(format string, a ...any) {
	if sr.o.Stage != nil {
		sr.o.Stage(fmt.Sprintf(format, a...))
	}
}

// solve solves at rank r with method and records the attempt.
func (sr *search) solve(r int, method rpca.Method) (*attempt, error) {
	s := sr.s
	s.Rank = r
	sr.stage("solving at rank %d with %s", r, method.Name())
	res, err := rpca.Solve(sr.ctx, sr.p, s, method)
	if err != nil {
		return nil, err
	}
	a := &attempt{asked: r, res: res}
	sr.stage("checking rank %d: the robust spectrum of the answer", a.rank())
	a.robust, a.gapRank, a.gap, err = robustRank(sr.ctx, sr.p, res, sr.o)
	if err != nil {
		return nil, err
	}
	sr.tries = append(sr.tries, a)
	sr.tried[r] = true
	sr.c.Tried = append(sr.c.Tried, r)
	sr.c.Methods = append(sr.c.Methods, res.Method)
	return a, nil
}

func (sr *search) keep(a *attempt) { sr.kept, sr.keptRule, sr.keptReason = a, sr.rule, sr.reason }

// run solves at rank after rank until a rule ends the search.
func (sr *search) run() error {
	for len(sr.tries) < sr.o.MaxSolves {
		a, err := sr.solve(sr.r, sr.m)
		if err != nil {
			return err
		}
		more := false
		switch {
		case a.verified() && a.rank() <= sr.o.MaxRank && sr.contradicted(a) == nil:
			more = sr.afterVerified(a)
		case len(sr.pending) > 0:
			sr.r, sr.pending = sr.pending[0], sr.pending[1:]
			more = true
		case sr.kept != nil:
		case !sr.convexDone:
			more, err = sr.convex(a)
		default:
			more = sr.grow(a)
		}
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// afterVerified keeps a verified answer and reports whether another rank
// is to be tried: a larger one the robust spectrum shows, or the rank
// the method settled on when it found its own.
func (sr *search) afterVerified(a *attempt) bool {
	sr.keep(a)
	k := a.rank()
	if sr.jumped || sr.stepping {
		// An answer above the data's rank can fit and verify too (its
		// extra component takes up what S then leaves out, within the
		// slack of α); the smallest rank whose answer verifies is the
		// data's. Go down while the answer verifies.
		sr.jumped = false
		sr.stepping = k-1 >= 1 && !sr.tried[k-1]
		if sr.stepping {
			sr.r, sr.rule = k-1, RuleSearch
			sr.reason = fmt.Sprintf("the answer at rank %d was verified; trying rank %d, since an answer above the data's rank can verify too", k, k-1)
		}
		return sr.stepping
	}
	switch {
	case a.robust > k && a.robust <= sr.o.MaxRank && !sr.tried[a.robust]:
		// Missed components stand out once the corruptions are clipped:
		// solve again at the larger rank.
		sr.r, sr.rule = a.robust, RuleRobust
		sr.reason = fmt.Sprintf("the answer at rank %d was verified, but M + clip(Y − M) has its last gap at k = %d (%.3g)", k, a.robust, a.gap)
		return true
	case k != a.asked && !sr.tried[k]:
		// A method that finds its own rank (IALM, as the last of the auto
		// chain) settled on k: run the method again at that rank, which
		// it may fit more accurately.
		sr.r, sr.rule = k, RuleConvex
		sr.reason = fmt.Sprintf("asked for rank %d, %s found rank %d", a.asked, a.res.Method, k)
		return true
	}
	return false
}

// contradicted returns an attempt at a higher rank whose residual is
// less than half of a's, when a is verified up to noise only: what a
// leaves is then not noise, since a larger model fits much of it (fitting
// noise at a few more components lowers the residual by a few percent),
// however white it looks to the structure check. nil otherwise.
func (sr *search) contradicted(a *attempt) *attempt {
	if a.res.Verification.Exact {
		return nil
	}
	for _, b := range sr.tries {
		if b.rank() > a.rank() && b.res.Residual < a.res.Residual/2 {
			return b
		}
	}
	return nil
}

// convex runs principal component pursuit once on fully observed data
// whose answer a was not verified, and queues the ranks it shows.
func (sr *search) convex(a *attempt) (bool, error) {
	k := a.rank()
	sr.convexDone = true
	sr.stage("the answer at rank %d was not verified (%s); finding the rank by principal component pursuit", k, a.res.Verification.Failed)
	b, err := sr.solve(sr.r, sr.o.Convex)
	if err != nil {
		return false, err
	}
	sr.rule = RuleConvex
	sr.reason = fmt.Sprintf("the answer at rank %d was not verified (%s); principal component pursuit found rank %d, whose robust spectrum has its last gap at k = %d and %d values above its noise edge",
		k, a.res.Verification.Failed, b.rank(), b.gapRank, b.robust)
	if b.verified() && b.rank() <= sr.o.MaxRank {
		sr.keep(b)
	}
	// The last gap of its robust spectrum first, then the count above the
	// noise edge, then the rank of its answer. They differ under noise,
	// which IALM's answer keeps as many small components (and the edge,
	// measured on what it left, is low), or when the smallest component
	// is near the level of the clipped corruptions.
	for _, k := range []int{b.gapRank, b.robust, b.rank()} {
		if !sr.tried[k] && k <= sr.o.MaxRank && !slices.Contains(sr.pending, k) {
			sr.pending = append(sr.pending, k)
		}
	}
	if len(sr.pending) == 0 {
		return false, nil
	}
	sr.r, sr.pending = sr.pending[0], sr.pending[1:]
	return true, nil
}

// grow picks the next rank for partial data (or after the convex rule):
// the rank the robust spectrum shows, once; after a jump that failed (an
// answer above the rank fails too, and no check tells the two apart),
// the smallest rank not tried above the lowest one tried. It reports
// whether there is one.
func (sr *search) grow(a *attempt) bool {
	if sr.jumped {
		sr.jumpFailed, sr.jumped = true, false
	}
	var next int
	if !sr.jumpFailed && a.robust > a.asked+1 && !sr.tried[a.robust] {
		next, sr.jumped = a.robust, true
	} else {
		next = slices.Min(sr.c.Tried) + 1
		for sr.tried[next] {
			next++
		}
	}
	if next < 1 || next > sr.o.MaxRank || sr.tried[next] {
		return false
	}
	if sr.rule == RuleSpectrum {
		sr.rule = RuleSearch
	}
	sr.reason = fmt.Sprintf("the answer at rank %d was not verified (%s); trying rank %d", a.asked, a.res.Verification.Failed, next)
	sr.r = next
	return true
}

// bestUnverified returns, when no answer was verified within the cap,
// the one that fits best among those within it (among all when none
// is), and says so in the Choice.
func (sr *search) bestUnverified() *rpca.Result {
	within := slices.DeleteFunc(slices.Clone(sr.tries), func(a *attempt) bool { return a.rank() > sr.o.MaxRank })
	if len(within) == 0 {
		within = sr.tries
	}
	best := within[0]
	for _, a := range within[1:] {
		// Result.Residual: the verification's is 0 when a check before
		// the residual's failed.
		if a.res.Residual < best.res.Residual {
			best = a
		}
	}
	c := sr.c
	c.Rank, c.Rule = best.rank(), RuleNone
	why := best.res.Verification.Reason
	if best.verified() {
		why = fmt.Sprintf("its rank is above --max-rank %d", sr.o.MaxRank)
	}
	c.Reason = fmt.Sprintf("no answer of rank at most %d was verified (ranks tried: %v); returned the one that fit best, at rank %d (%s)", sr.o.MaxRank, c.Tried, c.Rank, why)
	return best.res
}

func dims(p *rpca.Problem) (int, int) {
	if p.Observed != nil {
		return p.Observed.Dims()
	}
	if p.Dense != nil {
		return p.Dense.Dims()
	}
	return 0, 0
}

// sample holds evenly spaced rows and columns of the data: the values
// and whether each was observed.
type sample struct {
	rows, cols []int
	val        *mat.Dense // len(rows)×len(cols), 0 where not observed
	seen       [][]bool   // nil when fully observed
}

func newSample(p *rpca.Problem) *sample {
	d1, d2 := dims(p)
	sm := &sample{rows: spectrum.Spread(d1, SampleRows), cols: spectrum.Spread(d2, SampleCols)}
	sm.val = mat.NewDense(len(sm.rows), len(sm.cols), nil)
	if p.Observed == nil {
		for a, i := range sm.rows {
			row := sm.val.RawRowView(a)
			for b, j := range sm.cols {
				row[b] = p.Dense.At(i, j)
			}
		}
		return sm
	}
	rowAt := make([]int, d1)
	colAt := make([]int, d2)
	for i := range rowAt {
		rowAt[i] = -1
	}
	for j := range colAt {
		colAt[j] = -1
	}
	for a, i := range sm.rows {
		rowAt[i] = a
	}
	for b, j := range sm.cols {
		colAt[j] = b
	}
	sm.seen = make([][]bool, len(sm.rows))
	for a := range sm.seen {
		sm.seen[a] = make([]bool, len(sm.cols))
	}
	for a, i := range sm.rows {
		cols, vals := p.Observed.Row(i)
		for t, j := range cols {
			if b := colAt[j]; b >= 0 {
				sm.val.Set(a, b, vals[t])
				sm.seen[a][b] = true
			}
		}
	}
	return sm
}

// wide returns x or its transpose, whichever has no more rows than
// columns (the cheap orientation for spectrum.Values).
func wide(x *mat.Dense) *mat.Dense {
	n1, n2 := x.Dims()
	if n1 <= n2 {
		return x
	}
	t := mat.NewDense(n2, n1, nil)
	t.Copy(x.T())
	return t
}

// sampleData returns the sample of Y for the first guess: for partial
// data, the observed values less their median, zero elsewhere, scaled by
// the inverse of the sample's observed fraction (an unbiased estimate of
// the centred matrix, whose spectrum estimates its spectrum).
func sampleData(p *rpca.Problem) *mat.Dense {
	sm := newSample(p)
	if sm.seen == nil {
		return wide(sm.val)
	}
	var obs []float64
	for a, row := range sm.seen {
		for b, ok := range row {
			if ok {
				obs = append(obs, sm.val.At(a, b))
			}
		}
	}
	if len(obs) == 0 {
		return wide(sm.val)
	}
	med := median(obs)
	n1, n2 := sm.val.Dims()
	scale := float64(n1*n2) / float64(len(obs))
	for a, row := range sm.seen {
		for b, ok := range row {
			if ok {
				sm.val.Set(a, b, (sm.val.At(a, b)-med)*scale)
			}
		}
	}
	return wide(sm.val)
}

// firstGuess is the rank the search starts from: the last gap of the
// spectrum of the sample of Y; for a fully observed Y whose spectrum has
// no gap σk/σk+1 ≥ MinGap, the last gap of the sample with each column
// clipped (clippedSample) when it is larger. Dense corruptions (10% of
// the entries, 16 times the clean spread in the paper's model) raise a
// noise bulk that hides the gap of Y's spectrum; clipped, the gap shows.
// On corrupted generated problems (d = 200–3000, κ ≤ 100, offsets) the
// clipped guess was never above the true rank. It returns the rank, its gap, which matrix it came from, and
// that matrix's singular values.
func firstGuess(ctx context.Context, p *rpca.Problem, o Options) (int, float64, string, []float64, error) {
	sigma, err := spectrum.Values(ctx, sampleData(p), o.MaxRank)
	if err != nil {
		return 0, 0, "", nil, err
	}
	guess, gap := spectrum.LastGap(sigma, o.MinGap)
	from := "Y"
	if p.Observed == nil && gap < o.MinGap { // Y's own spectrum has no gap
		// Clipping bends a low-rank matrix: on exact rank-5 data without
		// corruptions the clipped sample's last gap was at 35, where Y's
		// own (an exact zero after σ5) said 5. So the clipped sample is
		// read only when Y's spectrum shows no gap at all.
		clipped, err := spectrum.Values(ctx, clippedSample(p), o.MaxRank)
		if err != nil {
			return 0, 0, "", nil, err
		}
		if k, g := spectrum.LastGap(clipped, o.MinGap); k > guess {
			guess, gap, from, sigma = k, g, "Y with each column clipped around its median", clipped
		}
	}
	return guess, gap, from, sigma, nil
}

// clippedSample returns the sample of a fully observed Y with each
// column clipped at ClipSpreads robust spreads (1.4826·median absolute
// deviation) around its median: the gross corruptions are cut to the
// clean entries' scale, and the location and the low-rank part, which
// fill the bulk of every column, are kept.
func clippedSample(p *rpca.Problem) *mat.Dense {
	sm := newSample(p)
	n1, n2 := sm.val.Dims()
	col := make([]float64, n1)
	dev := make([]float64, n1)
	for b := range n2 {
		for a := range n1 {
			col[a] = sm.val.At(a, b)
		}
		copy(dev, col)
		med := median(dev)
		for a := range n1 {
			dev[a] = math.Abs(col[a] - med)
		}
		lim := ClipSpreads * 1.4826 * median(dev)
		for a := range n1 {
			sm.val.Set(a, b, med+min(max(col[a]-med, -lim), lim))
		}
	}
	return wide(sm.val)
}

// robustRank reads the rank off the robust spectrum of an answer: the
// sample of M + clip(Y − M), where each column's residual on its observed
// entries is clipped at ClipSpreads robust spreads and unobserved entries
// take M's value.
func robustRank(ctx context.Context, p *rpca.Problem, res *rpca.Result, o Options) (robust, gapRank int, gap float64, err error) {
	sm := newSample(p)
	u, v := res.U, res.V
	n1, n2 := len(sm.rows), len(sm.cols)
	fit := mat.NewDense(n1, n2, nil)
	for a, i := range sm.rows {
		ui := u.RawRowView(i)
		row := fit.RawRowView(a)
		for b, j := range sm.cols {
			row[b] = dot(ui, v.RawRowView(j))
		}
	}
	z := mat.NewDense(n1, n2, nil)
	abs := make([]float64, 0, n1)
	var noise float64 // Σ of the squared clipped, scaled residual
	for b := range n2 {
		abs = abs[:0]
		for a := range n1 {
			if sm.seen == nil || sm.seen[a][b] {
				abs = append(abs, math.Abs(sm.val.At(a, b)-fit.At(a, b)))
			}
		}
		lim, scale := 0.0, 1.0
		if len(abs) > 0 {
			lim = ClipSpreads * 1.4826 * median(abs)
			// Partial data: the clipped residual divided by the column's
			// observed fraction, so that a missed component keeps its
			// strength (as in the zero-filled estimate of the first guess).
			scale = float64(n1) / float64(len(abs))
		}
		for a := range n1 {
			mv := fit.At(a, b)
			if sm.seen == nil || sm.seen[a][b] {
				e := sm.val.At(a, b) - mv
				c := scale * min(max(e, -lim), lim)
				mv += c
				noise += c * c
			}
			z.Set(a, b, mv)
		}
	}
	sigma, err := spectrum.Values(ctx, wide(z), o.MaxRank)
	if err != nil {
		return 0, 0, 0, err
	}
	k, gap := spectrum.LastGap(sigma, o.MinGap)
	gapRank = k
	// The noise edge: a matrix of independent entries of rms σ has its
	// largest singular value near σ·(√n1 + √n2). Singular values of Z
	// clearly above the edge of the clipped residual are components, even
	// where no single ratio reaches MinGap (partial data, many components).
	// The residual of a fit below the rank holds the missed components,
	// whose energy would raise the edge above them: the energy of the
	// values found above the edge, beyond the fit's own rank, is taken
	// out of the noise, and the count repeated until it settles.
	_, kfit := u.Dims()
	above := 0
	for range 20 {
		rest := noise
		for i := kfit; i < above; i++ {
			rest -= sigma[i] * sigma[i]
		}
		edge := EdgeFactor * math.Sqrt(max(rest, 0)/float64(n1*n2)) * (math.Sqrt(float64(n1)) + math.Sqrt(float64(n2)))
		n := 0
		for _, v := range sigma {
			if v > edge && v > spectrum.Zero*sigma[0] {
				n++
			}
		}
		if n <= above {
			break
		}
		above = n
	}
	if above > k && above < len(sigma) {
		k, gap = above, sigma[above-1]/sigma[above]
	}
	return k, gapRank, gap, nil
}

func dot(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// median returns the median of x (upper middle for an even count); it
// reorders x.
func median(x []float64) float64 {
	return selection.SelectSmallest(x, len(x)/2+1)
}
