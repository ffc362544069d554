package ratings

import (
	"math"
	"math/rand/v2"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// tNoise draws the weights of the Gibbs fit's Student-t noise (Gibbs.Tail):
// a rating with residual e under noise precision τ has the conditional
// weight w ~ Gamma((ν+1)/2, rate (ν + τe²)/2). The shape is the same for
// every rating, so its constants are computed once; the draw is Marsaglia
// and Tsang's ("A simple method for generating gamma variables", ACM TOMS
// 26(3), 2000), which gonum's distuv.Gamma also uses, without the
// per-call set-up that makes distuv.Gamma the larger part of the draw's
// cost here (BenchmarkGammaDraw).
type tNoise struct {
	nu   float64
	d, c float64 // Marsaglia–Tsang's d = a − 1/3 and c = 1/√(9d) for the shape a
}

// newTNoise returns the weight sampler for ν ≥ 1 degrees of freedom (so
// the shape (ν+1)/2 is at least 1, as the method needs).
func newTNoise(nu float64) tNoise {
	d := (nu+1)/2 - 1.0/3
	return tNoise{nu: nu, d: d, c: 1 / math.Sqrt(9*d)}
}

// gamma returns a Gamma((ν+1)/2, 1) variate.
func (t tNoise) gamma(rng *rand.Rand) float64 {
	for {
		x := rng.NormFloat64()
		v := 1 + t.c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*(x*x)*(x*x) || math.Log(u) < 0.5*x*x+t.d*(1-v+math.Log(v)) {
			return t.d * v
		}
	}
}

// tNoiseEvery is how often, in sweeps, the Gibbs fit draws the t weights:
// after every second sweep, so two sweeps of the factors share one draw
// of the weights. A scan that draws some blocks less often than others
// still leaves the posterior invariant, and the draw and the gathering of
// the weights into the lines cost about as much as the rest of a sweep's
// passes over the ratings (docs/performance.md).
const tNoiseEvery = 2

// weightChunk is the number of ratings whose weights one stream draws.
const weightChunk = 1 << 14

// draw sets sw[k] to √w_k, w_k the weight of the rating with residual
// res[k], each chunk of weightChunk ratings from its own stream (seed,
// sweep, chunk), so the draws do not depend on the number of workers.
// (The square root is what the Gibbs lines scale their rows by.)
func (t tNoise) draw(sw []float32, res []float64, tau float64, seed, sweep uint64, workers int) {
	kernels.ForEach((len(sw)+weightChunk-1)/weightChunk, workers, func(c int) {
		rng := rand.New(rand.NewPCG(seed^sweep<<32^0x7e11, uint64(c)))
		for k := c * weightChunk; k < min(len(sw), (c+1)*weightChunk); k++ {
			e := res[k]
			sw[k] = float32(math.Sqrt(t.gamma(rng) / (0.5*t.nu + 0.5*tau*e*e))) // halves first: ν may be near the largest float64
		}
	})
}
