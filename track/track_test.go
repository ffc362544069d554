package track_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/track"
)

// TestRules: each stopping rule fires at the record that meets it, in the
// order of rpca.Stop's documentation, and the defaults fill the zero
// fields of the settings.
func TestRules(t *testing.T) {
	p := &rpca.Problem{}
	u := mat.NewDense(2, 1, []float64{1, 2})
	cases := []struct {
		name     string
		stop     rpca.Stop
		residual []float64
		change   []float64
		want     rpca.StopReason
		at       int
	}{
		{"residual", rpca.Stop{ResidualTol: 1e-3}, []float64{1, 1e-2, 1e-4}, []float64{1, 1, 1}, rpca.StopResidualTol, 2},
		{"factors", rpca.Stop{FactorTol: 1e-3}, []float64{1, 1, 1}, []float64{1e-9, 1e-2, 1e-4}, rpca.StopFactorTol, 2}, // not at iteration 0
		{"cap", rpca.Stop{MaxIter: 1}, []float64{1, 1, 1}, []float64{1, 1, 1}, rpca.StopMaxIter, 1},
		{"residual before factors", rpca.Stop{ResidualTol: 1e-3, FactorTol: 1e-3}, []float64{1, 1e-4}, []float64{1, 1e-4}, rpca.StopResidualTol, 1},
	}
	for _, c := range cases {
		tr := track.New(context.Background(), p, rpca.Settings{Stop: c.stop}, rpca.Stop{MaxIter: 100}, "")
		for i := range c.residual {
			reason, stop, err := tr.Step(i, c.residual[i], c.change[i], u, u)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if stop != (i == c.at) || (stop && reason != c.want) {
				t.Fatalf("%s, iteration %d: stop %v (%q); want a stop by %q at %d", c.name, i, stop, reason, c.want, c.at)
			}
			if stop {
				break
			}
		}
		if n := len(tr.History()); n != c.at+1 {
			t.Errorf("%s: %d records, want %d", c.name, n, c.at+1)
		}
	}
}

// TestDivergedAndCancelled: non-finite factors or an exploding residual
// are rpca.ErrDiverged with the hint; a cancelled context is its error;
// the callback sees every record.
func TestDivergedAndCancelled(t *testing.T) {
	var seen int
	s := rpca.Settings{Callback: func(rpca.Record) { seen++ }}
	nan := mat.NewDense(1, 1, []float64{math.NaN()})
	tr := track.New(nil, &rpca.Problem{}, s, rpca.Stop{MaxIter: 10}, "try a smaller step")
	if _, _, err := tr.Step(0, 0.5, 1, nan, nan); !errors.Is(err, rpca.ErrDiverged) || !strings.Contains(err.Error(), "try a smaller step") {
		t.Errorf("NaN factors: %v; want ErrDiverged with the hint", err)
	}
	if _, _, err := tr.Step(1, 1e7, 1, nil, nil); !errors.Is(err, rpca.ErrDiverged) {
		t.Errorf("residual 1e7: %v; want ErrDiverged", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr = track.New(ctx, &rpca.Problem{}, s, rpca.Stop{MaxIter: 10}, "")
	if _, stop, err := tr.Step(0, 0.5, 1, nil, nil); !stop || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: stop %v, %v; want context.Canceled", stop, err)
	}
	if seen != 3 {
		t.Errorf("the callback saw %d records, want 3", seen)
	}
}

// TestValidationAndResume: early stopping fires after Patience records
// without a better validation score, and a tracker resumed from the
// first records fires at the same record.
func TestValidationAndResume(t *testing.T) {
	scores := []float64{5, 3, 4, 4, 4, 2}
	k := 0
	s := rpca.Settings{Stop: rpca.Stop{Patience: 3, Validation: func(u, v *mat.Dense) float64 { k++; return scores[k-1] }}}
	u := mat.NewDense(1, 1, []float64{1})
	tr := track.New(context.Background(), &rpca.Problem{}, s, rpca.Stop{MaxIter: 100}, "")
	stopAt := -1
	for i := range scores {
		reason, stop, err := tr.Step(i, 1, 1, u, u)
		if err != nil {
			t.Fatal(err)
		}
		if stop {
			if reason != rpca.StopValidation {
				t.Fatalf("stopped by %q", reason)
			}
			stopAt = i
			break
		}
	}
	if stopAt != 4 { // best 3 at record 1, then three records without a better one
		t.Fatalf("stopped at %d, want 4", stopAt)
	}
	again := track.New(context.Background(), &rpca.Problem{}, s, rpca.Stop{MaxIter: 100}, "")
	if _, stop := again.Resume(tr.History()[:4]); stop {
		t.Fatal("the resumed run stopped at record 3")
	}
	k = 4
	if reason, stop, _ := again.Step(4, 1, 1, u, u); !stop || reason != rpca.StopValidation {
		t.Fatalf("resumed: stop %v (%q) at record 4; want the validation stop", stop, reason)
	}
}
