package ratings

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestTNoiseGamma checks the hand-written gamma sampler against gonum's
// gamma CDF (an independent reference) by the Kolmogorov–Smirnov
// statistic of 20,000 draws, for ν = 1, 5 and 30 (shapes 1, 3 and 15.5):
// it must stay below 1.95/√n, the 0.1% critical value, so a true
// sampler fails this about once in a thousand seeds, while a shape off by
// 10% (tried: ν = 5 drawn as 5.5) exceeds it several times over.
func TestTNoiseGamma(t *testing.T) {
	const n = 20000
	for _, nu := range []float64{1, 5, 30} {
		tn := newTNoise(nu)
		rng := rand.New(rand.NewPCG(uint64(nu*10), 1))
		x := make([]float64, n)
		for k := range x {
			x[k] = tn.gamma(rng)
		}
		slices.Sort(x)
		ref := distuv.Gamma{Alpha: (nu + 1) / 2, Beta: 1}
		var ks float64
		for k, v := range x {
			c := ref.CDF(v)
			ks = max(ks, math.Abs(c-float64(k)/n), math.Abs(c-float64(k+1)/n))
		}
		if ks > 1.95/math.Sqrt(n) {
			t.Errorf("ν = %v: Kolmogorov–Smirnov statistic %.4f against Gamma(%v, 1), above %.4f", nu, ks, (nu+1)/2, 1.95/math.Sqrt(n))
		}
	}
}

// TestTNoiseDraw: the weights are square roots of Gamma((ν+1)/2, rate
// (ν + τe²)/2) draws, so their squares average (ν+1)/(ν + τe²) (checked
// within 5 standard errors for a small and a large residual), and the
// draws are the same with one worker and with three.
func TestTNoiseDraw(t *testing.T) {
	const n, nu, tau = 3 * weightChunk, 5.0, 4.0
	res := make([]float64, n)
	for k := range res {
		res[k] = float64(k%2) * 2 // residuals 0 and 2
	}
	sw1, sw3 := make([]float32, n), make([]float32, n)
	tn := newTNoise(nu)
	tn.draw(sw1, res, tau, 7, 3, 1)
	tn.draw(sw3, res, tau, 7, 3, 3)
	if !slices.Equal(sw1, sw3) {
		t.Fatal("the weights differ between one worker and three")
	}
	for _, e := range []float64{0, 2} {
		var sum, sq float64
		var m int
		for k, s := range sw1 {
			if res[k] == e {
				w := float64(s) * float64(s)
				sum, sq, m = sum+w, sq+w*w, m+1
			}
		}
		mean := sum / float64(m)
		se := math.Sqrt((sq/float64(m) - mean*mean) / float64(m))
		if want := (nu + 1) / (nu + tau*e*e); math.Abs(mean-want) > 5*se {
			t.Errorf("residual %v: mean weight %.4f, want %.4f ± %.4f", e, mean, want, 5*se)
		}
	}
}

// BenchmarkGammaDraw compares the t weights' gamma draw with gonum's
// distuv.Gamma of the same shape and stream.
func BenchmarkGammaDraw(b *testing.B) {
	const nu = DefaultGibbsTail
	b.Run("tnoise", func(b *testing.B) {
		tn := newTNoise(nu)
		rng := rand.New(rand.NewPCG(1, 2))
		var s float64
		for b.Loop() {
			s += tn.gamma(rng)
		}
		sink = s
	})
	b.Run("distuv", func(b *testing.B) {
		g := distuv.Gamma{Alpha: (nu + 1) / 2, Beta: 1, Src: rand.NewPCG(1, 2)}
		var s float64
		for b.Loop() {
			s += g.Rand()
		}
		sink = s
	})
}

var sink float64
