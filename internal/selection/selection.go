// Package selection finds order statistics of float64 slices in linear
// time, without sorting.
//
// All functions order values by the usual < on float64 and assume that the
// input holds no NaN (a NaN makes the result unspecified, though the
// functions still terminate).
package selection

import "math/bits"

// insertionCutoff is the range length below which Select sorts directly.
const insertionCutoff = 16

// Select returns the k-th largest element of x (1 ≤ k ≤ len(x)) and
// partially orders x in place so that x[:k-1] ≥ x[k-1] ≥ x[k:].
//
// It is a quickselect with a median-of-three or ninther pivot and a
// branch-free partition (on fresh data a comparison branch mispredicts
// half of the time, which costs more than the comparisons themselves).
// Each round first moves the elements greater than the pivot to the front
// and, only if the target lies behind them, the elements equal to it next,
// so runs of equal values are settled at once. If the range fails to
// shrink geometrically for several rounds it switches to median-of-medians
// pivots, so the worst case is O(len(x)) as well. It panics if k is out of
// range.
func Select(x []float64, k int) float64 {
	if k < 1 || k > len(x) {
		panic("selection: k out of range")
	}
	selectRange(x, 0, len(x)-1, k-1, pivotBudget(len(x)))
	return x[k-1]
}

// SelectSmallest returns the k-th smallest element of x (1 ≤ k ≤ len(x))
// and partially orders x in place so that x[:k-1] ≤ x[k-1] ≤ x[k:].
func SelectSmallest(x []float64, k int) float64 {
	if k < 1 || k > len(x) {
		panic("selection: k out of range")
	}
	// The k-th smallest is the (n-k+1)-th largest; reverse the
	// resulting descending partition to present it in ascending order.
	n := len(x)
	selectRange(x, 0, n-1, n-k, pivotBudget(n))
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		x[i], x[j] = x[j], x[i]
	}
	return x[k-1]
}

// pivotBudget is the number of rounds that shrink a range of length n by
// less than a quarter that selectRange tolerates before it switches to
// guaranteed-good pivots.
func pivotBudget(n int) int { return 2 * bits.Len(uint(n)) }

// selectRange places in x[t] the element that would be there if x[lo..hi]
// (inclusive) were sorted in decreasing order, with larger-or-equal values
// before t and smaller-or-equal values after t inside [lo, hi]. bad is the
// remaining budget of poor pivot rounds (see pivotBudget).
func selectRange(x []float64, lo, hi, t, bad int) {
	for hi-lo >= insertionCutoff {
		n := hi - lo + 1
		var p float64
		if bad > 0 {
			p = pivotSample(x, lo, hi)
		} else {
			p = medianOfMedians(x, lo, hi)
		}
		// x[lo..m) > p after the first pass; x[m..e) = p after the second.
		m := partitionGreater(x[lo:hi+1], p) + lo
		if t < m {
			hi = m - 1
		} else {
			e := partitionAtLeast(x[m:hi+1], p) + m
			if t < e {
				return
			}
			if e == m {
				// Only a NaN pivot matches nothing; give up on the order.
				break
			}
			lo = e
		}
		if hi-lo+1 > 3*n/4 {
			bad--
		}
	}
	insertionSortDesc(x[lo : hi+1])
}

// partitionGreater moves the elements of x greater than p to the front,
// without branching on the comparisons, and returns their number.
func partitionGreater(x []float64, p float64) int {
	m := 0
	for i, v := range x {
		// Invariant: x[:m] > p ≥ x[m:i]. Swapping unconditionally keeps it
		// whether or not v > p.
		x[i] = x[m]
		x[m] = v
		m += b2i(v > p)
	}
	return m
}

// partitionAtLeast is partitionGreater for the elements ≥ p.
func partitionAtLeast(x []float64, p float64) int {
	m := 0
	for i, v := range x {
		x[i] = x[m]
		x[m] = v
		m += b2i(v >= p)
	}
	return m
}

// b2i converts a comparison to 0 or 1; the compiler emits SETcc for it
// (whereas `if v > p { m++ }` becomes a branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pivotSample returns the median of three (or, for long ranges, the
// median of three medians of three) values of x[lo..hi]; the result is an
// element of the range, which the partition loop relies on as a sentinel.
func pivotSample(x []float64, lo, hi int) float64 {
	n := hi - lo + 1
	mid := lo + n/2
	if n < 128 {
		return median3(x[lo], x[mid], x[hi])
	}
	s := n / 8
	return median3(
		median3(x[lo], x[lo+s], x[lo+2*s]),
		median3(x[mid-s], x[mid], x[mid+s]),
		median3(x[hi-2*s], x[hi-s], x[hi]),
	)
}

// median3 returns the median of a, b, c.
func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	// a ≤ b
	if c <= a {
		return a
	}
	if c >= b {
		return b
	}
	return c
}

// medianOfMedians returns the median of the medians of groups of five of
// x[lo..hi]; at least 3/10 of the range lies on either side of it. It
// moves the group medians to the front of the range.
func medianOfMedians(x []float64, lo, hi int) float64 {
	m := lo
	for g := lo; g <= hi; g += 5 {
		e := min(g+4, hi)
		insertionSortDesc(x[g : e+1])
		c := g + (e-g)/2
		x[m], x[c] = x[c], x[m]
		m++
	}
	cnt := m - lo
	selectRange(x, lo, m-1, lo+cnt/2, pivotBudget(cnt))
	return x[lo+cnt/2]
}

// insertionSortDesc sorts x in decreasing order.
func insertionSortDesc(x []float64) {
	for i := 1; i < len(x); i++ {
		v := x[i]
		j := i
		for j > 0 && x[j-1] < v {
			x[j] = x[j-1]
			j--
		}
		x[j] = v
	}
}
