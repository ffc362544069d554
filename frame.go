package rpca

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/robust"
)

// How Solve presents the data to a method, its frame, is described and
// computed in internal/robust (robust.Frame, robust.Analyze): the
// location and spread of the observed values, the gross entries set
// aside, the location removed and the power of two the values are
// divided by. This file maps problems and truths to the frame.

// GrossSpreads is the distance from the median, in robust spreads, beyond
// which Solve sets an entry aside as a gross corruption before the method
// runs (with α > 0). An entry of an incoherent rank-r matrix is at most
// about μr times the matrix's root mean square, so one a million spreads
// away is a corruption by any model the methods can recover, and removing
// it keeps every sum of squares within the range of float64.
const GrossSpreads = robust.GrossSpreads

// observedLen returns |Φ|.
func observedLen(p *Problem) int {
	if p.Dense != nil {
		r, c := p.Dense.Dims()
		return r * c
	}
	return p.obs().NNZ()
}

// RobustScale returns the median of x and its robust spread: 1.4826 times
// the median absolute deviation from the median (the standard deviation of
// Gaussian data, unmoved by outliers on fewer than half of the values);
// when more than half of the values equal the median, a higher quantile of
// the deviations over the Gaussian's (75%, 90%, 99%), or their root mean
// square. It reorders x. Solve's frame and the ratings' gross-entry rule
// use it; the spread is +Inf only when it exceeds the float64 range.
func RobustScale(x []float64) (median, spread float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	c, sH := robust.Half(x)
	return c, 2 * sH
}

// frame is Solve's view of the data.
type frame = robust.Frame

// analyze returns p's frame; aside (α > 0) sets gross entries aside and
// removes the location.
func analyze(p *Problem, aside bool) frame { return robust.Analyze(robustValues(p), aside, aside) }

// framedProblem returns the problem the method sees: p itself when the
// frame changes nothing, or a transformed copy, with the truth mapped
// likewise and the residual rules' factor set.
func framedProblem(fr *frame, p *Problem) (q *Problem, err error) {
	q = new(Problem)
	*q = *p
	q.resFactor = fr.ResFactor()
	if !fr.Transform {
		return q, nil
	}
	data := fr.Apply(robustValues(p))
	if p.Dense != nil {
		d1, d2 := p.Dense.Dims()
		q.Dense = mat.NewDense(d1, d2, data)
	} else if q.Observed, err = p.Observed.WithValues(data); err != nil {
		return nil, err
	}
	if t := p.Truth; t != nil {
		a, b := fr.Truth(t.A, t.B)
		q.Truth = &Truth{A: a, B: b}
	}
	return q, nil
}

// robustValues returns p's observed values for package robust.
func robustValues(p *Problem) robust.Values {
	if p.Dense != nil {
		return robust.Values{Dense: p.Dense.RawMatrix()}
	}
	return robust.Values{Flat: p.obs().Val}
}
