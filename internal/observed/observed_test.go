package observed

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

func randGeneral(rng *rand.Rand, r, c int) blas64.General {
	g := blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
	for k := range g.Data {
		g.Data[k] = rng.NormFloat64()
	}
	return g
}

// randomObserved returns a d1×d2 matrix observed with probability p and
// its dense form (missing entries NaN).
func randomObserved(t *testing.T, rng *rand.Rand, d1, d2 int, p float64) (*Matrix, [][]float64) {
	t.Helper()
	dense := make([][]float64, d1)
	var rows, cols []int
	var vals []float64
	for i := range dense {
		dense[i] = make([]float64, d2)
		for j := range dense[i] {
			dense[i][j] = math.NaN()
			if rng.Float64() < p {
				v := rng.NormFloat64()
				if rng.IntN(10) == 0 {
					v = 0 // observed zeros must stay observations
				}
				dense[i][j] = v
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
			}
		}
	}
	// Shuffle the triplets: FromTriplets must accept any order.
	rng.Shuffle(len(vals), func(a, b int) {
		rows[a], rows[b] = rows[b], rows[a]
		cols[a], cols[b] = cols[b], cols[a]
		vals[a], vals[b] = vals[b], vals[a]
	})
	m, err := FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	return m, dense
}

func TestFromTripletsLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, dense := randomObserved(t, rng, 37, 23, 0.3)
	n := 0
	for i := range dense {
		for j := range dense[i] {
			if !math.IsNaN(dense[i][j]) {
				n++
			}
		}
	}
	if m.NNZ() != n {
		t.Fatalf("NNZ = %d, want %d", m.NNZ(), n)
	}
	// CSR: every stored entry matches, columns strictly increase.
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		for k := range cols {
			if k > 0 && cols[k] <= cols[k-1] {
				t.Fatalf("row %d columns not increasing", i)
			}
			if got, want := vals[k], dense[i][cols[k]]; got != want {
				t.Fatalf("(%d,%d) = %v, want %v", i, cols[k], got, want)
			}
		}
	}
	// CSC: column j lists its rows increasingly and points at the right CSR slots.
	seen := 0
	for j := 0; j < m.Cols; j++ {
		prev := int32(-1)
		for q := m.ColPtr[j]; q < m.ColPtr[j+1]; q++ {
			i, k := m.RowIdx[q], m.Perm[q]
			if i <= prev {
				t.Fatalf("column %d rows not increasing", j)
			}
			prev = i
			if int(m.ColIdx[k]) != j || k < int32(m.RowPtr[i]) || k >= int32(m.RowPtr[i+1]) {
				t.Fatalf("CSC slot %d of column %d points to the wrong entry", q, j)
			}
			seen++
		}
	}
	if seen != n {
		t.Fatalf("CSC has %d entries, want %d", seen, n)
	}
}

func TestFromTripletsErrors(t *testing.T) {
	cases := []struct {
		name       string
		d1, d2     int
		rows, cols []int
		vals       []float64
		want       string
	}{
		{"duplicate", 3, 3, []int{0, 1, 0}, []int{1, 1, 1}, []float64{1, 2, 3}, "more than once"},
		{"row out of range", 3, 3, []int{3}, []int{0}, []float64{1}, "outside"},
		{"negative col", 3, 3, []int{0}, []int{-1}, []float64{1}, "outside"},
		{"nan", 3, 3, []int{0}, []int{0}, []float64{math.NaN()}, "non-finite"},
		{"inf", 3, 3, []int{0}, []int{0}, []float64{math.Inf(1)}, "non-finite"},
		{"lengths", 3, 3, []int{0, 1}, []int{0}, []float64{1}, "equal lengths"},
		{"size", 0, 3, nil, nil, nil, "positive"},
	}
	for _, c := range cases {
		_, err := FromTriplets(c.d1, c.d2, c.rows, c.cols, c.vals)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestSampleDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	y := randGeneral(rng, 300, 200)
	y.Data[0] = 0 // a zero value must be kept if sampled
	for _, p := range []float64{1, 0.3, 0.02} {
		m, err := SampleDense(y, p, 7)
		if err != nil {
			t.Fatal(err)
		}
		n := float64(y.Rows * y.Cols)
		// Binomial count: allow 5 standard deviations.
		if got, sd := float64(m.NNZ()), math.Sqrt(n*p*(1-p)); math.Abs(got-n*p) > 5*sd+1e-9 {
			t.Errorf("p=%v: %v entries sampled, want %v ± %v", p, got, n*p, 5*sd)
		}
		for i := 0; i < m.Rows; i++ {
			cols, vals := m.Row(i)
			for k, c := range cols {
				if vals[k] != y.Data[i*y.Stride+int(c)] {
					t.Fatalf("sampled value at (%d,%d) differs", i, c)
				}
			}
		}
		again, _ := SampleDense(y, p, 7)
		if again.NNZ() != m.NNZ() {
			t.Errorf("p=%v: same seed gave %d and %d entries", p, m.NNZ(), again.NNZ())
		}
	}
	for _, p := range []float64{0, -0.1, 1.5, math.NaN()} {
		if _, err := SampleDense(y, p, 1); err == nil {
			t.Errorf("p=%v accepted", p)
		}
	}
}

// TestProducts checks Residual, MulVals and MulTransVals against dense
// loops. Tolerance: sums of ≤ 200 products of O(1) numbers, reordered
// across goroutines, agree to ~1e-13.
func TestProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d1, d2, r = 61, 45, 4
	m, dense := randomObserved(t, rng, d1, d2, 0.4)
	u, v := randGeneral(rng, d1, r), randGeneral(rng, d2, r)
	for _, workers := range []int{1, 3} {
		e := make([]float64, m.NNZ())
		ss := m.Residual(e, u, v, workers)
		wantSS := 0.0
		q := 0
		for i := 0; i < d1; i++ {
			for j := 0; j < d2; j++ {
				if math.IsNaN(dense[i][j]) {
					continue
				}
				dot := 0.0
				for k := 0; k < r; k++ {
					dot += u.Data[i*r+k] * v.Data[j*r+k]
				}
				want := dense[i][j] - dot
				if math.Abs(e[q]-want) > 1e-12 {
					t.Fatalf("residual at (%d,%d) = %v, want %v", i, j, e[q], want)
				}
				wantSS += want * want
				q++
			}
		}
		if math.Abs(ss-wantSS) > 1e-10*wantSS {
			t.Errorf("sum of squares %v, want %v", ss, wantSS)
		}
		x2 := randGeneral(rng, d2, 3)
		x1 := randGeneral(rng, d1, 3)
		ev := randGeneral(rng, d1, 3) // garbage: must be overwritten
		etu := randGeneral(rng, d2, 3)
		m.MulVals(ev, e, x2, workers)
		m.MulTransVals(etu, e, x1, workers)
		wantEV := make([]float64, d1*3)
		wantEtU := make([]float64, d2*3)
		q = 0
		for i := 0; i < d1; i++ {
			for j := 0; j < d2; j++ {
				if math.IsNaN(dense[i][j]) {
					continue
				}
				for c := 0; c < 3; c++ {
					wantEV[i*3+c] += e[q] * x2.Data[j*3+c]
					wantEtU[j*3+c] += e[q] * x1.Data[i*3+c]
				}
				q++
			}
		}
		for k := range wantEV {
			if math.Abs(ev.Data[k]-wantEV[k]) > 1e-12 {
				t.Fatalf("MulVals entry %d = %v, want %v", k, ev.Data[k], wantEV[k])
			}
		}
		for k := range wantEtU {
			if math.Abs(etu.Data[k]-wantEtU[k]) > 1e-12 {
				t.Fatalf("MulTransVals entry %d = %v, want %v", k, etu.Data[k], wantEtU[k])
			}
		}
	}
}

func TestEmptyLines(t *testing.T) {
	m, err := FromTriplets(3, 4, []int{0, 2}, []int{1, 1}, []float64{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.EmptyLines(); r != 1 || c != 3 {
		t.Errorf("EmptyLines = %d, %d; want 1, 3", r, c)
	}
}
