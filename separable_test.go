package rpca_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
)

// TestMaxSeparableRank: the rank MaxSeparableRank gives is the last one
// CheckProblem accepts (the next is refused), for shapes from 2×40 to
// 300×300 and α from 0.05 to 0.5; α = 0 refuses nothing.
func TestMaxSeparableRank(t *testing.T) {
	for _, sz := range [][2]int{{2, 40}, {60, 40}, {40, 60}, {100, 100}, {5, 300}, {300, 300}} {
		d1, d2 := sz[0], sz[1]
		y := mat.NewDense(d1, d2, nil)
		for i := range d1 {
			for j := range d2 {
				y.Set(i, j, float64((i*7+j*13)%11))
			}
		}
		p := &rpca.Problem{Dense: y}
		for _, alpha := range []float64{0.05, 0.1, 0.3, 0.5} {
			r := rpca.MaxSeparableRank(d1, d2, alpha)
			// The definition, independently of CheckProblem (which now
			// calls MaxSeparableRank): r(d1+d2−r) ≤ (1−α)d1d2/2, and
			// not for r + 1.
			clean := (1 - alpha) * float64(d1) * float64(d2)
			fits := func(k int) bool { return 2*float64(k)*float64(d1+d2-k) <= clean }
			if r > 0 && !fits(r) || r < min(d1, d2) && fits(r+1) {
				t.Errorf("%d×%d, α %g: %d is not the largest rank with r(d1+d2−r) ≤ %g/2", d1, d2, alpha, r, clean)
			}
			if r > 0 {
				if err := rpca.CheckProblem(p, rpca.Settings{Rank: r, Alpha: alpha}); err != nil {
					t.Errorf("%d×%d, α %g: rank %d refused: %v", d1, d2, alpha, r, err)
				}
			}
			if r < min(d1, d2)-1 {
				if err := rpca.CheckProblem(p, rpca.Settings{Rank: r + 1, Alpha: alpha}); err == nil {
					t.Errorf("%d×%d, α %g: rank %d (one above %d) accepted", d1, d2, alpha, r+1, r)
				}
			}
		}
		if r := rpca.MaxSeparableRank(d1, d2, 0); r != min(d1, d2) {
			t.Errorf("%d×%d, α 0: %d, want min(d1, d2)", d1, d2, r)
		}
	}
	if r := rpca.MaxSeparableRank(60, 40, 0.1); r != 12 {
		t.Errorf("60×40 at α 0.1: %d, want 12 (12·88 = 1056 ≤ 1080 < 13·87 = 1131)", r)
	}
}
