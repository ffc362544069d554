package formats

import (
	"cmp"
	"fmt"
	"slices"
)

// FindDuplicate returns the positions a < b in file order of two entries
// of t at the same (row, column), choosing the pair whose second entry
// comes first in the file; ok is false when all positions are distinct.
// It sorts a permutation of the entries, O(n log n) time and 4n bytes.
func (t *Triplets) FindDuplicate() (a, b int, ok bool) {
	n := len(t.Val)
	if n < 2 {
		return 0, 0, false
	}
	perm := make([]int32, n)
	for k := range perm {
		perm[k] = int32(k)
	}
	slices.SortFunc(perm, func(x, y int32) int {
		if c := cmp.Compare(t.Row[x], t.Row[y]); c != 0 {
			return c
		}
		if c := cmp.Compare(t.Col[x], t.Col[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	found := false
	start := 0 // start of the current run of equal positions in perm
	for q := 1; q < n; q++ {
		x, y := perm[q-1], perm[q]
		if t.Row[x] != t.Row[y] || t.Col[x] != t.Col[y] {
			start = q
			continue
		}
		// Within a run the entries are in file order, so the run's second
		// entry is its earliest repetition.
		if q == start+1 && (!found || int(y) < b) {
			a, b, found = int(x), int(y), true
		}
	}
	return a, b, found
}

// lineOf returns the 1-based line of entry k, 0 when unknown.
func (t *Triplets) lineOf(k int) int {
	if k < len(t.Line) {
		return t.Line[k]
	}
	return 0
}

// CheckDuplicates returns an error naming the line of the first entry
// (in file order) whose position occurred before, and the line of that
// earlier entry, with 1-based row and column numbers; nil when every
// position occurs once. name is used in the message.
func (t *Triplets) CheckDuplicates(name string) error {
	a, b, ok := t.FindDuplicate()
	if !ok {
		return nil
	}
	return errAt(name, t.lineOf(b), 0, "duplicate entry at row %d, column %d (first given%s)",
		t.Row[b]+1, t.Col[b]+1, onLine(t.lineOf(a)))
}

// CheckDuplicates returns an error naming the line of the first rating
// (in file order) whose (row id, column id) pair occurred before, and the
// line of the earlier rating; nil when every pair occurs once.
func (r *Ratings) CheckDuplicates(name string) error {
	a, b, ok := r.FindDuplicate()
	if !ok {
		return nil
	}
	return errAt(name, r.lineOf(b), 0, "duplicate rating for row %s, column %s (first given%s)",
		quoteField(r.RowIDs[r.Row[b]]), quoteField(r.ColIDs[r.Col[b]]), onLine(r.lineOf(a)))
}

func onLine(line int) string {
	if line > 0 {
		return fmt.Sprintf(" on line %d", line)
	}
	return " earlier"
}
