package rpca

import (
	"math"

	"github.com/rpca-gd/rpca/internal/verify"
	"github.com/rpca-gd/rpca/metrics"
)

// The rule by which [Solve] counts an entry of S as a corruption: |s_ij|
// must exceed SparseNoiseFactor·σ̂, σ̂ = 1.4826·median|Y − M| over up to
// 2^16 evenly spaced observed entries (the fit's noise, unmoved by
// corruptions on fewer than half of them), and SparseRelativeFloor times
// the rms of M's varying part, ‖M − mean(M)‖_F/√(d1·d2) (not ‖M‖, which
// an offset would inflate). Smaller entries cannot be told from the noise
// of the fit (T_{γα} sets aside γα·d entries per line whatever their
// size); Solve moves them into the residual (docs/verification.md).
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
