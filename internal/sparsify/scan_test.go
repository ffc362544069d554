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

// TestScanKernels compares colScan and rowScan, with the AVX2 kernels if
// the machine has them, against plain loops written from their
// definitions, for all lengths up to 70 and some longer ones.
func TestScanKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 31))
	modes := []bool{false}
	if hasAVX2 {
		modes = append(modes, true)
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
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
		for _, simd := range modes {
			useAVX2 = simd
			above := slices.Clone(above0)
			cc := make([]int32, n+scanPad)
			nc := colScan(x, lo, hi, above, cc)
			if !slices.Equal(cc[:nc], wantCC) || !slices.Equal(above, wantAbove) {
				t.Fatalf("colScan n=%d avx2=%v: cc=%v above=%v, want %v %v", n, simd, cc[:nc], above, wantCC, wantAbove)
			}
			ge := make([]int32, n+scanPad)
			ng, na := rowScan(x, rlo, rhi, ge)
			if !slices.Equal(ge[:ng], wantGE) || na != wantNA {
				t.Fatalf("rowScan n=%d avx2=%v: ge=%v na=%d, want %v %d", n, simd, ge[:ng], na, wantGE, wantNA)
			}
		}
	}
}

// TestDenseGoKernels runs the Dense comparison with the Go loops when the
// default uses the AVX2 kernels (the reverse case is the default run).
func TestDenseGoKernels(t *testing.T) {
	if !useAVX2 {
		t.Skip("the default run already uses the Go loops")
	}
	useAVX2 = false
	defer func() { useAVX2 = true }()
	rng := rand.New(rand.NewPCG(32, 33))
	var out Sparse
	for _, kind := range genKinds {
		a := gen(rng, kind, 45, 38)
		d := NewDense(45, 38, 2)
		d.setSamples(8, 8)
		for _, k := range [][2]int{{1, 1}, {4, 5}, {19, 22}, {38, 45}} {
			if err := d.Apply(a, k[0], k[1], &out); err != nil {
				t.Fatal(err)
			}
			if diff := diffKeep(sparseKeep(t, &out, a), refKeep(a, nil, k[0], k[1])); diff != "" {
				t.Fatalf("%s k=%v: %s", kind, k, diff)
			}
		}
	}
}
