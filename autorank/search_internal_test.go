package autorank

import (
	"testing"

	"github.com/rpca-gd/rpca"
	"gonum.org/v1/gonum/mat"
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

// TestStepDownAfterJump: an answer verified after a jump is not the
// end: an answer above the data's rank can verify too (on partial data,
// 150×120 of rank 4 with an offset, rank 5 fit exactly and was 0.011
// off), so the search goes down one rank at a time while the answer
// verifies, and keeps the smallest.
func TestStepDownAfterJump(t *testing.T) {
	verified := func(residual float64, k int) *attempt {
		u := &rpca.Result{Residual: residual, Verification: &rpca.Verification{Verified: true, Exact: true}}
		u.U = mat.NewDense(3, k, nil)
		return &attempt{asked: k, robust: k, res: u}
	}
	sr := &search{o: Options{MaxRank: 7}, c: &Choice{}, tried: map[int]bool{2: true, 5: true}, rule: RuleSearch, jumped: true}
	five := verified(1e-9, 5)
	if !sr.afterVerified(five) || sr.r != 4 || !sr.stepping || sr.kept != five {
		t.Fatalf("after the jump: more, next %d, stepping %v, kept %v", sr.r, sr.stepping, sr.kept == five)
	}
	sr.tried[4] = true
	four := verified(1e-9, 4)
	if !sr.afterVerified(four) || sr.r != 3 || sr.kept != four {
		t.Fatalf("at 4: next %d, kept 4 %v", sr.r, sr.kept == four)
	}
	sr.tried[3] = true
	three := verified(1e-9, 3)
	if sr.afterVerified(three) || sr.kept != three || sr.stepping {
		t.Fatalf("at 3 (2 was tried): the search should end with 3 kept")
	}
}

// TestContradicted: an answer verified up to noise whose residual a
// higher rank's attempt more than halves is contradicted (on partial
// data, 150×120 of rank 6 with noise, rank 3 verified with a residual of
// 0.96 of M's variation and an error of 0.81, while rank 6 fit to the
// noise); an exact answer, or a residual lowered by less, is not.
func TestContradicted(t *testing.T) {
	at := func(k int, residual float64, exact bool) *attempt {
		res := &rpca.Result{Residual: residual, U: mat.NewDense(3, k, nil), Verification: &rpca.Verification{Verified: true, Exact: exact}}
		return &attempt{asked: k, res: res}
	}
	six := at(6, 0.02, false)
	sr := &search{tries: []*attempt{at(2, 1.2, false), six}}
	if b := sr.contradicted(at(3, 0.9, false)); b != six {
		t.Errorf("rank 3 at 0.9 against rank 6 at 0.02: %v", b)
	}
	if b := sr.contradicted(at(3, 0.9, true)); b != nil {
		t.Errorf("an exact answer was contradicted")
	}
	if b := sr.contradicted(at(3, 0.035, false)); b != nil {
		t.Errorf("rank 3 at 0.035 against 0.02: contradicted")
	}
	if b := sr.contradicted(at(7, 0.9, false)); b != nil {
		t.Errorf("a lower rank contradicted rank 7")
	}
}
