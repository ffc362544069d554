package rpca

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/testmat"
)

// BenchmarkVerifyDense3000 times verify alone, as Solve runs it, on the
// exact answer of a d = 3000, r = 10 problem with 10% corruptions; with
// BenchmarkVerification's solve time (same machine, same run) it gives the
// verification's share of a solve (docs/verification.md).
func BenchmarkVerifyDense3000(b *testing.B) {
	const d, r = 3000, 10
	rng := rand.New(rand.NewPCG(1, 2))
	u, v := testmat.Normal(rng, d, r), testmat.Normal(rng, d, r)
	y := mat.NewDense(d, d, nil)
	y.Mul(u, v.T())
	sp := &Sparse{Rows: d, Cols: d, RowPtr: make([]int, d+1)}
	for i := range d {
		for j := range d {
			if rng.Float64() < 0.1 {
				x := 5 * (2*rng.Float64() - 1)
				y.Set(i, j, y.At(i, j)+x)
				sp.ColIdx, sp.Val = append(sp.ColIdx, int32(j)), append(sp.Val, x)
			}
		}
		sp.RowPtr[i+1] = len(sp.Val)
	}
	p := &Problem{Dense: y}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := verifyAnswer(p, &Result{U: u, V: v, S: sp, Residual: 1}, nil, Settings{Alpha: 0.2, Seed: 1}); !v.Verified {
			b.Fatal(v)
		}
	}
}

// BenchmarkFrameDense3000 times the frame analysis of Solve (median,
// spread, gross entries, norms) on the same kind of problem.
func BenchmarkFrameDense3000(b *testing.B) {
	const d, r = 3000, 10
	rng := rand.New(rand.NewPCG(1, 2))
	u, v := testmat.Normal(rng, d, r), testmat.Normal(rng, d, r)
	y := mat.NewDense(d, d, nil)
	y.Mul(u, v.T())
	p := &Problem{Dense: y}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		analyze(p, true)
	}
}
