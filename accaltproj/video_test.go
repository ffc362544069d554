package accaltproj_test

import (
	"context"
	"testing"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/video"
)

// TestNoEarlyStopAboveTheResiduals: on a generated clip at rank 3 the
// first threshold ζ₀ sits just under the largest residuals. The few
// entries that cross it change L by less than rounding, and the run used
// to stop there by factor change after 2 iterations, with ζ = 0.67 of the
// intensity range and the moving objects still in L. The factor-change
// rule must wait until ζ is well inside the residuals: the objects differ
// from the background by at least 0.3, so the final threshold has to be
// below that.
func TestNoEarlyStopAboveTheResiduals(t *testing.T) {
	c, err := video.Generate(video.SceneWaving, video.GenerateOptions{Width: 64, Height: 48, Frames: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: c.Y}, rpca.Settings{Rank: 3, Alpha: 0.1}, &accaltproj.Method{})
	if err != nil {
		t.Fatal(err)
	}
	zeta := res.Params.(*accaltproj.Params).FinalThreshold
	if res.Iterations <= 3 || !(zeta < 0.3) {
		t.Errorf("stopped after %d iterations (%s) with threshold %.3g; want more than 3 and a threshold below 0.3", res.Iterations, res.Stop, zeta)
	}
}
