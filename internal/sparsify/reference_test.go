package sparsify

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
)

// refKeep is the slow, obviously correct T: obs[i][j] marks the candidate
// entries (nil means all); it sorts every line by the tie rule of the
// package comment and keeps the non-zeros ranked < k in both their row and
// their column.
func refKeep(a blas64.General, obs [][]bool, kRow, kCol int) [][]bool {
	at := func(i, j int) float64 { return math.Abs(a.Data[i*a.Stride+j]) }
	cand := func(i, j int) bool { return obs == nil || obs[i][j] }
	inRow := make([][]bool, a.Rows)
	inCol := make([][]bool, a.Rows)
	for i := range inRow {
		inRow[i] = make([]bool, a.Cols)
		inCol[i] = make([]bool, a.Cols)
	}
	for i := 0; i < a.Rows; i++ {
		var idx []int
		for j := 0; j < a.Cols; j++ {
			if cand(i, j) {
				idx = append(idx, j)
			}
		}
		slices.SortFunc(idx, func(x, y int) int {
			if c := cmp.Compare(at(i, y), at(i, x)); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		for r, j := range idx {
			inRow[i][j] = r < kRow
		}
	}
	for j := 0; j < a.Cols; j++ {
		var idx []int
		for i := 0; i < a.Rows; i++ {
			if cand(i, j) {
				idx = append(idx, i)
			}
		}
		slices.SortFunc(idx, func(x, y int) int {
			if c := cmp.Compare(at(y, j), at(x, j)); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		for r, i := range idx {
			inCol[i][j] = r < kCol
		}
	}
	keep := make([][]bool, a.Rows)
	for i := range keep {
		keep[i] = make([]bool, a.Cols)
		for j := range keep[i] {
			keep[i][j] = cand(i, j) && at(i, j) != 0 && inRow[i][j] && inCol[i][j]
		}
	}
	return keep
}
