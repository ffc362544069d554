package sparsify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

func TestCount(t *testing.T) {
	// Hand-checked: 0.1·30 = 3 exactly in decimal; 0.29·100 evaluates to
	// 28.999999999999996 and must count as 29; 0.7·10 = 7.000000000000001
	// must stay 7; 0.9999·3 is genuinely below 3.
	cases := []struct {
		frac float64
		n    int
		want int
	}{
		{0.1, 30, 3}, {0.29, 100, 29}, {0.7, 10, 7}, {0.15, 10, 1},
		{0.9999, 3, 2}, {0.2, 5000, 1000}, {0.1, 5000, 500}, {1, 7, 7},
		{1.5, 10, 10}, {0, 10, 0}, {-0.5, 10, 0}, {math.NaN(), 10, 0},
		{math.Inf(1), 10, 10}, {0.5, 0, 0}, {0.5, -3, 0}, {1e-12, 1000, 0},
	}
	for _, c := range cases {
		if got := Count(c.frac, c.n); got != c.want {
			t.Errorf("Count(%v, %d) = %d, want %d", c.frac, c.n, got, c.want)
		}
	}
	// Against exact rational arithmetic: frac = a/b with b ≤ 1000 and
	// n ≤ 1e5, so a non-integer a·n/b is at least 1/b, i.e. a relative
	// 1e-8 > 1e-9 of the product, away from the next integer; ⌊a·n/b⌋ is
	// the intended count.
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		b := 1 + rng.IntN(1000)
		a := rng.IntN(b + 1)
		n := rng.IntN(100001)
		if got, want := Count(float64(a)/float64(b), n), a*n/b; got != want {
			t.Fatalf("Count(%d/%d, %d) = %d, want %d", a, b, n, got, want)
		}
	}
}

// general wraps a row-major slice.
func general(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

// sparseKeep converts a Sparse to a keep mask, checking its structure
// (sorted columns, in range) and that its values are A's.
func sparseKeep(t *testing.T, s *Sparse, a blas64.General) [][]bool {
	t.Helper()
	if s.Rows != a.Rows || s.Cols != a.Cols || len(s.RowPtr) != a.Rows+1 || s.RowPtr[0] != 0 ||
		s.RowPtr[a.Rows] != len(s.ColIdx) || len(s.ColIdx) != len(s.Val) {
		t.Fatalf("malformed Sparse: %d×%d, %d row pointers, %d columns, %d values", s.Rows, s.Cols, len(s.RowPtr), len(s.ColIdx), len(s.Val))
	}
	keep := make([][]bool, a.Rows)
	for i := range keep {
		keep[i] = make([]bool, a.Cols)
		for q := s.RowPtr[i]; q < s.RowPtr[i+1]; q++ {
			j := int(s.ColIdx[q])
			if j < 0 || j >= a.Cols || (q > s.RowPtr[i] && s.ColIdx[q-1] >= s.ColIdx[q]) {
				t.Fatalf("row %d: column %d out of range or out of order", i, j)
			}
			if x := a.Data[i*a.Stride+j]; s.Val[q] != x && !(math.IsNaN(x) && math.IsNaN(s.Val[q])) {
				t.Fatalf("(%d, %d): value %v, want %v", i, j, s.Val[q], x)
			}
			keep[i][j] = true
		}
	}
	return keep
}

// diffKeep describes the first difference between two masks, or "".
func diffKeep(got, want [][]bool) string {
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				return fmt.Sprintf("(%d, %d): kept=%v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	return ""
}

// TestDenseHand checks small cases worked out by hand.
func TestDenseHand(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name       string
		rows, cols int
		a          []float64
		kRow, kCol int
		want       [][2]int // kept positions
	}{
		{
			// Row 0 ranks (0,0),(0,1) [tie |3| broken by column], row 1
			// ranks (1,1),(1,2) [three 5s, lowest columns], row 2 has one
			// non-zero (2,3). Column tops (kCol=1): (0,0), (1,1) [|3|<|5|],
			// (1,2), (1,3) [5 > 1]. Intersection: (0,0), (1,1), (1,2).
			name: "rect ties zeros negatives", rows: 3, cols: 4,
			a: []float64{
				3, -3, 1, 0,
				2, 5, -5, 5,
				0, 0, 0, 1,
			},
			kRow: 2, kCol: 1,
			want: [][2]int{{0, 0}, {1, 1}, {1, 2}},
		},
		{
			// Column ties: column 0 is (-2, 2, 2), kCol = 2 keeps rows 0
			// and 1; every row has one entry so kRow = 1 passes all.
			name: "column ties", rows: 3, cols: 1,
			a:    []float64{-2, 2, 2},
			kRow: 1, kCol: 2,
			want: [][2]int{{0, 0}, {1, 0}},
		},
		{
			// k = 0 keeps nothing.
			name: "k zero", rows: 2, cols: 2,
			a:    []float64{1, 2, 3, 4},
			kRow: 0, kCol: 2,
			want: nil,
		},
		{
			// k = d keeps every non-zero (and never a zero).
			name: "k full", rows: 2, cols: 3,
			a:    []float64{1, 0, -2, 0, 0, 7},
			kRow: 3, kCol: 2,
			want: [][2]int{{0, 0}, {0, 2}, {1, 2}},
		},
		{
			// Counts above the line length are clamped.
			name: "k too large", rows: 2, cols: 2,
			a:    []float64{1, -1, 0, 2},
			kRow: 10, kCol: 10,
			want: [][2]int{{0, 0}, {0, 1}, {1, 1}},
		},
		{
			// All equal magnitudes: row 0 keeps columns 0,1, row 1 keeps
			// 0,1; columns (kCol=1) keep row 0 only.
			name: "all ties", rows: 2, cols: 3,
			a:    []float64{4, -4, 4, -4, 4, 4},
			kRow: 2, kCol: 1,
			want: [][2]int{{0, 0}, {0, 1}},
		},
		{
			// +Inf and -Inf rank above everything finite and tie with each
			// other: row 0 keeps the first two infinities (columns 0, 2),
			// row 1 keeps 9 and 8 (columns 1, 2). Column 2 (kCol=1) keeps
			// row 0's -Inf, column 1 row 1's 9, column 0 row 0's Inf.
			name: "infinities", rows: 2, cols: 4,
			a: []float64{
				inf, 1, -inf, inf,
				0, 9, 8, 2,
			},
			kRow: 2, kCol: 1,
			want: [][2]int{{0, 0}, {0, 2}, {1, 1}},
		},
	}
	for _, c := range cases {
		a := general(c.rows, c.cols, c.a)
		for _, w := range []int{1, 2} {
			d := NewDense(c.rows, c.cols, w)
			var out Sparse
			if err := d.Apply(a, c.kRow, c.kCol, &out); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := sparseKeep(t, &out, a)
			want := make([][]bool, c.rows)
			for i := range want {
				want[i] = make([]bool, c.cols)
			}
			for _, p := range c.want {
				want[p[0]][p[1]] = true
			}
			if diff := diffKeep(got, want); diff != "" {
				t.Errorf("%s (workers %d): %s", c.name, w, diff)
			}
			// The reference must agree with the hand computation too.
			if diff := diffKeep(refKeep(a, nil, c.kRow, c.kCol), want); diff != "" {
				t.Errorf("%s: reference disagrees with the hand result: %s", c.name, diff)
			}
		}
	}
}

// genKinds lists the matrix families of the random tests.
var genKinds = []string{"gauss", "lowrank+corrupt", "ints", "sortedRows", "sortedAll", "blocks", "sparse", "inf"}

// gen returns a rows×cols matrix of the given kind (stride cols+3 to
// exercise Stride > Cols).
func gen(rng *rand.Rand, kind string, rows, cols int) blas64.General {
	stride := cols + 3
	a := blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: make([]float64, rows*stride)}
	set := func(i, j int, v float64) { a.Data[i*stride+j] = v }
	switch kind {
	case "gauss":
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				set(i, j, rng.NormFloat64())
			}
		}
	case "lowrank+corrupt":
		fillPaperModel(rng, a, 3, 0.1)
	case "ints": // many ties and zeros
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				set(i, j, float64(rng.IntN(7)-3))
			}
		}
	case "sortedRows":
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				set(i, j, float64(j+1)+0.5*float64(i))
			}
		}
	case "sortedAll": // all distinct, increasing along rows and columns
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				set(i, j, -float64(i*cols+j+1))
			}
		}
	case "blocks": // constant blocks: ties across whole line segments
		bi, bj := 1+rng.IntN(5), 1+rng.IntN(5)
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				set(i, j, float64((i/bi+2*(j/bj))%4))
			}
		}
	case "sparse": // mostly zeros: many lines have fewer than k non-zeros
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				if rng.IntN(10) == 0 {
					set(i, j, rng.NormFloat64())
				}
			}
		}
	case "inf":
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				v := rng.NormFloat64()
				if rng.IntN(8) == 0 {
					v = math.Inf(1 - 2*rng.IntN(2))
				}
				set(i, j, v)
			}
		}
	default:
		panic(kind)
	}
	return a
}

// fillPaperModel sets a to the paper's model Y = M* + S*: M* = ABᵀ with
// A, B having N(0, 1/d) entries (d = max dimension) and rank r, plus
// corruptions uniform in [-5r/d, 5r/d] on a random fraction frac of the
// entries.
func fillPaperModel(rng *rand.Rand, a blas64.General, r int, frac float64) {
	d := float64(max(a.Rows, a.Cols))
	sd := 1 / math.Sqrt(d)
	u := make([]float64, a.Rows*r)
	v := make([]float64, a.Cols*r)
	for i := range u {
		u[i] = sd * rng.NormFloat64()
	}
	for i := range v {
		v[i] = sd * rng.NormFloat64()
	}
	bound := 5 * float64(r) / d
	for i := 0; i < a.Rows; i++ {
		row := a.Data[i*a.Stride : i*a.Stride+a.Cols]
		for j := range row {
			s := 0.0
			for l := 0; l < r; l++ {
				s += u[i*r+l] * v[j*r+l]
			}
			if rng.Float64() < frac {
				s += bound * (2*rng.Float64() - 1)
			}
			row[j] = s
		}
	}
}

// denseConfig is a sampling configuration for the random tests: small
// samples and narrow brackets make the bracket miss often, so both the
// sampled and the exact paths run.
type denseConfig struct {
	rowSample, colSample int
	rowZ, colZ           float64
}

var denseConfigs = []denseConfig{
	{defRowSample, defColSample, defRowZ, defColZ},
	{8, 8, 3, 3},
	{6, 5, 1, 1},
	{4, 4, 0, 0},
}

// TestDenseAgainstReference compares Dense.Apply with refKeep on many
// random matrices of all kinds, shapes, counts, worker numbers and
// sampling configurations, and checks that the sampled, fallback and
// all-pass paths all ran.
func TestDenseAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	shapes := [][2]int{{1, 1}, {1, 9}, {9, 1}, {13, 17}, {40, 33}, {64, 100}, {150, 120}}
	var rowMiss, colMiss, calls int
	var out Sparse // reused across all calls
	for _, sh := range shapes {
		rows, cols := sh[0], sh[1]
		for _, kind := range genKinds {
			a := gen(rng, kind, rows, cols)
			ref := refRanks(a, nil)
			for ci, cfg := range denseConfigs {
				workers := 1 + (ci+rows)%3
				d := NewDense(rows, cols, workers)
				d.rowZ, d.colZ = cfg.rowZ, cfg.colZ
				d.setSamples(cfg.rowSample, cfg.colSample)
				ks := [][2]int{
					{1, 1}, {cols, rows}, {cols + 1, rows + 2},
					{1 + rng.IntN(cols), 1 + rng.IntN(rows)},
					{max(1, cols/10), max(1, rows/10)},
					{max(1, cols/5), max(1, rows/5)},
					{max(1, cols/2), 1 + rng.IntN(rows)},
				}
				for _, k := range ks {
					if err := d.Apply(a, k[0], k[1], &out); err != nil {
						t.Fatal(err)
					}
					calls++
					rm, cm := d.misses()
					rowMiss += rm
					colMiss += cm
					got := sparseKeep(t, &out, a)
					if diff := diffKeep(got, ref.keep(k[0], k[1])); diff != "" {
						t.Fatalf("%s %d×%d config %d workers %d k=(%d,%d): %s", kind, rows, cols, ci, workers, k[0], k[1], diff)
					}
				}
			}
		}
	}
	t.Logf("%d calls, %d row and %d column bracket misses", calls, rowMiss, colMiss)
	if rowMiss == 0 || colMiss == 0 {
		t.Errorf("the fallback paths never ran (row misses %d, column misses %d)", rowMiss, colMiss)
	}
}

// TestDenseSampledPath runs matrices large enough for the default
// sampling (lines longer than the samples) and checks agreement and that
// brackets mostly hit.
func TestDenseSampledPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	rows, cols := 700, 600
	var out Sparse
	for _, kind := range []string{"lowrank+corrupt", "gauss", "ints", "sortedAll", "blocks"} {
		a := gen(rng, kind, rows, cols)
		ref := refRanks(a, nil)
		d := NewDense(rows, cols, 2)
		for _, k := range [][2]int{{60, 70}, {120, 140}, {5, 300}} {
			if err := d.Apply(a, k[0], k[1], &out); err != nil {
				t.Fatal(err)
			}
			rm, cm := d.misses()
			if diff := diffKeep(sparseKeep(t, &out, a), ref.keep(k[0], k[1])); diff != "" {
				t.Fatalf("%s k=%v: %s", kind, k, diff)
			}
			if kind == "lowrank+corrupt" || kind == "gauss" {
				// With continuous data a miss has probability ~1e-3 per
				// line; far more means the bracket logic is off.
				if rm > rows/20 || cm > cols/20 {
					t.Errorf("%s k=%v: %d row and %d column misses", kind, k, rm, cm)
				}
			}
		}
	}
}

// TestDenseProperties checks the defining properties on random inputs:
// the output lies in S_k (≤ kRow per row, ≤ kCol per column) and every
// kept entry is at least its row's kRow-th and its column's kCol-th
// largest magnitude.
func TestDenseProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	var out Sparse
	for trial := range 40 {
		rows, cols := 5+rng.IntN(80), 5+rng.IntN(80)
		a := gen(rng, genKinds[trial%len(genKinds)], rows, cols)
		kRow, kCol := 1+rng.IntN(cols), 1+rng.IntN(rows)
		d := NewDense(rows, cols, 2)
		d.setSamples(4, 4)
		if err := d.Apply(a, kRow, kCol, &out); err != nil {
			t.Fatal(err)
		}
		kthRow := make([]float64, rows)
		for i := range kthRow {
			kthRow[i] = kthLargest(rows, cols, func(j int) float64 { return a.Data[i*a.Stride+j] }, cols, kRow)
		}
		kthCol := make([]float64, cols)
		for j := range kthCol {
			kthCol[j] = kthLargest(rows, cols, func(i int) float64 { return a.Data[i*a.Stride+j] }, rows, kCol)
		}
		perCol := make([]int, cols)
		for i := 0; i < rows; i++ {
			if n := out.RowPtr[i+1] - out.RowPtr[i]; n > kRow {
				t.Fatalf("row %d keeps %d > %d", i, n, kRow)
			}
			for q := out.RowPtr[i]; q < out.RowPtr[i+1]; q++ {
				j := out.ColIdx[q]
				perCol[j]++
				v := math.Abs(out.Val[q])
				if v == 0 || v < kthRow[i] || v < kthCol[j] {
					t.Fatalf("kept (%d, %d) = %v below its row's %v or column's %v", i, j, v, kthRow[i], kthCol[j])
				}
			}
		}
		for j, n := range perCol {
			if n > kCol {
				t.Fatalf("column %d keeps %d > %d", j, n, kCol)
			}
		}
	}
}

// kthLargest returns the k-th largest magnitude of the n values at(0..n-1)
// by a simple O(n·k) scan (independent of the package's selection).
func kthLargest(_, _ int, at func(int) float64, n, k int) float64 {
	used := make([]bool, n)
	best := 0.0
	for range k {
		bi := -1
		for x := 0; x < n; x++ {
			if !used[x] && (bi < 0 || math.Abs(at(x)) > math.Abs(at(bi))) {
				bi = x
			}
		}
		used[bi] = true
		best = math.Abs(at(bi))
	}
	return best
}

// TestDenseNaNFirst puts NaNs in rows that different workers handle: the
// error must name the first in row-major order.
func TestDenseNaNFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	var out Sparse
	for _, w := range []int{1, 2, 3} {
		a := gen(rng, "gauss", 12, 10)
		a.Data[1*a.Stride+5] = math.NaN()
		a.Data[1*a.Stride+7] = math.NaN()
		a.Data[2*a.Stride+0] = math.NaN()
		a.Data[9*a.Stride+1] = math.NaN()
		err := NewDense(12, 10, w).Apply(a, 3, 3, &out)
		if err == nil || !strings.Contains(err.Error(), "(1, 5)") {
			t.Errorf("workers %d: error %v, want one naming (1, 5)", w, err)
		}
	}
}

func TestDenseNaN(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	rows, cols := 30, 40
	var out Sparse
	for _, pos := range [][2]int{{0, 0}, {29, 39}, {17, 3}, {5, 22}} {
		for _, k := range [][2]int{{4, 3}, {0, 3}, {4, 0}, {40, 30}} {
			for _, samples := range [][2]int{{defRowSample, defColSample}, {4, 4}} {
				a := gen(rng, "gauss", rows, cols)
				a.Data[pos[0]*a.Stride+pos[1]] = math.NaN()
				d := NewDense(rows, cols, 2)
				d.setSamples(samples[0], samples[1])
				err := d.Apply(a, k[0], k[1], &out)
				want := fmt.Sprintf("(%d, %d)", pos[0], pos[1])
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("NaN at %v, k=%v: error %v, want one naming %s", pos, k, err, want)
				}
			}
		}
	}
}

// TestDenseReuse checks that a Dense and an output reused across calls
// with changing counts and inputs give fresh results, and that a warm
// call allocates no more than the goroutine launches.
func TestDenseReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	rows, cols := 90, 80
	d := NewDense(rows, cols, 2)
	var out Sparse
	for trial := range 12 {
		a := gen(rng, genKinds[trial%len(genKinds)], rows, cols)
		kRow, kCol := 1+rng.IntN(20), 1+rng.IntN(20)
		if trial%4 == 3 {
			kRow = 0
		}
		if err := d.Apply(a, kRow, kCol, &out); err != nil {
			t.Fatal(err)
		}
		if diff := diffKeep(sparseKeep(t, &out, a), refKeep(a, nil, kRow, kCol)); diff != "" {
			t.Fatalf("trial %d: %s", trial, diff)
		}
	}
	a := gen(rng, "lowrank+corrupt", rows, cols)
	if err := d.Apply(a, 9, 8, &out); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10, func() {
		if err := d.Apply(a, 9, 8, &out); err != nil {
			t.Fatal(err)
		}
	})
	// Each of the 4 parallel phases (column brackets, row pass, column
	// cutoffs, filter+copy counted as 2 → 5) launches one extra goroutine,
	// costing one small closure; nothing else may allocate.
	t.Logf("%v allocations per warm call", allocs)
	if allocs > 5 {
		t.Errorf("warm Apply allocates %v times", allocs)
	}
}

// TestDensePrevBracket applies one Dense to a sequence of related
// matrices with rows too short to sample, as a solver's iterations do,
// so that each call brackets its rows from the cutoffs of the call
// before: every answer must equal refKeep's. Between calls the entries
// move by 1%, 10% or 60% of their typical size, are all scaled by −2 or
// by 1/4, or the count changes (which turns the brackets off for one
// call), so that both the bracketed and the exact paths run; after a
// move of 1% at most a tenth of the rows of continuous data may miss.
func TestDensePrevBracket(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var out Sparse
	var prev, miss int
	for _, kind := range genKinds {
		for _, sh := range [][2]int{{90, 60}, {37, 200}} {
			rows, cols := sh[0], sh[1]
			a := gen(rng, kind, rows, cols)
			d := NewDense(rows, cols, 1+rng.IntN(3))
			kRow, kCol := max(1, cols/5), max(1, rows/5)
			for step := range 12 {
				switch step % 6 {
				case 1, 2, 3:
					moveEntries(rng, a, []float64{0.01, 0.1, 0.6}[step%6-1])
				case 4: // everything grows (and turns), then shrinks
					f := map[int]float64{4: -2, 10: 0.25}[step]
					for i := range a.Data {
						a.Data[i] *= f
					}
				case 5:
					kRow = 1 + rng.IntN(cols)
				}
				if err := d.Apply(a, kRow, kCol, &out); err != nil {
					t.Fatal(err)
				}
				rm, _ := d.misses()
				prev += d.prevBracketed()
				miss += rm
				if step == 1 && (kind == "gauss" || kind == "lowrank+corrupt") && rm > rows/10 {
					t.Errorf("%s %d×%d: %d of %d rows missed their bracket after a move of 1%%", kind, rows, cols, rm, rows)
				}
				if diff := diffKeep(sparseKeep(t, &out, a), refRanks(a, nil).keep(kRow, kCol)); diff != "" {
					t.Fatalf("%s %d×%d step %d k=(%d,%d): %s", kind, rows, cols, step, kRow, kCol, diff)
				}
				if step == 0 && d.prevBracketed() != 0 {
					t.Fatalf("%s: the first call bracketed %d rows from cutoffs it cannot have", kind, d.prevBracketed())
				}
			}
		}
	}
	t.Logf("%d rows bracketed from the call before, %d misses", prev, miss)
	if prev < 2000 || miss == 0 {
		t.Errorf("the bracketed path ran on %d rows and missed on %d: not both paths tested", prev, miss)
	}
}

// moveEntries adds to each finite entry of a a uniform change of up to
// frac of the entries' root mean square.
func moveEntries(rng *rand.Rand, a blas64.General, frac float64) {
	ss, n := 0.0, 0
	for i := 0; i < a.Rows; i++ {
		for _, v := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			if !math.IsInf(v, 0) {
				ss += v * v
				n++
			}
		}
	}
	rms := math.Sqrt(ss / float64(max(n, 1)))
	for i := 0; i < a.Rows; i++ {
		row := a.Data[i*a.Stride : i*a.Stride+a.Cols]
		for j, v := range row {
			if !math.IsInf(v, 0) {
				row[j] = v + frac*rms*(2*rng.Float64()-1)
			}
		}
	}
}
