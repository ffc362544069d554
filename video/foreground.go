package video

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/selection"
)

// DefaultQuantile is the quantile of the nonzero |S| used by [RobustScale]
// to set the display range of the foreground.
const DefaultQuantile = 0.995

// robustScaleSample is the largest number of entries RobustScale reads.
const robustScaleSample = 1 << 20

// RobustScale returns a robust maximum of |S| for display: the q-quantile
// (nearest rank, q in (0, 1]; 0 means [DefaultQuantile]) of the magnitudes
// of the nonzero entries. Zeros are left out so that the scale does not
// collapse to 0 when fewer than 1−q of the entries are nonzero; taking a
// quantile rather than the maximum keeps a few extreme values from
// darkening the rest. It returns 1 when S has no nonzero entry. Matrices
// with a Do(func(i, j int, v float64)) method (such as *rpca.Sparse) are
// read through it. Of a larger matrix of another kind, an evenly strided sample of
// about 2^20 entries is read (a display scale needs no more).
func RobustScale(s Matrix, q float64) float64 {
	if !(q > 0 && q <= 1) {
		q = DefaultQuantile
	}
	var mags []float64
	add := func(v float64) {
		if a := math.Abs(v); a > 0 && !math.IsNaN(a) {
			mags = append(mags, a)
		}
	}
	if sp, ok := s.(interface {
		Do(func(i, j int, v float64))
	}); ok {
		sp.Do(func(_, _ int, v float64) { add(v) })
	} else if d, ok := s.(*mat.Dense); ok {
		raw := d.RawMatrix()
		n := raw.Rows * raw.Cols
		step := max(1, n/robustScaleSample)
		for k := 0; k < n; k += step {
			add(raw.Data[(k/raw.Cols)*raw.Stride+k%raw.Cols])
		}
	} else {
		r, c := s.Dims()
		n := r * c
		step := max(1, n/robustScaleSample)
		for k := 0; k < n; k += step {
			add(s.At(k/c, k%c))
		}
	}
	if len(mags) == 0 {
		return 1
	}
	k := int(math.Ceil(q*float64(len(mags)))) - 1
	k = max(0, min(k, len(mags)-1))
	return selection.SelectSmallest(mags, k+1)
}

// DisplayScale is the display range of the foreground panel: the robust
// maximum of |S| ([RobustScale] with quantile q), but never below the mask
// threshold, so that a clip without motion, whose |S| is rounding noise
// (1e-4 and below), shows a black foreground instead of its noise
// stretched to white. A threshold ≤ 0 means no floor.
func DisplayScale(s Matrix, q, threshold float64) float64 {
	return max(RobustScale(s, q), threshold)
}

// view is a matrix whose entries are a function of another's.
type view struct {
	m  Matrix
	fn func(float64) float64
}

func (v view) Dims() (int, int)    { return v.m.Dims() }
func (v view) At(i, j int) float64 { return v.fn(v.m.At(i, j)) }

// Magnitude returns a view of S for display: min(|S|/scale, 1), so that
// magnitudes from 0 to scale (for example [RobustScale]) span black to
// white. A scale ≤ 0 is taken as 1.
func Magnitude(s Matrix, scale float64) Matrix {
	if !(scale > 0) {
		scale = 1
	}
	return view{s, func(x float64) float64 { return min(math.Abs(x)/scale, 1) }}
}

// Excess returns a view of S for display: (|S| − floor)/(scale − floor),
// clipped to [0, 1], so that magnitudes up to floor (the noise) are black
// and scale is white. A scale not above floor is taken as floor + 1.
func Excess(s Matrix, floor, scale float64) Matrix {
	floor = max(floor, 0)
	if !(scale > floor) {
		scale = floor + 1
	}
	return view{s, func(x float64) float64 { return min(max(math.Abs(x)-floor, 0)/(scale-floor), 1) }}
}
