package verify

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/selection"
)

// noiseSample bounds the number of entries of NoiseScale's estimate.
const noiseSample = 1 << 16

// NoiseScale returns 1.4826·median|Y_ij − U_i·V_j| over up to 2^16
// observed entries (the rows of y, or the entries of o), evenly spaced
// in row-major order: the noise of the fit, unmoved by corruptions on
// fewer than half of the entries (rpca's SparseNoiseFactor rule).
func NoiseScale(y blas64.General, o *observed.Matrix, u, v blas64.General) float64 {
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
	case o != nil:
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
	default:
		n := y.Rows * y.Cols
		m := min(n, noiseSample)
		res = make([]float64, m)
		for k := range res {
			q := int(int64(k) * int64(n) / int64(m))
			i, j := q/y.Cols, q%y.Cols
			res[k] = math.Abs(y.Data[i*y.Stride+j] - dot(i, j))
		}
	}
	if len(res) == 0 {
		return 0
	}
	// The element the sorted slice would hold at len/2, by linear-time
	// selection.
	return 1.4826 * selection.SelectSmallest(res, len(res)/2+1)
}

// PruneBelow removes from the sparse part s, in place, the entries whose
// magnitude is at most floor, and returns the number left, their sum of
// squares taken out, and the entries removed. s's slices keep their
// length; the caller truncates ColIdx and Val to the number left.
func PruneBelow(s CSR, floor float64) (kept int, droppedSS float64, dropped []Entry) {
	lo := 0
	for i := 0; i+1 < len(s.RowPtr); i++ {
		hi := s.RowPtr[i+1]
		for q := lo; q < hi; q++ {
			if v := s.Val[q]; math.Abs(v) > floor {
				s.ColIdx[kept], s.Val[kept] = s.ColIdx[q], v
				kept++
			} else {
				droppedSS += v * v
				dropped = append(dropped, Entry{Row: i, Col: int(s.ColIdx[q]), Val: v})
			}
		}
		lo = hi
		s.RowPtr[i+1] = kept
	}
	return kept, droppedSS, dropped
}
