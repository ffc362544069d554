package ialm

import (
	"testing"

	"github.com/rpca-gd/rpca/internal/methodtest"
)

// benchPaper times IALM on the paper's model (methodtest.BenchPaper) and
// also reports the rank it found.
func benchPaper(b *testing.B, d int, tol float64) {
	res := methodtest.BenchPaper(b, d, &Method{}, tol)
	b.ReportMetric(float64(res.Params.(*Params).FinalRank), "rank")
}

// The paper's comparison setting: ‖Y − M − S‖_F/‖Y‖_F ≤ 1e-3 (Appendix B).
func BenchmarkPaper1000(b *testing.B) { benchPaper(b, 1000, 1e-3) }

// The published default tolerance 1e-7.
func BenchmarkPaper1000Tol1e7(b *testing.B) { benchPaper(b, 1000, 1e-7) }

func BenchmarkPaper3000(b *testing.B) { benchPaper(b, 3000, 1e-3) }
