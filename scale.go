package rpca

import (
	"iter"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/selection"
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

// noiseSample bounds the number of entries of the noise estimate.
const noiseSample = 1 << 16

// pruneSparse applies the SparseNoiseFactor rule to r for the problem p it
// was computed from, and returns the entries it took out of S: they are
// the method's, and the verification's stationarity check is made against
// the method's own S (verify.Dropped).
func (r *Result) pruneSparse(p *Problem) []verify.Entry {
	if r.S == nil || r.S.NNZ() == 0 || r.U == nil || r.V == nil {
		return nil
	}
	d1, d2 := p.Dims()
	floor := math.Max(SparseNoiseFactor*noiseScale(p, r.U.RawMatrix(), r.V.RawMatrix()),
		SparseRelativeFloor*metrics.CentredNorm(r.U, r.V)/math.Sqrt(float64(d1)*float64(d2)))
	s := r.S
	k, lo := 0, 0
	dropped := 0.0
	var out []verify.Entry
	for i := 0; i < s.Rows; i++ {
		hi := s.RowPtr[i+1]
		for q := lo; q < hi; q++ {
			if v := s.Val[q]; math.Abs(v) > floor {
				s.ColIdx[k], s.Val[k] = s.ColIdx[q], v
				k++
			} else {
				dropped += v * v
				out = append(out, verify.Entry{Row: i, Col: int(s.ColIdx[q]), Val: v})
			}
		}
		lo = hi
		s.RowPtr[i+1] = k
	}
	s.ColIdx, s.Val = s.ColIdx[:k], s.Val[:k]
	if dropped > 0 && r.Residual >= 0 {
		if yss := observedSumSq(p); yss > 0 {
			r.Residual = math.Sqrt(r.Residual*r.Residual + dropped/yss)
		}
	}
	return out
}

// noiseScale returns 1.4826·median|Y_ij − U_i·V_j| over up to noiseSample
// observed entries, evenly spaced in row-major order.
func noiseScale(p *Problem, u, v blas64.General) float64 {
	dot := func(i, j int) float64 {
		ui, vj := u.Data[i*u.Stride:i*u.Stride+u.Cols], v.Data[j*v.Stride:j*v.Stride+v.Cols]
		t := 0.0
		for k, x := range ui {
			t += x * vj[k]
		}
		return t
	}
	var res []float64
	switch {
	case p.Dense != nil:
		raw := p.Dense.RawMatrix()
		n := raw.Rows * raw.Cols
		m := min(n, noiseSample)
		res = make([]float64, m)
		for k := range res {
			q := int(int64(k) * int64(n) / int64(m))
			i, j := q/raw.Cols, q%raw.Cols
			res[k] = math.Abs(raw.Data[i*raw.Stride+j] - dot(i, j))
		}
	case p.Observed != nil:
		o := p.Observed.m
		n := len(o.Val)
		m := min(n, noiseSample)
		res = make([]float64, m)
		i := 0
		for k := range res {
			q := int(int64(k) * int64(n) / int64(m))
			for o.RowPtr[i+1] <= q {
				i++
			}
			res[k] = math.Abs(o.Val[q] - dot(i, int(o.ColIdx[q])))
		}
	}
	if len(res) == 0 {
		return 0
	}
	// The element the sorted slice would hold at len/2, by linear-time
	// selection.
	return 1.4826 * selection.SelectSmallest(res, len(res)/2+1)
}

// observedSumSq returns the sum of squares of the observed entries of p.
func observedSumSq(p *Problem) float64 {
	ss := 0.0
	for vals := range observedValues(p) {
		for _, v := range vals {
			ss += v * v
		}
	}
	return ss
}

// observedValues yields the observed entries of p: a row at a time for a
// dense Y, all at once for a partially observed one.
func observedValues(p *Problem) iter.Seq[[]float64] {
	return func(yield func([]float64) bool) {
		switch {
		case p.Dense != nil:
			raw := p.Dense.RawMatrix()
			for i := 0; i < raw.Rows; i++ {
				if !yield(raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]) {
					return
				}
			}
		case p.Observed != nil:
			yield(p.Observed.m.Val)
		}
	}
}
