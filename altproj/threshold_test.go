package altproj

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// newThresholdCase returns a solver whose w holds D = Y − L for a random
// Y with 10% large entries, as in the last stage of a run.
func newThresholdCase(d1, d2 int) (*solver, []float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	y := blas64.General{Rows: d1, Cols: d2, Stride: d2, Data: make([]float64, d1*d2)}
	dd := make([]float64, d1*d2)
	for i := range y.Data {
		y.Data[i] = rng.NormFloat64()
		dd[i] = 0.01 * rng.NormFloat64()
		if rng.Float64() < 0.1 {
			dd[i] += 1
		}
	}
	wpr := (d2 + 63) / 64
	sv := &solver{y: y, w: blas64.General{Rows: d1, Cols: d2, Stride: d2, Data: make([]float64, d1*d2)},
		wpr: wpr, bits: make([]uint64, d1*wpr), nnz: make([]int, d1)}
	return sv, dd
}

func TestThreshold(t *testing.T) {
	// Compare with the definition H_ζ: keep D_ij iff |D_ij| ≥ ζ.
	sv, dd := newThresholdCase(37, 130)
	copy(sv.w.Data, dd)
	const zeta = 0.5
	ss := sv.threshold(zeta)
	want, total := 0.0, 0
	for i := 0; i < 37; i++ {
		n := 0
		for j := 0; j < 130; j++ {
			k := i*130 + j
			in := math.Abs(dd[k]) >= zeta
			bit := sv.bits[i*sv.wpr+j/64]>>(j%64)&1 == 1
			if in != bit {
				t.Fatalf("support bit (%d,%d) = %v, want %v", i, j, bit, in)
			}
			w := sv.y.Data[k]
			if in {
				w -= dd[k]
				n++
			} else {
				want += dd[k] * dd[k]
			}
			if sv.w.Data[k] != w {
				t.Fatalf("w(%d,%d) = %v, want %v", i, j, sv.w.Data[k], w)
			}
		}
		if sv.nnz[i] != n {
			t.Fatalf("row %d: nnz %d, want %d", i, sv.nnz[i], n)
		}
		total += n
	}
	if math.Abs(ss-want) > 1e-12*want {
		t.Errorf("residual %v, want %v", ss, want)
	}
	if total == 0 {
		t.Fatal("empty support: the case tests nothing")
	}
}

func BenchmarkThreshold(b *testing.B) {
	sv, dd := newThresholdCase(1000, 1000)
	for b.Loop() {
		b.StopTimer()
		copy(sv.w.Data, dd)
		b.StartTimer()
		sv.threshold(0.5)
	}
}
