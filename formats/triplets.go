package formats

import (
	"cmp"
	"fmt"
	"slices"
)

// Triplets is a sparse d1×d2 matrix given by its entries: entry k is at
// row Row[k], column Col[k] (0-based) with value Val[k]. Readers do not
// check for duplicate positions; [Triplets.CheckDuplicates] reports them
// with their line numbers.
type Triplets struct {
	D1, D2 int
	Row    []int
	Col    []int
	Val    []float64
	// Line[k] is the 1-based line of the file that entry k came from, as
	// filled in by the readers (nil for triplets built otherwise). A
	// mirrored entry of a symmetric file has the line of its original.
	Line []int
}

// Len returns the number of entries.
func (t *Triplets) Len() int { return len(t.Val) }

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

// LineOf returns the 1-based line of entry k, 0 when unknown.
func (t *Triplets) LineOf(k int) int {
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
	return &Error{File: name, Line: t.LineOf(b), Msg: fmt.Sprintf("duplicate entry at row %d, column %d (first given%s)", t.Row[b]+1, t.Col[b]+1, onLine(t.LineOf(a)))}
}

func onLine(line int) string {
	if line > 0 {
		return fmt.Sprintf(" on line %d", line)
	}
	return " earlier"
}
