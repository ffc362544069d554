package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/note"
	"github.com/rpca-gd/rpca/internal/progress"
	"github.com/rpca-gd/rpca/internal/solveflags"
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

// newProgress is the progress printer of a command on stderr (--progress):
// an updating line on a terminal, a line every few seconds off one (a
// pipe, a log, a notebook), one line per iteration with --verbose,
// nothing with --quiet.
func newProgress(e *env, f *solveflags.Flags) *progress.Printer {
	var p *progress.Printer
	switch {
	case f.Quiet || f.Progress == "off":
		p = progress.New(e.stderr, progress.Off, 0)
	case f.Verbose || f.Progress == "lines":
		p = progress.New(e.stderr, progress.Lines, 0)
	case f.Progress == "bar" || e.stderrIsTerminal:
		p = progress.New(e.stderr, progress.Bar, progress.TermWidth(e.stderr))
	default:
		p = progress.New(e.stderr, progress.Periodic, 0)
	}
	p.SetGoal(f.MaxIter, max(f.Tol, 0))
	return p
}

// printNotes prints the notes of a result on stderr unless quiet, each
// with the command line's remedy for its kind (remedy may be nil).
func printNotes(e *env, quiet bool, notes []note.Note, remedy map[note.Kind]string) {
	if quiet {
		return
	}
	for _, n := range notes {
		kind := "note"
		if n.Warning {
			kind = "warning"
		}
		fmt.Fprintf(e.stderr, "rpca: %s: %s%s\n", kind, n.Text, remedy[n.Kind])
	}
}

// printReport prints rep on stdout: as indented JSON with --json, else
// as its text.
func printReport(e *env, asJSON bool, rep fmt.Stringer) error {
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	_, err := fmt.Fprintln(e.stdout, rep.String())
	return err
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
