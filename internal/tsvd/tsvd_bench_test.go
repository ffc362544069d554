package tsvd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

const benchDim, benchRank = 5000, 10

var (
	benchOnce            sync.Once
	benchLRS, benchGauss blas64.General
)

// benchMatrices builds, once, the paper's model M* + S* at d = 5000, r =
// 10: M* = A·Bᵀ with A, B 5000×10 of N(0, 1/d) entries, and 10% of the
// entries corrupted by uniform values in [−5r/d, 5r/d]; and a standard
// Gaussian 5000×5000 matrix.
func benchMatrices() {
	benchOnce.Do(func() {
		d, r := benchDim, benchRank
		rng := rand.New(rand.NewPCG(1, 2))
		gauss := func(rows, cols int, sd float64) blas64.General {
			g := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: make([]float64, rows*cols)}
			for i := range g.Data {
				g.Data[i] = sd * rng.NormFloat64()
			}
			return g
		}
		sd := 1 / math.Sqrt(float64(d))
		a, b := gauss(d, r, sd), gauss(d, r, sd)
		benchLRS = blas64.General{Rows: d, Cols: d, Stride: d, Data: make([]float64, d*d)}
		kernels.MulABt(benchLRS, a, b, 0)
		bound := 5 * float64(r) / float64(d)
		for i := range benchLRS.Data {
			if rng.Float64() < 0.1 {
				benchLRS.Data[i] += bound * (2*rng.Float64() - 1)
			}
		}
		benchGauss = gauss(d, d, 1)
	})
}

// BenchmarkCompute5000 times rank-10 SVDs of 5000×5000 matrices and
// reports the products and matrix–vector products (columns) per SVD.
func BenchmarkCompute5000(b *testing.B) {
	benchMatrices()
	for _, mc := range []struct {
		name string
		a    *blas64.General
	}{{"lowrank+sparse", &benchLRS}, {"gaussian", &benchGauss}} {
		for _, tol := range []float64{1e-4, 1e-6, 1e-10} {
			b.Run(fmt.Sprintf("%s/tol=%g", mc.name, tol), func(b *testing.B) {
				var res *Result
				for b.Loop() {
					var err error
					res, err = Compute(context.Background(), Dense{A: *mc.a}, Options{Rank: benchRank, Tol: tol, Seed: 1})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(res.Products), "products/op")
				b.ReportMetric(float64(res.Columns), "matvecs/op")
				if !res.Converged {
					b.Logf("not converged after %d iterations", res.Iterations)
				}
			})
		}
	}
}

// BenchmarkProduct5000 times one product of the 5000×5000 matrix with a
// block of the default size for rank 10, for comparison with the SVD.
func BenchmarkProduct5000(b *testing.B) {
	benchMatrices()
	k := benchRank + DefaultOversample(benchRank)
	x := blas64.General{Rows: benchDim, Cols: k, Stride: k, Data: make([]float64, benchDim*k)}
	for i := range x.Data {
		x.Data[i] = float64(i%7) - 3
	}
	dst := blas64.General{Rows: benchDim, Cols: k, Stride: k, Data: make([]float64, benchDim*k)}
	op := Dense{A: benchLRS}
	b.Run("MulTo", func(b *testing.B) {
		for b.Loop() {
			op.MulTo(dst, x)
		}
	})
	b.Run("MulTransTo", func(b *testing.B) {
		for b.Loop() {
			op.MulTransTo(dst, x)
		}
	})
}
