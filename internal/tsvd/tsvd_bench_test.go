package tsvd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// Benchmarks (run with e.g.
//
//	go test ./internal/tsvd -run '^$' -bench . -benchtime 2x -count 3
//
// ) report per SVD: products/op (block products with A or Aᵀ), matvecs/op
// (their total number of columns) and prod-ms/op (time spent inside the
// operator; the rest is orthogonalization and Rayleigh–Ritz).

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
		sd := 1 / math.Sqrt(float64(d))
		a, b := benchGaussian(rng, d, r, sd), benchGaussian(rng, d, r, sd)
		benchLRS = blas64.General{Rows: d, Cols: d, Stride: d, Data: make([]float64, d*d)}
		kernels.MulABt(benchLRS, a, b, 0)
		bound := 5 * float64(r) / float64(d)
		for i := range benchLRS.Data {
			if rng.Float64() < 0.1 {
				benchLRS.Data[i] += bound * (2*rng.Float64() - 1)
			}
		}
		benchGauss = benchGaussian(rng, d, d, 1)
	})
}

func benchGaussian(rng *rand.Rand, rows, cols int, sd float64) blas64.General {
	g := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: make([]float64, rows*cols)}
	for i := range g.Data {
		g.Data[i] = sd * rng.NormFloat64()
	}
	return g
}

// timedOp measures the time spent in the operator.
type timedOp struct {
	Operator
	d time.Duration
}

func (t *timedOp) MulTo(dst, x blas64.General) {
	s := time.Now()
	t.Operator.MulTo(dst, x)
	t.d += time.Since(s)
}

func (t *timedOp) MulTransTo(dst, x blas64.General) {
	s := time.Now()
	t.Operator.MulTransTo(dst, x)
	t.d += time.Since(s)
}

// runBench runs Compute b.N times and reports the counters of the last
// run and the average time in the operator.
func runBench(b *testing.B, op Operator, opt Options) {
	b.Helper()
	top := &timedOp{Operator: op}
	var res *Result
	n := 0
	for b.Loop() {
		var err error
		res, err = Compute(context.Background(), top, opt)
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(res.Products), "products/op")
	b.ReportMetric(float64(res.Columns), "matvecs/op")
	b.ReportMetric(float64(top.d.Milliseconds())/float64(n), "prod-ms/op")
	if !res.Converged {
		b.Logf("not converged after %d iterations", res.Iterations)
	}
}

// BenchmarkCompute5000 times rank-10 SVDs of 5000×5000 matrices.
func BenchmarkCompute5000(b *testing.B) {
	benchMatrices()
	for _, mc := range []struct {
		name string
		a    *blas64.General
	}{{"lowrank+sparse", &benchLRS}, {"gaussian", &benchGauss}} {
		for _, tol := range []float64{1e-4, 1e-6, 1e-10} {
			b.Run(fmt.Sprintf("%s/tol=%g", mc.name, tol), func(b *testing.B) {
				runBench(b, Dense{A: *mc.a}, Options{Rank: benchRank, Tol: tol, Seed: 1})
			})
		}
	}
}

// rankOneUpdate is the operator A + ε·u·vᵀ.
type rankOneUpdate struct {
	a    Dense
	eps  float64
	u, v []float64
}

func (r rankOneUpdate) Dims() (int, int) { return r.a.Dims() }

func (r rankOneUpdate) MulTo(dst, x blas64.General) {
	r.a.MulTo(dst, x)
	addOuter(dst, x, r.u, r.v, r.eps)
}

func (r rankOneUpdate) MulTransTo(dst, x blas64.General) {
	r.a.MulTransTo(dst, x)
	addOuter(dst, x, r.v, r.u, r.eps)
}

// addOuter adds ε·u·(wᵀ·x) to dst.
func addOuter(dst, x blas64.General, u, w []float64, eps float64) {
	k := x.Cols
	c := make([]float64, k)
	for i, wi := range w {
		for j, v := range x.Data[i*x.Stride : i*x.Stride+k] {
			c[j] += wi * v
		}
	}
	for i, ui := range u {
		for j := range k {
			dst.Data[i*dst.Stride+j] += eps * ui * c[j]
		}
	}
}

// BenchmarkWarmStart5000 times the rank-10 SVD of the low-rank-plus-sparse
// matrix after a rank-one change of relative size 1e-3 (the situation of
// AltProj's and IALM's repeated SVDs), from a random start and warm-started
// from the right singular vectors of the unchanged matrix.
func BenchmarkWarmStart5000(b *testing.B) {
	benchMatrices()
	rng := rand.New(rand.NewPCG(3, 3))
	unit := func() []float64 {
		x := make([]float64, benchDim)
		for i := range x {
			x[i] = rng.NormFloat64() / math.Sqrt(benchDim)
		}
		return x
	}
	a := Dense{A: benchLRS}
	prev, err := Compute(context.Background(), a, Options{Rank: benchRank, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	op := rankOneUpdate{a: a, eps: 1e-3 * prev.S[0], u: unit(), v: unit()}
	for _, tol := range []float64{1e-6, 1e-10} {
		b.Run(fmt.Sprintf("cold/tol=%g", tol), func(b *testing.B) {
			runBench(b, op, Options{Rank: benchRank, Tol: tol, Seed: 2})
		})
		b.Run(fmt.Sprintf("warm/tol=%g", tol), func(b *testing.B) {
			runBench(b, op, Options{Rank: benchRank, Tol: tol, Seed: 2, Start: prev.V})
		})
	}
}

// parCSR is a row-parallel sparse operator holding A and Aᵀ in CSR form.
type parCSR struct{ a, at *csr }

func (p parCSR) Dims() (int, int) { return p.a.m, p.a.n }

func (p parCSR) MulTo(dst, x blas64.General)      { p.a.parMul(dst, x) }
func (p parCSR) MulTransTo(dst, x blas64.General) { p.at.parMul(dst, x) }

// parMul sets dst = C·X, rows in parallel.
func (c *csr) parMul(dst, x blas64.General) {
	k := x.Cols
	kernels.ParallelFor(c.m, 0, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d := dst.Data[i*dst.Stride : i*dst.Stride+k]
			clear(d)
			for p := c.rowPtr[i]; p < c.rowPtr[i+1]; p++ {
				xr := x.Data[c.col[p]*x.Stride : c.col[p]*x.Stride+k]
				v := c.val[p]
				for j, xv := range xr {
					d[j] += v * xv
				}
			}
		}
	})
}

// transpose returns Cᵀ in CSR form.
func (c *csr) transpose() *csr {
	t := &csr{m: c.n, n: c.m, rowPtr: make([]int, c.n+1), col: make([]int, len(c.col)), val: make([]float64, len(c.val))}
	for _, j := range c.col {
		t.rowPtr[j+1]++
	}
	for j := range c.n {
		t.rowPtr[j+1] += t.rowPtr[j]
	}
	next := append([]int(nil), t.rowPtr[:c.n]...)
	for i := range c.m {
		for p := c.rowPtr[i]; p < c.rowPtr[i+1]; p++ {
			j := c.col[p]
			t.col[next[j]] = i
			t.val[next[j]] = c.val[p]
			next[j]++
		}
	}
	return t
}

// BenchmarkSparse times the rank-10 SVD of a partially observed low-rank
// matrix scaled by 1/p, as in Algorithm 2's initialization
// SVD_r[(Y − S_init)/p] once S_init has removed the corruptions, at
// d = 20000 with p = 1% (|Φ| ≈ 4·10⁶), through a row-parallel CSR
// operator. The sampling noise (spectral norm ≈ 0.55 against σ_r ≈ 1.04)
// narrows the gap compared with the dense benchmark. At this size the
// basis operations (O(d·p·b) per iteration) weigh more against the
// products (O(|Φ|·b)) than for dense matrices.
func BenchmarkSparse(b *testing.B) {
	const d, r, rate = 20000, 10, 0.01
	rng := rand.New(rand.NewPCG(4, 4))
	sd := 1 / math.Sqrt(d)
	fa, fb := benchGaussian(rng, d, r, sd), benchGaussian(rng, d, r, sd)
	c := &csr{m: d, n: d, rowPtr: make([]int, d+1)}
	for i := range d {
		// Observed columns by geometric skips: each one independently
		// with probability rate.
		for j := -1; ; {
			j += 1 + int(math.Log(1-rng.Float64())/math.Log(1-rate))
			if j >= d {
				break
			}
			v := 0.0
			for k := range r {
				v += fa.Data[i*r+k] * fb.Data[j*r+k]
			}
			c.col = append(c.col, j)
			c.val = append(c.val, v/rate)
		}
		c.rowPtr[i+1] = len(c.val)
	}
	op := parCSR{a: c, at: c.transpose()}
	for _, tol := range []float64{1e-4, 1e-10} {
		b.Run(fmt.Sprintf("tol=%g", tol), func(b *testing.B) {
			runBench(b, op, Options{Rank: r, Tol: tol, Seed: 1})
		})
	}
}

// BenchmarkProduct5000 times one product of the 5000×5000 matrix with a
// block of the default size for rank 10, for comparison with the SVD.
func BenchmarkProduct5000(b *testing.B) {
	benchMatrices()
	k := DefaultBlockSize(benchRank)
	x := benchGaussian(rand.New(rand.NewPCG(5, 5)), benchDim, k, 1)
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
