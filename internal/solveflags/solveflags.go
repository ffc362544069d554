// Package solveflags holds the command-line flags that every solving
// command shares (--method, --rank, --alpha, the stopping rules, the
// progress), and the methods' own settings as flags, registered from the
// methods' declarations (methods.Params) so that each is defined once.
package solveflags

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/methods"
)

// Flags are the flags shared by the commands: each name has one
// meaning everywhere, and a command takes the ones its mask selects (as
// the go command does with its build flags). The values set before
// Register are the defaults.
type Flags struct {
	Method     string  // --method
	Rank       int     // --rank; 0: not given, or auto (where RankAuto allows it)
	RankAuto   bool    // --rank auto is accepted
	Alpha      float64 // --alpha
	Gamma      float64 // --gamma (rpca experiment)
	Step       float64 // --step (rpca experiment)
	SampleRate float64 // --p
	Tol        float64 // --tol
	FactorTol  float64 // --factor-tol
	MaxIter    int     // --max-iter
	Seed       uint64  // --seed
	Workers    int     // --workers
	Quiet      bool    // --quiet
	Verbose    bool    // --verbose
	Progress   string  // --progress: auto, bar, lines or off
	JSON       bool    // --json
	AllowAuto  bool    // --method auto is accepted (and the default)
	// Params are the methods' own settings given on the command line
	// (methods.Configure), by name; ParamMethods the methods whose
	// settings the command registers (nil: all of methods.Table).
	Params       map[string]string
	ParamMethods []string
}

// Mask selects shared flags.
type Mask uint

// The shared flags, one bit each.
const (
	Method Mask = 1 << iota
	Rank
	Alpha
	Gamma  // rpca experiment's --gamma
	Step   // rpca experiment's --step
	Params // the methods' own settings (methods.Params)
	Sample // --p
	Tol
	FactorTol
	MaxIter
	Seed
	Workers
	Quiet
	Verbose
	JSON

	// Solve are the flags of a command that solves one problem.
	Solve = Method | Rank | Alpha | Params | Sample |
		Tol | FactorTol | MaxIter | Seed | Workers | Quiet | Verbose | JSON
)

// flagDef is one shared flag: its bit, name, variable and meaning.
type flagDef struct {
	bit   Mask
	name  string
	ptr   any // *string, *uint64, *bool or flag.Value
	usage string
}

// defs are the shared flags, each with its one meaning.
func (f *Flags) defs() []flagDef {
	rankUsage := "rank `r` of the low-rank part, a positive integer"
	if f.RankAuto {
		rankUsage += ", or auto to choose it from the data"
	}
	const orDef = "a finite non-negative number (0: the default)"
	tolerance := func(p *float64) flag.Value {
		return cliflag.Checked(p, cliflag.Finite, "a finite number (0: the default, < 0: off)")
	}
	return []flagDef{
		{Method, "method", &f.Method, methodHelp(f.Method)},
		{Rank, "rank", &rankValue{&f.Rank, f.RankAuto}, rankUsage},
		{Alpha, "alpha", cliflag.Checked(&f.Alpha, cliflag.Fraction, "in [0, 1)"), "α, the largest fraction of corrupted entries per row/column, in [0, 1)"},
		{Gamma, "gamma", cliflag.Checked(&f.Gamma, cliflag.OrDefault, orDef), "γ of the gradient runs: the sparse estimator keeps ⌊γα·d⌋ per line in the iterations (0: 2 full, 3 partial)"},
		{Step, "step", cliflag.Checked(&f.Step, cliflag.OrDefault, orDef), fmt.Sprintf("step constant c in η = c/σ̂₁ of the gradient runs (0: %g full, %g partial)", gd.DefaultStepDense, gd.DefaultStepPartial)},
		{Sample, "p", cliflag.Checked(&f.SampleRate, cliflag.Rate, "in (0, 1]"), "sampling rate: p < 1 keeps a random fraction p of the entries and runs Algorithm 2 on them"},
		{Tol, "tol", tolerance(&f.Tol), "relative residual tolerance ‖Y−UVᵀ−S‖/‖Y‖ (0: method default; <0: off)"},
		{FactorTol, "factor-tol", tolerance(&f.FactorTol), "gd: relative factor-change tolerance (0: default; <0: off)"},
		{MaxIter, "max-iter", cliflag.Checked(&f.MaxIter, cliflag.AtLeast(0), "non-negative (0: the method's default)"), "iteration cap (0: method default)"},
		{Seed, "seed", &f.Seed, "random seed"},
		{Workers, "workers", cliflag.Checked(&f.Workers, cliflag.AtLeast(0), "non-negative (0: all cores)"), "goroutines for the parallel kernels (0: all cores)"},
		{Quiet, "quiet", &f.Quiet, "no progress output on stderr (--progress off)"},
		{Quiet, "progress", cliflag.Checked(&f.Progress, cliflag.OneOf("auto", "bar", "lines", "off"), "auto, bar, lines or off"), "progress on stderr: auto (an updating bar on a terminal, else a line every 5 s), bar, lines (one per iteration, as --verbose) or off (as --quiet)"},
		{Verbose, "verbose", &f.Verbose, "one progress line per iteration on stderr, even when it is not a terminal"},
		{JSON, "json", &f.JSON, "print the summary as one JSON object on stdout"},
	}
}

// Register adds the flags of mask to fs, with the values already in f
// (the method: auto when AllowAuto is set, gd otherwise) as defaults.
func (f *Flags) Register(fs *flag.FlagSet, mask Mask) {
	f.Method, f.SampleRate, f.Seed, f.Progress = "gd", 1, 1, "auto"
	if f.AllowAuto {
		f.Method = Auto
	}
	if mask&Params != 0 {
		f.registerParams(fs)
	}
	for _, d := range f.defs() {
		if mask&d.bit == 0 {
			continue
		}
		switch p := d.ptr.(type) {
		case *string:
			fs.StringVar(p, d.name, *p, d.usage)
		case *uint64:
			fs.Uint64Var(p, d.name, *p, d.usage)
		case *bool:
			fs.BoolVar(p, d.name, *p, d.usage)
		case flag.Value:
			fs.Var(p, d.name, d.usage)
		}
	}
}

// registerParams adds a flag for each setting of the methods of
// f.ParamMethods (methods.Params). A value is checked as it is parsed, by
// a method that has the setting, and kept by name for NewMethod.
func (f *Flags) registerParams(fs *flag.FlagSet) {
	f.Params = map[string]string{}
	for _, d := range methods.Params() {
		var own []string
		for _, m := range d.Methods {
			if f.ParamMethods == nil || slices.Contains(f.ParamMethods, m) {
				own = append(own, m)
			}
		}
		if len(own) == 0 {
			continue
		}
		usage := d.Usage
		if len(own) < len(d.Methods) {
			usage = methods.ParamUsage(d.Name, own)
		}
		fs.Var(&paramFlag{name: d.Name, method: own[0], values: f.Params, isBool: d.Bool, valueKind: d.Kind}, d.Name, usage)
	}
}

// paramFlag is one method setting on the command line: its text, checked
// by the method named method, is kept in values.
type paramFlag struct {
	name, method string
	values       map[string]string
	isBool       bool
	valueKind    string // for help texts
}

// Kind is the name -h shows for the value (cliflag.PrintDefaults).
func (p *paramFlag) Kind() string { return p.valueKind }

func (p *paramFlag) String() string {
	if p.values == nil {
		return ""
	}
	return p.values[p.name]
}

func (p *paramFlag) Set(s string) error {
	if err := methods.Check(p.method, p.name, s); err != nil {
		var pe *methods.ParamError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	p.values[p.name] = s
	return nil
}

func (p *paramFlag) IsBoolFlag() bool { return p.isBool }

// ParamError is the command line's error for an error of
// methods.New or methods.Configure: a usage error naming the flag.
func ParamError(err error, method string) error {
	var unused *methods.UnusedParamError
	var bad *methods.ParamError
	switch {
	case errors.As(err, &unused) && len(unused.TakenBy) > 0:
		return cliflag.Usagef("--%s does not apply to --method %s (it applies to %s)", unused.Param, method, strings.Join(unused.TakenBy, ", "))
	case errors.As(err, &unused):
		return cliflag.Usagef("--%s: no method has this setting", unused.Param)
	case errors.As(err, &bad):
		return cliflag.Usagef("invalid value %q for --%s: %v", bad.Value, bad.Param, bad.Err)
	}
	return err
}

// rankValue is --rank: a positive integer, or auto (stored as 0) where
// the command can choose the rank from the data; there, 0 is the older
// spelling of auto.
type rankValue struct {
	r    *int
	auto bool
}

func (v *rankValue) String() string {
	switch {
	case v.r == nil || (*v.r == 0 && !v.auto):
		return ""
	case *v.r == 0:
		return "auto"
	}
	return strconv.Itoa(*v.r)
}

func (v *rankValue) Set(s string) error {
	if v.auto && (s == "auto" || s == "0") {
		*v.r = 0
		return nil
	}
	want := map[bool]string{false: "a positive integer", true: "a positive integer or auto"}[v.auto]
	return cliflag.Checked(v.r, cliflag.AtLeast(1), want).Set(s)
}

// Settings returns the shared settings.
func (f *Flags) Settings() rpca.Settings {
	return rpca.Settings{
		Rank:    f.Rank,
		Alpha:   f.Alpha,
		Seed:    f.Seed,
		Workers: f.Workers,
		Stop: rpca.Stop{
			MaxIter:     f.MaxIter,
			ResidualTol: f.Tol,
			FactorTol:   f.FactorTol,
		},
	}
}

// Auto is the default --method of the solving commands.
const Auto = methods.AutoName

// methodHelp is the usage text of --method.
func methodHelp(def string) string {
	var b strings.Builder
	b.WriteString("method:")
	if def == Auto {
		b.WriteString(" auto (accaltproj for a fully observed matrix, als for partial observations or --p < 1),")
	}
	for i, m := range methods.Table {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s (%s)", m.Name, m.Summary)
	}
	return b.String()
}

// NewMethod builds the method chosen by --method for a problem that is
// partially observed (partial, or --p < 1) or not. A dense-only method on
// partial data is a usage error; auto picks by the data. Subsampling by
// --p is the caller's: the loader's, the generator's or the video's.
func (f *Flags) NewMethod(partial ...bool) (rpca.Method, error) {
	part := f.SampleRate < 1 || (len(partial) > 0 && partial[0])
	names := methods.Names()
	if f.AllowAuto {
		names = append([]string{Auto}, names...)
	}
	if !slices.Contains(names, f.Method) {
		return nil, cliflag.Usagef("unknown --method %q (want %s)", f.Method, strings.Join(names, ", "))
	}
	m, err := methods.New(f.Method, part, f.Params)
	switch {
	case errors.Is(err, rpca.ErrDenseOnly) && f.SampleRate < 1:
		return nil, cliflag.Usagef("--method %s needs the full matrix; --p < 1 (subsampling) works with --method auto, gd, scaledgd or als only", f.Method)
	case errors.Is(err, rpca.ErrDenseOnly):
		return nil, cliflag.Usagef("--method %s needs a fully observed matrix, but the data are partially observed; use --method auto, als, gd or scaledgd", f.Method)
	case err != nil:
		return nil, ParamError(err, f.Method)
	}
	return m, nil
}
