package sparsify

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

	"github.com/rpca-gd/rpca/internal/observed"
)

// The benchmark input is the paper's model at d = 5000: M* = ABᵀ with A, B
// 5000×10 of N(0, 1/d) entries, plus corruptions uniform in [-5r/d, 5r/d]
// on 10% of the entries. It is built once per test binary.
var (
	benchOnce sync.Once
	benchA    blas64.General
)

const benchD = 5000

func benchMatrix() blas64.General {
	benchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(42, 43))
		benchA = blas64.General{Rows: benchD, Cols: benchD, Stride: benchD, Data: make([]float64, benchD*benchD)}
		fillPaperModel(rng, benchA, 10, 0.1)
	})
	return benchA
}

// BenchmarkDense times Dense.Apply at d = 5000 with 2 workers for
// k = ⌊α·d⌋ (α = 0.1) and k = ⌊γα·d⌋ (γα = 0.2), next to a simple
// single-threaded implementation that finds every line's threshold by
// selection on a copy ("naive-select") and one that sorts every line
// ("naive-sort", the approach of the authors' MATLAB code).
func BenchmarkDense(b *testing.B) {
	a := benchMatrix()
	for _, frac := range []float64{0.1, 0.2} {
		k := Count(frac, benchD)
		name := map[float64]string{0.1: "k=500", 0.2: "k=1000"}[frac]
		b.Run(name+"/fast", func(b *testing.B) {
			d := NewDense(benchD, benchD, 2)
			var out Sparse
			if err := d.Apply(a, k, k, &out); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := d.Apply(a, k, k, &out); err != nil {
					b.Fatal(err)
				}
			}
			rm, cm := d.misses()
			b.ReportMetric(float64(out.NNZ()), "nnz")
			b.ReportMetric(float64(rm+cm), "misses")
		})
		b.Run(name+"/naive-select", func(b *testing.B) {
			for b.Loop() {
				naiveApply(a, k, k, false)
			}
		})
		b.Run(name+"/naive-sort", func(b *testing.B) {
			for b.Loop() {
				naiveApply(a, k, k, true)
			}
		})
	}
}

// naiveApply is the straightforward single-threaded T: each row and each
// (gathered) column is copied, its threshold found by selection or by a
// full sort, and the result assembled from the per-line cutoffs.
func naiveApply(a blas64.General, kRow, kCol int, sortLines bool) *Sparse {
	cut := func(v []float64, k int, scratch []float64) (float64, int) {
		if !sortLines {
			return exactCutoff(v, k, scratch)
		}
		s := scratch[:len(v)]
		copy(s, v)
		slices.Sort(s)
		t := s[len(s)-k]
		e := k - countAbove(s[len(s)-k:], t) // ties admitted
		return t, tieLast(v, t, e)
	}
	n := max(a.Rows, a.Cols)
	line, scratch := make([]float64, n), make([]float64, n)
	rowT, rowLast := make([]float64, a.Rows), make([]int, a.Rows)
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < a.Cols; j++ {
			line[j] = math.Abs(a.Data[i*a.Stride+j])
		}
		rowT[i], rowLast[i] = cut(line[:a.Cols], kRow, scratch)
	}
	colT, colLast := make([]float64, a.Cols), make([]int, a.Cols)
	for j := 0; j < a.Cols; j++ {
		for i := 0; i < a.Rows; i++ {
			line[i] = math.Abs(a.Data[i*a.Stride+j])
		}
		colT[j], colLast[j] = cut(line[:a.Rows], kCol, scratch)
	}
	out := &Sparse{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int, a.Rows+1)}
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < a.Cols; j++ {
			x := a.Data[i*a.Stride+j]
			v := math.Abs(x)
			if v > 0 && passes(v, rowT[i], j, rowLast[i]) && passes(v, colT[j], i, colLast[j]) {
				out.ColIdx = append(out.ColIdx, int32(j))
				out.Val = append(out.Val, x)
			}
		}
		out.RowPtr[i+1] = len(out.Val)
	}
	return out
}

// TestNaiveApplyAgrees keeps the benchmark baselines honest: both must
// match the reference.
func TestNaiveApplyAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	for _, kind := range genKinds {
		a := gen(rng, kind, 37, 29)
		for _, k := range [][2]int{{1, 1}, {3, 4}, {10, 20}, {29, 37}} {
			want := refKeep(a, nil, k[0], k[1])
			for _, s := range []bool{false, true} {
				if diff := diffKeep(sparseKeep(t, naiveApply(a, k[0], k[1], s), a), want); diff != "" {
					t.Fatalf("%s k=%v sort=%v: %s", kind, k, s, diff)
				}
			}
		}
	}
}

// BenchmarkObserved times Observed.Apply at d = 10⁵ with |Φ| ≈ 10⁷
// (p = 10⁻³, about 100 entries per line) and counts ⌊γpα·d⌋ = 20
// (γ = 2, α = 0.1), reporting ns per observed entry.
func BenchmarkObserved(b *testing.B) {
	const d, p = 100000, 1e-3
	m, vals := benchObserved(d, p)
	k := Count(2*p*0.1, d)
	keep := make([]bool, m.NNZ())
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[w], func(b *testing.B) {
			o := NewObserved(m, w)
			if err := o.Apply(vals, k, k, keep); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := o.Apply(vals, k, k, keep); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.NNZ()), "ns/entry")
		})
	}
}

// benchObserved samples Φ with rate p from a d×d low-rank-plus-corruption
// model, computing only the sampled entries.
func benchObserved(d int, p float64) (*observed.Matrix, []float64) {
	rng := rand.New(rand.NewPCG(44, 45))
	const r = 10
	sd := 1 / math.Sqrt(float64(d))
	u := make([]float64, d*r)
	v := make([]float64, d*r)
	for i := range u {
		u[i] = sd * rng.NormFloat64()
		v[i] = sd * rng.NormFloat64()
	}
	bound := 5 * float64(r) / float64(d)
	rowPtr := make([]int, d+1)
	var colIdx []int32
	var val []float64
	logq := math.Log1p(-p)
	for i := 0; i < d; i++ {
		for j := int(math.Log(1-rng.Float64()) / logq); j < d; j += 1 + int(math.Log(1-rng.Float64())/logq) {
			s := 0.0
			for l := 0; l < r; l++ {
				s += u[i*r+l] * v[j*r+l]
			}
			if rng.Float64() < 0.1 {
				s += bound * (2*rng.Float64() - 1)
			}
			colIdx = append(colIdx, int32(j))
			val = append(val, s)
		}
		rowPtr[i+1] = len(val)
	}
	m, err := observed.FromCSR(d, d, rowPtr, colIdx, val)
	if err != nil {
		panic(err)
	}
	return m, slices.Clone(m.Val)
}

// BenchmarkDenseTall times Dense.Apply on the tall and short matrices of
// video (pixels × frames: a 10,000-row sketch of 200 frames, and 9,216 ×
// 60, a 64×48 colour clip's history of 60 frames) at α = 0.2, γ = 1 (the
// video default), with 2 workers, next to the single-threaded naive
// selection.
func BenchmarkDenseTall(b *testing.B) {
	for _, s := range []struct{ rows, cols int }{{10000, 200}, {9216, 60}} {
		rng := rand.New(rand.NewPCG(7, 8))
		a := blas64.General{Rows: s.rows, Cols: s.cols, Stride: s.cols, Data: make([]float64, s.rows*s.cols)}
		fillPaperModel(rng, a, 1, 0.1)
		kRow, kCol := Count(0.2, s.cols), Count(0.2, s.rows)
		name := map[int]string{200: "10000x200", 60: "9216x60"}[s.cols]
		b.Run(name+"/fast", func(b *testing.B) {
			d := NewDense(s.rows, s.cols, 2)
			var out Sparse
			for b.Loop() {
				if err := d.Apply(a, kRow, kCol, &out); err != nil {
					b.Fatal(err)
				}
			}
			rm, cm := d.misses()
			b.ReportMetric(float64(rm+cm), "misses")
		})
		b.Run(name+"/iterating", func(b *testing.B) {
			// As in a solve: each call on a residual a little changed from
			// the one before (every entry moved by up to 2% of the typical
			// magnitude), so that the rows' cutoffs move a little too.
			next := blas64.General{Rows: a.Rows, Cols: a.Cols, Stride: a.Stride, Data: slices.Clone(a.Data)}
			rms := math.Sqrt(floats.Dot(a.Data, a.Data) / float64(len(a.Data)))
			for i := range next.Data {
				next.Data[i] += 0.02 * rms * (2*rng.Float64() - 1)
			}
			d := NewDense(s.rows, s.cols, 2)
			var out Sparse
			in := [2]blas64.General{a, next}
			n := 0
			for b.Loop() {
				if err := d.Apply(in[n%2], kRow, kCol, &out); err != nil {
					b.Fatal(err)
				}
				n++
			}
			rm, cm := d.misses()
			b.ReportMetric(float64(rm+cm), "misses")
			b.ReportMetric(float64(d.prevBracketed()), "prev-bracketed")
		})
		b.Run(name+"/naive-select", func(b *testing.B) {
			for b.Loop() {
				naiveApply(a, kRow, kCol, false)
			}
		})
	}
}
