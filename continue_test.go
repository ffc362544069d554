package rpca_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
)

// offByOne is a method that returns the truth A·Bᵀ with S* on every
// call, except that without a warm start (and, with stubborn, always)
// one column of its V is off by 1e-4 of its size; it stops by stop.
type offByOne struct {
	residual float64 // the Result.Residual it reports
	a, b     *mat.Dense
	s        *rpca.Sparse
	start    *rpca.Start
	stubborn bool
	stop     rpca.StopReason
	calls    *int
}

func (m *offByOne) Name() string { return "off-by-one" }
func (m *offByOne) Capabilities() rpca.Capabilities {
	return rpca.Capabilities{UsesAlpha: true, FixedRank: true}
}
func (m *offByOne) WarmStart() (u, v *mat.Dense) { return m.start.Factors() }
func (m *offByOne) WithWarmStart(u, v *mat.Dense) rpca.Method {
	c := *m
	c.start = &rpca.Start{U: u, V: v}
	return &c
}

func (m *offByOne) Solve(_ context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	*m.calls++
	v := mat.DenseCopyOf(m.b)
	if m.start == nil || m.stubborn {
		for k := range s.Rank {
			v.Set(3, k, v.At(3, k)*(1+1e-4))
		}
	}
	sp := *m.s
	hist := []rpca.Record{{Iter: 0}, {Iter: 1}, {Iter: 2}}
	if s.Callback != nil {
		for _, rec := range hist {
			s.Callback(rec)
		}
	}
	return &rpca.Result{Method: m.Name(), U: mat.DenseCopyOf(m.a), V: v, S: &sp, Iterations: 2, Stop: m.stop, History: hist, Residual: m.residual}, nil
}

// TestGoOn: an answer that met its method's convergence rule but is not
// verified is continued once from its factors, and the continuation is
// kept when it is verified, with both runs in Attempts and their
// iterations and histories joined; a continuation that is not verified
// leaves the first answer; an answer stopped short of convergence, one
// whose residual is above rounding, or one from a warm start, is not
// continued.
func TestGoOn(t *testing.T) {
	const d1, d2, r = 60, 50, 3
	rng := rand.New(rand.NewPCG(7, 1))
	a, b := mat.NewDense(d1, r, nil), mat.NewDense(d2, r, nil)
	for _, m := range []*mat.Dense{a, b} {
		raw := m.RawMatrix()
		for k := range raw.Data {
			raw.Data[k] = rng.NormFloat64()
		}
	}
	y := mat.NewDense(d1, d2, nil)
	y.Mul(a, b.T())
	// A few corruptions, one per row, in distinct columns where possible.
	rows, cols, vals := []int{}, []int{}, []float64{}
	for i := range d1 {
		j := (7 * i) % d2
		y.Set(i, j, y.At(i, j)+20)
		rows, cols, vals = append(rows, i), append(cols, j), append(vals, 20)
	}
	sp := &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)}
	for k := range rows {
		sp.ColIdx = append(sp.ColIdx, int32(cols[k]))
		sp.Val = append(sp.Val, vals[k])
		sp.RowPtr[rows[k]+1] = k + 1
	}
	p := &rpca.Problem{Dense: y}
	var seen []int
	s := rpca.Settings{Rank: r, Alpha: 0.1, Callback: func(rec rpca.Record) { seen = append(seen, rec.Iter) }}
	run := func(m *offByOne) (*rpca.Result, int) {
		t.Helper()
		calls := 0
		m.a, m.b, m.s, m.calls = a, b, sp, &calls
		res, err := rpca.Solve(context.Background(), p, s, m)
		if err != nil {
			t.Fatal(err)
		}
		return res, calls
	}

	res, calls := run(&offByOne{stop: rpca.StopFactorTol})
	if !slices.Equal(seen, []int{0, 1, 2, 3, 4}) {
		t.Errorf("the callback saw iterations %v, want 0…4: the continuation's numbered on from the first run's", seen)
	}
	if !res.Verification.Verified || calls != 2 {
		t.Fatalf("continued: %d runs, %s; want 2 and verified", calls, res.Verification)
	}
	if len(res.Attempts) != 2 || res.Attempts[0].Verified || res.Attempts[0].Continued || !res.Attempts[1].Continued || !res.Attempts[1].Verified {
		t.Errorf("attempts %+v: want the unverified run, then the verified continuation", res.Attempts)
	}
	if res.Iterations != 4 || len(res.History) != 5 || res.History[4].Iter != 4 {
		t.Errorf("%d iterations, %d records (last %+v): want 4 and 5, joined", res.Iterations, len(res.History), res.History[len(res.History)-1])
	}

	res, calls = run(&offByOne{stop: rpca.StopFactorTol, stubborn: true})
	if res.Verification.Verified || calls != 2 || res.Attempts != nil || res.Iterations != 2 {
		t.Errorf("continuation not verified: %d runs, %s, attempts %+v, %d iterations; want 2 runs, the first answer as it was", calls, res.Verification, res.Attempts, res.Iterations)
	}
	if res.Verification.Failed == "" {
		t.Error("no failed check named")
	}

	if res, calls = run(&offByOne{stop: rpca.StopMaxIter}); calls != 1 || res.Verification.Verified {
		t.Errorf("stopped at its cap: %d runs, %s; want 1, not verified", calls, res.Verification)
	}
	if res, calls = run(&offByOne{stop: rpca.StopFactorTol, residual: 1e-3}); calls != 1 || res.Verification.Verified {
		t.Errorf("a residual of 1e-3 (noise, not rounding): %d runs, %s; want 1, not verified", calls, res.Verification)
	}
	started := &offByOne{stop: rpca.StopFactorTol, stubborn: true, start: &rpca.Start{U: a, V: b}}
	if _, calls = run(started); calls != 1 {
		t.Errorf("from a warm start: %d runs, want 1", calls)
	}
}
