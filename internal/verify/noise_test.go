package verify

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// TestNoiseScale: on a small matrix (every entry sampled), NoiseScale is
// 1.4826 times the upper median of |Y − U·Vᵀ| found by sorting, for a
// dense Y and for the same entries held as observed ones.
func TestNoiseScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d1, d2, k = 30, 20, 2
	y, u, v := kernels.NewGeneral(d1, d2), kernels.NewGeneral(d1, k), kernels.NewGeneral(d2, k)
	for _, m := range []*[]float64{&y.Data, &u.Data, &v.Data} {
		for i := range *m {
			(*m)[i] = rng.NormFloat64()
		}
	}
	var res []float64
	var rows, cols []int
	var vals []float64
	for i := range d1 {
		for j := range d2 {
			f := 0.0
			for c := range k {
				f += u.Data[i*k+c] * v.Data[j*k+c]
			}
			res = append(res, math.Abs(y.Data[i*d2+j]-f))
			rows, cols, vals = append(rows, i), append(cols, j), append(vals, y.Data[i*d2+j])
		}
	}
	slices.Sort(res)
	want := 1.4826 * res[len(res)/2]
	if got := NoiseScale(y, nil, u, v); got != want {
		t.Errorf("dense: %v, want %v", got, want)
	}
	o, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	if got := NoiseScale(y, o, u, v); got != want {
		t.Errorf("observed: %v, want %v", got, want)
	}
}

// TestPruneBelow: the entries above the floor stay, in order, with the
// row pointers updated; those at or below it are returned with their sum
// of squares.
func TestPruneBelow(t *testing.T) {
	s := CSR{RowPtr: []int{0, 3, 3, 5}, ColIdx: []int32{0, 2, 4, 1, 3}, Val: []float64{0.5, -2, 1, -1, 3}}
	kept, ss, dropped := PruneBelow(s, 1)
	if kept != 2 || ss != 0.25+1+1 || len(dropped) != 3 {
		t.Fatalf("kept %d, dropped SS %v, %d dropped", kept, ss, len(dropped))
	}
	if !slices.Equal(s.RowPtr, []int{0, 1, 1, 2}) || !slices.Equal(s.ColIdx[:kept], []int32{2, 3}) || !slices.Equal(s.Val[:kept], []float64{-2, 3}) {
		t.Errorf("left %v %v %v", s.RowPtr, s.ColIdx[:kept], s.Val[:kept])
	}
	want := []Entry{{0, 0, 0.5}, {0, 4, 1}, {2, 1, -1}}
	if !slices.Equal(dropped, want) {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
}

// TestGrossShare: on Gaussian residuals no entry is gross; 1% of entries
// pushed 100 spreads out are counted (1% of those outside S, to within a
// sample's granularity), and not when S holds them; an exact fit gives 0.
func TestGrossShare(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d1, d2 = 300, 200
	y := blas64.General{Rows: d1, Cols: d2, Stride: d2, Data: make([]float64, d1*d2)}
	u := blas64.General{Rows: d1, Cols: 1, Stride: 1, Data: make([]float64, d1)}
	v := blas64.General{Rows: d2, Cols: 1, Stride: 1, Data: make([]float64, d2)}
	for i := range u.Data {
		u.Data[i] = rng.NormFloat64()
	}
	for j := range v.Data {
		v.Data[j] = rng.NormFloat64()
	}
	for i := range d1 {
		for j := range d2 {
			y.Data[i*d2+j] = u.Data[i] * v.Data[j]
		}
	}
	empty := CSR{RowPtr: make([]int, d1+1)}
	if g := GrossShare(y, nil, u, v, empty); g != 0 {
		t.Errorf("exact fit: %g, want 0", g)
	}
	for k := range y.Data {
		y.Data[k] += 0.1 * rng.NormFloat64()
	}
	if g := GrossShare(y, nil, u, v, empty); g != 0 {
		t.Errorf("Gaussian noise: %g, want 0", g)
	}
	s := CSR{RowPtr: make([]int, d1+1)}
	for i := range d1 {
		for j := range d2 {
			if (i*d2+j)%100 == 7 {
				y.Data[i*d2+j] += 10 // 100 spreads
				s.ColIdx, s.Val = append(s.ColIdx, int32(j)), append(s.Val, 10)
			}
		}
		s.RowPtr[i+1] = len(s.Val)
	}
	if g := GrossShare(y, nil, u, v, empty); math.Abs(g-0.01) > 0.002 {
		t.Errorf("1%% gross entries outside S: %g, want 0.01", g)
	}
	if g := GrossShare(y, nil, u, v, s); g != 0 {
		t.Errorf("the gross entries in S: %g, want 0", g)
	}
}
