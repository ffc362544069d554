package rpca_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/methods"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

// counted runs inner and counts its runs; with spoil it adds a whole row
// of entries to the sparse part of each answer, which then fails the
// sparse check whatever its factors.
type counted struct {
	inner rpca.Method
	spoil bool
	calls int
}

func (m *counted) Name() string                    { return m.inner.Name() }
func (m *counted) Capabilities() rpca.Capabilities { return m.inner.Capabilities() }
func (m *counted) Solve(ctx context.Context, p *rpca.Problem, s rpca.Settings) (*rpca.Result, error) {
	m.calls++
	res, err := m.inner.Solve(ctx, p, s)
	if err != nil || !m.spoil {
		return res, err
	}
	d1, d2 := p.Dims()
	spoiled := res.S.ToDense()
	for j := range d2 {
		spoiled.Set(d1/2, j, spoiled.At(d1/2, j)+1)
	}
	res.S = rpca.SparseWhere(d1, d2, spoiled.RawMatrix().Data, d2, func(x float64) bool { return x != 0 })
	return res, nil
}

// positiveRankOne returns a·bᵀ with entries of a and b in [5, 15], so that
// its values sit far from zero and the constant Solve removes is not in
// its rank-one model (a·bᵀ − c·11ᵀ has rank two), with 3% of the entries
// corrupted by up to ±200.
func positiveRankOne(d1, d2 int, seed uint64) (y, m *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 3))
	a, b := mat.NewDense(d1, 1, nil), mat.NewDense(d2, 1, nil)
	for i := range d1 {
		a.Set(i, 0, 5+10*rng.Float64())
	}
	for j := range d2 {
		b.Set(j, 0, 5+10*rng.Float64())
	}
	m = mat.NewDense(d1, d2, nil)
	m.Mul(a, b.T())
	y = mat.DenseCopyOf(m)
	for i := range d1 {
		for j := range d2 {
			if rng.Float64() < 0.03 {
				y.Set(i, j, y.At(i, j)+200*(2*rng.Float64()-1))
			}
		}
	}
	return y, m
}

// TestRetryUncentred: when the location Solve removed is not in the
// method's rank (a positive rank-one matrix asked at rank one), the
// answer in the centred frame fails CheckOffset and Solve solves the data
// as they are: the answer is verified, exact, and has no location. When
// the first answer fails another check while its location fits the rank
// and the method converged, the second try is not made: nothing in it
// would change what failed (on noisy video it doubled every fit).
func TestRetryUncentred(t *testing.T) {
	y, want := positiveRankOne(120, 90, 1)
	for _, inner := range []rpca.Method{&gd.Method{}, &accaltproj.Method{}} {
		m := &counted{inner: inner}
		res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Alpha: 0.1}, m)
		if err != nil {
			t.Fatalf("%s: %v", inner.Name(), err)
		}
		v := res.Verification
		if e := centredError(res.LowRank(), want); !v.Verified || e > 1e-6 || res.Location != 0 || m.calls != 2 {
			t.Errorf("%s: verified %v (%s: %s), error %.3g, location %g, %d runs; want verified, ≤ 1e-6, no location, 2 runs", inner.Name(), v.Verified, v.Failed, v.Reason, e, res.Location, m.calls)
		}
	}

	// Within the rank: rank 3 plus an offset of 1000, asked at rank 4.
	y3, _ := lowRankPlusSparse(70, 50, 3, 2)
	var off mat.Dense
	off.Apply(func(_, _ int, x float64) float64 { return x + 1000 }, y3)
	for _, spoil := range []bool{false, true} {
		m := &counted{inner: &gd.Method{}, spoil: spoil}
		res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: &off}, rpca.Settings{Rank: 4, Alpha: 0.1}, m)
		if err != nil {
			t.Fatal(err)
		}
		v := res.Verification
		switch {
		case !spoil && (!v.Verified || res.Location == 0 || m.calls != 1):
			t.Errorf("offset in the rank: verified %v (%s), location %g, %d runs; want verified in the centred frame in 1 run", v.Verified, v.Failed, res.Location, m.calls)
		case spoil && (v.Verified || v.Failed != rpca.CheckSparse || m.calls != 1):
			t.Errorf("spoilt S: verified %v, failed %q, %d runs; want the sparse check failed after 1 run", v.Verified, v.Failed, m.calls)
		}
	}
}

// centredError is ‖M − M*‖_F / ‖M* − mean(M*)‖_F.
func centredError(m, want *mat.Dense) float64 {
	r, c := want.Dims()
	mean := mat.Sum(want) / float64(r*c)
	var diff, centred mat.Dense
	diff.Sub(m, want)
	centred.Apply(func(_, _ int, x float64) float64 { return x - mean }, want)
	return mat.Norm(&diff, 2) / math.Max(mat.Norm(&centred, 2), math.SmallestNonzeroFloat64)
}

// TestAlphaZeroOffset: at α = 0 (matrix completion, no corruptions) an
// offset is removed as at α > 0, for every answer but the truncated SVD
// of a dense Y. A rank-2 matrix plus 50 or 1e4, half observed, fitted at
// rank 3 (the truth's rank with the offset): the default chain, gd and
// ALS give the truth to 1e-6, verified, with the location reported. Left
// uncentred, as before 2026-11-28, none was verified: ALS stopped at a
// residual of 2.5e-6 with 95% of it in M's own spaces, gd at its cap.
func TestAlphaZeroOffset(t *testing.T) {
	in := instance(t, synth.Config{D1: 200, D2: 150, Rank: 2, P: 0.5, Seed: 3})
	for _, c := range []float64{50, 1e4} {
		prob, a, b := offsetSpikeProblem(t, in, c, 0)
		for _, m := range []rpca.Method{&methods.Auto{}, &gd.Method{}, &als.Method{}} {
			res, err := rpca.Solve(context.Background(), prob, rpca.Settings{Rank: 3, Seed: 1}, m)
			if err != nil {
				t.Fatal(err)
			}
			e := metrics.CentredRelError(res.U, res.V, a, b)
			t.Logf("offset %g, %s: %s, %d iterations (%s), true error %.3g, location %.6g, verified %v", c, m.Name(), res.Method, res.Iterations, res.Stop, e, res.Location, res.Verification.Verified)
			if !res.Verification.Verified || !(e < 1e-6) || res.Location == 0 {
				t.Errorf("offset %g, %s: true error %.3g, location %v, %s", c, m.Name(), e, res.Location, res.Verification)
			}
		}
	}
}
