package metrics

import (
	"fmt"
	"math"
)

// Finite returns &x, or nil when x is NaN or ±Inf: the form of a measured
// value in a JSON report, where nil is written as null (JSON has no NaN).
func Finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Format formats a value of Finite with the verb (for example "%.3g"),
// and nil as "n/a".
func Format(verb string, x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fmt.Sprintf(verb, *x)
}
