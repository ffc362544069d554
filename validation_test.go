package rpca_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
)

// TestValidationStop checks the early-stopping rule of Stop.Validation
// exactly: a validation error that falls for the first 7 calls and then
// stays put must stop the run after Patience more iterations, whatever
// the method, and every record must carry the value of its call.
func TestValidationStop(t *testing.T) {
	y, _ := lowRankPlusSparse(80, 60, 3, 1)
	for _, m := range allMethods() {
		for _, patience := range []int{0, 3} {
			calls := 0
			val := func(u, v *mat.Dense) float64 {
				calls++
				return math.Max(10-float64(calls), 3) // 9, 8, …, 3 (7th call), then 3
			}
			s := rpca.Settings{Rank: 3, Alpha: 0.05, Stop: rpca.Stop{Validation: val, Patience: patience,
				FactorTol: -1, ResidualTol: -1, MaxIter: 1000}}
			res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, s, m)
			if err != nil {
				t.Fatalf("%s: %v", m.Name(), err)
			}
			want := patience
			if want == 0 {
				want = rpca.DefaultPatience
			}
			if res.Stop != rpca.StopValidation || calls != 7+want {
				t.Errorf("%s, patience %d: stop %s after %d validation calls, want %s after %d", m.Name(), patience, res.Stop, calls, rpca.StopValidation, 7+want)
			}
			for k, rec := range res.History {
				if w := math.Max(10-float64(k+1), 3); rec.Validation != w {
					t.Errorf("%s: record %d has validation %v, want %v", m.Name(), k, rec.Validation, w)
					break
				}
			}
			if !res.Stop.Converged() {
				t.Errorf("%s: %s does not count as converged", m.Name(), res.Stop)
			}
		}
	}
}

// TestValidationUnits: on data scaled by 1e300, which Solve solves
// divided by a power of two, the validation function still sees M in the
// units of the data: its relative error against the truth matches the
// unscaled run's.
func TestValidationUnits(t *testing.T) {
	y, truth := lowRankPlusSparse(80, 60, 3, 1)
	for _, c := range []float64{1, 1e300, 1e-300} {
		var yc, tc mat.Dense
		yc.Scale(c, y)
		tc.Scale(c, truth)
		last := math.NaN()
		val := func(u, v *mat.Dense) float64 {
			var m mat.Dense
			m.Mul(u, v.T())
			m.Sub(&m, &tc)
			last = mat.Norm(&m, 2) / mat.Norm(&tc, 2)
			return last
		}
		res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: &yc}, rpca.Settings{Rank: 3, Alpha: 0.05,
			Stop: rpca.Stop{Validation: val}}, &gd.Method{})
		if err != nil {
			t.Fatal(err)
		}
		if !(last < 1e-6) {
			t.Errorf("c=%g: last validation error %v (stop %s), want the fit's error, below 1e-6", c, last, res.Stop)
		}
	}
	_, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 3, Stop: rpca.Stop{Patience: -1}}, &gd.Method{})
	if err == nil {
		t.Error("a negative Patience was accepted")
	}
}

// TestBadDataIsNotBadSettings: a problem refused for its data (a NaN
// entry, a rank the data cannot hold) is ErrBadInput but not
// ErrBadSettings, which a command line reports as a usage error.
func TestBadDataIsNotBadSettings(t *testing.T) {
	y := mat.NewDense(4, 5, nil)
	y.Set(1, 2, math.NaN())
	_, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &gd.Method{})
	if !errors.Is(err, rpca.ErrBadInput) || errors.Is(err, rpca.ErrBadSettings) {
		t.Errorf("NaN entry: %v, want ErrBadInput only", err)
	}
	y.Set(1, 2, 1)
	_, err = rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &gd.Method{Balance: -1})
	if !errors.Is(err, rpca.ErrBadSettings) {
		t.Errorf("a negative Balance: %v, want ErrBadSettings", err)
	}
	// Y = 0 has one answer, but the settings are still checked.
	_, err = rpca.Solve(context.Background(), &rpca.Problem{Dense: mat.NewDense(4, 5, nil)}, rpca.Settings{Rank: 1}, &gd.Method{Balance: -1})
	if !errors.Is(err, rpca.ErrBadSettings) {
		t.Errorf("a negative Balance on Y = 0: %v, want ErrBadSettings", err)
	}
}
