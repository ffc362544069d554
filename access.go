package rpca

import (
	"github.com/rpca-gd/rpca/internal/access"
)

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
