package sparsify

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// scanRow returns a row mixing Gaussians, zeros, ±Inf, NaN, negative
// zero and repeated values, so that every comparison meets its edge cases.
func scanRow(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for j := range x {
		switch rng.IntN(12) {
		case 0:
			x[j] = 0
		case 1:
			x[j] = math.Copysign(0, -1)
		case 2:
			x[j] = math.Inf(1 - 2*rng.IntN(2))
		case 3:
			x[j] = math.NaN()
		case 4:
			x[j] = float64(rng.IntN(3) - 1)
		default:
			x[j] = rng.NormFloat64()
		}
	}
	return x
}

// scanBound returns the bits of a bound chosen to hit the row's values
// exactly at times.
func scanBound(rng *rand.Rand, x []float64) uint64 {
	switch rng.IntN(5) {
	case 0:
		return tinyBits
	case 1:
		return math.Float64bits(math.Inf(1))
	default:
		v := math.Abs(x[rng.IntN(len(x))])
		if math.IsNaN(v) {
			v = 1
		}
		return math.Float64bits(v)
	}
}

// TestScanKernels compares colScan and rowScan against plain loops written
// from their definitions, for all lengths up to 70 and some longer ones.
func TestScanKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 31))
	lengths := []int{}
	for n := 1; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 1000, 5003)
	for _, n := range lengths {
		x := scanRow(rng, n)
		lo := make([]uint64, n)
		hi := make([]uint64, n)
		for j := range lo {
			a, b := scanBound(rng, x), scanBound(rng, x)
			lo[j], hi[j] = min(a, b), max(a, b)
		}
		above0 := make([]int64, n)
		for j := range above0 {
			above0[j] = int64(rng.IntN(5))
		}
		rlo, rhi := scanBound(rng, x), scanBound(rng, x)
		rlo, rhi = min(rlo, rhi), max(rlo, rhi)

		// Expected results straight from the definitions, with the
		// magnitudes compared as floats (NaN counts as above every bound).
		var wantCC, wantGE []int32
		wantAbove := slices.Clone(above0)
		wantNA := 0
		for j, v := range x {
			a := math.Abs(v)
			nan := math.IsNaN(a)
			l, h := math.Float64frombits(lo[j]), math.Float64frombits(hi[j])
			if nan || a > h {
				wantAbove[j]++
			}
			if !nan && a >= l && a <= h {
				wantCC = append(wantCC, int32(j))
			}
			if nan || a >= math.Float64frombits(rlo) {
				wantGE = append(wantGE, int32(j))
			}
			if nan || a > math.Float64frombits(rhi) {
				wantNA++
			}
		}
		{
			above := slices.Clone(above0)
			cc := make([]int32, n)
			nc := colScan(x, lo, hi, above, cc)
			if !slices.Equal(cc[:nc], wantCC) || !slices.Equal(above, wantAbove) {
				t.Fatalf("colScan n=%d cc=%v above=%v, want %v %v", n, cc[:nc], above, wantCC, wantAbove)
			}
			ge := make([]int32, n)
			ng, na := rowScan(x, rlo, rhi, ge)
			if !slices.Equal(ge[:ng], wantGE) || na != wantNA {
				t.Fatalf("rowScan n=%d ge=%v na=%d, want %v %d", n, ge[:ng], na, wantGE, wantNA)
			}
		}
	}
}
