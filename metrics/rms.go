package metrics

import "math"

// RMS accumulates the root mean square of a stream of values without
// overflow or underflow: it keeps the largest magnitude seen and the sum
// of squares of the values divided by it (the scaling of LAPACK's dnrm2),
// so that values near 1e±300 give their true RMS and not +Inf or 0. The
// zero value is an empty accumulator.
type RMS struct {
	scale, ssq float64
	n          int
}

// Add adds x. A NaN or infinite x makes Value NaN or +Inf.
func (a *RMS) Add(x float64) {
	a.n++
	ax := math.Abs(x)
	switch {
	case math.IsNaN(a.scale):
	case math.IsNaN(ax) || math.IsInf(ax, 0):
		a.scale, a.ssq = ax, 1
	case ax == 0 || math.IsInf(a.scale, 0):
	case ax > a.scale:
		r := a.scale / ax
		a.ssq = 1 + a.ssq*r*r
		a.scale = ax
	default:
		r := ax / a.scale
		a.ssq += r * r
	}
}

// Len returns the number of values added.
func (a *RMS) Len() int { return a.n }

// Value returns √(Σx²/n), or NaN when no value was added.
func (a *RMS) Value() float64 {
	if a.n == 0 {
		return math.NaN()
	}
	if a.scale == 0 {
		return 0
	}
	return a.scale * math.Sqrt(a.ssq/float64(a.n))
}
