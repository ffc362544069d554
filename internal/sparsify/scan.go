package sparsify

import "math"

// The two streaming loops of Dense work on the bits of the magnitudes,
// u = bits(x) with the sign cleared: for non-negative floats the bits are
// ordered like the values, +Inf is 0x7ff0000000000000 and a NaN compares
// above it. All bounds are bits of non-negative floats, so u and the
// bounds lie in [0, 2⁶³) and signed and unsigned comparisons agree.

// colScan does the column bookkeeping for one row x (the columns are
// j = 0, …, len(x)-1): above[j]++ if u_j > hi[j], and j is appended to cc
// if lo[j] ≤ u_j ≤ hi[j]. It returns the new length of cc, which must
// have len(x) elements (each index is stored at the list's end before it
// is kept or dropped).
func colScan(x []float64, lo, hi []uint64, above []int64, cc []int32) int {
	lo, hi, above = lo[:len(x)], hi[:len(x)], above[:len(x)]
	nc := 0
	for q, v := range x {
		u := math.Float64bits(v) &^ signBit
		l, h := lo[q], hi[q]
		above[q] += int64(b2i(u > h))
		cc[nc] = int32(q)
		nc += b2i(u >= l) & b2i(u <= h)
	}
	return nc
}

// rowScan does the row bookkeeping for row x: it stores in ge the
// positions j with u_j ≥ lo and returns their number ng and the number na
// of positions with u_j > hi. ge must have len(x) elements (each index is
// stored at the list's end before it is kept or dropped).
func rowScan(x []float64, lo, hi uint64, ge []int32) (ng, na int) {
	for q, v := range x {
		u := math.Float64bits(v) &^ signBit
		ge[ng] = int32(q)
		ng += b2i(u >= lo)
		na += b2i(u > hi)
	}
	return ng, na
}
