// Package cliflag is the flag vocabulary of the project's commands (rpca
// and rpca-beam): flag values that check what they are given while the
// command line is parsed, so that a bad value is a usage error naming the
// flag ("invalid value "2" for flag -alpha: must be in [0, 1)"), the
// checks themselves, and a usage printer that names each value's type.
package cliflag

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// checked is a flag value that refuses what ok does not accept.
type checked[T int | float64 | string] struct {
	p    *T
	ok   func(T) bool
	want string // what ok accepts, for the error
}

// Checked returns a flag value stored in p that accepts what ok accepts;
// want says what that is ("in [0, 1)"), for the error. Integers may be
// written like 1e4 when they are whole.
func Checked[T int | float64 | string](p *T, ok func(T) bool, want string) flag.Value {
	return checked[T]{p, ok, want}
}

// Var defines the checked flag name with default def.
func Var[T int | float64 | string](fs *flag.FlagSet, p *T, name string, def T, ok func(T) bool, want, usage string) {
	*p = def
	fs.Var(checked[T]{p, ok, want}, name, usage)
}

// String is the default shown by -h; a zero value is not shown.
func (c checked[T]) String() string {
	var zero T
	if c.p == nil || *c.p == zero {
		return ""
	}
	return fmt.Sprint(*c.p)
}

// Set parses s and stores it if ok accepts it.
func (c checked[T]) Set(s string) error {
	var x T
	var err error
	switch p := any(&x).(type) {
	case *int: // 1e4-style sizes too, when they are integers
		var v float64
		v, err = strconv.ParseFloat(s, 64)
		if *p = int(v); v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			err = strconv.ErrSyntax
		}
	case *float64:
		*p, err = strconv.ParseFloat(s, 64)
	case *string:
		*p = s
	}
	if err != nil || !c.ok(x) {
		return fmt.Errorf("must be %s", c.want)
	}
	*c.p = x
	return nil
}

// Kind is the name -h shows for the flag's value (PrintDefaults).
func (c checked[T]) Kind() string {
	switch any(*new(T)).(type) {
	case int:
		return "int"
	case float64:
		return "float"
	}
	return "string"
}

// list is a comma-separated list flag whose every element is checked.
type list[T int | float64] struct {
	p    *[]T
	elem func(T) bool // the check of an element
	want string       // what elem accepts
}

// List returns a flag value holding a comma-separated list stored in p,
// each element accepted by elem (want says what that is). Empty elements
// are skipped.
func List[T int | float64](p *[]T, elem func(T) bool, want string) flag.Value {
	return list[T]{p, elem, want}
}

// Kind is the name -h shows for a list flag's value.
func (l list[T]) Kind() string { return "list" }

// String is the list as given, comma-separated.
func (l list[T]) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(*l.p)), ","), "[]")
}

// Set parses the comma-separated list s.
func (l list[T]) Set(s string) error {
	var v []T
	for _, t := range strings.Split(s, ",") {
		var x T
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if err := (checked[T]{&x, l.elem, l.want}).Set(t); err != nil {
			return fmt.Errorf("%q is not %s", t, l.want)
		}
		v = append(v, x)
	}
	*l.p = v
	return nil
}

// OneOf accepts the strings of list.
func OneOf(list ...string) func(string) bool {
	return func(s string) bool { return slices.Contains(list, s) }
}

// OrDefault accepts finite non-negative numbers (0 asks for a default).
func OrDefault(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// Finite accepts finite numbers.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Fraction accepts [0, 1).
func Fraction(x float64) bool { return x >= 0 && x < 1 }

// Rate accepts (0, 1].
func Rate(x float64) bool { return x > 0 && x <= 1 }

// Positive accepts finite positive numbers.
func Positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

// AtLeast accepts the numbers ≥ lo (+Inf for floats, not NaN).
func AtLeast[T int | float64](lo T) func(T) bool { return func(n T) bool { return n >= lo } }

// Between accepts the numbers in [lo, hi] (NaN is not among them).
func Between[T int | float64](lo, hi T) func(T) bool {
	return func(n T) bool { return n >= lo && n <= hi }
}

// Width is the number of columns help texts are wrapped to.
const Width = 80

// PrintDefaults is flag.PrintDefaults on w in the command line's one
// style: each flag as --name, the value of a checked or list flag named
// by its type (int, float, string, list), and the usage wrapped to Width
// columns under it.
func PrintDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if k, ok := f.Value.(interface{ Kind() string }); ok && name == "value" {
			name = k.Kind()
		}
		head := "  --" + f.Name
		if name != "" {
			head += " " + name
		}
		switch {
		case slices.Contains([]string{"", "0", "0s", "false"}, f.DefValue):
		case name == "string":
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, Wrap(usage, Width, 8))
	})
}

// Wrap breaks text into lines of at most width columns (runes) at
// spaces, each indented by indent spaces; a word longer than a line
// stands alone on its line.
func Wrap(text string, width, indent int) string {
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	n := 0 // runes on the current line
	for _, word := range strings.Fields(text) {
		l := len([]rune(word))
		switch {
		case n == 0:
			b.WriteString(pad)
			n = indent
		case n+1+l > width:
			b.WriteString("\n" + pad)
			n = indent
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += l
	}
	return b.String()
}
