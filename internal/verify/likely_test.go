package verify

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/observed"
)

// LikelyExact changes the order of the work, never the report: Answer
// gives the same report with and without it on exact, noisy and wrong
// answers, dense and partial, and with the claim right or wrong.
func TestLikelyExactSameReport(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const d1, d2, r = 90, 80, 3
	gen := func(rows, cols int) *mat.Dense {
		m := mat.NewDense(rows, cols, nil)
		for i := range rows {
			for j := range cols {
				m.Set(i, j, rng.NormFloat64())
			}
		}
		return m
	}
	a, b := gen(d1, r), gen(d2, r)
	var clean mat.Dense
	clean.Mul(a, b.T())
	noisy := mat.DenseCopyOf(&clean)
	for i := range d1 {
		for j := range d2 {
			noisy.Set(i, j, noisy.At(i, j)+1e-3*rng.NormFloat64())
		}
	}
	wrong := mat.DenseCopyOf(&clean)
	wrong.Add(wrong, func() *mat.Dense { var m mat.Dense; m.Mul(gen(d1, 1), gen(d2, 1).T()); return &m }())
	empty := CSR{RowPtr: make([]int, d1+1)}
	partial := func(y *mat.Dense) *observed.Matrix {
		var rows, cols []int
		var vals []float64
		for i := range d1 {
			for j := range d2 {
				if rng.Float64() < 0.6 {
					rows, cols, vals = append(rows, i), append(cols, j), append(vals, y.At(i, j))
				}
			}
		}
		o, err := observed.FromTriplets(d1, d2, rows, cols, vals)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	for name, y := range map[string]*mat.Dense{"exact": &clean, "noisy": noisy, "wrong": wrong} {
		for _, o := range []*observed.Matrix{nil, partial(y)} {
			in := Input{U: a, V: b, S: empty, Alpha: 0.1, Seed: 3, Workers: 2}
			if o == nil {
				in.Y = y.RawMatrix()
			} else {
				in.Observed, in.Y = o, blas64.General{}
			}
			without := *Answer(in)
			in.LikelyExact = true
			with := *Answer(in)
			if fmt.Sprint(with) != fmt.Sprint(without) {
				t.Errorf("%s (partial %v): %+v with the claim, %+v without", name, o != nil, with, without)
			}
			if name == "exact" && !with.Exact || name == "wrong" && with.Verified {
				t.Errorf("%s (partial %v): the case does not test what it should: %+v", name, o != nil, with)
			}
		}
	}
}
