package video

import (
	"math/rand/v2"
	"testing"
)

// majorityRef is the obvious hysteresis filter: count the window directly.
func majorityRef(mask []bool, w, h, r int) []bool {
	out := make([]bool, len(mask))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n, a := 0, 0
			for yy := max(0, y-r); yy < min(h, y+r+1); yy++ {
				for xx := max(0, x-r); xx < min(w, x+r+1); xx++ {
					a++
					if mask[yy*w+xx] {
						n++
					}
				}
			}
			if mask[y*w+x] {
				out[y*w+x] = 3*n > a
			} else {
				out[y*w+x] = 3*n > 2*a
			}
		}
	}
	return out
}

// TestCleanMaskMajority compares the summed-area filter with the
// direct count on random masks of several densities and radii.
func TestCleanMaskMajority(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const w, h = 37, 23
	for _, dens := range []float64{0.1, 0.5, 0.9} {
		mask := make([]bool, w*h)
		for i := range mask {
			mask[i] = rng.Float64() < dens
		}
		for _, r := range []int{1, 2, 4} {
			got, want := cleanMask(mask, w, h, r, 0), majorityRef(mask, w, h, r)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("density %g, radius %d: pixel %d differs", dens, r, i)
				}
			}
		}
	}
}

// TestCleanMaskObjects: a 6×6 object survives the 5×5 filter and the size
// rule, isolated pixels and a 2×2 speck do not, and nothing is added.
func TestCleanMaskObjects(t *testing.T) {
	const w, h = 30, 20
	mask := make([]bool, w*h)
	set := func(x0, y0, n int) {
		for y := y0; y < y0+n; y++ {
			for x := x0; x < x0+n; x++ {
				mask[y*w+x] = true
			}
		}
	}
	set(5, 5, 6)   // the object
	set(20, 3, 2)  // a speck
	set(25, 15, 1) // isolated pixels
	set(2, 17, 1)
	out := cleanMask(mask, w, h, 2, 10)
	count := 0
	for i, v := range out {
		if v {
			count++
			if !mask[i] && !(i%w >= 5 && i%w < 11 && i/w >= 5 && i/w < 11) {
				t.Errorf("pixel %d added outside the object", i)
			}
		}
	}
	if !out[8*w+8] || count != 36 {
		t.Errorf("object: centre %v, %d pixels kept", out[8*w+8], count)
	}
	if out[3*w+20] || out[15*w+25] || out[17*w+2] {
		t.Error("speck or isolated pixel kept")
	}
	// The size rule alone.
	out = cleanMask(mask, w, h, 0, 5)
	if !out[5*w+5] || out[3*w+20] || out[15*w+25] {
		t.Error("size rule: wrong regions kept")
	}
}

// TestBoxMean compares the summed-area box mean with a direct average of
// the clipped window (tolerance: sums of at most 81 values in [0, 1]
// differ by a few ulps between the two orders of summation), and, to the
// bit, with the generic summedArea and windowSum it writes out.
func TestBoxMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const w, h = 17, 11
	src := make([]float64, w*h)
	for i := range src {
		src[i] = rng.Float64()
	}
	dst := make([]float64, w*h)
	sat := make([]float64, (w+1)*(h+1))
	for _, r := range []int{0, 1, 4} {
		boxMean(dst, src, sat, w, h, r)
		ref := make([]float64, (w+1)*(h+1)) // the generic table: the same sums, to the bit
		summedArea(ref, w, h, func(i int) float64 { return src[i] })
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				if s, area := windowSum(ref, w, h, r, x, y); r > 0 && dst[y*w+x] != s/float64(area) {
					t.Fatalf("radius %d, pixel (%d, %d): %v, not the generic table's %v", r, x, y, dst[y*w+x], s/float64(area))
				}
				sum, n := 0.0, 0
				for yy := max(0, y-r); yy < min(h, y+r+1); yy++ {
					for xx := max(0, x-r); xx < min(w, x+r+1); xx++ {
						sum += src[yy*w+xx]
						n++
					}
				}
				if d := dst[y*w+x] - sum/float64(n); d > 1e-12 || d < -1e-12 {
					t.Fatalf("radius %d, pixel (%d, %d): %v, want %v", r, x, y, dst[y*w+x], sum/float64(n))
				}
			}
		}
	}
}
