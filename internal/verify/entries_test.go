package verify

import (
	"math/rand/v2"
	"testing"
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
