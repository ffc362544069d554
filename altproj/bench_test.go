package altproj

import (
	"testing"

	"github.com/rpca-gd/rpca/internal/methodtest"
)

// benchPaper times AltProj on the paper's model (methodtest.BenchPaper).
func benchPaper(b *testing.B, d int, m *Method, tol float64) { methodtest.BenchPaper(b, d, m, tol) }

// The paper's setting: stop at ‖Y − L − S‖_F/‖Y‖_F ≤ 1e-3 (Appendix B),
// with the published schedule alone (no stall rule).
func BenchmarkPaper1000(b *testing.B) { benchPaper(b, 1000, &Method{StallTol: -1}, 1e-3) }

// Higher accuracy, for time-to-accuracy comparisons.
func BenchmarkPaper1000Tol1e6(b *testing.B) { benchPaper(b, 1000, &Method{StallTol: -1}, 1e-6) }

// The stall shortcut of the authors' code (not part of Algorithm 1), the
// default.
func BenchmarkPaper1000Stall(b *testing.B) { benchPaper(b, 1000, &Method{}, 1e-3) }

// About a minute on 2 cores (≈780 iterations of a 3000×3000 pass).
func BenchmarkPaper3000(b *testing.B) { benchPaper(b, 3000, &Method{StallTol: -1}, 1e-3) }
