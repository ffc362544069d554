// Package track does the bookkeeping that every [rpca.Method] shares
// while it iterates: the history of records, the true error when the
// truth is known, the stopping rules of [rpca.Stop], the callback,
// divergence and cancellation. A method creates a [Tracker] per solve
// with [New] and calls [Tracker.Step] once per iteration.
package track

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/access"
	"github.com/rpca-gd/rpca/metrics"
)

// Tracker does the bookkeeping of one solve: the per-iteration history,
// the true error when the truth is known, the stopping rules, the
// callback, divergence detection and cancellation.
type Tracker struct {
	ctx     context.Context
	start   time.Time
	rules   rpca.Stop
	truth   *rpca.Truth
	cb      func(rpca.Record)
	history []rpca.Record
	// overhead is the time spent computing true errors, which a run on
	// real data would not spend; it is left out of Record.Elapsed.
	overhead time.Duration
	// divergence hint used in the error message
	hint string
	// bestVal and sinceVal track early stopping (Stop.Validation).
	bestVal  float64
	sinceVal int
	// resFactor converts the method's residual into the one reported and
	// tested (Solve's frame; see access.ResFactor).
	resFactor float64
}

// New starts the clock for a solve of p with settings s. The
// method's default stopping rules def fill the zero fields of s.Stop. hint
// is appended to divergence errors to name the likely cause. A nil ctx
// stands for context.Background() (see Context).
//
// When [rpca.Solve] runs the method, the residual rule is relative to the clean
// scale of the data rather than to ‖Π_Φ Y‖ (which a large offset or a few
// huge corruptions dominate): the tracker converts the method's residual
// for the history and the rule, and Rules returns the tolerance in the
// method's own terms.
func New(ctx context.Context, p *rpca.Problem, s rpca.Settings, def rpca.Stop, hint string) *Tracker {
	if ctx == nil {
		ctx = context.Background()
	}
	t := &Tracker{
		ctx:       ctx,
		start:     time.Now(),
		rules:     s.Stop.WithDefaults(def),
		truth:     p.Truth,
		cb:        s.Callback,
		hint:      hint,
		bestVal:   math.Inf(1),
		resFactor: 1,
	}
	if f := access.ResFactor(p); f > 0 && !math.IsInf(f, 0) {
		t.resFactor = f
		t.rules.ResidualTol /= f
	}
	return t
}

// ScaleResiduals converts the method's residuals by f for the history
// and the residual rule, as New does for a problem Solve framed: f is the
// norm the method's residuals are relative to over the clean scale
// (for a method on a distributed.Store, which Solve does not frame).
// f ≤ 0, infinite or NaN changes nothing. Call it before the first Step.
func (t *Tracker) ScaleResiduals(f float64) {
	if f > 0 && !math.IsInf(f, 0) {
		t.rules.ResidualTol *= t.resFactor / f
		t.resFactor = f
	}
}

// Context returns the run's context: the one given to New, or
// context.Background() for a nil one.
func (t *Tracker) Context() context.Context { return t.ctx }

// Rules returns the effective stopping rules (defaults filled in,
// disabled rules as 0, or MaxInt for MaxIter), with the residual
// tolerance relative to ‖Π_Φ Y‖ of the problem the method was given.
func (t *Tracker) Rules() rpca.Stop { return t.rules }

// Start returns the time the solve started.
func (t *Tracker) Start() time.Time { return t.start }

// History returns the records so far.
func (t *Tracker) History() []rpca.Record { return t.history }

// Elapsed returns the time since the start of the solve, without the time
// spent evaluating true errors.
func (t *Tracker) Elapsed() time.Duration { return time.Since(t.start) - t.overhead }

// Step records iteration iter with the relative residual and factor change
// (NaN when not computed) and the current factors (nil to skip the true
// error). It returns the rule that says to stop, if any, and an error when
// the context is cancelled or the iterates diverged.
func (t *Tracker) Step(iter int, residual, factorChange float64, u, v *mat.Dense) (rpca.StopReason, bool, error) {
	now := time.Now()
	rec := rpca.Record{
		Iter:         iter,
		Elapsed:      now.Sub(t.start) - t.overhead,
		Residual:     residual * t.resFactor,
		FactorChange: factorChange,
		Error:        math.NaN(),
		Validation:   math.NaN(),
	}
	if t.truth != nil && u != nil && v != nil {
		rec.Error = metrics.CentredRelError(u, v, t.truth.A, t.truth.B)
		t.overhead += time.Since(now)
	}
	fin := finite(u) && finite(v)
	validated := fin && t.validate(&rec, u, v)
	t.history = append(t.history, rec)
	if t.cb != nil {
		t.cb(rec)
	}
	if err := t.ctx.Err(); err != nil {
		return "", true, err
	}
	if math.IsInf(residual, 0) || math.IsInf(factorChange, 0) || residual > 1e6 || !fin {
		return "", true, fmt.Errorf("%w at iteration %d (residual %.3g, factor change %.3g): %s",
			rpca.ErrDiverged, iter, residual, factorChange, t.hint)
	}
	reason := fired(t.rules, rec, residual, validated, t.sinceVal)
	return reason, reason != "", nil
}

// Resume restores the records of a run that stopped after its last
// record, for a method that goes on from the state it saved then: the
// history, the clock (as if the run had not stopped) and the early
// stopping count. It returns the rule that says to stop at that record
// under this tracker's rules, if any: the last record's rules may differ.
func (t *Tracker) Resume(history []rpca.Record) (rpca.StopReason, bool) {
	t.history = append(t.history[:0], history...)
	if len(history) == 0 {
		return "", false
	}
	for _, rec := range history {
		if !math.IsNaN(rec.Validation) && t.rules.Validation != nil {
			if rec.Validation < t.bestVal {
				t.bestVal, t.sinceVal = rec.Validation, 0
			} else {
				t.sinceVal++
			}
		}
	}
	last := history[len(history)-1]
	t.start = time.Now().Add(-last.Elapsed)
	reason := fired(t.rules, last, last.Residual/t.resFactor, !math.IsNaN(last.Validation) && t.rules.Validation != nil, t.sinceVal)
	return reason, reason != ""
}

// validate scores factors u and v with the validation rule, if there is
// one, into rec, and counts the records since the best score.
func (t *Tracker) validate(rec *rpca.Record, u, v *mat.Dense) bool {
	f := t.rules.Validation
	if f == nil || u == nil || v == nil {
		return false
	}
	rec.Validation = f(u, v)
	if rec.Validation < t.bestVal {
		t.bestVal, t.sinceVal = rec.Validation, 0
	} else {
		t.sinceVal++
	}
	return true
}

// fired returns the first rule of r that says to stop at rec ("" for
// none): residual is the method's own (the scale of r.ResidualTol),
// validated says rec was scored, sinceVal how many scores since the best.
func fired(r rpca.Stop, rec rpca.Record, residual float64, validated bool, sinceVal int) rpca.StopReason {
	switch {
	case r.TargetError > 0 && rec.Error <= r.TargetError:
		return rpca.StopTargetError
	case r.ResidualTol > 0 && residual <= r.ResidualTol:
		return rpca.StopResidualTol
	case r.FactorTol > 0 && rec.Iter > 0 && rec.FactorChange <= r.FactorTol:
		return rpca.StopFactorTol
	case validated && sinceVal >= r.Patience:
		return rpca.StopValidation
	case rec.Iter >= r.MaxIter:
		return rpca.StopMaxIter
	}
	return ""
}

// finite reports whether every entry of m is finite (true for nil).
func finite(m *mat.Dense) bool {
	if m == nil {
		return true
	}
	raw := m.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for _, x := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
	}
	return true
}

// Result assembles a method's result with the tracker's time and history
// (residual is the method's own, as passed to Step).
func (t *Tracker) Result(method string, u, v *mat.Dense, s *rpca.Sparse, iters int, stop rpca.StopReason, residual float64, params any) *rpca.Result {
	return &rpca.Result{Method: method, U: u, V: v, S: s, Iterations: iters, Elapsed: t.Elapsed(), Stop: stop,
		Residual: residual, History: t.History(), Params: params}
}
