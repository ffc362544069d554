package rpca_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/altproj"
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

// rectNoisy is a d1×d2 matrix of rank r, the product of Gaussian factors
// scaled to singular values near 10√(d1·d2), plus Gaussian noise of rms
// 0.3 on every entry (0.3/10 = 3% of the signal's), and its truth.
func rectNoisy(d1, d2, r int, seed uint64) (y, a, b *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 23))
	a, b = mat.NewDense(d1, r, nil), mat.NewDense(d2, r, nil)
	for _, m := range []*mat.Dense{a, b} {
		raw := m.RawMatrix()
		for k := range raw.Data {
			raw.Data[k] = rng.NormFloat64()
		}
	}
	a.Scale(10, a)
	y = mat.NewDense(d1, d2, nil)
	y.Mul(a, b.T())
	raw := y.RawMatrix()
	for k := range raw.Data {
		raw.Data[k] += 0.3 * rng.NormFloat64()
	}
	return y, a, b
}

// TestNoisyFewRowsOrColumnsVerified: noisy low-rank matrices with few
// rows or columns (60×40, 100×40, 40×60, 1500×50: a table of samples by
// features), solved at their rank by the default chain, are verified
// and accurate to within the noise. Before the sketch of the residual was
// drawn orthonormal and orthogonal to M's row space (verify.WithSketch),
// its Gaussian columns were far from orthogonal when d2 is small, the
// structure check took that for structure, and every seed of the first
// two shapes and of the last failed it.
func TestNoisyFewRowsOrColumnsVerified(t *testing.T) {
	if raceEnabled {
		t.Skip("numerical sweep; nothing concurrent that the other tests do not run")
	}
	auto, _ := methods.New("auto", false, nil)
	for _, sz := range [][3]int{{60, 40, 2}, {100, 40, 1}, {40, 60, 2}, {1500, 50, 3}} {
		for seed := range uint64(5) {
			y, a, b := rectNoisy(sz[0], sz[1], sz[2], seed)
			res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: sz[2], Alpha: 0.1, Seed: seed}, auto)
			if err != nil {
				t.Fatal(err)
			}
			// The noise is 3% of the signal; a rank-r fit averages it.
			if e := metrics.CentredRelError(res.U, res.V, a, b); !res.Verification.Verified || e > 0.03 {
				t.Errorf("%d×%d rank %d seed %d: %s's answer %s, error %.3g", sz[0], sz[1], sz[2], seed, res.Method, res.Verification, e)
			}
		}
	}
}

// TestFewColumnsMissedComponent: the structure check still sees a
// component the rank left out, at ten times the noise's edge (singular
// value 10·0.3·(√d1 + √d2)), on the shapes of the test above.
func TestFewColumnsMissedComponent(t *testing.T) {
	if raceEnabled {
		t.Skip("numerical sweep; nothing concurrent that the other tests do not run")
	}
	for _, sz := range [][3]int{{60, 40, 2}, {100, 40, 1}, {1500, 50, 3}} {
		d1, d2, r := sz[0], sz[1], sz[2]
		for seed := range uint64(5) {
			y, _, _ := rectNoisy(d1, d2, r, seed)
			// The missed component: a unit rank-one direction at 10× the edge.
			rng := rand.New(rand.NewPCG(seed, 31))
			x, z := make([]float64, d1), make([]float64, d2)
			for i := range x {
				x[i] = rng.NormFloat64() / math.Sqrt(float64(d1))
			}
			for j := range z {
				z[j] = rng.NormFloat64() / math.Sqrt(float64(d2))
			}
			s := 10 * 0.3 * (math.Sqrt(float64(d1)) + math.Sqrt(float64(d2)))
			for i := range d1 {
				row := y.RawRowView(i)
				for j := range row {
					row[j] += s * x[i] * z[j]
				}
			}
			ver, err := rpca.Verify(&rpca.Problem{Dense: y}, truncatedSVD(y, r), rpca.Settings{Rank: r, Alpha: 0.1, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if ver.Verified {
				t.Errorf("%d×%d rank %d seed %d: a missed component at 10× the noise edge was verified (structure %.3g)", d1, d2, r, seed, ver.Structure)
			}
		}
	}
}

// truncatedSVD is the rank-r least-squares answer to y by gonum's full
// SVD, with S empty: U = L·Σ, V = R.
func truncatedSVD(y *mat.Dense, r int) *rpca.Result {
	var svd mat.SVD
	svd.Factorize(y, mat.SVDThin)
	var l, rr mat.Dense
	svd.UTo(&l)
	svd.VTo(&rr)
	sv := svd.Values(nil)
	d1, d2 := y.Dims()
	u := mat.DenseCopyOf(l.Slice(0, d1, 0, r))
	for c := range r {
		col := u.ColView(c).(*mat.VecDense)
		col.ScaleVec(sv[c], col)
	}
	return &rpca.Result{U: u, V: mat.DenseCopyOf(rr.Slice(0, d2, 0, r)), S: &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)}}
}

// TestAccAltProjNoisy: AccAltProj and AltProj on noisy data, with and without 5%
// gross corruptions, stops by its own rule well before its cap, is
// verified, and is accurate to within the noise (3% of the signal), with
// S holding between 90% and 100% of the number of corruptions. Before its threshold had a floor at the
// noise of the fit, the threshold descended into the noise, S took it
// up, and every AccAltProj run went to the cap of 300 and failed the
// verification; AltProj ended its schedule on the same unverified
// answer.
func TestAccAltProjNoisy(t *testing.T) {
	if raceEnabled {
		t.Skip("numerical sweep; nothing concurrent that the other tests do not run")
	}
	for _, m := range []rpca.Method{&accaltproj.Method{}, &altproj.Method{}} {
		for seed := range uint64(3) {
			for _, rate := range []float64{0, 0.05} {
				y, a, b := rectNoisy(300, 200, 3, seed)
				rng := rand.New(rand.NewPCG(seed, 41))
				n := 0
				for i := range 300 {
					for j := range 200 {
						if rng.Float64() < rate {
							y.Set(i, j, y.At(i, j)+250*(rng.Float64()-0.5))
							n++
						}
					}
				}
				res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 3, Alpha: 0.1, Seed: seed}, m)
				if err != nil {
					t.Fatal(err)
				}
				e := metrics.CentredRelError(res.U, res.V, a, b)
				if !(res.Stop.Converged() || res.Stop == rpca.StopNoiseFloor) || res.Iterations > 100 || !res.Verification.Verified || e > 0.01 || res.S.NNZ() > n || res.S.NNZ() < 9*n/10 {
					t.Errorf("%s, seed %d, corruptions %g: %s after %d iterations, %s, error %.3g, %d entries in S for %d corruptions",
						m.Name(), seed, rate, res.Stop, res.Iterations, res.Verification, e, res.S.NNZ(), n)
				}
			}
		}
	}
}

// TestNoisyOffsetSpikesFewRowsOrColumns: the shapes of
// TestNoisyFewRowsOrColumnsVerified with an offset of 1000 (a hundred
// times the signal) and a spike of 500 on every 53rd entry. At the rank
// that counts the constant (r + 1: M = L + c·11ᵀ), the default chain is
// verified, right to within the noise against the truth with its offset
// (the error centred, so the offset cannot hide it), and S holds exactly
// the spikes. At rank r, which leaves no room for the constant, it is
// not verified.
func TestNoisyOffsetSpikesFewRowsOrColumns(t *testing.T) {
	if raceEnabled {
		t.Skip("numerical sweep; nothing concurrent that the other tests do not run")
	}
	auto, _ := methods.New("auto", false, nil)
	for _, sz := range [][3]int{{60, 40, 2}, {100, 40, 1}, {1500, 50, 1}} {
		d1, d2, r := sz[0], sz[1], sz[2]
		for seed := range uint64(2) {
			y, a, b := rectNoisy(d1, d2, r, seed)
			raw := y.RawMatrix()
			spikes := 0
			for k := range raw.Data {
				raw.Data[k] += 1000
				if k%53 == 0 {
					raw.Data[k] += 500
					spikes++
				}
			}
			// The truth with its offset: one more column, 1000·1·1ᵀ.
			at, bt := mat.NewDense(d1, r+1, nil), mat.NewDense(d2, r+1, nil)
			at.Slice(0, d1, 0, r).(*mat.Dense).Copy(a)
			bt.Slice(0, d2, 0, r).(*mat.Dense).Copy(b)
			for i := range d1 {
				at.Set(i, r, 1000)
			}
			for j := range d2 {
				bt.Set(j, r, 1)
			}
			for _, rank := range []int{r + 1, r} {
				res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: rank, Alpha: 0.1, Seed: seed}, auto)
				if err != nil {
					t.Fatal(err)
				}
				e := metrics.CentredRelError(res.U, res.V, at, bt)
				switch {
				case rank == r && res.Verification.Verified:
					t.Errorf("%d×%d rank %d + offset, solved at rank %d, seed %d: verified (error %.3g)", d1, d2, r, rank, seed, e)
				case rank == r+1 && (!res.Verification.Verified || e > 0.03 || res.S.NNZ() != spikes):
					t.Errorf("%d×%d rank %d + offset, solved at rank %d, seed %d: %s's answer %s, error %.3g, %d entries in S for %d spikes",
						d1, d2, r, rank, seed, res.Method, res.Verification, e, res.S.NNZ(), spikes)
				}
			}
		}
	}
}

// partialOffsetNoisy is a 150×120 matrix of rank r plus a constant 10
// (rank r + 1 in all), with Gaussian noise of 1% of a component's rms and
// 4% of its entries moved by up to 5 times r's rms, observed at rate
// 0.5, and its truth (the offset as one more column).
func partialOffsetNoisy(t *testing.T, r int, seed uint64) (p *rpca.Problem, a, b *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 31))
	const d1, d2 = 150, 120
	a, b = mat.NewDense(d1, r+1, nil), mat.NewDense(d2, r+1, nil)
	for i := range d1 {
		for k := range r {
			a.Set(i, k, rng.NormFloat64())
		}
		a.Set(i, r, 10)
	}
	for j := range d2 {
		for k := range r {
			b.Set(j, k, rng.NormFloat64())
		}
		b.Set(j, r, 1)
	}
	var y mat.Dense
	y.Mul(a, b.T())
	rms := math.Sqrt(float64(r))
	var rows, cols []int
	var vals []float64
	for i := range d1 {
		for j := range d2 {
			v := y.At(i, j) + 0.01*rms*rng.NormFloat64()
			if rng.Float64() < 0.04 {
				v += 5 * rms * (2*rng.Float64() - 1)
			}
			if rng.Float64() < 0.5 {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
			}
		}
	}
	o, err := rpca.NewObserved(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	return &rpca.Problem{Observed: o}, a, b
}

// TestPartialMissedComponents: on half-observed noisy data of rank 6 (5
// plus an offset), an answer at a lower rank leaves components in the
// residual. Seen through half the entries they look nearly white to the
// sketch, and ALS's answer at rank 3 was "verified up to noise" with a
// residual of 0.96 of M's variation and an error of 0.8 (the rank
// search found it). The residual's spectral norm against its noise edge
// (verify.SpectralRatio) refuses such answers.
func TestPartialMissedComponents(t *testing.T) {
	// Seeds 8, 11, 30 and 47 are the 4 of 60 whose answer at rank 3 the
	// other checks passed (residual 0.96–0.99, error 0.77–0.80).
	for _, seed := range []uint64{8, 11, 30, 47, 1, 2} {
		p, a, b := partialOffsetNoisy(t, 5, seed)
		for _, k := range []int{3, 4} {
			res, err := rpca.Solve(context.Background(), p, rpca.Settings{Rank: k, Alpha: 0.1, Seed: seed}, &methods.Auto{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verification.Verified {
				t.Errorf("seed %d, rank %d of 6: verified (%s), error %.3g", seed, k, res.Verification, metrics.CentredRelError(res.U, res.V, a, b))
			}
		}
	}
}
