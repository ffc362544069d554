// Package methods builds a robust-PCA method from its name, for programs
// that take the method as configuration (the rpca command's --method).
// Each method's needs (a full matrix, …) are its rpca.Capabilities.
package methods

import (
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

// Auto is the name AutoName stands for: AccAltProj for a fully observed
// matrix (its iteration count does not grow with the condition number,
// and it recovers offsets and constant matrices), the paper's gradient
// method for partial observations (AccAltProj needs every entry).
func Auto(partial bool) string {
	if partial {
		return "gd"
	}
	return "accaltproj"
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

// New builds the method called name (AutoName or "": Auto(partial)) for
// data that are partially observed or not.
func New(name string, partial bool, o Options) (rpca.Method, error) {
	if name == AutoName || name == "" {
		name = Auto(partial)
	}
	for _, e := range Table {
		if e.Name != name {
			continue
		}
		m := e.New(o)
		if partial && m.Capabilities().DenseOnly {
			return nil, fmt.Errorf("%w: %s", ErrNeedsFull, name)
		}
		return m, nil
	}
	return nil, fmt.Errorf("%w %q (want %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}
