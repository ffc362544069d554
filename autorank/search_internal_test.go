package autorank

import (
	"testing"

	"github.com/rpca-gd/rpca"
)

// TestGrow follows the partial-data search step by step: a jump to the
// rank the robust spectrum shows, once; after that jump fails, the
// smallest rank not tried above the lowest one tried, with no second
// jump; and the end of the search at the cap.
func TestGrow(t *testing.T) {
	failed := func(asked, robust int) *attempt {
		return &attempt{asked: asked, robust: robust, res: &rpca.Result{Verification: &rpca.Verification{Failed: rpca.CheckFit}}}
	}
	sr := &search{o: Options{MaxRank: 7}, c: &Choice{}, tried: map[int]bool{}, rule: RuleSpectrum}
	try := func(r int) {
		sr.tried[r] = true
		sr.c.Tried = append(sr.c.Tried, r)
	}
	steps := []struct {
		a      *attempt
		more   bool
		next   int
		jumped bool
	}{
		{failed(2, 5), true, 5, true},  // the robust spectrum shows 5: jump
		{failed(5, 7), true, 3, false}, // the jump failed: the smallest rank above 2 not tried
		{failed(3, 7), true, 4, false}, // no second jump
		{failed(4, 4), true, 6, false}, // 5 was tried
		{failed(6, 6), true, 7, false},
		{failed(7, 7), false, 0, false}, // 8 is above the cap
	}
	try(2)
	for i, st := range steps {
		more := sr.grow(st.a)
		if more != st.more || (more && (sr.r != st.next || sr.jumped != st.jumped)) {
			t.Fatalf("step %d: more %v, next %d, jumped %v; want %v, %d, %v", i, more, sr.r, sr.jumped, st.more, st.next, st.jumped)
		}
		if more {
			try(sr.r)
		}
	}
	if sr.rule != RuleSearch {
		t.Errorf("rule %q, want %q", sr.rule, RuleSearch)
	}
}
