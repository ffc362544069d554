package rpca_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"github.com/rpca-gd/rpca"
)

// TestZeroValuesAndNil: the zero values and nil receivers of the public
// types behave as empty, and a method run directly on a nil or empty
// problem returns an error, never a panic.
func TestZeroValuesAndNil(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	var res *rpca.Result
	if m := res.LowRank(); !m.IsEmpty() {
		t.Error("nil Result: LowRank not empty")
	}
	if m := (&rpca.Result{}).LowRank(); !m.IsEmpty() {
		t.Error("zero Result: LowRank not empty")
	}
	var sp *rpca.Sparse
	if sp.At(0, 0) != 0 || sp.NNZ() != 0 || !sp.ToDense().IsEmpty() {
		t.Error("nil Sparse is not empty")
	}
	var zs rpca.Sparse
	if zs.At(3, 4) != 0 || zs.NNZ() != 0 || !zs.ToDense().IsEmpty() {
		t.Error("zero Sparse is not empty")
	}
	zs.Do(func(int, int, float64) { t.Error("zero Sparse has an entry") })
	var o rpca.Observed
	if o.Len() != 0 || o.NNZ() != 0 || o.Rate() != 0 {
		t.Error("zero Observed is not empty")
	}
	if c, v := o.Row(0); c != nil || v != nil {
		t.Error("zero Observed has a row")
	}
	if a, b, c := o.CSR(); a != nil || b != nil || c != nil {
		t.Error("zero Observed has CSR arrays")
	}
	var no *rpca.Observed
	if no.Len() != 0 {
		t.Error("nil Observed is not empty")
	}
	s := rpca.Settings{Rank: 1, Alpha: 0.1}
	for _, p := range []*rpca.Problem{nil, {}, {Observed: &rpca.Observed{}}} {
		if _, err := (&gd.Method{}).Solve(context.Background(), p, s); !errors.Is(err, rpca.ErrBadInput) {
			t.Errorf("GD.Solve(%v): %v, want ErrBadInput", p, err)
		}
		if _, err := rpca.Solve(context.Background(), p, s, nil); !errors.Is(err, rpca.ErrBadInput) {
			t.Errorf("Solve(%v): %v, want ErrBadInput", p, err)
		}
	}
	// Nothing observed: an error, not an answer.
	obs, err := rpca.NewObserved(10, 10, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rpca.Solve(context.Background(), &rpca.Problem{Observed: obs}, s, nil); !errors.Is(err, rpca.ErrNoEntries) {
		t.Errorf("empty Φ: %v, want ErrNoEntries", err)
	}
}
