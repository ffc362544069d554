package solveflags

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/internal/cliflag"
)

// parsed registers the flags of mask and parses args.
func parsed(t *testing.T, mask Mask, auto bool, args ...string) (*Flags, error) {
	t.Helper()
	f := &Flags{AllowAuto: auto}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs, mask)
	return f, cliflag.Parse(fs, args)
}

// The methods' own settings show their value's type in -h, as the
// shared flags do (they showed "value" when the type was not found).
func TestHelpNamesParamKinds(t *testing.T) {
	f := &Flags{}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	f.Register(fs, Solve)
	var b strings.Builder
	cliflag.PrintDefaults(&b, fs)
	for _, want := range []string{"--ridge float\n", "--step-rule string\n", "--alpha float\n", "--max-iter int\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("help has no %q", strings.TrimSpace(want))
		}
	}
	if strings.Contains(b.String(), " value\n") {
		t.Errorf("a flag's value is unnamed in the help:\n%s", b.String())
	}
}

func TestDefaultsAndSettings(t *testing.T) {
	f, err := parsed(t, Solve, true, "--rank", "3", "--alpha", "0.2", "--tol", "1e-7", "--max-iter", "9", "--seed", "5")
	if err != nil {
		t.Fatal(err)
	}
	if f.Method != Auto || f.SampleRate != 1 || f.Progress != "auto" {
		t.Errorf("defaults: method %q, p %g, progress %q", f.Method, f.SampleRate, f.Progress)
	}
	s := f.Settings()
	if s.Rank != 3 || s.Alpha != 0.2 || s.Stop.ResidualTol != 1e-7 || s.Stop.MaxIter != 9 || s.Seed != 5 {
		t.Errorf("settings %+v do not carry the flags", s)
	}
	if g, _ := parsed(t, Solve, false); g.Method != "gd" {
		t.Errorf("without auto the default method is %q, want gd", g.Method)
	}
}

func TestNewMethodErrorsNameFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--method", "nosuch"}, `unknown --method "nosuch"`},
		{[]string{"--method", "accaltproj", "--p", "0.5"}, "--p < 1"},
		{[]string{"--method", "accaltproj", "--huber", "3"}, "--huber does not apply to --method accaltproj"},
	} {
		f, err := parsed(t, Solve, true, c.args...)
		if err == nil {
			_, err = f.NewMethod()
		}
		if err == nil || !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
	if _, err := parsed(t, Solve, true, "--ridge", "-1"); err == nil || !strings.Contains(err.Error(), "ridge") {
		t.Errorf("--ridge -1: error %v, want one naming --ridge", err)
	}
	f, err := parsed(t, Solve, true, "--method", "als", "--ridge", "0.5")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := f.NewMethod(true); err != nil || m.Name() != "als" {
		t.Errorf("--method als --ridge 0.5: %v, %v", m, err)
	}
}

func TestRank(t *testing.T) {
	f := &Flags{RankAuto: true}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs, Rank)
	if err := cliflag.Parse(fs, []string{"--rank", "auto"}); err != nil || f.Rank != 0 {
		t.Errorf("--rank auto: rank %d, %v", f.Rank, err)
	}
	if _, err := parsed(t, Rank, false, "--rank", "auto"); err == nil {
		t.Error("--rank auto accepted where the command has no automatic rank")
	}
	if _, err := parsed(t, Rank, false, "--rank", "0"); err == nil {
		t.Error("--rank 0 accepted")
	}
}
