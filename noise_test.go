package rpca_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/methods"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

// noisyInstance is the paper's model at d×d, rank r, α = 0.1, with
// Gaussian noise of rms level·rms(L*) added to every entry of Y, and the
// truth's factors (L* = A·Bᵀ).
func noisyInstance(t *testing.T, d, r int, level float64, seed uint64) (y, a, b *mat.Dense) {
	t.Helper()
	in, err := synth.Dense(synth.Config{D1: d, D2: d, Rank: r, Alpha: 0.1, Kappa: 1, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	var l mat.Dense
	l.Mul(in.A, in.B.T())
	rms := mat.Norm(&l, 2) / float64(d)
	rng := rand.New(rand.NewPCG(seed, 99))
	for i := range d {
		row := in.Y.RawRowView(i)
		for j := range row {
			row[j] += level * rms * rng.NormFloat64()
		}
	}
	return in.Y, in.A, in.B
}

// TestNoisyDataVerified: with dense Gaussian noise on every entry (what
// real data have), an answer at the right rank is verified "up to
// noise" and is right to within the noise. The noise entries the method
// put into S and Solve then dropped from it as noise are not held
// against the method's stationarity (verify.Dropped); before that, every
// such answer failed the stationarity check at 0.7–0.8 times white
// noise's share. The error bound is the noise level itself: a fit of
// rank r averages the noise over d entries per component, so its error
// is well below the noise, and a missed component or a corruption left
// in M is far above it.
func TestNoisyDataVerified(t *testing.T) {
	for _, tc := range []struct {
		r     int
		level float64
	}{{1, 0.01}, {2, 0.01}, {2, 0.1}, {5, 0.01}, {5, 0.1}} {
		y, a, b := noisyInstance(t, 200, tc.r, tc.level, uint64(tc.r))
		for _, name := range []string{"auto", "gd", "scaledgd"} {
			m, err := methods.New(name, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: tc.r, Alpha: 0.1}, m)
			if err != nil {
				t.Fatal(err)
			}
			e := metrics.CentredRelError(res.U, res.V, a, b)
			t.Logf("rank %d, noise %g, %s (%s): error %.3g", tc.r, tc.level, name, res.Method, e)
			if !res.Verification.Verified || e > tc.level {
				t.Errorf("rank %d, noise %g, %s (%s): %s, error %.3g (bound %g)", tc.r, tc.level, name, res.Method, res.Verification, e, tc.level)
			}
		}
	}
}

// TestNoisyDataRankTooLow: under the same noise, an answer one rank short
// is not verified: the missed component is structure in the residual.
func TestNoisyDataRankTooLow(t *testing.T) {
	y, _, _ := noisyInstance(t, 200, 5, 0.01, 5)
	for _, name := range []string{"gd", "scaledgd", "accaltproj"} {
		m, _ := methods.New(name, false, nil)
		res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 4, Alpha: 0.1}, m)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verification.Verified {
			t.Errorf("%s at rank 4 of 5: verified (%s)", name, res.Verification)
		}
	}
}
