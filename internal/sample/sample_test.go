package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRowsAnyOrder checks that Positions (parallel, blocked) and Row
// (one row at a time, any order) draw the same Φ, for every worker count.
func TestRowsAnyOrder(t *testing.T) {
	b := Bernoulli{P: 0.07, Seed: 42}
	d1, d2 := 5000, 300
	rowPtr, colIdx := b.Positions(d1, d2, 1)
	for _, w := range []int{2, 3, 8} {
		p2, c2 := b.Positions(d1, d2, w)
		if !slices.Equal(rowPtr, p2) || !slices.Equal(colIdx, c2) {
			t.Fatalf("workers=%d: different positions", w)
		}
	}
	for i := d1 - 1; i >= 0; i -= 7 { // backwards, skipping
		got := b.Row(nil, i, d2)
		if !slices.Equal(got, colIdx[rowPtr[i]:rowPtr[i+1]]) {
			t.Fatalf("row %d: Row %v, Positions %v", i, got, colIdx[rowPtr[i]:rowPtr[i+1]])
		}
	}
	if other, _ := (Bernoulli{P: 0.07, Seed: 43}).Positions(d1, d2, 0); slices.Equal(other, rowPtr) {
		t.Error("another seed drew the same row counts")
	}
}

// TestBernoulliRates checks the law: each row's columns are increasing and
// in range, the total count is Binomial(d1·d2, p) (within 5 standard
// deviations), and every column is hit about equally often (a chi-square
// statistic over the columns within 5 of its standard deviations).
func TestBernoulliRates(t *testing.T) {
	for _, p := range []float64{0.001, 0.05, 0.5, 0.97, 1} {
		d1, d2 := 4000, 500
		rowPtr, colIdx := Bernoulli{P: p, Seed: 7}.Positions(d1, d2, 0)
		for i := 0; i < d1; i++ {
			row := colIdx[rowPtr[i]:rowPtr[i+1]]
			for k, c := range row {
				if c < 0 || int(c) >= d2 || (k > 0 && c <= row[k-1]) {
					t.Fatalf("p=%v row %d: columns %v not increasing in [0, %d)", p, i, row, d2)
				}
			}
		}
		n := float64(d1) * float64(d2)
		mean, sd := n*p, math.Sqrt(n*p*(1-p))
		if got := float64(len(colIdx)); math.Abs(got-mean) > 5*sd+1e-9 {
			t.Errorf("p=%v: %v entries, want %v ± 5·%.3g", p, got, mean, sd)
		}
		if p == 1 {
			continue
		}
		counts := make([]float64, d2)
		for _, c := range colIdx {
			counts[c]++
		}
		e := float64(d1) * p
		chi := 0.0
		for _, c := range counts {
			chi += (c - e) * (c - e) / (e * (1 - p))
		}
		if math.Abs(chi-float64(d2)) > 5*math.Sqrt(2*float64(d2)) {
			t.Errorf("p=%v: column chi-square %v, want %d ± 5·%.3g", p, chi, d2, math.Sqrt(2*float64(d2)))
		}
	}
}

// TestCover checks that Cover leaves no empty row or column, adds exactly
// one entry per empty row and per column still empty after that, keeps
// rows sorted and every original position, and changes nothing when no
// line is empty.
func TestCover(t *testing.T) {
	d1, d2 := 500, 4
	// At p = 0.2 about 0.8⁴ ≈ 41% of the rows are empty.
	rowPtr, colIdx := Bernoulli{P: 0.2, Seed: 9}.Positions(d1, d2, 0)
	emptyRows := 0
	for i := 0; i < d1; i++ {
		if rowPtr[i] == rowPtr[i+1] {
			emptyRows++
		}
	}
	p2, c2, added := Cover(d1, d2, rowPtr, colIdx, 9)
	if added != emptyRows {
		t.Errorf("added %d entries for %d empty rows (no column can be empty here)", added, emptyRows)
	}
	if len(c2) != len(colIdx)+added {
		t.Fatalf("%d entries after, %d before, %d added", len(c2), len(colIdx), added)
	}
	cols := make([]int, d2)
	for i := 0; i < d1; i++ {
		row := c2[p2[i]:p2[i+1]]
		if len(row) == 0 {
			t.Fatalf("row %d still empty", i)
		}
		if !slices.IsSorted(row) {
			t.Fatalf("row %d unsorted: %v", i, row)
		}
		for _, c := range colIdx[rowPtr[i]:rowPtr[i+1]] {
			if _, ok := slices.BinarySearch(row, c); !ok {
				t.Fatalf("row %d lost column %d", i, c)
			}
		}
		for _, c := range row {
			cols[c]++
		}
	}
	if slices.Contains(cols, 0) {
		t.Fatal("a column is still empty")
	}

	// Empty columns: a wide matrix at a tiny rate.
	rowPtr, colIdx = Bernoulli{P: 0.001, Seed: 3}.Positions(3, 2000, 0)
	p3, c3, added := Cover(3, 2000, rowPtr, colIdx, 3)
	seen := make([]bool, 2000)
	for _, c := range c3 {
		seen[c] = true
	}
	if slices.Contains(seen, false) || added < 1990 || p3[3] != len(c3) {
		t.Fatalf("wide case: added %d, some column empty: %v", added, slices.Contains(seen, false))
	}

	// Nothing empty: unchanged.
	rowPtr, colIdx = Bernoulli{P: 1, Seed: 1}.Positions(5, 6, 0)
	p4, c4, added := Cover(5, 6, rowPtr, colIdx, 1)
	if added != 0 || &p4[0] != &rowPtr[0] || &c4[0] != &colIdx[0] {
		t.Error("Cover changed a full Φ")
	}
}

// TestSubset: exactly k indices are marked, and over 20000 draws of 3 of
// 10 every index is marked with frequency 0.3 within 5 standard
// deviations (σ = √(0.3·0.7/20000) ≈ 0.0032), as a uniform subset must.
func TestSubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, k, draws = 10, 3, 20000
	counts := make([]int, n)
	for range draws {
		in := Subset(rng, n, k)
		got := 0
		for i, b := range in {
			if b {
				got++
				counts[i]++
			}
		}
		if got != k {
			t.Fatalf("%d marked, want %d", got, k)
		}
	}
	sd := math.Sqrt(0.3 * 0.7 / draws)
	for i, c := range counts {
		if f := float64(c) / draws; math.Abs(f-0.3) > 5*sd {
			t.Errorf("index %d marked with frequency %.4f, want 0.3", i, f)
		}
	}
	if slices.Contains(Subset(rng, 5, 0), true) || slices.Contains(Subset(rng, 5, 5), false) {
		t.Error("k = 0 or k = n marks the wrong set")
	}
}
