package ratings

import (
	"math"
	"runtime"
	"slices"
	"testing"
)

func TestGenerate(t *testing.T) {
	s := Shape{Users: 300, Items: 500, Ratings: 30_000, Rank: 4, Junk: 0.05, Seed: 3}
	g, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	n := g.Len()
	if n != s.Ratings || g.D1 != s.Users || g.D2 != s.Items || len(g.Junk) != n {
		t.Fatalf("%d ratings of %d×%d with %d flags, want %d of %d×%d", n, g.D1, g.D2, len(g.Junk), s.Ratings, s.Users, s.Items)
	}
	perUser := make([]int, s.Users)
	perItem := make([]int, s.Items)
	junk := 0
	for k := range n {
		i, j, v := g.Row[k], g.Col[k], g.Val[k]
		if k > 0 && (i < g.Row[k-1] || i == g.Row[k-1] && j <= g.Col[k-1]) {
			t.Fatalf("rating %d (%d, %d) is not after (%d, %d): want sorted distinct pairs", k, i, j, g.Row[k-1], g.Col[k-1])
		}
		if v < scaleLo || v > scaleHi || 2*v != math.Round(2*v) {
			t.Fatalf("rating %d is %v: want a half star in [%v, %v]", k, v, scaleLo, scaleHi)
		}
		if g.Junk[k] {
			junk++
			if v != scaleLo && v != scaleHi {
				t.Fatalf("junk rating %d is %v: want an end of the scale", k, v)
			}
		}
		perUser[i]++
		perItem[j]++
	}
	if want := int(math.Round(s.Junk * float64(n))); junk != want {
		t.Errorf("%d junk ratings, want %d", junk, want)
	}
	if m := slices.Min(perUser); m < MinPerUser {
		t.Errorf("a user has %d ratings, want at least %d", m, MinPerUser)
	}
	if m := slices.Max(perUser); m > s.Items/2 {
		t.Errorf("a user has %d ratings, want at most half the items (%d)", m, s.Items/2)
	}
	// Far from uniform: with weights (j+1)^−0.9 the most popular item
	// draws about 500^0.9 ≈ 270 times the least popular's share; at
	// 60 ratings per item on average, the busiest has hundreds and the
	// median item a few dozen.
	sorted := slices.Clone(perItem)
	slices.Sort(sorted)
	if top, mid := sorted[len(sorted)-1], sorted[len(sorted)/2]; top < 5*mid {
		t.Errorf("busiest item has %d ratings, the median item %d: want a heavy tail (≥ 5×)", top, mid)
	}
	for _, id := range []string{g.RowIDs[0], g.RowIDs[s.Users-1]} {
		if i, ok := g.RowIndex[id]; !ok || g.RowIDs[i] != id {
			t.Errorf("row id %q does not map back to itself", id)
		}
	}

	// The same shape gives the same ratings, whatever the number of
	// workers.
	prev := runtime.GOMAXPROCS(1)
	h, err := Generate(s)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Row, h.Row) || !slices.Equal(g.Col, h.Col) || !slices.Equal(g.Val, h.Val) || !slices.Equal(g.Junk, h.Junk) {
		t.Error("Generate differs between GOMAXPROCS 1 and the default")
	}
	s.Seed++
	if o, err := Generate(s); err != nil || slices.Equal(g.Val, o.Val) {
		t.Errorf("another seed gives the same ratings (err %v)", err)
	}
}

func TestGenerateRejects(t *testing.T) {
	for _, s := range []Shape{
		{Users: 10, Items: 39, Ratings: 200},
		{Users: 10, Items: 100, Ratings: 199},
		{Users: 10, Items: 100, Ratings: 501},
		{Users: 10, Items: 100, Ratings: 300, Rank: -1},
		{Users: 10, Items: 100, Ratings: 300, Junk: 1},
		{Users: 10, Items: 100, Ratings: 300, Junk: math.NaN()},
		{Users: -1},
	} {
		if _, err := Generate(s); err == nil {
			t.Errorf("Generate(%+v) succeeded, want an error", s)
		}
	}
}
