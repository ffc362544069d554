package rpca

import (
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/access"
	"github.com/rpca-gd/rpca/internal/robust"
)

// How Solve presents the data to a method, its frame (the location and
// spread of the observed values, the gross entries set aside, the
// location removed and the power of two the values are divided by), is
// computed in internal/robust (robust.Frame, robust.Analyze). This file
// maps problems and truths to the frame.

// GrossSpreads is the distance from the median, in robust spreads, beyond
// which Solve sets an entry aside as a gross corruption (α > 0): an entry
// of an incoherent rank-r matrix is at most about μr times its rms, and
// removing such entries keeps every sum of squares within float64's range.
const GrossSpreads = robust.GrossSpreads

// The method packages (gd, als) reach Solve's scaling through
// internal/access, and package track the conversion of residuals in
// Solve's frame. (Package sparse gives them the storage of an Observed.)
func init() {
	access.Scaled = func(p any) (any, float64) {
		fr := analyze(p.(*Problem), false)
		q, _ := framedProblem(&fr, p.(*Problem))
		return q, fr.Scale
	}
	access.ResFactor = func(p any) float64 { return p.(*Problem).resFactor }
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
