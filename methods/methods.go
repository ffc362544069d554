// Package methods builds a robust-PCA method from its name, for programs
// that take the method as configuration (the rpca command's --method).
// Each method's needs (a full matrix, …) are its rpca.Capabilities.
package methods

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/altproj"
	"github.com/rpca-gd/rpca/ialm"
)

// Options are the methods' own settings; each method reads the ones it
// has, and 0 (or "") is each one's default.
type Options struct {
	// Mu is the incoherence μ: GD's row-norm constraints, AltProj's and
	// AccAltProj's threshold.
	Mu float64
	// Gamma, StepConst, NoProjection, Step, Ridge, RidgeDecay, Huber and
	// Implicit are rpca.GD's.
	Gamma, StepConst float64
	NoProjection     bool
	Step             rpca.StepRule
	Ridge            float64
	RidgeDecay       float64
	Huber            float64
	Implicit         float64
	// Lambda is IALM's weight of ‖S‖₁.
	Lambda float64
}

// Entry is one method of the table.
type Entry struct {
	Name    string
	Summary string // what it is, with its paper
	New     func(o Options) rpca.Method
}

// Table lists the methods, in the order of help texts.
var Table = []Entry{
	{"accaltproj", "accelerated alternating projections (Cai, Cai, Wei 2019)", func(o Options) rpca.Method {
		return &accaltproj.Method{Mu: o.Mu}
	}},
	{"gd", "the paper's gradient descent, Algorithms 1 and 2", func(o Options) rpca.Method { return gd(o, rpca.UpdatePaper) }},
	{"scaledgd", "gradient descent with scaled steps (Tong, Ma, Chi 2021)", func(o Options) rpca.Method { return gd(o, rpca.UpdateScaled) }},
	{"als", "alternating least squares with the paper's sparse estimator", func(o Options) rpca.Method { return gd(o, rpca.UpdateALS) }},
	{"altproj", "alternating projections (Netrapalli et al. 2014)", func(o Options) rpca.Method {
		return &altproj.Method{Mu: o.Mu}
	}},
	{"ialm", "inexact augmented Lagrangian (Lin, Chen, Ma 2010)", func(o Options) rpca.Method {
		return &ialm.Method{Lambda: o.Lambda}
	}},
}

func gd(o Options, u rpca.UpdateRule) *rpca.GD {
	return &rpca.GD{Update: u, Gamma: o.Gamma, StepConst: o.StepConst, Mu: o.Mu, NoProjection: o.NoProjection, Step: o.Step, Ridge: o.Ridge, RidgeDecay: o.RidgeDecay, Huber: o.Huber, Implicit: o.Implicit}
}

// AutoName is the name that picks the method by the data (Auto).
const AutoName = "auto"

// AutoChain is what AutoName stands for: the methods tried in order, the
// next when an answer is not verified (rpca.Resolver). For a fully
// observed matrix, AccAltProj first (its iteration count does not grow
// with the condition number), then scaled gradient steps, then IALM
// (whose nuclear norm finds the data's rank when the rank asked for is
// above it); for partial observations the paper's gradient method, then
// scaled steps, then alternating least squares (AccAltProj and IALM need
// every entry). docs/verification.md has the measurements behind the
// order.
func AutoChain(partial bool) []string {
	if partial {
		return []string{"gd", "scaledgd", "als"}
	}
	return []string{"accaltproj", "scaledgd", "ialm"}
}

// Auto is the method of AutoName: it runs the first method of AutoChain
// for the data and, through rpca.Solve, the next ones while the answer is
// not verified. Result.Method names the method whose answer was kept and
// Result.Attempts every one that ran.
type Auto struct {
	Options Options
}

// Name returns AutoName.
func (a *Auto) Name() string { return AutoName }

// Capabilities: every kind of data, α used, rank r, and the peak memory of
// the most demanding method of the chain.
func (a *Auto) Capabilities() rpca.Capabilities {
	return rpca.Capabilities{UsesAlpha: true, FixedRank: true, BytesPerEntry: 5 * 8}
}

// Resolve returns the chain's methods for p (rpca.Resolver).
func (a *Auto) Resolve(p *rpca.Problem, _ rpca.Settings) (rpca.Method, []rpca.Method) {
	var ms []rpca.Method
	for _, name := range AutoChain(p.Observed != nil) {
		m, err := newNamed(name, a.Options)
		if err == nil {
			ms = append(ms, m)
		}
	}
	return ms[0], ms[1:]
}

// Solve runs the first method of the chain alone; rpca.Solve, which
// resolves the chain, is the entry point.
func (a *Auto) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	first, _ := a.Resolve(p, s)
	return first.Solve(ctx, p, s)
}

// Names are the names of the table.
func Names() []string {
	names := make([]string, len(Table))
	for i, e := range Table {
		names[i] = e.Name
	}
	return names
}

// ErrUnknown is a name that is not in the table.
var ErrUnknown = errors.New("methods: unknown method")

// ErrNeedsFull is a method that needs a fully observed matrix, asked for
// partial data.
var ErrNeedsFull = errors.New("methods: the method needs a fully observed matrix")

// New builds the method called name (AutoName or "": Auto) for data that
// are partially observed or not.
func New(name string, partial bool, o Options) (rpca.Method, error) {
	if name == AutoName || name == "" {
		return &Auto{Options: o}, nil
	}
	m, err := newNamed(name, o)
	if err != nil {
		return nil, err
	}
	if partial && m.Capabilities().DenseOnly {
		return nil, fmt.Errorf("%w: %s", ErrNeedsFull, name)
	}
	return m, nil
}

// newNamed builds the method of the table called name.
func newNamed(name string, o Options) (rpca.Method, error) {
	for _, e := range Table {
		if e.Name == name {
			return e.New(o), nil
		}
	}
	return nil, fmt.Errorf("%w %q (want %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}
