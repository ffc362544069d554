package selection

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// inputs returns test slices of length n of several shapes, including the
// ones that defeat naive pivot choices (sorted, reversed, organ pipe, all
// equal, few distinct values).
func inputs(rng *rand.Rand, n int) map[string][]float64 {
	m := map[string][]float64{}
	gauss := make([]float64, n)
	for i := range gauss {
		gauss[i] = rng.NormFloat64()
	}
	m["gauss"] = gauss
	asc := slices.Clone(gauss)
	slices.Sort(asc)
	m["ascending"] = asc
	desc := slices.Clone(asc)
	slices.Reverse(desc)
	m["descending"] = desc
	pipe := make([]float64, n)
	for i := range pipe {
		pipe[i] = float64(min(i, n-1-i))
	}
	m["organpipe"] = pipe
	m["constant"] = slices.Repeat([]float64{2.5}, n)
	few := make([]float64, n)
	for i := range few {
		few[i] = float64(rng.IntN(3))
	}
	m["fewvalues"] = few
	inf := slices.Clone(gauss)
	for i := 0; i < n; i += 7 {
		inf[i] = math.Inf(1 - 2*(i%2))
	}
	m["infinities"] = inf
	return m
}

// checkPartition verifies Select's postcondition against a sorted copy.
func checkPartition(t *testing.T, name string, orig, x []float64, k int, got float64) {
	t.Helper()
	want := slices.Clone(orig)
	slices.Sort(want)
	slices.Reverse(want)
	if got != want[k-1] {
		t.Fatalf("%s n=%d k=%d: got %v, want %v", name, len(orig), k, got, want[k-1])
	}
	if x[k-1] != got {
		t.Fatalf("%s n=%d k=%d: x[k-1]=%v, returned %v", name, len(orig), k, x[k-1], got)
	}
	for i, v := range x {
		if (i < k-1 && v < got) || (i > k-1 && v > got) {
			t.Fatalf("%s n=%d k=%d: x[%d]=%v on the wrong side of %v", name, len(orig), k, i, v, got)
		}
	}
	s := slices.Clone(x)
	slices.Sort(s)
	sortedOrig := slices.Clone(orig)
	slices.Sort(sortedOrig)
	if !slices.Equal(s, sortedOrig) {
		t.Fatalf("%s n=%d k=%d: Select changed the multiset of values", name, len(orig), k)
	}
}

func TestSelectAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 15, 16, 17, 40, 127, 128, 129, 1000, 4099} {
		for name, orig := range inputs(rng, n) {
			ks := []int{1, n, (n + 1) / 2, 1 + rng.IntN(n), 1 + rng.IntN(n)}
			for _, k := range ks {
				x := slices.Clone(orig)
				got := Select(x, k)
				checkPartition(t, name, orig, x, k, got)
			}
		}
	}
}

func TestSelectSmallestAgainstSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 9, 33, 500, 2001} {
		for name, orig := range inputs(rng, n) {
			for _, k := range []int{1, n, 1 + rng.IntN(n)} {
				x := slices.Clone(orig)
				got := SelectSmallest(x, k)
				want := slices.Clone(orig)
				slices.Sort(want)
				if got != want[k-1] {
					t.Fatalf("%s n=%d k=%d: got %v, want %v", name, n, k, got, want[k-1])
				}
				for i, v := range x {
					if (i < k-1 && v > got) || (i > k-1 && v < got) {
						t.Fatalf("%s n=%d k=%d: x[%d]=%v on the wrong side of %v", name, n, k, i, v, got)
					}
				}
			}
		}
	}
}

// TestMedianOfMediansPath checks the guaranteed pivot and forces the
// fallback path by calling selectRange with an exhausted budget.
func TestMedianOfMediansPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{17, 100, 1001} {
		for name, orig := range inputs(rng, n) {
			x := slices.Clone(orig)
			k := 1 + rng.IntN(n)
			p := medianOfMedians(x, 0, n-1)
			// The pivot must be an element of the slice and leave at
			// least 3/10 (minus rounding) of the elements on each side.
			var ge, le int
			for _, v := range orig {
				if v >= p {
					ge++
				}
				if v <= p {
					le++
				}
			}
			if ge < 3*n/10-2 || le < 3*n/10-2 || !slices.Contains(orig, p) {
				t.Fatalf("%s n=%d: poor median-of-medians pivot %v (ge=%d le=%d)", name, n, p, ge, le)
			}
			x = slices.Clone(orig)
			selectRange(x, 0, n-1, k-1, 0)
			checkPartition(t, name, orig, x, k, x[k-1])
		}
	}
}

func TestSelectPanicsOnBadK(t *testing.T) {
	for _, k := range []int{0, 4} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Select(x, %d) with len 3 did not panic", k)
				}
			}()
			Select([]float64{1, 2, 3}, k)
		}()
	}
}

func TestSelectTerminatesWithNaN(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float64, 300)
	for i := range x {
		x[i] = rng.NormFloat64()
		if i%10 == 0 {
			x[i] = math.NaN()
		}
	}
	for k := 1; k <= len(x); k += 37 {
		Select(slices.Clone(x), k) // must return; the value is unspecified
	}
}

func BenchmarkSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 5000
	orig := make([]float64, n)
	for i := range orig {
		orig[i] = math.Abs(rng.NormFloat64())
	}
	x := make([]float64, n)
	b.Run("quickselect", func(b *testing.B) {
		for b.Loop() {
			copy(x, orig)
			Select(x, n/10)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			copy(x, orig)
			slices.Sort(x)
		}
	})
}
