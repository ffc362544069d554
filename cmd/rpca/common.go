package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/progress"
	"github.com/rpca-gd/rpca/methods"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
)

// helpTexts are the descriptions of the commands, help/NAME.txt.
//
//go:embed help/*.txt
var helpTexts embed.FS

// helpText returns the description of command name; vars fills in its
// {{key}} placeholders.
func helpText(name string, vars map[string]string) string {
	b, err := helpTexts.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("rpca: no help text for " + name) // a command without help/NAME.txt is a build mistake
	}
	text := string(b)
	for k, v := range vars {
		text = strings.ReplaceAll(text, "{{"+k+"}}", v)
	}
	return strings.TrimSpace(text)
}

// newFlagSet returns a flag set whose errors are returned, not printed
// with os.Exit, and whose usage text starts with the command's help text
// (help/NAME.txt, with vars, which may be nil, filled in).
func newFlagSet(e *env, name, synopsis string, vars map[string]string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := e.stdout
		fmt.Fprintf(w, "Usage: rpca %s %s\n\n%s\n\nFlags:\n", name, synopsis, helpText(name, vars))
		cliflag.PrintDefaults(w, fs)
	}
	return fs
}

// parseCommand registers a command's flags (F's register method) on a new flag set and parses args.
func parseCommand[F any, P interface {
	*F
	register(*env) *flag.FlagSet
}](e *env, args []string) (P, *flag.FlagSet, error) {
	f := P(new(F))
	fs := f.register(e)
	return f, fs, parse(fs, args)
}

// withFlags makes a command's run function from one that takes its
// parsed flags (see parseCommand).
func withFlags[F any, P interface {
	*F
	register(*env) *flag.FlagSet
}](run func(ctx context.Context, e *env, f P, fs *flag.FlagSet) error) func(context.Context, *env, []string) error {
	return func(ctx context.Context, e *env, args []string) error {
		f, fs, err := parseCommand[F, P](e, args)
		if err != nil {
			return err
		}
		return run(ctx, e, f, fs)
	}
}

// parse parses args with cliflag.Parse; a usage error names the command
// and its help.
func parse(fs *flag.FlagSet, args []string) error {
	err := cliflag.Parse(fs, args)
	if errors.Is(err, cliflag.ErrUsage) {
		return cliflag.Usagef("%s: %w (run 'rpca %s -h' for help)", fs.Name(), err, fs.Name())
	}
	return err
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// solveFlags are the flags shared by the commands: each name has one
// meaning everywhere, and a command takes the ones its mask selects (as
// the go command does with its build flags). The values set before
// register are the defaults.
type solveFlags struct {
	method      string
	rank        int // 0: not given, or auto (--rank auto, where allowed)
	rankAuto    bool
	alpha       float64
	gamma, step float64 // rpca experiment's --gamma and --step
	p           float64
	tol         float64
	factorTol   float64
	maxIter     int
	seed        uint64
	workers     int
	quiet       bool
	verbose     bool
	progress    string // --progress: auto, bar, lines or off
	jsonOut     bool
	allowAuto   bool // --method auto is accepted (and the default)
	// params are the methods' own settings given on the command line
	// (methods.Configure), by name; paramMethods the methods whose
	// settings the command registers (nil: all of methods.Table).
	params       map[string]string
	paramMethods []string
}

// flagMask selects shared flags.
type flagMask uint

// The shared flags, one bit each.
const (
	flagMethod flagMask = 1 << iota
	flagRank
	flagAlpha
	flagGamma  // rpca experiment's --gamma
	flagStep   // rpca experiment's --step
	flagParams // the methods' own settings (methods.Params)
	flagSample // --p
	flagTol
	flagFactorTol
	flagMaxIter
	flagSeed
	flagWorkers
	flagQuiet
	flagVerbose
	flagJSON

	// flagsSolve are the flags of a command that solves one problem.
	flagsSolve = flagMethod | flagRank | flagAlpha | flagParams | flagSample |
		flagTol | flagFactorTol | flagMaxIter | flagSeed | flagWorkers | flagQuiet | flagVerbose | flagJSON
)

// flagDef is one shared flag: its bit, name, variable and meaning.
type flagDef struct {
	bit   flagMask
	name  string
	ptr   any // *string, *uint64, *bool or flag.Value
	usage string
}

// defs are the shared flags, each with its one meaning.
func (f *solveFlags) defs() []flagDef {
	rankUsage := "rank `r` of the low-rank part, a positive integer"
	if f.rankAuto {
		rankUsage += ", or auto to choose it from the data"
	}
	const orDef = "a finite non-negative number (0: the default)"
	tolerance := func(p *float64) flag.Value {
		return cliflag.Checked(p, cliflag.Finite, "a finite number (0: the default, < 0: off)")
	}
	return []flagDef{
		{flagMethod, "method", &f.method, methodHelp(f.method)},
		{flagRank, "rank", &rankValue{&f.rank, f.rankAuto}, rankUsage},
		{flagAlpha, "alpha", cliflag.Checked(&f.alpha, cliflag.Fraction, "in [0, 1)"), "α, the largest fraction of corrupted entries per row/column, in [0, 1)"},
		{flagGamma, "gamma", cliflag.Checked(&f.gamma, cliflag.OrDefault, orDef), "γ of the gradient runs: the sparse estimator keeps ⌊γα·d⌋ per line in the iterations (0: 2 full, 3 partial)"},
		{flagStep, "step", cliflag.Checked(&f.step, cliflag.OrDefault, orDef), fmt.Sprintf("step constant c in η = c/σ̂₁ of the gradient runs (0: %g full, %g partial)", gd.DefaultStepDense, gd.DefaultStepPartial)},
		{flagSample, "p", cliflag.Checked(&f.p, cliflag.Rate, "in (0, 1]"), "sampling rate: p < 1 keeps a random fraction p of the entries and runs Algorithm 2 on them"},
		{flagTol, "tol", tolerance(&f.tol), "relative residual tolerance ‖Y−UVᵀ−S‖/‖Y‖ (0: method default; <0: off)"},
		{flagFactorTol, "factor-tol", tolerance(&f.factorTol), "gd: relative factor-change tolerance (0: default; <0: off)"},
		{flagMaxIter, "max-iter", cliflag.Checked(&f.maxIter, cliflag.AtLeast(0), "non-negative (0: the method's default)"), "iteration cap (0: method default)"},
		{flagSeed, "seed", &f.seed, "random seed"},
		{flagWorkers, "workers", cliflag.Checked(&f.workers, cliflag.AtLeast(0), "non-negative (0: all cores)"), "goroutines for the parallel kernels (0: all cores)"},
		{flagQuiet, "quiet", &f.quiet, "no progress output on stderr (--progress off)"},
		{flagQuiet, "progress", cliflag.Checked(&f.progress, cliflag.OneOf("auto", "bar", "lines", "off"), "auto, bar, lines or off"), "progress on stderr: auto (an updating bar on a terminal, else a line every 5 s), bar, lines (one per iteration, as --verbose) or off (as --quiet)"},
		{flagVerbose, "verbose", &f.verbose, "one progress line per iteration on stderr, even when it is not a terminal"},
		{flagJSON, "json", &f.jsonOut, "print the summary as one JSON object on stdout"},
	}
}

// register adds the flags of mask to fs, with the values already in f
// (the method: auto when allowAuto is set, gd otherwise) as defaults.
func (f *solveFlags) register(fs *flag.FlagSet, mask flagMask) {
	f.method, f.p, f.seed, f.progress = "gd", 1, 1, "auto"
	if f.allowAuto {
		f.method = methodAuto
	}
	if mask&flagParams != 0 {
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
// f.paramMethods (methods.Params). A value is checked as it is parsed, by
// a method that has the setting, and kept by name for newMethod.
func (f *solveFlags) registerParams(fs *flag.FlagSet) {
	f.params = map[string]string{}
	for _, d := range methods.Params() {
		var own []string
		for _, m := range d.Methods {
			if f.paramMethods == nil || slices.Contains(f.paramMethods, m) {
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
		fs.Var(&paramFlag{name: d.Name, method: own[0], values: f.params, isBool: d.Bool, valueKind: d.Kind}, d.Name, usage)
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

func (p *paramFlag) kind() string { return p.valueKind }

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

// paramError is the command line's error for an error of
// methods.New or methods.Configure: a usage error naming the flag.
func paramError(err error, method string) error {
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

// settings returns the shared settings.
func (f *solveFlags) settings() rpca.Settings {
	return rpca.Settings{
		Rank:    f.rank,
		Alpha:   f.alpha,
		Seed:    f.seed,
		Workers: f.workers,
		Stop: rpca.Stop{
			MaxIter:     f.maxIter,
			ResidualTol: f.tol,
			FactorTol:   f.factorTol,
		},
	}
}

// methodAuto is the default --method of the solving commands.
const methodAuto = methods.AutoName

// methodHelp is the usage text of --method.
func methodHelp(def string) string {
	var b strings.Builder
	b.WriteString("method:")
	if def == methodAuto {
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

// newMethod builds the method chosen by --method for a problem that is
// partially observed (partial, or --p < 1) or not. A dense-only method on
// partial data is a usage error; auto picks by the data. Subsampling by
// --p is the caller's: the loader's, the generator's or the video's.
func (f *solveFlags) newMethod(partial ...bool) (rpca.Method, error) {
	part := f.p < 1 || (len(partial) > 0 && partial[0])
	names := methods.Names()
	if f.allowAuto {
		names = append([]string{methodAuto}, names...)
	}
	if !slices.Contains(names, f.method) {
		return nil, cliflag.Usagef("unknown --method %q (want %s)", f.method, strings.Join(names, ", "))
	}
	m, err := methods.New(f.method, part, f.params)
	switch {
	case errors.Is(err, rpca.ErrDenseOnly) && f.p < 1:
		return nil, cliflag.Usagef("--method %s needs the full matrix; --p < 1 (subsampling) works with --method auto, gd, scaledgd or als only", f.method)
	case errors.Is(err, rpca.ErrDenseOnly):
		return nil, cliflag.Usagef("--method %s needs a fully observed matrix, but the data are partially observed; use --method auto, als, gd or scaledgd", f.method)
	case err != nil:
		return nil, paramError(err, f.method)
	}
	return m, nil
}

// newProgress is the progress printer of a command on stderr (--progress):
// an updating line on a terminal, a line every few seconds off one (a
// pipe, a log, a notebook), one line per iteration with --verbose,
// nothing with --quiet.
func newProgress(e *env, f *solveFlags) *progress.Printer {
	var p *progress.Printer
	switch {
	case f.quiet || f.progress == "off":
		p = progress.New(e.stderr, progress.Off, 0)
	case f.verbose || f.progress == "lines":
		p = progress.New(e.stderr, progress.Lines, 0)
	case f.progress == "bar" || e.stderrIsTerminal:
		p = progress.New(e.stderr, progress.Bar, e.termWidth())
	default:
		p = progress.New(e.stderr, progress.Periodic, 0)
	}
	p.SetGoal(f.maxIter, max(f.tol, 0))
	return p
}

// reportVerification tells on stderr (unless --quiet) what became of
// the verification of res: a note for each method that --method auto
// tried and left (the next was tried), and a warning when the answer
// kept is not verified, naming the check that failed and its remedy.
func reportVerification(e *env, f *solveFlags, res *rpca.Result) {
	if f.quiet || res == nil {
		return
	}
	if res.Verification == nil {
		warnUnconverged(e, f, res)
		return
	}
	for i, a := range res.Attempts {
		if i == len(res.Attempts)-1 || a.Verified {
			break
		}
		why := fmt.Sprintf("not verified (%s check)", a.Failed)
		if a.Err != "" {
			why = "failed: " + a.Err
		}
		next := "trying " + res.Attempts[i+1].Method
		if res.Attempts[i+1].Continued {
			next = "letting it go on from that answer"
		}
		fmt.Fprintf(e.stderr, "rpca: note: %s's answer was %s; %s\n", a.Method, why, next)
	}
	if len(res.Attempts) > 1 && res.Verification.Verified {
		fmt.Fprintf(e.stderr, "rpca: note: kept %s's answer, which is verified\n", res.Method)
	}
	if v := res.Verification; !v.Verified {
		fmt.Fprintf(e.stderr, "rpca: warning: %s's answer is %s\n", res.Method, v)
	}
}

// warnUnconverged prints a warning when the method of res stopped at its
// cap. rpca complete uses it: its fits are regularised estimates (a
// ridge, a prior), judged by their held-out error, not exact
// decompositions, which rpca.Verify would refuse whatever their quality.
func warnUnconverged(e *env, f *solveFlags, res *rpca.Result) {
	if f.quiet || res == nil || res.Stop.Converged() {
		return
	}
	fmt.Fprintf(e.stderr, "rpca: warning: %s stopped (%s) after %d iterations without converging (residual %s); "+
		"its answer may be inaccurate: raise --max-iter\n",
		res.Method, res.Stop, res.Iterations, metrics.Format("%.3g", metrics.Finite(res.Residual)))
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// outFlags are the flags of commands that write an output directory.
type outFlags struct {
	out    string
	force  bool
	format string
}

func (o *outFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.out, "out", "", "output directory (required); created complete or not at all")
	fs.BoolVar(&o.force, "force", false, "replace the output directory if rpca wrote it (it holds "+outdir.OwnerMarker+"); never the current directory, its parents, home, or a directory holding an input")
	cliflag.Var(fs, &o.format, "format", "npy", cliflag.OneOf("npy", "csv"), "npy or csv", "format of the matrices written: npy (NumPy float64) or csv")
}

// validate checks the output flags of command cmd.
func (o *outFlags) validate(cmd string) error {
	if o.out == "" {
		return cliflag.Usagef("%s: --out DIR is required (run 'rpca %s -h' for help)", cmd, cmd)
	}
	return nil
}

// checkOutputDir fails early, before any long work, if dir exists and
// may not be replaced or cannot be created.
func checkOutputDir(dir string, force bool, inputs ...string) error {
	return outDirError(outdir.Try(dir, force, inputs...), dir)
}

// outDirError rewords the "directory exists" error for the command line.
func outDirError(err error, dir string) error {
	if errors.Is(err, outdir.ErrExists) {
		return fmt.Errorf("output directory %s exists and is not empty; use --force to replace it, or choose another --out", dir)
	}
	return err
}

// headerHint names the command line's flags (--header, --ignore-extra) in
// a reader's hint about a header line or extra fields.
func headerHint(err error) error {
	var fe *formats.Error
	if errors.As(err, &fe) {
		fe.HintOption = map[formats.Hint]string{formats.HintHeader: "use --header", formats.HintIgnoreExtra: "use --ignore-extra"}[fe.Hint]
	}
	return err
}

// rule is one check of the flags: when bad, msg is the usage error.
type rule struct {
	bad bool
	msg string
}

// firstBroken returns the usage error of the first bad rule, nil if none.
func firstBroken(rules ...rule) error {
	for _, r := range rules {
		if r.bad {
			return cliflag.Usagef("%s", r.msg)
		}
	}
	return nil
}
