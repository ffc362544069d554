package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ErrUsage is matched (errors.Is) by every usage error: a command line
// that a program refuses with exit code 2.
var ErrUsage = errors.New("usage error")

// usageError is a usage error; its text is its message alone.
type usageError struct{ err error }

func (e usageError) Error() string   { return e.err.Error() }
func (e usageError) Unwrap() []error { return []error{e.err, ErrUsage} }

// Usagef returns a usage error whose text is fmt.Errorf(format, a...)'s
// and which wraps what that wraps.
func Usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// Parse parses args into fs without printing anything but the help: a
// flag error, or an argument left after the flags, is a usage error with
// the flag package's message, and -h prints fs.Usage to fs's output and
// returns flag.ErrHelp. Unlike the flag package, it does not print the
// whole usage after a mistyped flag; the caller prints the one-line error.
func Parse(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return flag.ErrHelp
	case err != nil:
		return Usagef("%w", err)
	case fs.NArg() > 0:
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
