package ialm

import (
	"context"
	"testing"

	rpca "github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/methodtest"
)

// benchPaper times IALM on the paper's synthetic model (Section 5.1,
// r = 10, α = 0.1, d×d) and reports the final relative error
// ‖UVᵀ − M*‖_F/‖M*‖_F, the iteration count and the rank found. The truth
// is not attached to the problem, so the per-iteration error is not part
// of the timing.
func benchPaper(b *testing.B, d int, tol float64) {
	if d >= 3000 && testing.Short() {
		b.Skip("d = 3000 skipped under -short")
	}
	in := methodtest.Instance(b, d, d, 10, 0.1, 1)
	p := &rpca.Problem{Dense: in.Y}
	s := rpca.Settings{Rank: 10, Alpha: 0.1, Stop: rpca.Stop{ResidualTol: tol}}
	var res *rpca.Result
	for b.Loop() {
		var err error
		if res, err = rpca.Solve(context.Background(), p, s, &Method{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(methodtest.RelErr(res.U, res.V, in.A, in.B), "relerr")
	b.ReportMetric(float64(res.Iterations), "iters")
	b.ReportMetric(float64(res.Params.(*Params).FinalRank), "rank")
}

// The paper's comparison setting: ‖Y − M − S‖_F/‖Y‖_F ≤ 1e-3 (Appendix B).
func BenchmarkPaper1000(b *testing.B) { benchPaper(b, 1000, 1e-3) }

// The published default tolerance 1e-7.
func BenchmarkPaper1000Tol1e7(b *testing.B) { benchPaper(b, 1000, 1e-7) }

func BenchmarkPaper3000(b *testing.B) { benchPaper(b, 3000, 1e-3) }
