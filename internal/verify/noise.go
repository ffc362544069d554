package verify

import (
	"math"
	"slices"

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
	res, _, _ := residualSample(y, o, u, v)
	return spreadOf(res)
}

// spreadOf returns 1.4826 times the median of res (0 for none),
// reordering res.
func spreadOf(res []float64) float64 {
	if len(res) == 0 {
		return 0
	}
	// The element the sorted slice would hold at len/2, by linear-time
	// selection.
	return 1.4826 * selection.SelectSmallest(res, len(res)/2+1)
}

// residualSample returns |Y_ij − U_i·V_j| at up to 2^16 observed entries,
// evenly spaced in row-major order, with their rows and columns.
func residualSample(y blas64.General, o *observed.Matrix, u, v blas64.General) (res []float64, rows, cols []int32) {
	dot := func(i, j int) float64 {
		ui, vj := u.Data[i*u.Stride:i*u.Stride+u.Cols], v.Data[j*v.Stride:j*v.Stride+v.Cols]
		t := 0.0
		for k, x := range ui {
			t += x * vj[k]
		}
		return t
	}
	n := y.Rows * y.Cols
	if o != nil {
		n = len(o.Val)
	}
	m := min(n, noiseSample)
	res, rows, cols = make([]float64, m), make([]int32, m), make([]int32, m)
	i := 0
	for k := range res {
		q := int(int64(k) * int64(n) / int64(m))
		var j int
		var yij float64
		if o != nil {
			for o.RowPtr[i+1] <= q {
				i++
			}
			j, yij = int(o.ColIdx[q]), o.Val[q]
		} else {
			i, j = q/y.Cols, q%y.Cols
			yij = y.Data[i*y.Stride+j]
		}
		res[k], rows[k], cols[k] = math.Abs(yij-dot(i, j)), int32(i), int32(j)
	}
	return res, rows, cols
}

// GrossSpreads is the distance, in robust spreads of the fit's noise
// (NoiseScale), beyond which an entry of the residual outside S is
// gross: Gaussian noise puts none there, and Student's t with 3 degrees
// of freedom, a heavy tail, 0.019% of its entries.
const GrossSpreads = 20

// GrossShare returns the share of the sampled observed entries outside
// S's support (residualSample's) whose residual |Y_ij − U_i·V_j| is
// beyond GrossSpreads robust spreads of the fit's noise: corruptions the
// sparse part did not take up, or a model that does not fit there. It
// is 0 when the spread is 0 (an exact fit).
func GrossShare(y blas64.General, o *observed.Matrix, u, v blas64.General, s CSR) float64 {
	res, rows, cols := residualSample(y, o, u, v)
	spread := spreadOf(slices.Clone(res))
	if !(spread > 0) {
		return 0
	}
	gross, off := 0, 0
	for k, r := range res {
		row := s.ColIdx[s.RowPtr[rows[k]]:s.RowPtr[rows[k]+1]]
		if _, inS := slices.BinarySearch(row, cols[k]); inS {
			continue
		}
		off++
		if r > GrossSpreads*spread {
			gross++
		}
	}
	if off == 0 {
		return 0
	}
	return float64(gross) / float64(off)
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
