// Package param builds the rpca.Param values the method packages declare
// their settings with: numbers checked against a range, switches, and
// choices among names.
package param

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rpca-gd/rpca"
)

// Check is the range of a number setting: the test and what it accepts,
// in words.
type Check struct {
	OK   func(float64) bool
	Want string
}

// The ranges the methods' settings use.
var (
	// OrDefault: finite and non-negative, 0 meaning the default.
	OrDefault = Check{func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }, "a finite non-negative number (0: the default)"}
	// Unit: in [0, 1].
	Unit = Check{func(x float64) bool { return x >= 0 && x <= 1 }, "in [0, 1]"}
)

// Float is a number setting stored in p.
func Float(p *float64, name, usage string, c Check) rpca.Param {
	return rpca.Param{Name: name, Usage: usage, Value: &number{p, c}}
}

// Bool is a switch stored in p.
func Bool(p *bool, name, usage string) rpca.Param {
	return rpca.Param{Name: name, Usage: usage, Value: &switchValue{p}}
}

// Choice is a setting that takes one of choices ("" among them means the
// default), stored in p.
func Choice[T ~string](p *T, name, usage string, choices ...T) rpca.Param {
	return rpca.Param{Name: name, Usage: usage, Value: &choice[T]{p, choices}}
}

type number struct {
	p *float64
	c Check
}

func (v *number) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

// Kind names the value in help texts.
func (*number) Kind() string { return "float" }

func (v *number) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !v.c.OK(x) {
		return fmt.Errorf("must be %s", v.c.Want)
	}
	*v.p = x
	return nil
}

type switchValue struct{ p *bool }

func (v *switchValue) String() string {
	if v.p == nil {
		return "false"
	}
	return strconv.FormatBool(*v.p)
}

func (v *switchValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("must be true or false")
	}
	*v.p = b
	return nil
}

func (*switchValue) IsBoolFlag() bool { return true }

type choice[T ~string] struct {
	p       *T
	choices []T
}

func (v *choice[T]) String() string {
	if v.p == nil {
		return ""
	}
	return string(*v.p)
}

// Kind names the value in help texts.
func (*choice[T]) Kind() string { return "string" }

func (v *choice[T]) Set(s string) error {
	if !slices.Contains(v.choices, T(s)) {
		var names []string
		for _, c := range v.choices {
			if c != "" {
				names = append(names, string(c))
			}
		}
		return fmt.Errorf("must be one of %s", strings.Join(names, ", "))
	}
	*v.p = T(s)
	return nil
}
