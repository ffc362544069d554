package verify

import "slices"

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
