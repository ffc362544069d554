package synth

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/sample"
)

// Streams of random numbers derived from the seed.
const (
	streamA uint64 = 1 + iota
	streamB
	streamPhi // Φ: drawn by internal/sample, whose position stream is this one
	streamPerm
	streamIndicator
	streamValue
)

// streamKey, hashAt, seedRow and mix64 are the counter-based generator
// shared with the sampler (internal/sample), so that Φ here is the
// sampler's Φ for the same p and seed.
var (
	streamKey = sample.Key
	hashAt    = sample.HashAt
	seedRow   = sample.SeedRow
	mix64     = sample.Mix
)

// unit maps a 64-bit hash to [0, 1) with 53 random bits.
func unit(h uint64) float64 { return float64(h>>11) * 0x1p-53 }

// gaussian returns a d×r matrix with i.i.d. N(0, sd²) entries; row i comes
// from the PCG generator of (key, i).
func gaussian(d, r int, sd float64, key uint64, workers int) *mat.Dense {
	m := mat.NewDense(d, r, nil)
	raw := m.RawMatrix()
	const rowsPer = 4096
	nb := (d + rowsPer - 1) / rowsPer
	kernels.ForEach(nb, workers, func(b int) {
		pcg := new(rand.PCG)
		rng := rand.New(pcg)
		for i := b * rowsPer; i < min((b+1)*rowsPer, d); i++ {
			seedRow(pcg, key, i)
			row := raw.Data[i*raw.Stride : i*raw.Stride+r]
			for k := range row {
				row[k] = sd * rng.NormFloat64()
			}
		}
	})
	return m
}

// permutation returns a uniformly random permutation of [0, n) as int32.
func permutation(rng *rand.Rand, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// ceilMulDiv returns ⌈a·b/c⌉ for a·b/c < 2⁶⁴, without overflow.
func ceilMulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	lo, carry := bits.Add64(lo, c-1, 0)
	hi += carry
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// corruptor evaluates S*_ij on demand, identically for every caller.
type corruptor struct {
	kind   Corruption
	d1, d2 int
	mag    float64
	// Random: S_ij ≠ 0 iff the top 53 bits of hashAt(keyInd, i·d2+j) are
	// below thr, i.e. with probability α (thr = ⌈α·2⁵³⌉ makes the
	// comparison exactly unit(h) < α).
	thr            uint64
	keyInd, keyVal uint64
	// Deterministic: slots t ∈ [0, total); row π(⌊t·d1/total⌋) and column
	// σ(t mod d2), stored as the inverse permutations.
	total          uint64
	rowInv, colInv []int32
}

func newCorruptor(c *Config) *corruptor {
	cr := &corruptor{
		kind:   c.Corruption,
		d1:     c.D1,
		d2:     c.D2,
		mag:    c.magnitude(),
		thr:    uint64(math.Ceil(c.Alpha * 0x1p53)),
		keyInd: streamKey(c.Seed, streamIndicator),
		keyVal: streamKey(c.Seed, streamValue),
	}
	if cr.kind == Deterministic {
		mr := uint64(math.Floor(c.Alpha * float64(c.D2))) // per row
		mc := uint64(math.Floor(c.Alpha * float64(c.D1))) // per column
		cr.total = min(uint64(c.D1)*mr, uint64(c.D2)*mc)
		key := streamKey(c.Seed, streamPerm)
		rng := rand.New(rand.NewPCG(key, mix64(key)))
		// The inverse of a uniform permutation is uniform: draw the
		// inverses directly.
		cr.rowInv = permutation(rng, c.D1)
		cr.colInv = permutation(rng, c.D2)
	}
	return cr
}

// rowCorr evaluates the corruptions of one row.
type rowCorr struct {
	c          *corruptor
	base       uint64 // i·d2
	start, cnt int    // Deterministic: cyclic range of σ⁻¹(j)
}

func (c *corruptor) row(i int) rowCorr {
	rc := rowCorr{c: c, base: uint64(i) * uint64(c.d2)}
	if c.kind == Deterministic && c.total > 0 {
		r := uint64(c.rowInv[i])
		lo := ceilMulDiv(r, c.total, uint64(c.d1))
		hi := ceilMulDiv(r+1, c.total, uint64(c.d1))
		rc.start = int(lo % uint64(c.d2))
		rc.cnt = int(hi - lo)
	}
	return rc
}

// at returns S*_ij and whether it is non-zero (a corruption).
func (rc *rowCorr) at(j int) (float64, bool) {
	c := rc.c
	n := rc.base + uint64(j)
	if c.kind == Random {
		if hashAt(c.keyInd, n)>>11 >= c.thr {
			return 0, false
		}
		return (2*unit(hashAt(c.keyVal, n)) - 1) * c.mag, true
	}
	q := int(c.colInv[j]) - rc.start
	if q < 0 {
		q += c.d2
	}
	if q >= rc.cnt {
		return 0, false
	}
	h := hashAt(c.keyVal, n)
	v := c.mag * (1 + unit(h)) / 2
	if h&1 != 0 {
		v = -v
	}
	return v, true
}
