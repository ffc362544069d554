package rpca_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/distributed"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

// refDistributed is a slow, obvious distributed.Store over triplets in
// row-major order: every pass loops over the entries, and a line's
// threshold comes from sorting its magnitudes.
type refDistributed struct {
	d1, d2     int
	rows, cols []int
	vals       []float64
	x          []float64 // the values of X after SetInit
	keep       []bool    // support of the last Evaluate's S
	calls      int       // passes made, for the failure test
	failAt     int       // the pass that fails (0: none)
}

var errPass = errors.New("pass failed")

func newRefDistributed(o *rpca.Observed) *refDistributed {
	d1, d2 := o.Dims()
	r := &refDistributed{d1: d1, d2: d2}
	o.Do(func(i, j int, v float64) {
		r.rows, r.cols, r.vals = append(r.rows, i), append(r.cols, j), append(r.vals, v)
	})
	return r
}

func (r *refDistributed) pass() error {
	r.calls++
	if r.calls == r.failAt {
		return errPass
	}
	return nil
}

func (r *refDistributed) Dims() (int, int, int) { return r.d1, r.d2, len(r.vals) }

func (r *refDistributed) NormY() float64 {
	return mat.Norm(mat.NewVecDense(len(r.vals), slices.Clone(r.vals)), 2)
}

func (r *refDistributed) Values(_ context.Context, pos []int) ([]float64, error) {
	out := make([]float64, len(pos))
	for k, q := range pos {
		out[k] = r.vals[q]
	}
	return out, r.pass()
}

// support returns T(R) for the magnitudes a (one per entry) with counts
// kRow, kCol: sort each line, take its k-th largest.
func (r *refDistributed) support(a []float64, kRow, kCol int) []bool {
	thr := func(lineOf []int, n, k int) []float64 {
		lines := make([][]float64, n)
		for e, l := range lineOf {
			lines[l] = append(lines[l], a[e])
		}
		t := make([]float64, n)
		for l, m := range lines {
			sort.Sort(sort.Reverse(sort.Float64Slice(m)))
			switch {
			case k == 0:
				t[l] = math.Inf(1)
			case len(m) > k:
				t[l] = m[k-1]
			}
		}
		return t
	}
	tr, tc := thr(r.rows, r.d1, kRow), thr(r.cols, r.d2, kCol)
	keep := make([]bool, len(a))
	for e := range a {
		keep[e] = a[e] > 0 && a[e] >= tr[r.rows[e]] && a[e] >= tc[r.cols[e]]
	}
	return keep
}

func (r *refDistributed) SetInit(_ context.Context, c float64, kRow, kCol int) error {
	a := make([]float64, len(r.vals))
	for e, y := range r.vals {
		a[e] = math.Abs(y - c)
	}
	keep := r.support(a, kRow, kCol)
	r.x = slices.Clone(r.vals)
	for e, k := range keep {
		if k {
			r.x[e] = c
		}
	}
	return r.pass()
}

func (r *refDistributed) mul(dst, x *mat.Dense, trans bool) error {
	dst.Zero()
	_, k := x.Dims()
	for e, xv := range r.x {
		i, j := r.rows[e], r.cols[e]
		if trans {
			i, j = j, i
		}
		for c := 0; c < k; c++ {
			dst.Set(i, c, dst.At(i, c)+xv*x.At(j, c))
		}
	}
	return r.pass()
}

func (r *refDistributed) MulInit(_ context.Context, dst, x *mat.Dense) error {
	return r.mul(dst, x, false)
}

func (r *refDistributed) MulInitTrans(_ context.Context, dst, x *mat.Dense) error {
	return r.mul(dst, x, true)
}

func (r *refDistributed) residual(u, v *mat.Dense) []float64 {
	res := make([]float64, len(r.vals))
	for e, y := range r.vals {
		res[e] = y - mat.Dot(u.RowView(r.rows[e]), v.RowView(r.cols[e]))
	}
	return res
}

func (r *refDistributed) Evaluate(_ context.Context, u, v, gu, gv *mat.Dense, kRow, kCol int) (float64, error) {
	res := r.residual(u, v)
	a := make([]float64, len(res))
	for e, x := range res {
		a[e] = math.Abs(x)
	}
	r.keep = r.support(a, kRow, kCol)
	ss := 0.0
	_, k := u.Dims()
	if gu == nil {
		k = 0 // the residual only (ALS)
	} else {
		gu.Zero()
		gv.Zero()
	}
	for e, x := range res {
		if r.keep[e] {
			continue
		}
		ss += x * x
		i, j := r.rows[e], r.cols[e]
		for c := 0; c < k; c++ {
			gu.Set(i, c, gu.At(i, c)+x*v.At(j, c))
			gv.Set(j, c, gv.At(j, c)+x*u.At(i, c))
		}
	}
	return ss, r.pass()
}

func (r *refDistributed) Trial(_ context.Context, u, v *mat.Dense) (float64, error) {
	ss := 0.0
	for e, x := range r.residual(u, v) {
		if !r.keep[e] {
			ss += x * x
		}
	}
	return ss, r.pass()
}

// SolveLines fits each line by the normal equations, formed and solved
// with gonum, over the entries outside the last Evaluate's support.
func (r *refDistributed) SolveLines(_ context.Context, dst, x *mat.Dense, cols bool, ridge float64) error {
	n, k := dst.Dims()
	for l := range n {
		var g mat.SymDense
		g.ReuseAsSym(k)
		b := mat.NewVecDense(k, nil)
		for e, y := range r.vals {
			line, other := r.rows[e], r.cols[e]
			if cols {
				line, other = other, line
			}
			if line != l || r.keep[e] {
				continue
			}
			xo := x.RawRowView(other)
			g.SymRankOne(&g, 1, mat.NewVecDense(k, xo))
			b.AddScaledVec(b, y, mat.NewVecDense(k, xo))
		}
		tr := 0.0
		for c := range k {
			tr += g.At(c, c)
		}
		shift := ridge + 1e-10*tr/float64(k)
		row := dst.RawRowView(l)
		if shift == 0 {
			clear(row)
			continue
		}
		for c := range k {
			g.SetSym(c, c, g.At(c, c)+shift)
		}
		var ch mat.Cholesky
		if !ch.Factorize(&g) {
			return fmt.Errorf("line %d: not definite", l)
		}
		if err := ch.SolveVecTo(mat.NewVecDense(k, row), b); err != nil {
			return err
		}
	}
	return r.pass()
}

// TestSolveDistributedALS runs ALS through SolveDistributed on the
// reference store (the normal equations of every line formed and solved
// with gonum) and through Solve on the same Observed, with and without a
// decaying ridge: the same sweeps, so the same count and factors equal up
// to the order of sums; and the options a store cannot run are refused.
func TestSolveDistributedALS(t *testing.T) {
	in := instance(t, synth.Config{D1: 300, D2: 200, Rank: 3, Alpha: 0.05, P: 0.5, Seed: 21})
	s := rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1}
	for _, m := range []als.Method{{}, {Ridge: 0.5, RidgeDecay: 0.8}} {
		ref, err := (&m).Solve(context.Background(), in.Problem(), s)
		if err != nil {
			t.Fatal(err)
		}
		dist, err := m.SolveDistributed(context.Background(), newRefDistributed(in.Obs), s)
		if err != nil {
			t.Fatal(err)
		}
		gap := metrics.RelError(dist.U, dist.V, ref.U, ref.V)
		e := metrics.RelError(dist.U, dist.V, in.A, in.B)
		t.Logf("ridge %g decay %g: %d and %d sweeps, true error %.3g, gap %.3g", m.Ridge, m.RidgeDecay, ref.Iterations, dist.Iterations, e, gap)
		if gap > 1e-10 || dist.Iterations != ref.Iterations || dist.Stop != ref.Stop || e > 1e-4 {
			t.Errorf("ridge %g: gap %.3g, %d sweeps (%s) against %d (%s), true error %.3g", m.Ridge, gap, dist.Iterations, dist.Stop, ref.Iterations, ref.Stop, e)
		}
		if p := dist.Params.(*als.Params); p.KRow != ref.Params.(*als.Params).KRow || p.Ridge != m.Ridge {
			t.Errorf("parameters differ: %+v and %+v", dist.Params, ref.Params)
		}
	}
	// Data off the paper's model: rank 1, an offset of 50 on every
	// entry, and one spike of 1e4. The two runs must still take the same
	// sweeps; their gap is measured against the varying part of the
	// answer, which the offset would otherwise hide.
	one := instance(t, synth.Config{D1: 200, D2: 150, Rank: 1, Alpha: 0.05, P: 0.5, Seed: 22})
	var rows, cols []int
	var vals []float64
	one.Obs.Do(func(i, j int, v float64) {
		if len(vals) == 7 {
			v += 1e4
		}
		rows, cols, vals = append(rows, i), append(cols, j), append(vals, v+50)
	})
	obs, err := rpca.NewObserved(200, 150, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	s1 := rpca.Settings{Rank: 1, Alpha: 0.05, Seed: 1}
	m := als.Method{Ridge: 0.1}
	ref, err := m.Solve(context.Background(), &rpca.Problem{Observed: obs}, s1)
	if err != nil {
		t.Fatal(err)
	}
	dist, err := m.SolveDistributed(context.Background(), newRefDistributed(obs), s1)
	if err != nil {
		t.Fatal(err)
	}
	if gap := metrics.CentredRelError(dist.U, dist.V, ref.U, ref.V); gap > 1e-10 || dist.Iterations != ref.Iterations {
		t.Errorf("rank 1 with an offset and a spike: gap %.3g (against the varying part), %d sweeps against %d", gap, dist.Iterations, ref.Iterations)
	}
	for _, m := range []als.Method{{Biases: true}, {Huber: 3}, {Implicit: 1}, {PerLine: true}} {
		if _, err := m.SolveDistributed(context.Background(), newRefDistributed(in.Obs), s); !errors.Is(err, rpca.ErrBadSettings) {
			t.Errorf("%+v: %v, want ErrBadSettings", m, err)
		}
	}
}

// TestSolveDistributed runs Algorithm 2 through SolveDistributed on the
// reference store and through Solve on the same Observed, at the defaults
// (backtracking), with the paper's fixed step and with the scaled update.
// Both must recover M* to
// the stopping rule's accuracy, and agree with each other: they run the
// same steps, so they differ only by the order of floating-point sums
// (the data are continuous, so T's ties never occur).
func TestSolveDistributed(t *testing.T) {
	in := instance(t, synth.Config{D1: 400, D2: 300, Rank: 3, Alpha: 0.05, P: 0.5, Seed: 11})
	s := rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1}
	rules := []gd.Method{{}, {Step: gd.StepFixed}, {Scaled: true}}
	if testing.Short() {
		rules = rules[:1] // the race detector's run
	}
	for _, g := range rules {
		ref, err := rpca.Solve(context.Background(), in.Problem(), s, &g)
		if err != nil {
			t.Fatal(err)
		}
		dist, err := g.SolveDistributed(context.Background(), newRefDistributed(in.Obs), s)
		if err != nil {
			t.Fatal(err)
		}
		if !dist.Stop.Converged() || dist.S != nil {
			t.Errorf("step %q: stop %v, S %v", g.Step, dist.Stop, dist.S)
		}
		errRef := metrics.RelError(ref.U, ref.V, in.A, in.B)
		errDist := metrics.RelError(dist.U, dist.V, in.A, in.B)
		gap := metrics.RelError(dist.U, dist.V, ref.U, ref.V)
		t.Logf("scaled %v, step %q: iterations %d and %d, true errors %.3g and %.3g, gap %.3g", g.Scaled, g.Step, ref.Iterations, dist.Iterations, errRef, errDist, gap)
		if errDist > 1e-4 || gap > 1e-8 || dist.Iterations != ref.Iterations {
			t.Errorf("step %q: distributed true error %.3g, gap to Solve %.3g, iterations %d (Solve %d)", g.Step, errDist, gap, dist.Iterations, ref.Iterations)
		}
		if dist.Params.(*gd.Params).KRow != ref.Params.(*gd.Params).KRow {
			t.Errorf("parameters differ: %+v and %+v", dist.Params, ref.Params)
		}
	}
}

// framingRef is refDistributed that can present its values in a frame
// (distributed.Framer): it keeps the values of Y and sets those every
// pass reads to (y − c)/scale.
type framingRef struct {
	*refDistributed
	y []float64
}

func newFramingRef(o *rpca.Observed) *framingRef {
	r := newRefDistributed(o)
	return &framingRef{r, slices.Clone(r.vals)}
}

func (r *framingRef) SetFrame(_ context.Context, c, scale float64) error {
	for e, y := range r.y {
		r.vals[e] = (y/2 - c/2) * (2 / scale)
	}
	return nil
}

// TestSolveDistributedLocation: on a store that can remove a location,
// SolveDistributed sees the data as rpca.Solve presents them to the
// method, for gd and als: an offset of 1e4 on a rank-2 matrix with a
// spike of 1e6 (the truth has rank 3 with the offset). It removes the
// same location, measures its residuals against the same clean scale
// (not ‖Π_Φ Y‖, which the spike and the offset inflate), and so runs the
// same iterations to the same answer as Solve. (Before the clean scale,
// the residual rule, relative to ‖Π_Φ Y‖, stopped gd at 16 iterations
// and a true error of 2e-3 on this matrix at rank 2 without the offset,
// where Solve takes 67 to 1e-8.) On a store that cannot
// shift, the offset makes the problem ill-conditioned and neither
// method gets near the truth. At rank 2 the constant does not fit the
// model, and the result says so (CheckOffset), as Solve's does.
func TestSolveDistributedLocation(t *testing.T) {
	in := instance(t, synth.Config{D1: 300, D2: 200, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 11})
	prob, a, b := offsetSpikeProblem(t, in, 1e4, 1e6)
	methods := []interface {
		rpca.Method
		distributed.Solver
	}{&gd.Method{}, &als.Method{}}
	if testing.Short() {
		methods = methods[:1] // the race detector's run
	}
	for _, m := range methods {
		s := rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1}
		ref, err := rpca.Solve(context.Background(), prob, s, m)
		if err != nil {
			t.Fatal(err)
		}
		dist, err := m.SolveDistributed(context.Background(), newFramingRef(prob.Observed), s)
		if err != nil {
			t.Fatal(err)
		}
		capped := s
		capped.Stop.MaxIter = 200 // without the shift gd runs to its cap of 1000
		plain, err := m.SolveDistributed(context.Background(), newRefDistributed(prob.Observed), capped)
		if err != nil {
			t.Fatal(err)
		}
		e := metrics.CentredRelError(dist.U, dist.V, a, b)
		gap := metrics.CentredRelError(dist.U, dist.V, ref.U, ref.V)
		ePlain := metrics.CentredRelError(plain.U, plain.V, a, b)
		t.Logf("%s: %d iterations (%s), Solve %d; true error %.3g, gap %.3g, location %.6g; without the shift %.3g (%d, %s)",
			m.Name(), dist.Iterations, dist.Stop, ref.Iterations, e, gap, dist.Location, ePlain, plain.Iterations, plain.Stop)
		if !ref.Verification.Verified || dist.Iterations != ref.Iterations || dist.Stop != ref.Stop || gap > 1e-8 || e > 1e-6 ||
			dist.Location != ref.Location || dist.Verification != nil {
			t.Errorf("%s: %d iterations (%s) against Solve's %d (%s, verified %v), true error %.3g, gap %.3g, location %v against %v, verification %+v",
				m.Name(), dist.Iterations, dist.Stop, ref.Iterations, ref.Stop, ref.Verification.Verified, e, gap, dist.Location, ref.Location, dist.Verification)
		}
		if !(ePlain > 1e-3) {
			t.Errorf("%s without the shift: true error %.3g; the test no longer shows what the location does", m.Name(), ePlain)
		}
		s.Rank = 2
		low, err := m.SolveDistributed(context.Background(), newFramingRef(prob.Observed), s)
		if err != nil {
			t.Fatal(err)
		}
		if v := low.Verification; v == nil || v.Failed != rpca.CheckOffset || v.Verified {
			t.Errorf("%s at rank 2: verification %+v, want a failed %s", m.Name(), v, rpca.CheckOffset)
		}
	}
}

// TestSolveDistributedScale: on a store that can frame its values, data
// scaled by 1e200 or 1e-200 are divided by a power of two near their
// scale, as Solve divides them, and give Solve's iterations and answer in
// the units of the data. Without the frame the norms overflow or
// underflow: the run ends at once with no answer worth the name.
func TestSolveDistributedScale(t *testing.T) {
	in := instance(t, synth.Config{D1: 200, D2: 150, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 3})
	s := rpca.Settings{Rank: 2, Alpha: 0.05, Seed: 1}
	rowPtr, colIdx, vals := in.Obs.CSR()
	for _, f := range []float64{1e200, 1e-200} {
		scaled := make([]float64, len(vals))
		for k, y := range vals {
			scaled[k] = y * f
		}
		obs, err := rpca.NewObservedCSR(200, 150, rowPtr, colIdx, scaled)
		if err != nil {
			t.Fatal(err)
		}
		a := mat.DenseCopyOf(in.A)
		a.Scale(f, a)
		ref, err := rpca.Solve(context.Background(), &rpca.Problem{Observed: obs}, s, &gd.Method{})
		if err != nil {
			t.Fatal(err)
		}
		dist, err := (&gd.Method{}).SolveDistributed(context.Background(), newFramingRef(obs), s)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := (&gd.Method{}).SolveDistributed(context.Background(), newRefDistributed(obs), s)
		e, ePlain := metrics.CentredRelError(dist.U, dist.V, a, in.B), math.NaN()
		if err == nil {
			ePlain = metrics.CentredRelError(plain.U, plain.V, a, in.B)
		}
		t.Logf("×%g: %d iterations (%s), Solve %d; data scale %g; true error %.3g; without the frame %.3g (%v)", f, dist.Iterations, dist.Stop, ref.Iterations, dist.DataScale, e, ePlain, err)
		if !ref.Verification.Verified || dist.Iterations != ref.Iterations || !(e < 1e-6) || dist.DataScale == 1 || dist.DataScale != ref.DataScale {
			t.Errorf("×%g: %d iterations against Solve's %d (verified %v), true error %.3g, data scale %g against %g", f, dist.Iterations, ref.Iterations, ref.Verification.Verified, e, dist.DataScale, ref.DataScale)
		}
		if ePlain < 1e-3 {
			t.Errorf("×%g without the frame: true error %.3g; the test no longer shows what the scale does", f, ePlain)
		}
	}
}

// TestSolveDistributedErrors: a failing pass (in the location, the
// initialization's products, an evaluation or a trial) is returned as is,
// cancellation is honoured, and bad settings are refused before any pass.
func TestSolveDistributedErrors(t *testing.T) {
	in := instance(t, synth.Config{D1: 120, D2: 100, Rank: 2, Alpha: 0.05, P: 0.4, Seed: 5})
	s := rpca.Settings{Rank: 2, Alpha: 0.05, Seed: 1}
	for _, failAt := range []int{1, 2, 3, 8, 40} {
		r := newRefDistributed(in.Obs)
		r.failAt = failAt
		if _, err := (&gd.Method{}).SolveDistributed(context.Background(), r, s); !errors.Is(err, errPass) {
			t.Errorf("pass %d failing: error %v", failAt, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&gd.Method{}).SolveDistributed(ctx, newRefDistributed(in.Obs), s); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	r := newRefDistributed(in.Obs)
	for _, bad := range []rpca.Settings{{Rank: 0}, {Rank: 2, Alpha: 1}, {Rank: 200}} {
		if _, err := (&gd.Method{}).SolveDistributed(context.Background(), r, bad); !errors.Is(err, rpca.ErrBadInput) || r.calls > 0 {
			t.Errorf("settings %+v: error %v after %d passes", bad, err, r.calls)
		}
	}
	if _, err := (&gd.Method{}).SolveDistributed(context.Background(), &refDistributed{d1: 3, d2: 3}, s); !errors.Is(err, rpca.ErrNoEntries) {
		t.Errorf("no entries: %v", err)
	}
}

// TestLineThreshold checks LineThreshold against sorting.
func TestLineThreshold(t *testing.T) {
	x := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	desc := slices.Clone(x)
	sort.Sort(sort.Reverse(sort.Float64Slice(desc)))
	for k := 1; k < len(x); k++ {
		if got := gd.LineThreshold(slices.Clone(x), k); got != desc[k-1] {
			t.Errorf("k=%d: %v, want %v", k, got, desc[k-1])
		}
	}
	if gd.LineThreshold(slices.Clone(x), len(x)) != 0 || !math.IsInf(gd.LineThreshold(x, 0), 1) {
		t.Error("a short line keeps all, k = 0 keeps none")
	}
	if !gd.InSparse(4, 4, 3) || gd.InSparse(4, 5, 3) || gd.InSparse(0, 0, 0) {
		t.Error("InSparse")
	}
}
