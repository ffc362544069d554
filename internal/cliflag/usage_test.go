package cliflag

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

// TestParse: flag errors and stray arguments are usage errors with the
// flag package's message and nothing printed; -h prints the usage once and is flag.ErrHelp;
// good arguments parse.
func TestParse(t *testing.T) {
	newFS := func() (*flag.FlagSet, *bytes.Buffer, *int) {
		var out bytes.Buffer
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		fs.SetOutput(&out)
		n := fs.Int("n", 1, "a number")
		fs.Usage = func() { fmt.Fprintln(fs.Output(), "USAGE") }
		return fs, &out, n
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--n", "x"}, `invalid value "x" for flag -n: parse error`},
		{[]string{"--n", "2", "extra"}, `unexpected argument "extra"`},
	} {
		fs, out, _ := newFS()
		err := Parse(fs, c.args)
		if !errors.Is(err, ErrUsage) || err.Error() != c.want {
			t.Errorf("%q: %v, want usage error %q", c.args, err, c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%q: printed %q", c.args, out)
		}
	}
	fs, out, _ := newFS()
	if err := Parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) || out.String() != "USAGE\n" {
		t.Errorf("-h: %v, printed %q", err, out)
	}
	fs, out, n := newFS()
	if err := Parse(fs, []string{"--n", "7"}); err != nil || *n != 7 || out.Len() != 0 {
		t.Errorf("good arguments: %v, n = %d, printed %q", err, *n, out)
	}
}

// TestUsagef: the text is the message alone, and both ErrUsage and what
// the message wraps match.
func TestUsagef(t *testing.T) {
	inner := errors.New("inner")
	err := Usagef("--x: %w", inner)
	if err.Error() != "--x: inner" || !errors.Is(err, ErrUsage) || !errors.Is(err, inner) {
		t.Errorf("Usagef: %q, Is(ErrUsage) %v, Is(inner) %v", err, errors.Is(err, ErrUsage), errors.Is(err, inner))
	}
	if strings.Contains(err.Error(), "usage") {
		t.Errorf("text %q names the sentinel", err)
	}
}
