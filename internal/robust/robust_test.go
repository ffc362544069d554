package robust

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// TestHalf checks the median and half spread against sorting: the median
// is the ⌈m/2⌉-th smallest value, the half spread 1.4826 times the
// ⌈m/2⌉-th smallest half deviation; with most values at the median, the
// 75% quantile over the Gaussian's.
func TestHalf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, 1001)
	for k := range x {
		x[k] = 3 + rng.NormFloat64()
	}
	sorted := slices.Sorted(slices.Values(x))
	med := sorted[500]
	dev := make([]float64, len(x))
	for k, v := range x {
		dev[k] = math.Abs(v/2 - med/2)
	}
	slices.Sort(dev)
	c, sH := Half(slices.Clone(x))
	if c != med || sH != 1.4826*dev[500] {
		t.Errorf("median %v, half spread %v; want %v, %v", c, sH, med, 1.4826*dev[500])
	}
	// 60% of the values at the median: the MAD is 0, the 75% quantile is not.
	y := make([]float64, 100)
	for k := 60; k < 100; k++ {
		y[k] = float64(k - 59)
	}
	c, sH = Half(y)
	if want := 0.5 * 15 / 1.1503; c != 0 || math.Abs(sH-want) > 1e-15*want {
		t.Errorf("sparse values: %v, %v; want 0, %v", c, sH, 0.5*15/1.1503)
	}
}

// TestPass checks the pass against a plain loop: the largest deviation
// and magnitude, the gross entries and the sum of squares with a gross
// entry counted at the median, on a dense matrix and on flat values, with
// values of 1e300 (where a plain sum of squares overflows).
func TestPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const rows, cols = 37, 29
	data := make([]float64, rows*cols)
	for k := range data {
		data[k] = 1 + rng.NormFloat64()
	}
	data[5], data[300] = 1e300, -1e7
	ch, locH, sH := 0.5, 0.25, 0.5
	var wantSS float64
	var wantGross []int
	maxH, maxAbs := 0.0, 0.0
	for k, x := range data {
		h := math.Abs(x/2 - ch)
		maxH, maxAbs = max(maxH, h), max(maxAbs, math.Abs(x))
		f := (x/2 - locH) / sH
		if h > GrossSpreads*sH {
			wantGross = append(wantGross, k)
			f = (ch - locH) / sH
		}
		wantSS += f * f
	}
	for _, v := range []Values{{Dense: blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}}, {Flat: data}} {
		st := Pass(v, ch, locH, sH, true)
		if st.MaxH != maxH || st.MaxAbs != maxAbs || !slices.Equal(st.Gross, wantGross) {
			t.Errorf("max %v, %v, gross %v; want %v, %v, %v", st.MaxH, st.MaxAbs, st.Gross, maxH, maxAbs, wantGross)
		}
		if got := st.SS.Value(); math.Abs(got-wantSS) > 1e-12*wantSS {
			t.Errorf("sum of squares %v, want %v", got, wantSS)
		}
		// Without setting aside, the sum of squares of 1e300 is kept
		// scaled: its norm is finite and near 1e300/2/sH.
		st = Pass(v, ch, locH, sH, false)
		if n := st.SS.Norm(); math.IsInf(n, 0) || math.Abs(n-1e300/2/sH) > 1e-9*n {
			t.Errorf("unscaled norm %v, want about %v", n, 1e300/2/sH)
		}
	}
}
