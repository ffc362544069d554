package robust

import (
	"math"

	"github.com/rpca-gd/rpca/internal/selection"
)

// SampleSize bounds the positions SampledSpread reads.
const SampleSize = 1 << 14

// SampledSpread returns 1.4826 times the median of |x| over up to
// SampleSize of the positions q < n, evenly spaced, where at(q) gives x
// and whether to count it (0 when none is counted): for Gaussian noise
// its standard deviation, unmoved by corruptions on fewer than half of
// the positions. buf is scratch space, returned for reuse.
func SampledSpread(n int, buf []float64, at func(q int) (x float64, ok bool)) (float64, []float64) {
	m := min(n, SampleSize)
	buf = buf[:0]
	for k := range m {
		if x, ok := at(int(int64(k) * int64(n) / int64(m))); ok {
			buf = append(buf, math.Abs(x))
		}
	}
	if len(buf) == 0 {
		return 0, buf
	}
	return 1.4826 * selection.SelectSmallest(buf, (len(buf)+1)/2), buf
}
