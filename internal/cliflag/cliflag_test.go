package cliflag

import (
	"flag"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestCheckedValues checks the parse-time checks of the flag values: what
// each accepts and refuses, that a refused value leaves the default, and
// the names -h shows.
func TestCheckedValues(t *testing.T) {
	var n int
	var x float64
	var s string
	var l []float64
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	Var(fs, &n, "n", 3, AtLeast(2), "at least 2", "")
	Var(fs, &x, "x", 0.5, Fraction, "in [0, 1)", "")
	Var(fs, &s, "s", "a", OneOf("a", "b"), "a or b", "")
	l = []float64{1, 0.5}
	fs.Var(List(&l, Rate, "a rate"), "l", "")
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-n", "2"}, true}, {[]string{"-n", "1e4"}, true}, {[]string{"-n", "1"}, false},
		{[]string{"-n", "1.5"}, false}, {[]string{"-n", "1e300"}, false}, {[]string{"-n", "x"}, false},
		{[]string{"-x", "0"}, true}, {[]string{"-x", "1"}, false}, {[]string{"-x", "NaN"}, false},
		{[]string{"-s", "b"}, true}, {[]string{"-s", "c"}, false}, {[]string{"-s", ""}, false},
		{[]string{"-l", "1, 0.5,,0.1"}, true}, {[]string{"-l", "1,2"}, false}, {[]string{"-l", "1,x"}, false},
	} {
		n, x, s, l = 3, 0.5, "a", nil
		err := fs.Parse(c.args)
		if (err == nil) != c.ok {
			t.Errorf("%v: error %v, want ok=%v", c.args, err, c.ok)
		}
		if err != nil && (n != 3 || x != 0.5 || s != "a" || l != nil) {
			t.Errorf("%v refused, but the value changed: %d %v %q %v", c.args, n, x, s, l)
		}
		if err != nil && !strings.Contains(err.Error(), "must be") && !strings.Contains(err.Error(), "is not a rate") {
			t.Errorf("%v: error %q names no requirement", c.args, err)
		}
	}
	if err := fs.Parse([]string{"-n", "1e4", "-l", "1, 0.5,,0.1"}); err != nil || n != 10000 || !slices.Equal(l, []float64{1, 0.5, 0.1}) {
		t.Errorf("n = %d, l = %v, err %v", n, l, err)
	}
	var help strings.Builder
	PrintDefaults(&help, fs)
	for _, want := range []string{"-n int", "(default 3)", "-x float", "-s string", `(default "a")`, "-l list", "(default 1,0.5)"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help %q lacks %q", help.String(), want)
		}
	}
}

// TestBetween: the closed interval for integers and floats, without NaN;
// AtLeast on floats, with +Inf.
func TestBetween(t *testing.T) {
	in := Between(1, 3)
	if !in(1) || !in(3) || in(0) || in(4) {
		t.Error("Between(1, 3) on integers")
	}
	if a := AtLeast(1.0); !a(1) || !a(math.Inf(1)) || a(0.999) || a(math.NaN()) {
		t.Error("AtLeast(1) on floats")
	}
	f := Between(0.0, 1.0)
	if !f(0) || !f(1) || !f(0.5) || f(-1e-300) || f(1.0000001) || f(math.NaN()) || f(math.Inf(1)) {
		t.Error("Between(0, 1) on floats")
	}
}
