package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rpca-gd/rpca/internal/testmat"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Benchmarks of every kernel at the shapes of the solvers' hot paths, with
// GOMAXPROCS workers ("kernels") and one worker ("kernels_1w"), next to
// gonum's generic Gemm computing the same product ("gonum", which uses
// GOMAXPROCS goroutines), so that they can be compared by ratio within one
// run:
//
//	go test -run '^$' -bench . -count 5 ./internal/kernels
//
// Each benchmark reports GFLOP/s counting a multiply-add as two flops.

type benchShape struct{ m, n, k int }

var benchShapes = []benchShape{
	{5000, 5000, 10},
	{5000, 5000, 20},
	{2000, 2000, 10},
}

func (s benchShape) String() string { return fmt.Sprintf("%dx%d_k%d", s.m, s.n, s.k) }

type namedFunc struct {
	name string
	fn   func()
}

// runPair runs the kernel with workers = 0 ("kernels") and 1
// ("kernels_1w") and gonum's equivalent ("gonum") as sub-benchmarks, each
// doing fmas multiply-adds per operation.
func runPair(b *testing.B, fmas float64, ours func(workers int), gonum func()) {
	runAll(b, fmas,
		namedFunc{"kernels", func() { ours(0) }},
		namedFunc{"kernels_1w", func() { ours(1) }},
		namedFunc{"gonum", gonum})
}

// runAll runs each function as a sub-benchmark.
func runAll(b *testing.B, fmas float64, fns ...namedFunc) {
	for _, c := range fns {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.fn()
			}
			b.ReportMetric(2*fmas*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
	}
}

// eachShape runs setup's benchmark at every shape of benchShapes, with a
// generator seeded the same way for each.
func eachShape(b *testing.B, setup func(b *testing.B, rng *rand.Rand, s benchShape)) {
	for _, s := range benchShapes {
		b.Run(s.String(), func(b *testing.B) { setup(b, rand.New(rand.NewPCG(1, 2)), s) })
	}
}

func BenchmarkMulABt(b *testing.B) {
	eachShape(b, func(b *testing.B, rng *rand.Rand, s benchShape) {
		u, v := testmat.NormalGeneral(rng, s.m, s.k), testmat.NormalGeneral(rng, s.n, s.k)
		dst := testmat.NormalGeneral(rng, s.m, s.n)
		runPair(b, float64(s.m*s.n*s.k),
			func(w int) { MulABt(dst, u, v, w) },
			func() { blas64.Gemm(blas.NoTrans, blas.Trans, 1, u, v, 0, dst) })
	})
}

// BenchmarkSubMulABt computes the residual into a separate matrix, as the
// solvers do ("kernels", "kernels_1w"), and in place ("kernels_inplace"). The gonum
// variant is Gemm with α = −1, β = 1 in place; it does not compute the
// Frobenius norm, so it does slightly less work.
func BenchmarkSubMulABt(b *testing.B) {
	eachShape(b, func(b *testing.B, rng *rand.Rand, s benchShape) {
		u, v := testmat.NormalGeneral(rng, s.m, s.k), testmat.NormalGeneral(rng, s.n, s.k)
		y, r := testmat.NormalGeneral(rng, s.m, s.n), testmat.NormalGeneral(rng, s.m, s.n)
		runAll(b, float64(s.m*s.n*s.k),
			namedFunc{"kernels", func() { SubMulABt(r, y, u, v, 0) }},
			namedFunc{"kernels_1w", func() { SubMulABt(r, y, u, v, 1) }},
			namedFunc{"kernels_inplace", func() { SubMulABt(y, y, u, v, 0) }},
			namedFunc{"gonum", func() { blas64.Gemm(blas.NoTrans, blas.Trans, -1, u, v, 1, y) }})
	})
}

// BenchmarkMulAX and BenchmarkMulAtX multiply by A and by Aᵀ.
func BenchmarkMulAX(b *testing.B)  { benchMulA(b, false) }
func BenchmarkMulAtX(b *testing.B) { benchMulA(b, true) }

func benchMulA(b *testing.B, trans bool) {
	eachShape(b, func(b *testing.B, rng *rand.Rand, s benchShape) {
		a := testmat.NormalGeneral(rng, s.m, s.n)
		in, out, kernel, tA := s.n, s.m, MulAX, blas.NoTrans
		if trans {
			in, out, kernel, tA = s.m, s.n, MulAtX, blas.Trans
		}
		x, dst := testmat.NormalGeneral(rng, in, s.k), testmat.NormalGeneral(rng, out, s.k)
		runPair(b, float64(s.m*s.n*s.k),
			func(w int) { kernel(dst, a, x, w) },
			func() { blas64.Gemm(tA, blas.NoTrans, 1, a, x, 0, dst) })
	})
}

// BenchmarkMulAXAtY compares the fused kernel with two gonum Gemm calls.
func BenchmarkMulAXAtY(b *testing.B) {
	eachShape(b, func(b *testing.B, rng *rand.Rand, s benchShape) {
		a := testmat.NormalGeneral(rng, s.m, s.n)
		x, ax := testmat.NormalGeneral(rng, s.n, s.k), testmat.NormalGeneral(rng, s.m, s.k)
		y, aty := testmat.NormalGeneral(rng, s.m, s.k), testmat.NormalGeneral(rng, s.n, s.k)
		runPair(b, 2*float64(s.m*s.n*s.k),
			func(w int) { MulAXAtY(ax, aty, a, x, y, w) },
			func() {
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, a, x, 0, ax)
				blas64.Gemm(blas.Trans, blas.NoTrans, 1, a, y, 0, aty)
			})
	})
}

// BenchmarkGram adds the Gram matrix of 144 rows of width 12 (a line of
// the Gibbs fit at rank 10: bias, ten factors and the rating) with each
// kernel set.
func BenchmarkGram(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const w, n = 12, 144
	z := testmat.NormalGeneral(rng, n, w).Data
	g := make([]float64, w*w)
	b.Cleanup(func() { isa = maxISA })
	for level := maxISA; level >= isaGo; level-- {
		b.Run(Levels[level], func(b *testing.B) {
			isa = level
			for range b.N {
				Gram(g, z, w)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}
