// Package hostile generates valid but hostile robust-PCA problems with a
// known truth, for the adversarial property suite: offsets, rank one, an
// over-stated rank, ill conditioning, huge spikes, α = 0, zero and
// constant lines, the smallest sizes, extreme scales, and nearly empty
// observations, fully or partially observed. Every case is determined by
// its seed.
//
// The suite's two assertions use Error, which measures
// ‖U·Vᵀ − A·Bᵀ‖_F / ‖A·Bᵀ − mean(A·Bᵀ)‖_F entry by entry with compensated
// (doubled-precision) dot products, so that an offset of 10⁹ neither sits
// in the denominator nor drowns the numerator in rounding.
package hostile

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
)

// Case is one problem of the suite.
type Case struct {
	Name     string
	Problem  *rpca.Problem
	Settings rpca.Settings
	// A and B are the factors of the true low-rank part, offset included
	// (M* = A·Bᵀ).
	A, B *mat.Dense
	// Holds: the model holds with margin (the true rank is the one asked
	// for, corruptions are well below α and of moderate size, the matrix
	// is well conditioned enough and large enough): the default method
	// is expected to verify here.
	Holds bool
	// Class names the hostile feature, for reports.
	Class string
	// Noise is the relative level of the noise on every entry (Spec.Noise):
	// a verified answer is right when its error is within it.
	Noise float64
}

// Spec is the recipe of a case.
type Spec struct {
	Class          string
	D1, D2         int
	Rank           int     // true rank of the varying part
	AskRank        int     // the rank asked for (0: Rank, plus one with an offset)
	Alpha          float64 // the α asked for
	TrueAlpha      float64 // the rate of corruptions drawn (0: Alpha/2)
	Mag            float64 // corruption size in multiples of M's rms (0: 5)
	Offset         float64 // a constant added to M
	Kappa          float64 // condition number of the varying part (0, 1: none)
	Spikes         int     // entries replaced by ±SpikeSize
	SpikeSize      float64
	Scale          float64 // everything multiplied by this (0: 1)
	P              float64 // observation rate (0: all)
	ZeroRows       int     // rows of M set to zero (with the offset: constant)
	ConstCols      int     // columns of M set to the offset
	Seed           uint64
	Holds          bool
	NoCorruptions  bool
	Multiplicative bool // M = a·bᵀ with positive a, b, and no other offset
	// Noise is the rms of Gaussian noise added to every entry of Y, in
	// multiples of the rms of M's varying part (0: none).
	Noise float64
}

// Build makes the case of s.
func Build(s Spec) (*Case, error) {
	rng := rand.New(rand.NewPCG(s.Seed, 0xbad))
	d1, d2, r := s.D1, s.D2, s.Rank
	ask := s.AskRank
	if ask == 0 {
		ask = r
		if s.Offset != 0 {
			ask++
		}
	}
	scale := s.Scale
	if scale == 0 {
		scale = 1
	}
	a, b := truthFactors(s, rng, scale)
	var m mat.Dense
	m.Mul(a, b.T())
	y := corrupt(&m, s, rng)
	if s.Noise > 0 {
		addNoise(y, &m, s.Noise, rand.New(rand.NewPCG(s.Seed, 0x5e15e)))
	}
	c := &Case{Class: s.Class, A: a, B: b, Holds: s.Holds, Noise: s.Noise,
		Settings: rpca.Settings{Rank: ask, Alpha: s.Alpha, Seed: s.Seed}}
	c.Name = fmt.Sprintf("%s/%dx%d/r%d(ask %d)/a%g/off%g/k%g/spk%d×%g/sc%g/p%g/noise%g/seed%d",
		s.Class, d1, d2, r, ask, s.Alpha, s.Offset, s.Kappa, s.Spikes, s.SpikeSize, scale, s.P, s.Noise, s.Seed)
	if s.P == 0 || s.P >= 1 {
		c.Problem = &rpca.Problem{Dense: y}
		return c, nil
	}
	obs, err := rpca.Sampling{P: s.P, Seed: s.Seed, Cover: true}.Dense(y)
	if err != nil {
		return nil, err
	}
	c.Problem = &rpca.Problem{Observed: obs}
	return c, nil
}

// addNoise adds Gaussian noise of rms level·rms(M − mean M) to every
// entry of y.
func addNoise(y, m *mat.Dense, level float64, rng *rand.Rand) {
	d1, d2 := m.Dims()
	n := float64(d1 * d2)
	mean := mat.Sum(m) / n
	var ss float64
	for i := range d1 {
		for _, v := range m.RawRowView(i) {
			ss += (v - mean) * (v - mean)
		}
	}
	sd := level * math.Sqrt(ss/n)
	for i := range d1 {
		row := y.RawRowView(i)
		for j := range row {
			row[j] += sd * rng.NormFloat64()
		}
	}
}

// truthFactors draws the truth's factors: Gaussian columns with scales
// spread over [1/√κ, 1] on each side (κ between the singular values),
// the offset as one more column pair, zeroed rows and columns.
func truthFactors(s Spec, rng *rand.Rand, scale float64) (a, b *mat.Dense) {
	d1, d2, r := s.D1, s.D2, s.Rank
	cols := r
	if s.Offset != 0 {
		cols++
	}
	a, b = mat.NewDense(d1, max(cols, 1), nil), mat.NewDense(d2, max(cols, 1), nil)
	for k := range r {
		w := 1.0
		if s.Kappa > 1 && r > 1 {
			w = math.Pow(s.Kappa, -0.5*float64(k)/float64(r-1))
		}
		for i := range d1 {
			a.Set(i, k, w*rng.NormFloat64()*scale)
		}
		for j := range d2 {
			b.Set(j, k, w*rng.NormFloat64())
		}
	}
	if s.Multiplicative {
		for i := range d1 {
			a.Set(i, 0, (3+rng.Float64())*scale)
		}
		for j := range d2 {
			b.Set(j, 0, 3+rng.Float64())
		}
	}
	if s.Offset != 0 {
		for i := range d1 {
			a.Set(i, r, s.Offset*scale)
		}
		for j := range d2 {
			b.Set(j, r, 1)
		}
	}
	for i := range min(s.ZeroRows, d1) {
		for k := range r {
			a.Set(i*(d1/max(s.ZeroRows, 1)), k, 0)
		}
	}
	for j := range min(s.ConstCols, d2) {
		for k := range r {
			b.Set(j*(d2/max(s.ConstCols, 1)), k, 0)
		}
	}
	return a, b
}

// corrupt returns a copy of m with corruptions on a fraction TrueAlpha of
// the entries, uniform in ±Mag·rms of M's varying part, and the spikes.
func corrupt(m *mat.Dense, s Spec, rng *rand.Rand) *mat.Dense {
	d1, d2 := m.Dims()
	rms := centredRMS(m)
	mag := s.Mag
	if mag == 0 {
		mag = 5
	}
	ta := s.TrueAlpha
	if ta == 0 {
		ta = s.Alpha / 2
	}
	y := mat.DenseCopyOf(m)
	if !s.NoCorruptions {
		for i := range d1 {
			for j := range d2 {
				if rng.Float64() < ta {
					y.Set(i, j, y.At(i, j)+mag*rms*(2*rng.Float64()-1))
				}
			}
		}
	}
	for range s.Spikes {
		i, j := rng.IntN(d1), rng.IntN(d2)
		y.Set(i, j, math.Copysign(s.SpikeSize, rng.Float64()-0.5))
	}
	return y
}

// centredRMS returns the root mean square of m less its mean, scaled so
// that nothing overflows.
func centredRMS(m *mat.Dense) float64 {
	d1, d2 := m.Dims()
	n := float64(d1 * d2)
	mean := 0.0
	for i := range d1 {
		for j := range d2 {
			mean += m.At(i, j) / n
		}
	}
	mx := 0.0
	for i := range d1 {
		for j := range d2 {
			mx = max(mx, math.Abs(m.At(i, j)-mean))
		}
	}
	if mx == 0 {
		return 0
	}
	ss := 0.0
	for i := range d1 {
		for j := range d2 {
			x := (m.At(i, j) - mean) / mx
			ss += x * x
		}
	}
	return mx * math.Sqrt(ss/n)
}

// Error returns ‖U·Vᵀ − A·Bᵀ‖_F / ‖A·Bᵀ − mean(A·Bᵀ)‖_F, each entry of
// U·Vᵀ − A·Bᵀ evaluated as one compensated dot product (Ogita, Rump and
// Oishi's Dot2: as accurate as in twice the working precision) and scaled
// before squaring, so that neither an offset nor an extreme scale costs
// accuracy. It returns 0 when both are 0 and +Inf when only the truth's
// varying part is.
func Error(u, v, a, b *mat.Dense) float64 {
	d1, k := u.Dims()
	d2, _ := v.Dims()
	_, r := a.Dims()
	// The truth's entries, their mean and centred scale.
	tv := make([]float64, d1*d2)
	ts := 0.0
	for i := range d1 {
		for j := range d2 {
			t := dot2(a.RawRowView(i), b.RawRowView(j), nil, nil)
			tv[i*d2+j] = t
			ts += t / float64(d1*d2)
		}
	}
	den := 0.0
	s := 0.0
	for _, t := range tv {
		s = max(s, math.Abs(t-ts))
	}
	num := 0.0
	for i := range d1 {
		for j := range d2 {
			diff := dot2(u.RawRowView(i), v.RawRowView(j), a.RawRowView(i), b.RawRowView(j))
			if s > 0 {
				num += (diff / s) * (diff / s)
				c := (tv[i*d2+j] - ts) / s
				den += c * c
			} else {
				num += diff * diff
			}
		}
	}
	_, _ = k, r
	switch {
	case den > 0:
		return math.Sqrt(num / den)
	case num == 0:
		return 0
	}
	return math.Inf(1)
}

// dot2 returns x·y − p·q (p, q may be nil) with Dot2's compensation.
func dot2(x, y, p, q []float64) float64 {
	var s, c float64
	add := func(h, l float64) {
		t := s + h
		z := t - s
		c += (s - (t - z)) + (h - z) + l
		s = t
	}
	for i, xi := range x {
		h := xi * y[i]
		add(h, math.FMA(xi, y[i], -h))
	}
	for i, pi := range p {
		h := -pi * q[i]
		add(h, math.FMA(-pi, q[i], -h))
	}
	return s + c
}

// Suite returns the suite's specs: n cases per class drawn from seed
// (n = 1 gives the smallest suite that touches every class).
func Suite(seed uint64, n int) []Spec {
	rng := rand.New(rand.NewPCG(seed, 0x5417e))
	var out []Spec
	size := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	next := func() uint64 { return rng.Uint64() }
	for range n {
		d := size(60, 160)
		// The paper's model, as a baseline.
		out = append(out, Spec{Class: "baseline", D1: d, D2: size(60, 160), Rank: 1 + rng.IntN(5), Alpha: 0.1, Seed: next(), Holds: true})
		// Offsets that the rank allows, with small corruptions.
		for _, off := range []float64{1e3, 1e6, 1e9} {
			out = append(out, Spec{Class: "offset", D1: size(60, 160), D2: size(60, 160), Rank: 1 + rng.IntN(4), Alpha: 0.1, Mag: 2, Offset: off, Seed: next(), Holds: true})
		}
		// A negative offset and a rank-one part.
		out = append(out, Spec{Class: "offset", D1: size(60, 160), D2: size(60, 160), Rank: 1, Alpha: 0.1, Offset: -3e4, Seed: next(), Holds: true})
		// Rank one, with and without an offset.
		out = append(out, Spec{Class: "rank1", D1: size(60, 200), D2: size(60, 200), Rank: 1, Alpha: 0.1, Seed: next(), Holds: true})
		out = append(out, Spec{Class: "rank1", D1: size(60, 200), D2: size(60, 200), Rank: 1, AskRank: 1, Alpha: 0.1, Multiplicative: true, Seed: next(), Holds: true})
		// A rank asked one above the truth's (with an offset: r + 2).
		out = append(out, Spec{Class: "rank+1", D1: size(60, 160), D2: size(60, 160), Rank: 2 + rng.IntN(3), AskRank: -1, Alpha: 0.1, Offset: 100, Seed: next()})
		// Ill conditioning.
		for _, k := range []float64{100, 1e4, 1e6} {
			out = append(out, Spec{Class: "kappa", D1: size(80, 160), D2: size(80, 160), Rank: 3 + rng.IntN(3), Alpha: 0.1, Kappa: k, Seed: next(), Holds: k <= 100})
		}
		// Huge spikes.
		for _, sp := range []float64{1e12, 1e100, 1e200} {
			out = append(out, Spec{Class: "spike", D1: size(60, 160), D2: size(60, 160), Rank: 1 + rng.IntN(4), Alpha: 0.1, Spikes: 1 + rng.IntN(3), SpikeSize: sp, Seed: next(), Holds: true})
		}
		// α = 0: no corruptions, plain PCA.
		out = append(out, Spec{Class: "alpha0", D1: size(40, 160), D2: size(40, 160), Rank: 1 + rng.IntN(5), Alpha: 0, NoCorruptions: true, Seed: next(), Holds: true})
		out = append(out, Spec{Class: "alpha0", D1: size(40, 160), D2: size(40, 160), Rank: 1 + rng.IntN(3), Alpha: 0, Offset: 50, NoCorruptions: true, Seed: next(), Holds: true})
		// Zero and constant lines.
		out = append(out, Spec{Class: "lines", D1: size(60, 160), D2: size(60, 160), Rank: 2 + rng.IntN(3), Alpha: 0.1, ZeroRows: 3, ConstCols: 2, Offset: 7, Seed: next()})
		out = append(out, Spec{Class: "lines", D1: size(60, 160), D2: size(60, 160), Rank: 2 + rng.IntN(3), Alpha: 0.1, ZeroRows: 2, Seed: next()})
		// The smallest sizes the model allows.
		out = append(out, Spec{Class: "small", D1: size(6, 12), D2: size(6, 12), Rank: 1, Alpha: 0.05, TrueAlpha: 0.02, Seed: next()})
		out = append(out, Spec{Class: "small", D1: size(12, 25), D2: size(12, 25), Rank: 2, Alpha: 0.05, Seed: next()})
		// Extreme scales.
		for _, sc := range []float64{1e290, 1e-300, 1e-160} {
			out = append(out, Spec{Class: "scale", D1: size(60, 160), D2: size(60, 160), Rank: 1 + rng.IntN(4), Alpha: 0.1, Scale: sc, Seed: next(), Holds: true})
		}
		// Partial observations of each kind.
		pr := func(lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }
		out = append(out,
			Spec{Class: "partial", D1: size(100, 200), D2: size(100, 200), Rank: 1 + rng.IntN(3), Alpha: 0.1, P: pr(0.4, 0.8), Seed: next(), Holds: true},
			Spec{Class: "partial-offset", D1: size(100, 200), D2: size(100, 200), Rank: 1 + rng.IntN(3), Alpha: 0.1, P: pr(0.4, 0.8), Offset: 20, Seed: next(), Holds: true},
			Spec{Class: "partial-offset", D1: size(100, 200), D2: size(100, 200), Rank: 1 + rng.IntN(3), Alpha: 0.1, P: pr(0.4, 0.8), Offset: 1e6, Seed: next(), Holds: true},
			Spec{Class: "partial-rank1", D1: size(100, 200), D2: size(100, 200), Rank: 1, Alpha: 0.1, P: pr(0.3, 0.6), Seed: next(), Holds: true},
			Spec{Class: "partial-kappa", D1: size(100, 200), D2: size(100, 200), Rank: 3, Alpha: 0.1, P: pr(0.5, 0.8), Kappa: 1e4, Seed: next()},
			Spec{Class: "partial-spike", D1: size(100, 200), D2: size(100, 200), Rank: 1 + rng.IntN(3), Alpha: 0.1, P: pr(0.4, 0.8), Spikes: 2, SpikeSize: 1e200, Seed: next(), Holds: true},
			Spec{Class: "partial-alpha0", D1: size(100, 200), D2: size(100, 200), Rank: 1 + rng.IntN(3), Alpha: 0, NoCorruptions: true, P: pr(0.4, 0.8), Seed: next(), Holds: true},
			Spec{Class: "partial-scale", D1: size(100, 200), D2: size(100, 200), Rank: 1 + rng.IntN(3), Alpha: 0.1, P: pr(0.4, 0.8), Scale: 1e-300, Seed: next(), Holds: true},
			Spec{Class: "partial-sparse", D1: size(100, 200), D2: size(100, 200), Rank: 1, Alpha: 0.1, P: pr(0.03, 0.06), Seed: next()},
		)
	}
	// Dense Gaussian noise on every entry, from a stream of its own so that
	// the cases above stay as they were before this class.
	nrng := rand.New(rand.NewPCG(seed, 0x9015e))
	nsize := func(lo, hi int) int { return lo + nrng.IntN(hi-lo+1) }
	for range n {
		out = append(out,
			Spec{Class: "noise", D1: nsize(120, 200), D2: nsize(120, 200), Rank: 1 + nrng.IntN(4), Alpha: 0.1, Noise: 0.01, Seed: nrng.Uint64(), Holds: true},
			Spec{Class: "noise", D1: nsize(120, 200), D2: nsize(120, 200), Rank: 1 + nrng.IntN(4), Alpha: 0.1, Noise: 0.1, Seed: nrng.Uint64()},
			Spec{Class: "partial-noise", D1: nsize(150, 200), D2: nsize(150, 200), Rank: 1 + nrng.IntN(3), Alpha: 0.1, Noise: 0.01, P: 0.3 + 0.4*nrng.Float64(), Seed: nrng.Uint64()},
		)
	}
	for i := range out {
		if out[i].AskRank == -1 {
			out[i].AskRank = out[i].Rank + 2 // the offset takes one
		}
	}
	return out
}
