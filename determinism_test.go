package rpca_test

import (
	"context"
	"slices"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/synth"
)

// TestWorkerDeterminism: every method gives bit-identical factors and
// sparse parts for 1, 2, 3, 4 and 8 workers (a 900×700 problem, and its
// subsample for Algorithm 2): parallel reductions are summed in an order
// that does not depend on the number of workers.
func TestWorkerDeterminism(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	in := instance(t, synth.Config{D1: 900, D2: 700, Rank: 5, Alpha: 0.1, Seed: 3})
	obs, err := rpca.Sampling{P: 0.3, Seed: 1}.Dense(in.Y)
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		m rpca.Method
		p *rpca.Problem
	}
	var runs []run
	for _, m := range allMethods() {
		runs = append(runs, run{m, &rpca.Problem{Dense: in.Y}})
	}
	runs = append(runs, run{&gd.Method{}, &rpca.Problem{Observed: obs}}) // Algorithm 2
	for _, r := range runs {
		m := r.m
		var ref *rpca.Result
		for _, w := range []int{1, 2, 3, 4, 8} {
			s := rpca.Settings{Rank: 5, Alpha: 0.1, Workers: w, Seed: 1, Stop: rpca.Stop{MaxIter: 30}}
			res, err := rpca.Solve(context.Background(), r.p, s, m)
			if err != nil {
				t.Fatalf("%s, %d workers: %v", m.Name(), w, err)
			}
			if ref == nil {
				ref = res
				continue
			}
			same := slices.Equal(res.U.RawMatrix().Data, ref.U.RawMatrix().Data) &&
				slices.Equal(res.V.RawMatrix().Data, ref.V.RawMatrix().Data) &&
				slices.Equal(res.S.Val, ref.S.Val) && slices.Equal(res.S.ColIdx, ref.S.ColIdx)
			if !same {
				t.Errorf("%s (partial %v): %d workers differ from 1 worker", m.Name(), r.p.Observed != nil, w)
			}
		}
	}
}
