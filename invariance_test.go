package rpca_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/altproj"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/internal/hostile"
	"github.com/rpca-gd/rpca/internal/methodtest"
	"github.com/rpca-gd/rpca/methods"
)

// allMethods returns a fresh value of every method of the module.
func allMethods() []rpca.Method {
	return []rpca.Method{&gd.Method{}, &gd.Method{Scaled: true}, &als.Method{}, &als.Method{Biases: true}, &accaltproj.Method{}, &altproj.Method{}, &ialm.Method{}}
}

// lowRankPlusSparse returns a d1×d2 matrix of rank r (Gaussian factors)
// plus a few large corruptions, and the low-rank part.
func lowRankPlusSparse(d1, d2, r int, seed uint64) (y, m *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 9))
	a, b := gaussianFactor(rng, d1, r), gaussianFactor(rng, d2, r)
	m = mat.NewDense(d1, d2, nil)
	m.Mul(a, b.T())
	y = mat.DenseCopyOf(m)
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if rng.Float64() < 0.03 {
				y.Set(i, j, y.At(i, j)+20*(2*rng.Float64()-1))
			}
		}
	}
	return y, m
}

// gaussianFactor returns a d×r matrix of standard normal entries.
func gaussianFactor(rng *rand.Rand, d, r int) *mat.Dense {
	a := mat.NewDense(d, r, nil)
	for i := 0; i < d; i++ {
		for k := 0; k < r; k++ {
			a.Set(i, k, rng.NormFloat64())
		}
	}
	return a
}

func relDiff(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / math.Max(mat.Norm(b, 2), math.SmallestNonzeroFloat64)
}

// TestScaleInvariance: for every method, solving c·Y gives c·M and c·S,
// for c from 1e-300 to 1e300. Solve divides data beyond 2^±64 by a power
// of two, so c·Y/2^e equals Y up to one rounding per entry and the
// results agree to the methods' own sensitivity to such rounding: 1e-6
// (the runs agree to about 1e-12).
func TestScaleInvariance(t *testing.T) {
	y, _ := lowRankPlusSparse(80, 60, 3, 1)
	for _, m := range allMethods() {
		base, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 3, Alpha: 0.05}, m)
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		for _, c := range []float64{1e-300, 1e-150, 1e-30, 1e30, 1e150, 1e300} {
			var yc mat.Dense
			yc.Scale(c, y)
			res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: &yc}, rpca.Settings{Rank: 3, Alpha: 0.05}, m)
			if err != nil {
				t.Errorf("%s, c=%g: %v", m.Name(), c, err)
				continue
			}
			// The data are divided by a power of two only beyond 2^±64.
			if scaled := c < 0x1p-64 || c > 0x1p64; scaled == (res.DataScale == 1) || base.DataScale != 1 || math.Log2(res.DataScale) != math.Round(math.Log2(res.DataScale)) {
				t.Errorf("%s, c=%g: DataScale %v (at c=1: %v)", m.Name(), c, res.DataScale, base.DataScale)
			}
			var got mat.Dense
			got.Scale(1/c, res.LowRank())
			if d := relDiff(&got, base.LowRank()); !(d <= 1e-6) {
				t.Errorf("%s, c=%g: M/c differs from M by %.3g", m.Name(), c, d)
			}
			if res.S.NNZ() != base.S.NNZ() {
				t.Errorf("%s, c=%g: S has %d entries, %d at c=1", m.Name(), c, res.S.NNZ(), base.S.NNZ())
			}
			for k, v := range res.S.Val {
				if k < base.S.NNZ() && math.Abs(v/c-base.S.Val[k]) > 1e-6*math.Abs(base.S.Val[k])+1e-9 {
					t.Errorf("%s, c=%g: S entry %d is %v, want %v", m.Name(), c, k, v/c, base.S.Val[k])
					break
				}
			}
		}
	}
}

// TestOffsetAndConstant: a constant matrix is rank one with S = 0 at any
// rank, and a rank-3 matrix plus a common offset is recovered at rank 4:
// by every method whose answer is verified, with the error measured
// against the varying part of the truth (the offset must not sit in the
// denominator), and by the default, which must verify.
func TestOffsetAndConstant(t *testing.T) {
	_, m3 := lowRankPlusSparse(70, 50, 3, 2)
	for _, m := range append(allMethods(), &methods.Auto{}) {
		c := mat.NewDense(40, 30, nil)
		for i := 0; i < 40; i++ {
			for j := 0; j < 30; j++ {
				c.Set(i, j, 7)
			}
		}
		for _, r := range []int{1, 2, 5} {
			res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: c}, rpca.Settings{Rank: r, Alpha: 0.1}, m)
			if err != nil {
				t.Fatalf("%s constant, r=%d: %v", m.Name(), r, err)
			}
			if d := relDiff(res.LowRank(), c); d > 1e-12 || res.S.NNZ() != 0 || !res.Verification.Verified {
				t.Errorf("%s constant, r=%d: M off by %.3g, %d entries in S, verified %v (%s: %s)", m.Name(), r, d, res.S.NNZ(), res.Verification.Verified, res.Verification.Failed, res.Verification.Reason)
			}
		}
		for _, off := range []float64{1e3, 1e6} {
			var y mat.Dense
			y.Apply(func(_, _ int, v float64) float64 { return v + off }, m3)
			res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: &y}, rpca.Settings{Rank: 4, Alpha: 0.1}, m)
			if err != nil {
				t.Fatalf("%s offset %g: %v", m.Name(), off, err)
			}
			mean := mat.Sum(&y) / float64(70*50)
			var diff, centred mat.Dense
			diff.Sub(res.LowRank(), &y)
			centred.Apply(func(_, _ int, v float64) float64 { return v - mean }, &y)
			d := mat.Norm(&diff, 2) / mat.Norm(&centred, 2)
			switch v := res.Verification; {
			case v.Verified && d > 1e-6:
				t.Errorf("%s offset %g: verified, but M is off by %.3g of its varying part", m.Name(), off, d)
			case !v.Verified && m.Name() == methods.AutoName:
				t.Errorf("%s offset %g: not verified (%s: %s)", m.Name(), off, v.Failed, v.Reason)
			}
		}
	}
}

// denseOnlyMethod declares DenseOnly and fails the test if it is run.
type denseOnlyMethod struct{ t *testing.T }

func (denseOnlyMethod) Name() string { return "dense-only" }
func (denseOnlyMethod) Capabilities() rpca.Capabilities {
	return rpca.Capabilities{DenseOnly: true}
}
func (m denseOnlyMethod) Solve(context.Context, *rpca.Problem, rpca.Settings) (*rpca.Result, error) {
	m.t.Error("Solve called on partial data")
	return nil, errors.New("called")
}

// TestCapabilitiesChecked: rpca.Solve refuses partial observations for a
// method that declares DenseOnly, before calling it.
func TestCapabilitiesChecked(t *testing.T) {
	obs, err := rpca.NewObserved(3, 3, []int{0, 1, 2, 0}, []int{0, 1, 2, 1}, []float64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range append(allMethods(), denseOnlyMethod{t}) {
		_, err := rpca.Solve(context.Background(), &rpca.Problem{Observed: obs}, rpca.Settings{Rank: 1}, m)
		if m.Capabilities().DenseOnly != errors.Is(err, rpca.ErrDenseOnly) {
			t.Errorf("%s: DenseOnly %v, error %v", m.Name(), m.Capabilities().DenseOnly, err)
		}
	}
}

// TestDenseOnlyDirect: a method that declares DenseOnly, run directly
// rather than through rpca.Solve, refuses partial observations with
// ErrDenseOnly and a problem without a matrix with an error, and
// Problem.DenseInput returns a dense Y itself.
func TestDenseOnlyDirect(t *testing.T) {
	obs, err := rpca.NewObserved(3, 3, []int{0, 1, 2, 0}, []int{0, 1, 2, 1}, []float64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range allMethods() {
		if !m.Capabilities().DenseOnly {
			continue
		}
		if _, err := m.Solve(context.Background(), &rpca.Problem{Observed: obs}, rpca.Settings{Rank: 1}); !errors.Is(err, rpca.ErrDenseOnly) {
			t.Errorf("%s on partial data: %v, want ErrDenseOnly", m.Name(), err)
		}
		for _, p := range []*rpca.Problem{nil, {}} {
			if _, err := m.Solve(context.Background(), p, rpca.Settings{Rank: 1}); err == nil || errors.Is(err, rpca.ErrDenseOnly) {
				t.Errorf("%s on %v: error %v, want one saying there is no matrix", m.Name(), p, err)
			}
		}
	}
	y := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	if got, err := (&rpca.Problem{Dense: y}).DenseInput("x"); err != nil || got != y {
		t.Errorf("DenseInput of a dense problem: %p, %v", got, err)
	}
}

// TestZeroValues: zero values and nil inputs are errors, not panics.
func TestZeroValues(t *testing.T) {
	if _, err := rpca.Solve(context.Background(), &rpca.Problem{Observed: &rpca.Observed{}}, rpca.Settings{Rank: 1}, nil); err == nil {
		t.Error("zero Observed accepted")
	}
	if _, err := rpca.SampleDense(nil, 0.5, 1); err == nil {
		t.Error("SampleDense(nil) accepted")
	}
	if _, err := rpca.Solve(context.Background(), nil, rpca.Settings{Rank: 1}, nil); err == nil {
		t.Error("nil problem accepted")
	}
}

// TestMethodContract runs the shared contract of methodtest (zero matrix:
// M = 0, S = 0, stop "exact"; cancellation from the callback) for every
// method, the gradient methods included.
func TestMethodContract(t *testing.T) {
	for _, m := range allMethods() {
		t.Run(m.Name(), func(t *testing.T) {
			methodtest.ZeroMatrix(t, m)
			methodtest.Cancel(t, m)
		})
	}
}

// TestSmallShapesAllMethods: every method on every shape up to 7×7 and
// every rank, with and without α: no panic, and either a finite result or
// an error.
func TestSmallShapesAllMethods(t *testing.T) {
	rng := rand.New(rand.NewPCG(79, 80))
	for d1 := 2; d1 <= 7; d1++ {
		for d2 := 2; d2 <= 7; d2++ {
			y := gaussianFactor(rng, d1, d2)
			for r := 1; r < min(d1, d2); r++ {
				for _, alpha := range []float64{0, 0.1} {
					for _, m := range allMethods() {
						func() {
							defer func() {
								if p := recover(); p != nil {
									t.Fatalf("%s %d×%d r=%d α=%g: panic %v", m.Name(), d1, d2, r, alpha, p)
								}
							}()
							res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: r, Alpha: alpha, Stop: rpca.Stop{MaxIter: 200}}, m)
							if err != nil {
								return
							}
							for _, x := range res.LowRank().RawMatrix().Data {
								if math.IsNaN(x) || math.IsInf(x, 0) {
									t.Fatalf("%s %d×%d r=%d α=%g: non-finite low-rank part", m.Name(), d1, d2, r, alpha)
								}
							}
						}()
					}
				}
			}
		}
	}
}

// TestNewObservedCSR: the public CSR constructor accepts well-formed
// arrays (and hands them back through CSR and Row) and refuses malformed
// ones with ErrBadInput.
func TestNewObservedCSR(t *testing.T) {
	o, err := rpca.NewObservedCSR(2, 3, []int{0, 2, 3}, []int32{0, 2, 1}, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if cols, vals := o.Row(0); len(cols) != 2 || cols[1] != 2 || vals[1] != 2 || o.Len() != 3 {
		t.Errorf("row 0: %v %v, %d entries", cols, vals, o.Len())
	}
	for _, c := range []struct {
		name   string
		d1, d2 int
		ptr    []int
		idx    []int32
		vals   []float64
	}{
		{"size", 0, 3, []int{0}, nil, nil},
		{"pointer length", 2, 3, []int{0, 1}, []int32{0}, []float64{1}},
		{"unsorted", 1, 3, []int{0, 2}, []int32{2, 0}, []float64{1, 2}},
		{"duplicate", 1, 3, []int{0, 2}, []int32{1, 1}, []float64{1, 2}},
		{"out of range", 1, 3, []int{0, 1}, []int32{3}, []float64{1}},
		{"NaN", 1, 3, []int{0, 1}, []int32{0}, []float64{math.NaN()}},
		{"lengths", 1, 3, []int{0, 1}, []int32{0}, []float64{1, 2}},
	} {
		if _, err := rpca.NewObservedCSR(c.d1, c.d2, c.ptr, c.idx, c.vals); !errors.Is(err, rpca.ErrBadInput) {
			t.Errorf("%s: error %v, want ErrBadInput", c.name, err)
		}
	}
}

// TestAlphaZeroIsPCA: with α = 0 every method gives the truncated SVD of
// Y, checked against gonum's full SVD, and S is empty. The methods that
// find corruptions by thresholding (AccAltProj, AltProj, IALM) cannot
// honour α = 0 and give way to the SVD; before, they set 1,156 entries
// aside and their M was 40% from the truncated SVD. The data are a rank-3
// matrix plus noise and an offset, so that the rank-3 fit is a real
// truncation.
func TestAlphaZeroIsPCA(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	y := mat.NewDense(60, 45, nil)
	y.Mul(gaussianFactor(rng, 60, 3), gaussianFactor(rng, 45, 3).T())
	y.Apply(func(_, _ int, v float64) float64 { return v + 0.3*rng.NormFloat64() + 10 }, y)
	var svd mat.SVD
	if !svd.Factorize(y, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	sig := svd.Values(nil)
	want := mat.NewDense(60, 45, nil)
	for k := range 3 {
		var outer mat.Dense
		outer.Outer(sig[k], u.ColView(k), v.ColView(k))
		want.Add(want, &outer)
	}
	for _, m := range append(allMethods(), &methods.Auto{}) {
		if m.Capabilities().FitsOffset {
			continue // ALS with biases fits rank 3 plus row and column biases, another model
		}
		res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 3}, m)
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		// The SVD is computed to tsvd's 1e-10; the gradient methods stop
		// at their factor-change rule, a relative step of about 1e-8.
		if d := relDiff(res.LowRank(), want); d > 1e-6 || res.S.NNZ() != 0 {
			t.Errorf("%s: M is %.3g from the truncated SVD, S has %d entries", m.Name(), d, res.S.NNZ())
		}
	}
}

// TestSpikes: one to three entries of 1e12, 1e100 or 1e200 among O(1)
// data. Every verified answer is right to 1e-6 and the default verifies;
// before, the residual rules stopped every method after 0–1 iterations
// and IALM put the spike into M (error 1.4e11).
func TestSpikes(t *testing.T) {
	for _, size := range []float64{1e12, 1e100, 1e200} {
		c, err := hostile.Build(hostile.Spec{Class: "spike", D1: 90, D2: 80, Rank: 3, Alpha: 0.1, Spikes: 3, SpikeSize: size, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range append(allMethods(), &methods.Auto{}) {
			res, err := rpca.Solve(context.Background(), c.Problem, c.Settings, m)
			if err != nil {
				t.Fatalf("%s, spike %g: %v", m.Name(), size, err)
			}
			e := hostile.Error(res.U, res.V, c.A, c.B)
			switch {
			case res.Verification.Verified && e > 1e-6:
				t.Errorf("%s, spike %g: verified with error %.3g", m.Name(), size, e)
			case m.Name() == methods.AutoName && !res.Verification.Verified:
				t.Errorf("auto, spike %g: not verified (%s)", size, res.Verification.Reason)
			}
		}
	}
}
