// Package methods builds a robust-PCA method from its name, for programs
// that take the method as configuration (the rpca command's --method).
// Each method's needs (a full matrix, …) are its rpca.Capabilities.
package methods

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/altproj"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/ialm"
)

// Entry is one method of the table.
type Entry struct {
	Name    string
	Summary string // what it is, with its paper
	// New returns the method with its defaults, whose settings Configure
	// sets by name.
	New func() rpca.Configurable
}

// Table lists the methods, in the order of help texts.
var Table = []Entry{
	{"accaltproj", "accelerated alternating projections (Cai, Cai, Wei 2019)", func() rpca.Configurable { return &accaltproj.Method{} }},
	{"gd", "the paper's gradient descent, Algorithms 1 and 2", func() rpca.Configurable { return &gd.Method{} }},
	{"scaledgd", "gradient descent with scaled steps (Tong, Ma, Chi 2021)", func() rpca.Configurable { return &gd.Method{Scaled: true} }},
	{"als", "alternating least squares with the paper's sparse estimator", func() rpca.Configurable { return &als.Method{} }},
	{"altproj", "alternating projections (Netrapalli et al. 2014)", func() rpca.Configurable { return &altproj.Method{} }},
	{"ialm", "inexact augmented Lagrangian (Lin, Chen, Ma 2010)", func() rpca.Configurable { return &ialm.Method{} }},
}

// ErrUnusedParam is a setting given to a method that does not have it
// (UnusedParamError).
var ErrUnusedParam = errors.New("methods: the method has no such setting")

// UnusedParamError is a setting given to a method that has none of that
// name: Method names the method (for auto, its chain), TakenBy the
// methods of the table that have it (none: the name is unknown).
type UnusedParamError struct {
	Param   string
	Method  string
	TakenBy []string
}

func (e *UnusedParamError) Error() string {
	if len(e.TakenBy) == 0 {
		return fmt.Sprintf("methods: no method has a setting %q", e.Param)
	}
	return fmt.Sprintf("methods: %s has no setting %q (%s has)", e.Method, e.Param, strings.Join(e.TakenBy, ", "))
}

// Unwrap returns ErrUnusedParam.
func (e *UnusedParamError) Unwrap() error { return ErrUnusedParam }

// ParamError is a setting whose value the method cannot take.
type ParamError struct {
	Param, Value string
	Err          error // what the value must be
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("methods: %s = %q: %v", e.Param, e.Value, e.Err)
}

// Unwrap returns the value's error.
func (e *ParamError) Unwrap() error { return e.Err }

// Configure sets the settings of m named in values (name → text) through
// m's Params, in the order of the names. A name m does not have is an
// *UnusedParamError, a value it cannot take a *ParamError.
func Configure(m rpca.Method, values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	c, _ := m.(rpca.Configurable)
	var ps []rpca.Param
	if c != nil {
		ps = c.Params()
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		k := slices.IndexFunc(ps, func(p rpca.Param) bool { return p.Name == name })
		if k < 0 {
			return &UnusedParamError{Param: name, Method: m.Name(), TakenBy: takenBy(name)}
		}
		if err := ps[k].Value.Set(values[name]); err != nil {
			return &ParamError{Param: name, Value: values[name], Err: err}
		}
	}
	return nil
}

// takenBy returns the methods of the table that have the setting name.
func takenBy(name string) []string {
	var out []string
	for _, e := range Table {
		if slices.ContainsFunc(e.New().Params(), func(p rpca.Param) bool { return p.Name == name }) {
			out = append(out, e.Name)
		}
	}
	return out
}

// Check reports whether the method called method takes value for its
// setting param (a *ParamError if not), without keeping it.
func Check(method, param, value string) error {
	m, err := newNamed(method)
	if err != nil {
		return err
	}
	return Configure(m, map[string]string{param: value})
}

// Takes reports whether the method called method has the setting param.
func Takes(method, param string) bool {
	m, err := newNamed(method)
	return err == nil && slices.ContainsFunc(m.Params(), func(p rpca.Param) bool { return p.Name == param })
}

// ParamUsage is the usage of the setting param among the methods names
// alone, grouped as in Params.
func ParamUsage(param string, names []string) string {
	var parts []string
	var seen []string
	for _, name := range names {
		m, err := newNamed(name)
		if err != nil {
			continue
		}
		for _, p := range m.Params() {
			if p.Name != param {
				continue
			}
			if k := slices.Index(seen, p.Usage); k >= 0 {
				parts[k] = strings.Replace(parts[k], ": ", ", "+name+": ", 1)
				continue
			}
			seen = append(seen, p.Usage)
			parts = append(parts, name+": "+p.Usage)
		}
	}
	return strings.Join(parts, "; ")
}

// ParamDoc is one setting name of the table: the methods that have it and
// what it does in each, for help texts.
type ParamDoc struct {
	Name    string
	Usage   string // "gd, scaledgd: …; als: …", methods with one text grouped
	Methods []string
	Bool    bool   // a switch (no value on a command line)
	Kind    string // the value's type in help texts ("float", "string"; "" for a switch)
}

// Params returns every setting name of the table, sorted.
func Params() []ParamDoc {
	type use struct {
		methods []string
		usage   string
	}
	byName := map[string][]use{}
	bools := map[string]bool{}
	kinds := map[string]string{}
	for _, e := range Table {
		for _, p := range e.New().Params() {
			us := byName[p.Name]
			k := slices.IndexFunc(us, func(u use) bool { return u.usage == p.Usage })
			if k < 0 {
				us = append(us, use{usage: p.Usage})
				k = len(us) - 1
			}
			us[k].methods = append(us[k].methods, e.Name)
			byName[p.Name] = us
			if b, ok := p.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				bools[p.Name] = true
			}
			if k, ok := p.Value.(interface{ Kind() string }); ok {
				kinds[p.Name] = k.Kind()
			}
		}
	}
	var docs []ParamDoc
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		d := ParamDoc{Name: name, Bool: bools[name], Kind: kinds[name]}
		var parts []string
		for _, u := range byName[name] {
			parts = append(parts, strings.Join(u.methods, ", ")+": "+u.usage)
			d.Methods = append(d.Methods, u.methods...)
		}
		d.Usage = strings.Join(parts, "; ")
		docs = append(docs, d)
	}
	return docs
}

// AutoName is the name that picks the method by the data (Auto).
const AutoName = "auto"

// AutoChain is what AutoName stands for: the methods tried in order, the
// next when an answer is not verified (rpca.Resolver). For a fully
// observed matrix, AccAltProj first (its iteration count does not grow
// with the condition number), then scaled gradient steps, then IALM
// (whose nuclear norm finds the data's rank when the rank asked for is
// above it); for partial observations alternating least squares first
// (it verified wherever the paper's gradient method or scaled steps did,
// 4–30 times faster, across κ and offsets), then the paper's gradient
// method, then scaled steps (AccAltProj and IALM need every entry).
// docs/verification.md and docs/performance.md have the measurements
// behind the order.
func AutoChain(partial bool) []string {
	if partial {
		return []string{"als", "gd", "scaledgd"}
	}
	return []string{"accaltproj", "scaledgd", "ialm"}
}

// Auto is the method of AutoName: it runs the first method of AutoChain
// for the data and, through rpca.Solve, the next ones while the answer is
// not verified. Result.Method names the method whose answer was kept and
// Result.Attempts every one that ran.
type Auto struct {
	// Values are settings by name (Configure), each given to the methods
	// of the chain that have it.
	Values map[string]string
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
	ms, _ := a.chain(p.Observed != nil)
	return ms[0], ms[1:]
}

// Solve runs the first method of the chain alone; rpca.Solve, which
// resolves the chain, is the entry point.
func (a *Auto) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	first, _ := a.Resolve(p, s)
	return first.Solve(ctx, p, s)
}

// chain builds AutoChain(partial) with each method given the values it
// has; a value no method of the chain has is an *UnusedParamError, a
// value one cannot take a *ParamError.
func (a *Auto) chain(partial bool) ([]rpca.Method, error) {
	names := AutoChain(partial)
	var ms []rpca.Method
	used := map[string]bool{}
	for _, name := range names {
		m, _ := newNamed(name)
		own := map[string]string{}
		for _, p := range m.Params() {
			if v, ok := a.Values[p.Name]; ok {
				own[p.Name], used[p.Name] = v, true
			}
		}
		if err := Configure(m, own); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	for _, name := range slices.Sorted(maps.Keys(a.Values)) {
		if !used[name] {
			return nil, &UnusedParamError{Param: name, Method: AutoName + " (" + strings.Join(names, ", ") + ")", TakenBy: takenBy(name)}
		}
	}
	return ms, nil
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

// New builds the method called name (AutoName or "": Auto) for data that
// are partially observed or not, with the settings values (Configure). A
// method that needs a fully observed matrix, asked for partial data, is
// an error wrapping rpca.ErrDenseOnly.
func New(name string, partial bool, values map[string]string) (rpca.Method, error) {
	if name == AutoName || name == "" {
		a := &Auto{Values: values}
		if _, err := a.chain(partial); err != nil {
			return nil, err
		}
		return a, nil
	}
	m, err := newNamed(name)
	if err != nil {
		return nil, err
	}
	if partial && m.Capabilities().DenseOnly {
		return nil, fmt.Errorf("methods: %s: %w", name, rpca.ErrDenseOnly)
	}
	if err := Configure(m, values); err != nil {
		return nil, err
	}
	return m, nil
}

// newNamed builds the method of the table called name.
func newNamed(name string) (rpca.Configurable, error) {
	for _, e := range Table {
		if e.Name == name {
			return e.New(), nil
		}
	}
	return nil, fmt.Errorf("%w %q (want %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}
