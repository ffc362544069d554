// Package sparsify implements the paper's sparse estimator T_α
// (eq. (sparse_estimator)): keep an entry iff its magnitude is among the
// kRow largest of its row and among the kCol largest of its column.
//
// # Exact rule
//
// Entry (i, j) of A is kept iff
//
//   - a_ij ≠ 0,
//   - it ranks < kRow in row i, where a row is ranked by (|a| decreasing,
//     column index increasing), and
//   - it ranks < kCol in column j, ranked by (|a| decreasing, row index
//     increasing).
//
// The paper breaks ties "arbitrarily"; this package breaks them by index so
// that results are deterministic, and the output always lies in the set
// S_α of the paper: at most kRow non-zeros per row and kCol per column.
// kRow = 0 or kCol = 0 gives an empty result. A NaN anywhere in the input
// is an error naming its position; ±Inf is accepted and ranks above every
// finite magnitude.
//
// Both implementations ([Dense] for Algorithm 1, [Observed] for the
// observed entries Π_Φ(A) of Algorithm 2) run in time linear in the number
// of entries: every line's threshold is found by selection, never by
// sorting.
package sparsify

import (
	"math"
	"sync"

	"github.com/rpca-gd/rpca/internal/selection"
)

// Sparse is a CSR matrix; the entries of row i are ColIdx[RowPtr[i]:RowPtr[i+1]]
// (increasing) with values Val[RowPtr[i]:RowPtr[i+1]].
type Sparse struct {
	Rows, Cols int
	RowPtr     []int
	ColIdx     []int32
	Val        []float64
}

// NNZ returns the number of stored entries.
func (s *Sparse) NNZ() int { return len(s.Val) }

// countSlack is the relative amount by which frac·n may fall short of an
// integer and still count as that integer in [Count].
const countSlack = 1e-9

// Count returns ⌊frac·n⌋ clamped to [0, n], the number of entries T keeps
// in a line of length n for the fraction frac (α, γα, 2pα, …).
//
// Products such as 0.29·100 evaluate to 28.999999999999996 in floating
// point; to make the count match the decimal intent, a product within a
// relative 1e-9 below an integer counts as that integer. NaN or
// non-positive frac, or n ≤ 0, give 0.
func Count(frac float64, n int) int {
	if n <= 0 || !(frac > 0) {
		return 0
	}
	x := frac * float64(n)
	if x >= float64(n) {
		return n
	}
	k := math.Floor(x + countSlack*max(1, x))
	return min(int(k), n)
}

// b2i converts a comparison result to 0 or 1 (the compiler emits SETcc,
// which keeps the hot loops free of unpredictable branches).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tiny is the smallest positive float64: a lower bracket of tiny admits
// every non-zero magnitude and no zero.
const tiny = math.SmallestNonzeroFloat64

// passes reports whether a non-zero magnitude v at index idx of a line
// survives that line's cutoff (t, last): v > t, or v = t and idx ≤ last.
// t = 0 admits every non-zero entry; t = +Inf with last = -1 admits none.
func passes(v, t float64, idx, last int) bool {
	return v > t || (v == t && idx <= last)
}

// exactCutoff returns the cutoff (t, last) of a line whose magnitudes, in
// index order, are v (no NaN; zeros allowed): the non-zero entries that
// rank < k by (magnitude decreasing, index increasing) are exactly those
// with passes(v[idx], t, idx, last). scratch must have len ≥ len(v).
//
// k ≥ len(v), or fewer than k non-zeros, gives (0, -1): every non-zero
// passes. k ≤ 0 gives (+Inf, -1): nothing passes.
func exactCutoff(v []float64, k int, scratch []float64) (t float64, last int) {
	n := len(v)
	if k <= 0 {
		return math.Inf(1), -1
	}
	if k >= n {
		return 0, -1
	}
	s := scratch[:n]
	copy(s, v)
	t = selection.Select(s, k)
	return t, tieLast(v, t, k-countAbove(s[:k-1], t))
}

// countAbove returns the number of elements of s greater than t.
func countAbove(s []float64, t float64) int {
	g := 0
	for _, x := range s {
		g += b2i(x > t)
	}
	return g
}

// tieLast returns the index of the e-th element of v equal to t (e ≥ 1),
// the last tie admitted by a cutoff at t. If t is 0 every non-zero passes
// and it returns -1. (With a NaN in the input the e-th tie may not exist;
// the caller reports the NaN, so any value is acceptable then.)
func tieLast(v []float64, t float64, e int) int {
	if t == 0 {
		return -1
	}
	for idx, x := range v {
		if x == t {
			e--
			if e == 0 {
				return idx
			}
		}
	}
	return len(v) - 1
}

// bracketRanks returns the sample ranks (1-based, in decreasing order) of
// the upper and lower bracket around the k-th largest of n values, for a
// uniform sample of s of them: the k-th largest lies between the hiRank-th
// and loRank-th largest sample values except with probability about that
// of a normal deviate exceeding z. hiRank < 1 means "no upper bracket"
// (+Inf) and loRank > s "no lower bracket" (every non-zero).
func bracketRanks(k, n, s int, z float64) (hiRank, loRank int) {
	p := float64(k) / float64(n)
	r := p * float64(s)
	sd := math.Sqrt(float64(s) * p * (1 - p))
	hiRank = int(math.Floor(r - z*sd))
	loRank = int(math.Ceil(r+z*sd)) + 1
	return hiRank, loRank
}

// bracket computes the bracket values for the sample x (magnitudes, no
// NaN) from the ranks of bracketRanks; x is reordered. The result
// satisfies tiny ≤ lo ≤ hi.
func bracket(x []float64, hiRank, loRank int) (lo, hi float64) {
	s := len(x)
	hi, lo = math.Inf(1), tiny
	switch {
	case loRank <= s:
		lo = selection.Select(x, loRank)
		if hiRank >= 1 {
			hi = selection.Select(x[:loRank], hiRank)
		}
	case hiRank >= 1:
		hi = selection.Select(x, hiRank)
	}
	lo = max(lo, tiny)
	hi = max(hi, lo)
	return lo, hi
}

// runOn calls fn(x, 0), …, fn(x, w-1) concurrently, fn(x, 0) on the
// calling goroutine, and waits for them. fn should be a method expression
// or other static function so that the only allocation is one small
// closure per extra goroutine.
func runOn[T any](wg *sync.WaitGroup, x T, w int, fn func(T, int)) {
	for i := 1; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(x, i)
		}()
	}
	fn(x, 0)
	wg.Wait()
}

// split returns the bounds of part p of [0, n) cut into w near-equal parts.
func split(n, w, p int) (lo, hi int) {
	return n * p / w, n * (p + 1) / w
}

// Parameters of lineCutoff's sampled path.
const (
	lineSample    = 256  // sample size
	lineSampleMin = 4096 // shorter lines use exact selection
	lineZ         = 3.0  // bracket half-width in standard deviations
)

// lineCutoff returns the same cutoff as exactCutoff. Lines of at least
// lineSampleMin entries are bracketed from a sample of len(samp) entries
// at fixed pseudo-random positions; one pass then counts the entries
// above the bracket and collects those inside it, and the threshold is
// selected among the candidates (exact selection if the bracket misses).
// scratch must have len ≥ len(v).
func lineCutoff(v []float64, k int, scratch, samp []float64) (t float64, last int) {
	n := len(v)
	if k <= 0 || k >= n || n < lineSampleMin || len(samp) == 0 {
		return exactCutoff(v, k, scratch)
	}
	x := uint64(0x853c49e6748fea9b)
	for s := range samp {
		x = x*6364136223846793005 + 1442695040888963407
		samp[s] = v[(x>>33)%uint64(n)]
	}
	hiR, loR := bracketRanks(k, n, len(samp), lineZ)
	lo, hi := bracket(samp, hiR, loR)
	na, nc := 0, 0
	cand := scratch[:n]
	for _, y := range v {
		cand[nc] = y
		nc += b2i(y >= lo) & b2i(y <= hi)
		na += b2i(y > hi)
	}
	switch {
	case na < k && na+nc >= k:
		kk := k - na
		t = selection.Select(cand[:nc], kk)
		e := kk - countAbove(cand[:kk-1], t)
		if e == countEqual(cand[:nc], t) {
			return t, n - 1 // every tie is admitted
		}
		return t, tieLast(v, t, e)
	case na+nc < k && lo == tiny:
		return 0, -1
	}
	return exactCutoff(v, k, scratch)
}

// countEqual returns the number of elements of s equal to t.
func countEqual(s []float64, t float64) int {
	c := 0
	for _, x := range s {
		c += b2i(x == t)
	}
	return c
}
