package verify

import (
	"slices"
	"sort"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/observed"
)

// WithEntries returns s (rows rows) with entries added, or replaced, at
// the observed positions pos (sorted, row-major): at(k) gives the row
// and column of position k, val(k, i, j) the value. Solve reports the
// gross entries it set aside this way.
func WithEntries(s CSR, rows int, pos []int, at func(k int) (i, j int), val func(k, i, j int) float64) CSR {
	type entry struct {
		j int32
		k int
	}
	add := make([][]entry, rows)
	for _, k := range pos {
		i, j := at(k)
		add[i] = append(add[i], entry{int32(j), k})
	}
	out := CSR{RowPtr: make([]int, rows+1)}
	for i := range rows {
		lo, hi := s.RowPtr[i], s.RowPtr[i+1]
		a := add[i]
		q := 0
		for k := lo; k < hi || q < len(a); {
			switch {
			case q < len(a) && (k >= hi || a[q].j <= s.ColIdx[k]):
				j := a[q].j
				out.ColIdx = append(out.ColIdx, j)
				out.Val = append(out.Val, val(a[q].k, i, int(j)))
				if k < hi && s.ColIdx[k] == j {
					k++
				}
				q++
			default:
				out.ColIdx = append(out.ColIdx, s.ColIdx[k])
				out.Val = append(out.Val, s.Val[k])
				k++
			}
		}
		out.RowPtr[i+1] = len(out.Val)
	}
	return out
}

// SetEntries sets the values of s at the observed positions pos that s
// holds to val(k, i, j); at(k) gives the row and column of position k.
func SetEntries(s CSR, pos []int, at func(k int) (i, j int), val func(k, i, j int) float64) {
	for _, k := range pos {
		i, j := at(k)
		row := s.ColIdx[s.RowPtr[i]:s.RowPtr[i+1]]
		if q, ok := slices.BinarySearch(row, int32(j)); ok {
			s.Val[s.RowPtr[i]+q] = val(k, i, j)
		}
	}
}

// Residuals gives the residual Y − U·Vᵀ at an observed position k of Y
// (row-major over Φ: dense storage y, or the observed entries o), with
// its row and column: the value of a gross entry Solve set aside.
type Residuals struct {
	Y    blas64.General
	O    *observed.Matrix
	U, V *mat.Dense
}

// At returns the row and column of position k.
func (r Residuals) At(k int) (i, j int) {
	if r.O == nil {
		return k / r.Y.Cols, k % r.Y.Cols
	}
	i = sort.Search(r.O.Rows, func(i int) bool { return r.O.RowPtr[i+1] > k })
	return i, int(r.O.ColIdx[k])
}

// Value returns (Y − U·Vᵀ)_ij at position k, (i, j) = At(k).
func (r Residuals) Value(k, i, j int) float64 {
	y := 0.0
	if r.O == nil {
		y = r.Y.Data[i*r.Y.Stride+j]
	} else {
		y = r.O.Val[k]
	}
	return y - mat.Dot(r.U.RowView(i), r.V.RowView(j))
}
