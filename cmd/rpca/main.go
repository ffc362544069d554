// Command rpca splits a matrix into a low-rank part and a sparse part of
// gross corruptions (robust PCA), following Yi, Park, Chen and Caramanis,
// "Fast Algorithms for Robust PCA via Gradient Descent" (NeurIPS 2016).
//
// Run "rpca help" for the list of commands and "rpca COMMAND -h" for the
// flags of one command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/buildinfo"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/progress"
)

// command is one subcommand of the tool.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what a command may touch: its streams (replaced in tests).
type env struct {
	stdout, stderr io.Writer
	// stdin is what --in - reads (nil: the process's standard input), and
	// stdinIsTerminal says that it is a terminal, where no frames can come
	// from.
	stdin           io.Reader
	stdinIsTerminal bool
	// stderrIsTerminal enables the progress bar.
	stderrIsTerminal bool
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	e := &env{stdout: os.Stdout, stderr: os.Stderr, stderrIsTerminal: progress.IsTerminal(os.Stderr), stdinIsTerminal: progress.IsTerminal(os.Stdin)}
	finished := make(chan struct{})
	go func() {
		// The first Ctrl-C cancels the work, which then removes its
		// temporary output; reading a large input is not interruptible,
		// so restore the default handling: a second Ctrl-C quits at once.
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		stop()
		if e.stderrIsTerminal {
			fmt.Fprintln(e.stderr, "\nrpca: stopping (press Ctrl-C again to quit at once)")
		}
	}()
	code := run(ctx, e, os.Args[1:])
	close(finished)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit code:
// 0 success, 1 failure, 2 bad usage, 130 interrupted.
func run(ctx context.Context, e *env, args []string) (code int) {
	defer func() {
		// Last line of defence: a bug must not show users a stack trace.
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "rpca: internal error: %v (please report this)\n", r)
			code = 1
		}
	}()
	switch {
	case len(args) == 0: // a usage error: say what the commands are, on stderr
		usage(e.stderr)
		return 2
	case args[0] == "version" || args[0] == "--version" || args[0] == "-version":
		fmt.Fprintln(e.stdout, buildinfo.Version())
		return 0
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return exitCode(e, c.run(ctx, e, []string{"-h"}))
			}
		}
		usage(e.stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "rpca: unknown command %q; run 'rpca help' for the list\n", args[0])
		return 2
	}
	return exitCode(e, c.run(ctx, e, args[1:]))
}

func exitCode(e *env, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(e.stderr, "rpca: interrupted; no output was written")
		return 130
	case errors.Is(err, cliflag.ErrUsage):
		fmt.Fprintf(e.stderr, "rpca: %v\n", err)
		return 2
	}
	// Library errors start with their package name ("rpca: ..."); do not
	// print it twice. A diverged run gets the command line's remedy.
	msg := strings.TrimPrefix(oneLine(err.Error()), "rpca: ")
	if errors.Is(err, rpca.ErrDiverged) {
		msg += " [on the command line, for --method gd and scaledgd: --step lowers the step, --step-rule backtracking makes every step lower the objective]"
	}
	fmt.Fprintf(e.stderr, "rpca: %v\n", msg)
	if errors.Is(err, rpca.ErrBadSettings) { // a method's settings come from its flags
		return 2
	}
	return 1
}

// oneLine folds a message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func usage(w io.Writer) {
	var list strings.Builder
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(&list, "  %-11s %s\n", n, strings.TrimLeft(cliflag.Wrap(commands[n].summary, cliflag.Width, 14), " "))
	}
	fmt.Fprintln(w, helpText("rpca", map[string]string{"commands": list.String()}))
}
