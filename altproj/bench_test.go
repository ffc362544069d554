package altproj

import (
	"context"
	"testing"

	rpca "github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/methodtest"
)

// benchPaper times AltProj on the paper's synthetic model (Section 5.1,
// r = 10, α = 0.1, d×d) and reports the final relative error
// ‖UVᵀ − M*‖_F/‖M*‖_F and the iteration count. The truth is not attached
// to the problem, so the per-iteration error is not part of the timing.
func benchPaper(b *testing.B, d int, m *Method, tol float64) {
	if d >= 3000 && testing.Short() {
		b.Skip("d = 3000 skipped under -short")
	}
	in := methodtest.Instance(b, d, d, 10, 0.1, 1)
	p := &rpca.Problem{Dense: in.Y}
	s := rpca.Settings{Rank: 10, Alpha: 0.1, Stop: rpca.Stop{ResidualTol: tol}}
	var res *rpca.Result
	for b.Loop() {
		var err error
		if res, err = rpca.Solve(context.Background(), p, s, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(methodtest.RelErr(res.U, res.V, in.A, in.B), "relerr")
	b.ReportMetric(float64(res.Iterations), "iters")
}

// The paper's setting: stop at ‖Y − L − S‖_F/‖Y‖_F ≤ 1e-3 (Appendix B).
func BenchmarkPaper1000(b *testing.B) { benchPaper(b, 1000, &Method{}, 1e-3) }

// Higher accuracy, for time-to-accuracy comparisons.
func BenchmarkPaper1000Tol1e6(b *testing.B) { benchPaper(b, 1000, &Method{}, 1e-6) }

// The stall shortcut of the authors' code (not part of Algorithm 1).
func BenchmarkPaper1000Stall(b *testing.B) { benchPaper(b, 1000, &Method{StallTol: 0.1}, 1e-3) }

// About a minute on 2 cores (≈780 iterations of a 3000×3000 pass).
func BenchmarkPaper3000(b *testing.B) { benchPaper(b, 3000, &Method{}, 1e-3) }
