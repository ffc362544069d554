package gdcore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rpca-gd/rpca/internal/testmat"
)

// BenchmarkLineSolve fits lines of 200 entries at rank 10 against a
// factor of 10⁵ and 10⁶ rows with random row indices, as an ALS
// half-sweep at d = 10⁵ and 10⁶ and p = 0.002 or 0.0002 does: at 10⁶ rows
// the factor (80 MB) is far beyond the caches, and gathering its rows is
// most of the time (docs/performance.md).
func BenchmarkLineSolve(b *testing.B) {
	const r, perLine, lines = 10, 200, 4096
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x := testmat.NormalGeneral(rng, rows, r)
			idx := make([]int32, perLine*lines)
			val := make([]float64, len(idx))
			for k := range idx {
				idx[k], val[k] = int32(rng.IntN(rows)), rng.NormFloat64()
			}
			s, z := NewLineSolver(r), make([]float64, r)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l := i % lines
				s.Solve(z, x, idx[l*perLine:(l+1)*perLine], val[l*perLine:(l+1)*perLine], nil, 0)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perLine), "ns/entry")
		})
	}
}
