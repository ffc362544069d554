package rpca

import (
	"github.com/rpca-gd/rpca/internal/access"
	"github.com/rpca-gd/rpca/internal/observed"
)

// The method packages (gd, als) reach the storage of an Observed and
// Solve's scaling through internal/access, and package track the
// conversion of residuals in Solve's frame.
func init() {
	access.ObservedMatrix = func(o any) *observed.Matrix { return o.(*Observed).m }
	access.NewObserved = func(m *observed.Matrix) any { return &Observed{m: m} }
	access.Scaled = func(p any) (any, float64) {
		fr := analyze(p.(*Problem), false)
		q, _ := framedProblem(&fr, p.(*Problem))
		return q, fr.Scale
	}
	access.ResFactor = func(p any) float64 { return p.(*Problem).resFactor }
}
