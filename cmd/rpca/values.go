package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// checked is a flag that checks its value as it is parsed, so that a bad
// value is a usage error naming the flag: invalid value "2" for flag
// -alpha: must be in [0, 1).
type checked[T int | float64 | string] struct {
	p    *T
	ok   func(T) bool
	want string // what ok accepts, for the error
}

// String is the default shown by -h; a zero value is not shown.
func (c checked[T]) String() string {
	var zero T
	if c.p == nil || *c.p == zero {
		return ""
	}
	return fmt.Sprint(*c.p)
}

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

// kind is the name -h shows for the flag's value.
func (c checked[T]) kind() string {
	switch any(*new(T)).(type) {
	case int:
		return "int"
	case float64:
		return "float"
	}
	return "string"
}

// numVar defines the checked flag name with default def.
func numVar[T int | float64 | string](fs *flag.FlagSet, p *T, name string, def T, ok func(T) bool, want, usage string) {
	*p = def
	fs.Var(checked[T]{p, ok, want}, name, usage)
}

// listOf is a comma-separated list flag whose every element is checked.
type listOf[T int | float64] struct {
	p    *[]T
	elem func(T) bool // the check of an element
	want string       // what elem accepts
}

func (l listOf[T]) kind() string { return "list" }

func (l listOf[T]) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(*l.p)), ","), "[]")
}

func (l listOf[T]) Set(s string) error {
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

// oneOf accepts the strings of list.
func oneOf(list ...string) func(string) bool {
	return func(s string) bool { return slices.Contains(list, s) }
}

// The checks of the numeric flags.
var (
	orDefault = func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) } // 0 asks for the default
	finite    = func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	fraction  = func(x float64) bool { return x >= 0 && x < 1 } // [0, 1)
	rate      = func(x float64) bool { return x > 0 && x <= 1 } // (0, 1]
	positive  = func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
)

// atLeast accepts the integers ≥ lo.
func atLeast(lo int) func(int) bool { return func(n int) bool { return n >= lo } }

// between accepts the integers in [lo, hi].
func between(lo, hi int) func(int) bool { return func(n int) bool { return n >= lo && n <= hi } }
