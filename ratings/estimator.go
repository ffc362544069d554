package ratings

import (
	"context"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
)

// Estimator is the model Fit fits to the training ratings, one of three
// peers: the Gibbs fit of the biased low-rank model (*Gibbs, the default
// of rpca complete, Defaults), alternating least squares with the paper's
// sparse estimator (*ALS, the default of a zero Options), or gradient
// steps (*Gradient). Choose picks one from a command line's choices.
type Estimator interface {
	// Name is the estimator's name on rpca complete's command line:
	// "gibbs", "als", "gd" or "scaledgd".
	Name() string
	isEstimator()
}

// ALS fits the low-rank part by alternating least squares with T_γα
// (package als), T's counts taken per user and item (als.Method.PerLine
// is always on here: ratings are far from uniformly sampled). Its fields
// are those of als.Method; Fit sets PerLine, Start and, with
// BaselineBiases at α = 0 unless Options.FixedBiases, Biases.
type ALS struct{ als.Method }

// Gradient fits the low-rank part by the paper's gradient steps, or by
// scaled steps with gd.Method.Scaled (package gd), T's counts per user
// and item as for ALS.
type Gradient struct{ gd.Method }

// Name returns "als".
func (*ALS) Name() string { return "als" }

// Name returns "gd", or "scaledgd" with Scaled.
func (e *Gradient) Name() string { return e.Method.Name() }

// Name returns "gibbs".
func (*Gibbs) Name() string { return "gibbs" }

func (*ALS) isEstimator()      {}
func (*Gradient) isEstimator() {}
func (*Gibbs) isEstimator()    {}

// leastSquares is what Fit and Select need of the estimators that fit by
// rpca.Solve (ALS and Gradient).
type leastSquares interface {
	Estimator
	// solver returns the method of a fit with the ridge λ (< 0: the
	// estimator's own), biases refitted jointly or not, and a warm
	// start (nil: Phase I).
	solver(ridge float64, biases bool, start *rpca.Start) phasedMethod
	// ridge returns the estimator's own ridge λ.
	ridge() float64
	// exact reports whether each iteration solves its lines exactly (ALS):
	// its fits stop on ALSFactorTol and choose with ALSPatience.
	exact() bool
}

// phasedMethod is an rpca.Method that can run its Phase I alone
// (gd.Method.Initialize, als.Method.Initialize).
type phasedMethod interface {
	rpca.Method
	Initialize(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Start, error)
}

// override sets *r to ridge unless it is negative, and *st to start
// unless it is nil.
func override(ridge float64, start *rpca.Start, r *float64, st **rpca.Start) {
	if ridge >= 0 {
		*r = ridge
	}
	if start != nil {
		*st = start
	}
}

func (e *ALS) solver(ridge float64, biases bool, start *rpca.Start) phasedMethod {
	m := e.Method
	m.PerLine, m.Biases = true, m.Biases || biases
	override(ridge, start, &m.Ridge, &m.Start)
	return &m
}

func (e *ALS) ridge() float64 { return e.Method.Ridge }

func (*ALS) exact() bool { return true }

func (e *Gradient) solver(ridge float64, _ bool, start *rpca.Start) phasedMethod {
	m := e.Method
	m.PerLine = true
	override(ridge, start, &m.Ridge, &m.Start)
	return &m
}

func (e *Gradient) ridge() float64 { return e.Method.Ridge }

func (*Gradient) exact() bool { return false }

// model returns the estimator of opt: Options.Model, or *ALS with its
// defaults when it is nil.
func (opt Options) model() Estimator {
	if opt.Model == nil {
		return &ALS{}
	}
	return opt.Model
}
