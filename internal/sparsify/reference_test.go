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
	return refRanks(a, obs).keep(kRow, kCol)
}

// refRank holds the rank of every candidate entry in its row and in its
// column under the tie rule (-1 for entries that are not candidates).
type refRank struct {
	row, col [][]int
	nonzero  [][]bool
}

// refRanks sorts every line of a (restricted to obs, if not nil).
func refRanks(a blas64.General, obs [][]bool) *refRank {
	at := func(i, j int) float64 { return math.Abs(a.Data[i*a.Stride+j]) }
	cand := func(i, j int) bool { return obs == nil || obs[i][j] }
	r := &refRank{}
	for i := 0; i < a.Rows; i++ {
		r.row = append(r.row, slices.Repeat([]int{-1}, a.Cols))
		r.col = append(r.col, slices.Repeat([]int{-1}, a.Cols))
		r.nonzero = append(r.nonzero, make([]bool, a.Cols))
		for j := 0; j < a.Cols; j++ {
			r.nonzero[i][j] = at(i, j) != 0
		}
	}
	// rankLine ranks the candidates k < n of one line by |value(k)|,
	// largest first, ties to the smaller index, and records each rank.
	rankLine := func(n int, isCand func(k int) bool, value func(k int) float64, record func(k, rank int)) {
		var idx []int
		for k := 0; k < n; k++ {
			if isCand(k) {
				idx = append(idx, k)
			}
		}
		slices.SortFunc(idx, func(x, y int) int {
			if c := cmp.Compare(value(y), value(x)); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		for rank, k := range idx {
			record(k, rank)
		}
	}
	for i := 0; i < a.Rows; i++ {
		rankLine(a.Cols, func(j int) bool { return cand(i, j) }, func(j int) float64 { return at(i, j) },
			func(j, rank int) { r.row[i][j] = rank })
	}
	for j := 0; j < a.Cols; j++ {
		rankLine(a.Rows, func(i int) bool { return cand(i, j) }, func(i int) float64 { return at(i, j) },
			func(i, rank int) { r.col[i][j] = rank })
	}
	return r
}

// keep returns the mask of T for the counts kRow, kCol.
func (r *refRank) keep(kRow, kCol int) [][]bool {
	keep := make([][]bool, len(r.row))
	for i := range keep {
		keep[i] = make([]bool, len(r.row[i]))
		for j := range keep[i] {
			keep[i][j] = r.nonzero[i][j] && r.row[i][j] >= 0 && r.row[i][j] < kRow && r.col[i][j] < kCol
		}
	}
	return keep
}

// keepFraction returns the mask of T with per-line counts: a line with n
// candidates keeps its ⌊frac·n⌋ largest (Count).
func (r *refRank) keepFraction(frac float64) [][]bool {
	rowN := make([]int, len(r.row))
	colN := make([]int, len(r.row[0]))
	for i := range r.row {
		for j, rank := range r.row[i] {
			if rank >= 0 {
				rowN[i]++
				colN[j]++
			}
		}
	}
	keep := make([][]bool, len(r.row))
	for i := range keep {
		keep[i] = make([]bool, len(r.row[i]))
		for j := range keep[i] {
			keep[i][j] = r.nonzero[i][j] && r.row[i][j] >= 0 && r.row[i][j] < Count(frac, rowN[i]) && r.col[i][j] < Count(frac, colN[j])
		}
	}
	return keep
}
