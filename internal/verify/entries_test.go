package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/testmat"
)

// WithEntries and SetEntries against a dense reference: a random CSR
// matrix, entries added at random positions (some already stored).
func TestEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 9, 8
	dense := make([]float64, rows*cols)
	s := CSR{RowPtr: make([]int, rows+1)}
	for i := range rows {
		for j := range cols {
			if rng.Float64() < 0.3 {
				v := rng.NormFloat64()
				dense[i*cols+j] = v
				s.ColIdx, s.Val = append(s.ColIdx, int32(j)), append(s.Val, v)
			}
		}
		s.RowPtr[i+1] = len(s.Val)
	}
	var pos []int
	for k := range rows * cols {
		if rng.Float64() < 0.2 {
			pos = append(pos, k)
		}
	}
	at := func(k int) (int, int) { return k / cols, k % cols }
	val := func(k, i, j int) float64 { return float64(1000 + k) }
	out := WithEntries(s, rows, pos, at, val)
	want := append([]float64(nil), dense...)
	for _, k := range pos {
		want[k] = val(k, 0, 0)
	}
	got := make([]float64, rows*cols)
	for i := range rows {
		for q := out.RowPtr[i]; q < out.RowPtr[i+1]; q++ {
			if q > out.RowPtr[i] && out.ColIdx[q] <= out.ColIdx[q-1] {
				t.Fatalf("row %d: columns not increasing", i)
			}
			got[i*cols+int(out.ColIdx[q])] = out.Val[q]
		}
	}
	for k := range got {
		if got[k] != want[k] {
			t.Fatalf("entry %d: %v, want %v", k, got[k], want[k])
		}
	}
	set := func(k, i, j int) float64 { return -float64(k) }
	SetEntries(out, pos, at, set)
	for _, k := range pos {
		i, j := at(k)
		for q := out.RowPtr[i]; q < out.RowPtr[i+1]; q++ {
			if int(out.ColIdx[q]) == j && out.Val[q] != set(k, i, j) {
				t.Errorf("entry %d not set: %v", k, out.Val[q])
			}
		}
	}
}

// TestResiduals: the row, column and residual of every position, from a
// dense Y and from the same Y's entries observed in part, against
// indices and sums written out.
func TestResiduals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const d1, d2, k = 7, 5, 2
	u, v := testmat.Normal(rng, d1, k), testmat.Normal(rng, d2, k)
	y := make([]float64, d1*d2)
	for n := range y {
		y[n] = rng.NormFloat64()
	}
	want := func(i, j int) float64 { return y[i*d2+j] - u.At(i, 0)*v.At(j, 0) - u.At(i, 1)*v.At(j, 1) }
	dense := Residuals{Y: blas64.General{Rows: d1, Cols: d2, Stride: d2, Data: y}, U: u, V: v}
	for n := range y {
		i, j := dense.At(n)
		if i != n/d2 || j != n%d2 || math.Abs(dense.Value(n, i, j)-want(i, j)) > 1e-14 {
			t.Fatalf("dense position %d: (%d, %d) %v, want (%d, %d) %v", n, i, j, dense.Value(n, i, j), n/d2, n%d2, want(n/d2, n%d2))
		}
	}
	var rows, cols []int
	var vals []float64
	for n := range y {
		if rng.Float64() < 0.5 || n%d2 == 0 {
			rows, cols, vals = append(rows, n/d2), append(cols, n%d2), append(vals, y[n])
		}
	}
	o, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	part := Residuals{O: o, U: u, V: v}
	for n := range vals {
		i, j := part.At(n)
		if i != rows[n] || j != cols[n] || math.Abs(part.Value(n, i, j)-want(i, j)) > 1e-14 {
			t.Fatalf("observed position %d: (%d, %d), want (%d, %d)", n, i, j, rows[n], cols[n])
		}
	}
}
