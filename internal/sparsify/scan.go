package sparsify

import "math"

// The two streaming loops of Dense work on the bits of the magnitudes,
// u = bits(x) with the sign cleared: for non-negative floats the bits are
// ordered like the values, +Inf is 0x7ff0000000000000 and a NaN compares
// above it. All bounds are bits of non-negative floats, so u and the
// bounds lie in [0, 2⁶³) and signed and unsigned comparisons agree.

// scanPad is the number of int32 slots past the last possible entry that
// the output lists of colScan and rowScan must have: the vector kernels
// store a full vector of indices at the current end of a list.
const scanPad = 8

// colScan does the column bookkeeping for one row x (the columns are
// j = 0, …, len(x)-1): above[j]++ if u_j > hi[j], and j is appended to cc
// if lo[j] ≤ u_j ≤ hi[j]. It returns the new length of cc, which must
// have len(x)+scanPad elements.
func colScan(x []float64, lo, hi []uint64, above []int64, cc []int32) int {
	n4 := 0
	nc := 0
	if useAVX2 {
		n4 = len(x) &^ 3
		if n4 > 0 {
			nc = colScanAVX2(&x[0], n4, &lo[0], &hi[0], &above[0], &cc[0])
		}
	}
	return colScanGo(x, n4, lo, hi, above, cc, nc)
}

// colScanGo is colScan for the columns j ≥ j0, appending to cc[:nc].
func colScanGo(x []float64, j0 int, lo, hi []uint64, above []int64, cc []int32, nc int) int {
	x = x[j0:]
	lo, hi, above = lo[j0:len(x)+j0], hi[j0:len(x)+j0], above[j0:len(x)+j0]
	for q, v := range x {
		u := math.Float64bits(v) &^ signBit
		l, h := lo[q], hi[q]
		above[q] += int64(b2i(u > h))
		cc[nc] = int32(j0 + q)
		nc += b2i(u >= l) & b2i(u <= h)
	}
	return nc
}

// rowScan does the row bookkeeping for row x: it stores in ge the
// positions j with u_j ≥ lo and returns their number ng and the number na
// of positions with u_j > hi. ge must have len(x)+scanPad elements.
func rowScan(x []float64, lo, hi uint64, ge []int32) (ng, na int) {
	n4 := 0
	if useAVX2 {
		n4 = len(x) &^ 3
		if n4 > 0 {
			ng, na = rowScanAVX2(&x[0], n4, lo, hi, &ge[0])
		}
	}
	return rowScanGo(x, n4, lo, hi, ge, ng, na)
}

// rowScanGo is rowScan for the positions j ≥ j0, appending to ge[:ng].
func rowScanGo(x []float64, j0 int, lo, hi uint64, ge []int32, ng, na int) (int, int) {
	for q, v := range x[j0:] {
		u := math.Float64bits(v) &^ signBit
		ge[ng] = int32(j0 + q)
		ng += b2i(u >= lo)
		na += b2i(u > hi)
	}
	return ng, na
}
