package observed

import (
	"github.com/rpca-gd/rpca/internal/sample"
	"github.com/rpca-gd/rpca/internal/testmat"

	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// benchMatrix returns a d×d matrix observed at the rate of the paper's
// Figure 1(b), p = 0.15·r²·log(d)/d with r = 10, with N(0, 1) values.
func benchMatrix(b *testing.B, d int) *Matrix {
	p := 15 * math.Log(float64(d)) / float64(d)
	rng := rand.New(rand.NewPCG(1, uint64(d)))
	rowPtr, colIdx := sample.Bernoulli{P: p, Seed: uint64(d)}.Positions(d, d, 0)
	val := make([]float64, len(colIdx))
	for q := range val {
		val[q] = rng.NormFloat64()
	}
	m, err := FromCSR(d, d, rowPtr, colIdx, val)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func benchSizes() []int {
	if s := os.Getenv("RPCA_BENCH_D"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return []int{int(v)}
		}
	}
	return []int{10_000, 50_000}
}

// BenchmarkKernels times each per-iteration kernel of Algorithm 2 at r = 10
// and reports ns per observed entry (wall clock, all workers).
func BenchmarkKernels(b *testing.B) {
	for _, d := range benchSizes() {
		m := benchMatrix(b, d)
		rng := rand.New(rand.NewPCG(2, 3))
		u, v := testmat.NormalGeneral(rng, d, 10), testmat.NormalGeneral(rng, d, 10)
		gu, gv := testmat.NormalGeneral(rng, d, 10), testmat.NormalGeneral(rng, d, 10)
		x12 := testmat.NormalGeneral(rng, d, 12)
		d12 := testmat.NormalGeneral(rng, d, 12)
		n := m.NNZ()
		e := make([]float64, n)
		keep := make([]bool, n)
		for k := range keep {
			keep[k] = rng.IntN(8) == 0
		}
		if os.Getenv("RPCA_THP") != "" {
			for _, g := range []blas64.General{u, v, gu, gv, x12, d12} {
				adviseHuge(g.Data)
			}
			adviseHuge(e)
			adviseHuge(m.Val)
			adviseHuge(m.ColIdx)
			adviseHuge(m.RowIdx)
			adviseHuge(keep)
		}
		p := NewPlan(m)
		p.Residual(e, u, v, 0)
		run := func(name string, fn func()) {
			b.Run(fmt.Sprintf("d=%d/%s", d, name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					fn()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
			})
		}
		run("Residual", func() { p.Residual(e, u, v, 0) })
		run("ZeroMulBoth", func() { p.ZeroMulBoth(gu, gv, e, keep, u, v, 0) })
		run("ZeroMulBothTiled", func() { p.ZeroMulBothTiled(gu, gv, e, keep, u, v, 0) })
		run("MulVals", func() { p.MulVals(gu, e, v, 0) })
		run("MulTransVals", func() { p.MulTransVals(gv, e, u, 0) })
		run("MulVals12", func() { p.MulVals(d12, e, x12, 0) })
		run("MulTransVals12", func() { p.MulTransVals(d12, e, x12, 0) })
		plain := NewPlan(m)
		plain.tile = math.MaxInt / 64 // never tiled
		run("MulTransVals12Untiled", func() { plain.MulTransVals(d12, e, x12, 0) })
	}
}

var _ = blas64.General{}
