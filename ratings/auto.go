package ratings

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/metrics"
)

// Defaults of [Selection].
var (
	// DefaultRanks are the candidate ranks of the choice by validation.
	DefaultRanks = []int{2, 5, 10, 20, 50}
	// DefaultRidges are the candidate ridges λ (the penalty
	// (λ/2)(‖U‖² + ‖V‖²) of als.Method.Ridge).
	DefaultRidges = []float64{0.1, 0.3, 1, 3, 10, 30}
)

// DefaultValidationFraction is Selection.Fraction when it is 0.
const DefaultValidationFraction = 0.1

// Selection configures the choice of the rank and the ridge λ by
// validation (Options.Rank 0).
type Selection struct {
	// Ranks and Ridges are the candidates; nil means DefaultRanks and
	// DefaultRidges. Ranks that the training ratings cannot support are
	// left out.
	Ranks  []int
	Ridges []float64
	// Fraction of the training ratings is set aside to validate; 0 means
	// DefaultValidationFraction. They are drawn from Options.Settings.Seed.
	Fraction float64
	// Patience is rpca.Stop.Patience of each candidate's fit: the number
	// of iterations without a new smallest validation RMSE that ends it.
	// 0 means Options.Settings.Stop.Patience if that is set, else
	// ALSPatience for *ALS and rpca.DefaultPatience for the gradient
	// steps.
	Patience int
}

// ALSPatience is the default Selection.Patience of fits by alternating
// least squares. Each sweep solves every line exactly, so the validation
// RMSE of a candidate reaches its minimum within a few sweeps and then
// rises or stays (measured in docs/cli.md).
const ALSPatience = 3

// patience returns the Stop.Patience of the candidates' fits of Select
// with opt and the estimator e.
func (sel Selection) patience(opt Options, e leastSquares) (int, error) {
	switch {
	case sel.Patience < 0:
		return 0, fmt.Errorf("%w: Selection.Patience must be non-negative, got %d", ErrSelect, sel.Patience)
	case sel.Patience > 0:
		return sel.Patience, nil
	case opt.Settings.Stop.Patience > 0:
		return opt.Settings.Stop.Patience, nil
	case e.exact():
		return ALSPatience, nil
	}
	return rpca.DefaultPatience, nil
}

// Candidate is one point of the validation curve.
type Candidate struct {
	Rank  int     `json:"rank"`
	Ridge float64 `json:"ridge"`
	// RMSE is the smallest validation RMSE of the fit, reached after
	// Iterations iterations.
	RMSE       float64 `json:"rmse"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
}

// MarshalJSON writes the candidate with its RMSE as null when it is not
// finite (a fit whose factors were not), which JSON cannot hold.
func (c Candidate) MarshalJSON() ([]byte, error) {
	type plain Candidate
	return json.Marshal(struct {
		plain
		RMSE *float64 `json:"rmse"`
	}{plain(c), metrics.Finite(c.RMSE)})
}

// Choice is the outcome of the choice by validation: the candidates tried,
// in order, and the best of them.
type Choice struct {
	Best       Candidate   `json:"best"`
	Candidates []Candidate `json:"candidates"`
	// Validation is the number of ratings set aside to validate, Scored of
	// them with a fitted row and column.
	Validation int `json:"validation_ratings"`
	Scored     int `json:"validation_scored"`
}

// ErrSelect is returned when the rank cannot be chosen: too few ratings
// to set some aside, no candidate rank the ratings support, or an
// estimator without a ridge (the choice needs *ALS or *Gradient).
var ErrSelect = errors.New("ratings: cannot choose the rank by validation")

// Select chooses the rank and the ridge λ for Fit by validation. It sets
// aside a fraction of the training ratings (those of r not marked in
// held), fits the rest with each candidate, stopping each fit early when
// the RMSE on the set-aside ratings has not improved for
// Selection.Patience iterations (rpca.Stop.Validation), and keeps the
// candidate with the smallest RMSE. The search is by coordinates: every
// ridge at the middle rank, then every rank at the best ridge. Phase I
// (gd.Method.Initialize) runs once, at the largest candidate rank, and
// each candidate starts from its leading columns. The estimator must be
// *ALS or *Gradient (nil means *ALS); its Ridge and Start are replaced.
func Select(ctx context.Context, r *triples.Ratings, held []bool, opt Options) (*Choice, error) {
	if held != nil && len(held) != r.Len() {
		return nil, fmt.Errorf("ratings: %d held-out flags for %d ratings", len(held), r.Len())
	}
	e, err := selectMethod(opt.Model)
	if err != nil {
		return nil, err
	}
	g, err := opt.Select.resolve(opt, e)
	if err != nil {
		return nil, err
	}
	val, n := validationSet(r, held, g.frac, opt.Settings.Seed)
	if n == 0 {
		return nil, fmt.Errorf("%w: %d training ratings are too few to set some aside", ErrSelect, r.Len())
	}
	fitHeld := make([]bool, r.Len())
	for k := range fitHeld {
		fitHeld[k] = val[k] || (held != nil && held[k])
	}
	// Every candidate fits the same ratings, so Phase I (the initial T_α
	// and SVD) is run once, at the largest rank the fit set supports, and
	// each candidate starts from its leading columns.
	c := &chooser{ctx: ctx, r: r, fitHeld: fitHeld, val: val, opt: opt, e: e, patience: g.patience,
		starts: &startCache{rank: slices.Max(g.ranks)}, ch: &Choice{Validation: n}}
	// Every ridge at the middle rank, then every rank at the best ridge.
	mid := g.ranks[len(g.ranks)/2]
	for _, l := range g.ridges {
		if err := c.try(mid, l); err != nil {
			return nil, err
		}
	}
	ch := c.ch
	best := Candidate{Ridge: g.ridges[len(g.ridges)/2]} // if the middle rank is too large
	if len(ch.Candidates) > 0 {
		best = slices.MinFunc(ch.Candidates, byRMSE)
	}
	for _, rank := range g.ranks {
		if rank == mid && len(ch.Candidates) > 0 {
			continue
		}
		if err := c.try(rank, best.Ridge); err != nil {
			return nil, err
		}
	}
	if len(ch.Candidates) == 0 {
		return nil, fmt.Errorf("%w: no candidate rank %v is below min(d1, d2) = %d: the ratings fitted during the choice have %d distinct rows and %d distinct columns",
			ErrSelect, g.ranks, min(c.tooBig.D1, c.tooBig.D2), c.tooBig.D1, c.tooBig.D2)
	}
	ch.Best = slices.MinFunc(ch.Candidates, byRMSE)
	return ch, nil
}

// grid is a Selection with its defaults filled in.
type grid struct {
	ranks    []int
	ridges   []float64
	frac     float64
	patience int
}

// resolve fills in sel's defaults for opt and e and checks them
// (ErrSelect).
func (sel Selection) resolve(opt Options, e leastSquares) (grid, error) {
	g := grid{ranks: sel.Ranks, ridges: sel.Ridges, frac: cmp.Or(sel.Fraction, DefaultValidationFraction)}
	if g.ranks == nil {
		g.ranks = DefaultRanks
	}
	if g.ridges == nil {
		g.ridges = DefaultRidges
	}
	var err error
	if g.patience, err = sel.patience(opt, e); err != nil {
		return g, err
	}
	if !(g.frac > 0 && g.frac < 1) || len(g.ranks) == 0 || len(g.ridges) == 0 {
		return g, fmt.Errorf("%w: Selection needs ranks, ridges and a fraction in (0, 1), got %v, %v, %v", ErrSelect, g.ranks, g.ridges, g.frac)
	}
	for _, l := range g.ridges {
		if !(l >= 0) || math.IsInf(l, 0) {
			return g, fmt.Errorf("%w: ridge %v is not a finite non-negative number", ErrSelect, l)
		}
	}
	return g, nil
}

// chooser fits the candidates of a choice into ch.
type chooser struct {
	ctx      context.Context
	r        *triples.Ratings
	fitHeld  []bool // the held-out and the validation ratings
	val      []bool // the validation ratings
	opt      Options
	e        leastSquares
	patience int
	starts   *startCache
	ch       *Choice
	tooBig   *RankError // the last rank the fit set did not support
}

// try fits the candidate (rank, ridge), stopped by validation, and adds
// it to the choice; a rank the fit set does not support is not a
// candidate.
func (c *chooser) try(rank int, ridge float64) error {
	o := c.opt
	o.Rank = rank
	o.Settings.Stop.FactorTol, o.Settings.Stop.ResidualTol = -1, -1 // stop by validation (or the cap)
	o.Settings.Stop.Patience = c.patience
	m, err := fit(c.ctx, c.r, c.fitHeld, c.val, o, c.e, ridge, c.starts)
	if errors.As(err, &c.tooBig) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ratings: choosing the rank: rank %d, ridge %v: %w", rank, ridge, err)
	}
	if m.scored == 0 { // the same for every candidate: the fit set is fixed
		return fmt.Errorf("%w: none of the %d validation ratings has a row and a column among the other training ratings", ErrSelect, c.ch.Validation)
	}
	cand := Candidate{Rank: rank, Ridge: ridge, RMSE: math.Inf(1), Seconds: m.Result.Elapsed.Seconds()}
	for _, rec := range m.Result.History {
		if rec.Validation < cand.RMSE {
			cand.RMSE, cand.Iterations = rec.Validation, rec.Iter
		}
	}
	c.ch.Scored = m.scored
	c.ch.Candidates = append(c.ch.Candidates, cand)
	return nil
}

// byRMSE orders candidates by their validation RMSE (never NaN: a fit
// whose factors were not finite keeps +Inf).
func byRMSE(a, b Candidate) int { return cmp.Compare(a.RMSE, b.RMSE) }

// selectMethod returns the estimator whose ridge the choice sets.
func selectMethod(m Estimator) (leastSquares, error) {
	if m == nil {
		return &ALS{}, nil
	}
	e, ok := m.(leastSquares)
	if !ok {
		return nil, fmt.Errorf("%w: the estimator %s has no ridge λ to choose; use *ALS or *Gradient, or give the rank", ErrSelect, m.Name())
	}
	return e, nil
}

// validationSet marks round(frac·n) of the n training ratings (those not
// in held), drawn with HoldOut from a seed of its own derived from seed,
// and returns the marks over r and their number (0 when there are fewer
// than two training ratings).
func validationSet(r *triples.Ratings, held []bool, frac float64, seed uint64) ([]bool, int) {
	train := make([]int, 0, r.Len())
	for k := range r.Len() {
		if held == nil || !held[k] {
			train = append(train, k)
		}
	}
	pick := HoldOut(len(train), frac, seed^0x7a11da7e)
	val := make([]bool, r.Len())
	n := 0
	for t, p := range pick {
		if p {
			val[train[t]] = true
			n++
		}
	}
	return val, n
}

// fitChosen is Fit with Rank 0: Select, then a fit of all the training
// ratings at the chosen rank and ridge, for as many iterations as the
// best validation RMSE took (unless Settings.Stop.MaxIter is set).
func fitChosen(ctx context.Context, r *triples.Ratings, held []bool, opt Options, e leastSquares) (*Model, error) {
	ch, err := Select(ctx, r, held, opt)
	if err != nil {
		return nil, err
	}
	o := opt
	o.Rank = ch.Best.Rank
	if o.Settings.Stop.MaxIter == 0 {
		o.Settings.Stop.MaxIter = max(1, ch.Best.Iterations)
		o.Settings.Stop.FactorTol, o.Settings.Stop.ResidualTol = -1, -1
	}
	m, err := fit(ctx, r, held, nil, o, e, ch.Best.Ridge, nil)
	if err != nil {
		return nil, err
	}
	if m.Result.Stop == rpca.StopMaxIter && opt.Settings.Stop.MaxIter == 0 {
		m.Result.Stop = rpca.StopValidation // the cap is the validated count
	}
	m.Chosen = ch
	return m, nil
}

// validation returns the RMSE of the model's predictions, baseline plus
// U·Vᵀ and clipped, on the ratings of r marked in val whose row and column
// are fitted, for rpca.Stop.Validation; it sets m.scored to their number.
func (m *Model) validation(r *triples.Ratings, val []bool) func(u, v *mat.Dense) float64 {
	type entry struct {
		i, j       int
		base, want float64
	}
	var es []entry
	for k, isVal := range val {
		if !isVal {
			continue
		}
		i, ok1 := m.rowIndex[r.RowIDs[r.Row[k]]]
		j, ok2 := m.colIndex[r.ColIDs[r.Col[k]]]
		if !ok1 || !ok2 {
			continue
		}
		base := m.Offset
		if m.Biases != nil {
			base = m.Biases.Predict(i, j)
		}
		es = append(es, entry{i, j, base, r.Val[k]})
	}
	m.scored = len(es)
	return func(u, v *mat.Dense) float64 {
		if len(es) == 0 {
			return math.NaN() // Select refuses this case after the first fit
		}
		ru, rv := u.RawMatrix(), v.RawMatrix()
		ss := 0.0
		for _, e := range es {
			ui, vj := ru.Data[e.i*ru.Stride:e.i*ru.Stride+ru.Cols], rv.Data[e.j*rv.Stride:]
			p := e.base
			for c, x := range ui {
				p += x * vj[c]
			}
			d := m.Clip(p) - e.want
			ss += d * d
		}
		return math.Sqrt(ss / float64(len(es)))
	}
}

// startCache holds Phase I of the candidates' fits (gd.Method.Initialize)
// at one rank; a fit at a lower rank starts from its leading columns.
type startCache struct {
	rank   int // the rank of w, lowered to min(d1, d2) − 1 when needed
	w      *rpca.Start
	failed bool // Phase I at rank failed: each fit runs its own
}

// start returns the rank-s.Rank start of the problem p, the same for
// every call: Phase I of g at c.rank on the first call, then views of its
// leading columns. It returns nil (each fit runs its own Phase I, and
// reports its own errors) when Phase I at c.rank fails.
func (c *startCache) start(ctx context.Context, p *rpca.Problem, s rpca.Settings, e leastSquares) *rpca.Start {
	if c.w == nil && !c.failed {
		d1, d2 := p.Dims()
		si := s
		si.Rank = max(s.Rank, min(c.rank, min(d1, d2)-1))
		si.Stop.Validation = nil
		w, err := e.solver(-1, false, nil).Initialize(ctx, p, si) // Phase I of the estimator's own method
		c.w, c.rank, c.failed = w, si.Rank, err != nil
	}
	if c.failed || s.Rank > c.rank {
		return nil
	}
	d1, _ := c.w.U.Dims()
	d2, _ := c.w.V.Dims()
	return &rpca.Start{U: c.w.U.Slice(0, d1, 0, s.Rank).(*mat.Dense), V: c.w.V.Slice(0, d2, 0, s.Rank).(*mat.Dense)}
}
