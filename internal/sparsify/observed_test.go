package sparsify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/observed"
)

// sampleObserved draws Φ with rate p from the rows×cols matrix a and
// returns the observed matrix, the values of a at Φ in CSR order, the mask
// of Φ and Π_Φ(A) as a dense matrix.
// observedCase draws a kind matrix of rows×cols (generator seeded (seed,
// seed+1)), observes it with probability p and returns the observed
// matrix, its values, the estimator for it and a keep mask to fill.
func observedCase(t *testing.T, seed uint64, kind string, rows, cols int, p float64) (*observed.Matrix, []float64, *Observed, []bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	m, vals, _, _ := sampleObserved(t, rng, gen(rng, kind, rows, cols), p)
	return m, vals, NewObserved(m, 2), make([]bool, m.NNZ())
}

func sampleObserved(t *testing.T, rng *rand.Rand, a blas64.General, p float64) (*observed.Matrix, []float64, [][]bool, blas64.General) {
	t.Helper()
	var ri, ci []int
	var vs []float64
	mask := make([][]bool, a.Rows)
	proj := blas64.General{Rows: a.Rows, Cols: a.Cols, Stride: a.Cols, Data: make([]float64, a.Rows*a.Cols)}
	for i := 0; i < a.Rows; i++ {
		mask[i] = make([]bool, a.Cols)
		for j := 0; j < a.Cols; j++ {
			if rng.Float64() < p {
				x := a.Data[i*a.Stride+j]
				mask[i][j] = true
				proj.Data[i*a.Cols+j] = x
				ri, ci = append(ri, i), append(ci, j)
				// FromTriplets rejects NaN and ±Inf values; the pattern
				// is what matters here, the values are passed to Apply.
				vs = append(vs, 0)
			}
		}
	}
	m, err := observed.FromTriplets(a.Rows, a.Cols, ri, ci, vs)
	if err != nil {
		t.Fatal(err)
	}
	return m, valuesAt(m, a), mask, proj
}

// valuesAt returns the values of a at the observed entries of m, in CSR
// order.
func valuesAt(m *observed.Matrix, a blas64.General) []float64 {
	vals := make([]float64, m.NNZ())
	for i := 0; i < m.Rows; i++ {
		for q := m.RowPtr[i]; q < m.RowPtr[i+1]; q++ {
			vals[q] = a.Data[i*a.Stride+int(m.ColIdx[q])]
		}
	}
	return vals
}

// keepMask expands keep (CSR positions of m) to a dense mask.
func keepMask(m *observed.Matrix, keep []bool) [][]bool {
	out := make([][]bool, m.Rows)
	for i := range out {
		out[i] = make([]bool, m.Cols)
		for q := m.RowPtr[i]; q < m.RowPtr[i+1]; q++ {
			out[i][m.ColIdx[q]] = keep[q]
		}
	}
	return out
}

// TestObservedHand checks a small case by hand: Φ leaves out (0,0) and
// (1,2), so those can neither be kept nor compete.
func TestObservedHand(t *testing.T) {
	// A (· = unobserved):
	//   ·   4  -4
	//   1   2   ·
	//   3  -2   2
	// kRow = kCol = 1. Row tops: (0,1) [tie |4| by column], (1,1),
	// (2,0). Column tops: col 0 → (2,0) [3 > 1]; col 1 → (0,1) [4];
	// col 2 → (0,2) [|-4| > 2]. Intersection: (0,1), (2,0).
	rows := []int{0, 0, 1, 1, 2, 2, 2}
	cols := []int{1, 2, 0, 1, 0, 1, 2}
	m, err := observed.FromTriplets(3, 3, rows, cols, make([]float64, 7))
	if err != nil {
		t.Fatal(err)
	}
	vals := []float64{4, -4, 1, 2, 3, -2, 2} // CSR order = the order above
	for _, w := range []int{1, 2, 3} {
		keep := make([]bool, m.NNZ())
		if err := NewObserved(m, w).Apply(vals, 1, 1, keep); err != nil {
			t.Fatal(err)
		}
		want := []bool{true, false, false, false, true, false, false}
		if !slices.Equal(keep, want) {
			t.Errorf("workers %d: keep = %v, want %v", w, keep, want)
		}
		// k = 2 per column, 3 per row: row 0 keeps both, row 1 both,
		// row 2 all; column 0 keeps (1,0),(2,0), column 1 keeps (0,1)
		// and (1,1) [|2| = |-2|, row 1 before row 2], column 2 keeps
		// (0,2),(2,2).
		if err := NewObserved(m, w).Apply(vals, 3, 2, keep); err != nil {
			t.Fatal(err)
		}
		want = []bool{true, true, true, true, true, false, true}
		if !slices.Equal(keep, want) {
			t.Errorf("workers %d, k=(3,2): keep = %v, want %v", w, keep, want)
		}
	}
}

// TestObservedAgainstReference compares Observed.Apply with refKeep
// restricted to Φ, and with Dense.Apply on Π_Φ(A) (whose zeros are never
// kept, so the two must agree exactly), on random matrices of all kinds.
func TestObservedAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 21))
	shapes := [][2]int{{1, 1}, {1, 12}, {12, 1}, {30, 25}, {70, 90}}
	var out Sparse
	for _, sh := range shapes {
		rows, cols := sh[0], sh[1]
		for _, kind := range genKinds {
			a := gen(rng, kind, rows, cols)
			for _, p := range []float64{0.1, 0.5, 1} {
				m, vals, mask, proj := sampleObserved(t, rng, a, p)
				keep := make([]bool, m.NNZ())
				d := NewDense(rows, cols, 2)
				d.setSamples(6, 6)
				for _, w := range []int{1, 2} {
					o := NewObserved(m, w)
					for _, k := range [][2]int{{1, 1}, {2, 3}, {1 + rng.IntN(cols), 1 + rng.IntN(rows)}, {cols, rows}} {
						if err := o.Apply(vals, k[0], k[1], keep); err != nil {
							t.Fatal(err)
						}
						got := keepMask(m, keep)
						if diff := diffKeep(got, refKeep(a, mask, k[0], k[1])); diff != "" {
							t.Fatalf("%s %d×%d p=%v k=%v: %s", kind, rows, cols, p, k, diff)
						}
						if err := d.Apply(proj, k[0], k[1], &out); err != nil {
							t.Fatal(err)
						}
						if diff := diffKeep(got, sparseKeep(t, &out, proj)); diff != "" {
							t.Fatalf("%s %d×%d p=%v k=%v: Observed and Dense on Π_Φ(A) differ: %s", kind, rows, cols, p, k, diff)
						}
					}
				}
			}
		}
	}
}

// TestObservedFractionAgainstReference checks ApplyFraction, the counts
// taken per line of its observed entries, against the sorting reference,
// on lines of very different lengths (rows and columns sampled at rates
// from 0.05 to 1), for fractions that leave short lines nothing.
func TestObservedFractionAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 23))
	for _, sh := range [][2]int{{1, 12}, {30, 25}, {70, 300}} {
		rows, cols := sh[0], sh[1]
		for _, kind := range genKinds {
			a := gen(rng, kind, rows, cols)
			// Non-uniform Φ: row i and column j observed with probability
			// rowP[i]·colP[j], so line lengths differ by up to 20×.
			mask := make([][]bool, rows)
			var ri, ci []int
			rowP := make([]float64, rows)
			for i := range rowP {
				rowP[i] = 0.05 + 0.95*rng.Float64()
			}
			for i := range mask {
				mask[i] = make([]bool, cols)
				for j := range cols {
					if rng.Float64() < rowP[i]*(1-float64(j)/float64(cols+1)) {
						mask[i][j] = true
						ri, ci = append(ri, i), append(ci, j)
					}
				}
			}
			m, err := observed.FromTriplets(rows, cols, ri, ci, make([]float64, len(ri)))
			if err != nil {
				t.Fatal(err)
			}
			vals := valuesAt(m, a)
			keep := make([]bool, m.NNZ())
			ref := refRanks(a, mask)
			for _, w := range []int{1, 2} {
				o := NewObserved(m, w)
				for _, frac := range []float64{0, 0.05, 0.15, 0.5, 1} {
					if err := o.ApplyFraction(vals, frac, keep); err != nil {
						t.Fatal(err)
					}
					if diff := diffKeep(keepMask(m, keep), ref.keepFraction(frac)); diff != "" {
						t.Fatalf("%s %d×%d frac=%v workers %d: %s", kind, rows, cols, frac, w, diff)
					}
				}
				// Counts still work after a call with fractions.
				if err := o.Apply(vals, 2, 2, keep); err != nil {
					t.Fatal(err)
				}
				if diff := diffKeep(keepMask(m, keep), ref.keep(2, 2)); diff != "" {
					t.Fatalf("%s %d×%d counts after fractions: %s", kind, rows, cols, diff)
				}
			}
		}
	}
}

// TestObservedLongLines uses lines longer than lineSampleMin, so that
// lineCutoff's sampled path runs, on continuous and tie-heavy data.
func TestObservedLongLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 23))
	for _, kind := range []string{"lowrank+corrupt", "ints", "sortedRows", "sparse"} {
		for _, sh := range [][2]int{{3, 2 * lineSampleMin}, {lineSampleMin + 100, 2}} {
			a := gen(rng, kind, sh[0], sh[1])
			m, vals, mask, _ := sampleObserved(t, rng, a, 0.9)
			keep := make([]bool, m.NNZ())
			o := NewObserved(m, 2)
			for _, k := range [][2]int{{sh[1] / 10, sh[0] / 10}, {sh[1] / 3, 1}, {1, sh[0] / 2}} {
				k[0], k[1] = max(k[0], 1), max(k[1], 1)
				if err := o.Apply(vals, k[0], k[1], keep); err != nil {
					t.Fatal(err)
				}
				if diff := diffKeep(keepMask(m, keep), refKeep(a, mask, k[0], k[1])); diff != "" {
					t.Fatalf("%s %v k=%v: %s", kind, sh, k, diff)
				}
			}
		}
	}
}

// TestLineCutoff compares lineCutoff with exactCutoff on long lines,
// including one built so that the sample misses the threshold (large
// values exactly at the sampled positions) and lines with few non-zeros.
func TestLineCutoff(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 25))
	n := lineSampleMin + 321
	scratch := make([]float64, n)
	samp := make([]float64, lineSample)
	lines := map[string][]float64{}
	g := make([]float64, n)
	for i := range g {
		g[i] = math.Abs(rng.NormFloat64())
	}
	lines["gauss"] = g
	ints := make([]float64, n)
	for i := range ints {
		ints[i] = float64(rng.IntN(4))
	}
	lines["ints"] = ints
	asc := slices.Clone(g)
	slices.Sort(asc)
	lines["sorted"] = asc
	few := make([]float64, n)
	for i := 0; i < n; i += 97 {
		few[i] = 1 + float64(i%5)
	}
	lines["fewnonzeros"] = few
	// Adversarial: the sampled positions (same generator as lineCutoff)
	// hold 100, all others 1, so the bracket sits at 100 and misses any
	// k beyond the number of sampled positions.
	adv := slices.Repeat([]float64{1}, n)
	x := uint64(0x853c49e6748fea9b)
	for range lineSample {
		x = x*6364136223846793005 + 1442695040888963407
		adv[(x>>33)%uint64(n)] = 100
	}
	lines["adversarial"] = adv
	for name, v := range lines {
		for _, k := range []int{1, 7, n / 20, n / 3, n / 2, n - 1} {
			t1, l1 := lineCutoff(v, k, scratch, samp)
			t2, l2 := exactCutoff(v, k, make([]float64, n))
			// The cutoffs must select the same entries (last may differ
			// when every tie is admitted).
			for idx, y := range v {
				if y != 0 && passes(y, t1, idx, l1) != passes(y, t2, idx, l2) {
					t.Fatalf("%s k=%d: entry %d (%v) differs: (%v,%d) vs exact (%v,%d)", name, k, idx, y, t1, l1, t2, l2)
				}
			}
		}
	}
}

func TestObservedNaN(t *testing.T) {
	m, vals, o, keep := observedCase(t, 26, "gauss", 20, 30, 0.5)
	for _, q := range []int{0, m.NNZ() - 1, m.NNZ() / 2} {
		v := slices.Clone(vals)
		v[q] = math.NaN()
		i := 0
		for m.RowPtr[i+1] <= q {
			i++
		}
		want := fmt.Sprintf("(%d, %d)", i, m.ColIdx[q])
		for _, k := range [][2]int{{3, 2}, {0, 2}, {3, 0}, {30, 20}} {
			err := o.Apply(v, k[0], k[1], keep)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("NaN at entry %d, k=%v: error %v, want one naming %s", q, k, err, want)
			}
		}
	}
}

func TestObservedAllocs(t *testing.T) {
	_, vals, o, keep := observedCase(t, 28, "lowrank+corrupt", 60, 50, 0.3)
	allocs := testing.AllocsPerRun(10, func() {
		if err := o.Apply(vals, 3, 3, keep); err != nil {
			t.Fatal(err)
		}
	})
	// Three parallel phases, one extra goroutine (one small closure) each.
	if allocs > 3 {
		t.Errorf("warm Apply allocates %v times", allocs)
	}
}
