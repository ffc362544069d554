package rpca

import (
	"math"

	"github.com/rpca-gd/rpca/internal/verify"
	"github.com/rpca-gd/rpca/metrics"
)

// The rule by which [Solve] counts an entry of S as a corruption: |s_ij|
// must exceed both
//   - SparseNoiseFactor·σ̂, where σ̂ is a robust estimate of the noise of
//     the fit, 1.4826 times the median of |Y − M| over (up to noiseSample,
//     evenly spaced) observed entries; the median is not moved by
//     corruptions on fewer than half of the entries, and for Gaussian
//     noise σ̂ is its standard deviation; and
//   - SparseRelativeFloor times the root mean square of the varying part
//     of M, ‖M − mean(M)‖_F/√(d1·d2): a correction that small is
//     rounding, not a gross corruption. (Not ‖M‖: an offset of 10⁶ would
//     make the floor 10 and hide every corruption below it.)
//
// Entries at or below the floor cannot be told from the noise of the fit:
// the gradient method's T_{γα} sets aside γα·d entries per line whatever
// their size, so on the paper's model it holds some 27,000 clean entries
// of 5e-10 to 7e-9 at d = 1000 (rms of M: 3e-3). Solve moves them from S
// into the residual, and Result.Residual includes them.
const (
	SparseNoiseFactor   = 5
	SparseRelativeFloor = 1e-5
)

// pruneSparse applies the SparseNoiseFactor rule to r for the problem p it
// was computed from, and returns the entries it took out of S: they are
// the method's, and the verification's stationarity check is made against
// the method's own S (verify.Dropped).
func (r *Result) pruneSparse(p *Problem) []verify.Entry {
	if r.S == nil || r.S.NNZ() == 0 || r.U == nil || r.V == nil {
		return nil
	}
	d1, d2 := p.Dims()
	y, o := p.storage()
	floor := math.Max(SparseNoiseFactor*verify.NoiseScale(y, o, r.U.RawMatrix(), r.V.RawMatrix()),
		SparseRelativeFloor*metrics.CentredNorm(r.U, r.V)/math.Sqrt(float64(d1)*float64(d2)))
	s := r.S
	k, dropped, out := verify.PruneBelow(csrOf(s), floor)
	s.ColIdx, s.Val = s.ColIdx[:k], s.Val[:k]
	if dropped > 0 && r.Residual >= 0 {
		if yss := robustValues(p).SumSq(); yss > 0 {
			r.Residual = math.Sqrt(r.Residual*r.Residual + dropped/yss)
		}
	}
	return out
}
