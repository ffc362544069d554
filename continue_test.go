package rpca_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/metrics"
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
	locs     *[]float64 // when set, gets the location of each problem it is given
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
	// The answer in the units of the problem it is given: Solve's frame
	// maps y to (y − c)/scale, read off two entries without corruption.
	u := mat.DenseCopyOf(m.a)
	c, scale := frameOf(p, m.a, m.b)
	if m.locs != nil {
		*m.locs = append(*m.locs, c)
	}
	if c != 0 || scale != 1 {
		u.Scale(1/scale, u)
		if c != 0 { // the last columns of A and B hold the offset and ones
			_, w := u.Dims()
			for i := range u.RawMatrix().Rows {
				u.Set(i, w-1, u.At(i, w-1)-c/scale)
			}
		}
	}
	sp := *m.s
	sp.Val = slices.Clone(sp.Val)
	for k := range sp.Val {
		sp.Val[k] /= scale
	}
	hist := []rpca.Record{{Iter: 0}, {Iter: 1}, {Iter: 2}}
	if s.Callback != nil {
		for _, rec := range hist {
			s.Callback(rec)
		}
	}
	return &rpca.Result{Method: m.Name(), U: u, V: v, S: &sp, Iterations: 2, Stop: m.stop, History: hist, Residual: m.residual}, nil
}

// frameOf returns the location c and the scale with which the problem p
// holds the data of M = A·Bᵀ: y_p = (y − c)/scale, from the entries (0, 1)
// and (1, 1), which goOnInstance leaves without corruption.
func frameOf(p *rpca.Problem, a, b *mat.Dense) (c, scale float64) {
	m1, m2 := mat.Dot(a.RowView(0), b.RowView(1)), mat.Dot(a.RowView(1), b.RowView(1))
	y1, y2 := p.Dense.At(0, 1), p.Dense.At(1, 1)
	scale = (m1 - m2) / (y1 - y2)
	return m1 - scale*y1, scale
}

// goOnInstance returns Gaussian factors A (d1×r) and B (d2×r) and
// Y = A·Bᵀ + S* with S* one corruption of 20 per row, at (i, 7i mod d2).
// With offset ≠ 0, A and B get a last column of offset and of ones, so
// that M = A·Bᵀ holds the offset within rank r + 1.
func goOnInstance(d1, d2, r int, offset float64) (a, b, y *mat.Dense, sp *rpca.Sparse) {
	rng := rand.New(rand.NewPCG(7, 1))
	w := r
	if offset != 0 {
		w++
	}
	a, b = mat.NewDense(d1, w, nil), mat.NewDense(d2, w, nil)
	for _, m := range []*mat.Dense{a, b} {
		rows, _ := m.Dims()
		for i := range rows {
			for k := range r {
				m.Set(i, k, rng.NormFloat64())
			}
		}
	}
	if offset != 0 {
		for i := range d1 {
			a.Set(i, r, offset)
		}
		for j := range d2 {
			b.Set(j, r, 1)
		}
	}
	y = mat.NewDense(d1, d2, nil)
	y.Mul(a, b.T())
	sp = &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)}
	for i := range d1 {
		j := (7 * i) % d2
		y.Set(i, j, y.At(i, j)+20)
		sp.ColIdx = append(sp.ColIdx, int32(j))
		sp.Val = append(sp.Val, 20)
		sp.RowPtr[i+1] = i + 1
	}
	return a, b, y, sp
}

// TestGoOnOffset: the continuation of an answer from a problem whose
// location Solve removed (an offset of 1000, within the rank) starts from
// the answer in the units of the data, runs without the location, and
// returns M within rounding of the truth, the error measured against the
// truth's varying part.
func TestGoOnOffset(t *testing.T) {
	const d1, d2, r = 60, 50, 3
	a, b, y, sp := goOnInstance(d1, d2, r, 1000)
	calls := 0
	var locs []float64
	m := &offByOne{a: a, b: b, s: sp, calls: &calls, stop: rpca.StopFactorTol, locs: &locs}
	res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: r + 1, Alpha: 0.1}, m)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verification.Verified || calls != 2 || len(res.Attempts) != 2 || !res.Attempts[1].Continued {
		t.Fatalf("%d runs, %s, attempts %+v: want the continuation verified", calls, res.Verification, res.Attempts)
	}
	// The first run saw the data centred (c ≈ 1000 less a spread), the
	// continuation as they are.
	if len(locs) != 2 || !(locs[0] > 900) || math.Abs(locs[1]) > 1e-9 {
		t.Errorf("locations seen %v: want about 1000 for the first run, 0 for the continuation", locs)
	}
	if e := metrics.CentredRelError(res.U, res.V, a, b); !(e < 1e-9) {
		t.Errorf("error %.3g against the truth's varying part, want below 1e-9", e)
	}
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
	a, b, y, sp := goOnInstance(d1, d2, r, 0)
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
