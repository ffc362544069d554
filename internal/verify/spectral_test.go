package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/factor"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/testmat"
)

// spectralCase builds observed data Y = U·Vᵀ + N + L on a random Φ of
// rate p, with N noise (Gaussian, or Student's t with 3 degrees of
// freedom) and L a rank-3 part of rms level that the answer U·Vᵀ leaves
// out (level 0: none).
func spectralCase(t *testing.T, d1, d2 int, p, level float64, heavy bool, seed uint64) (*observed.Matrix, blas64.General, blas64.General) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	u, v := testmat.Normal(rng, d1, 2), testmat.Normal(rng, d2, 2)
	la, lb := testmat.Normal(rng, d1, 3), testmat.Normal(rng, d2, 3)
	var rows, cols []int
	var vals []float64
	for i := range d1 {
		for j := range d2 {
			if rng.Float64() >= p {
				continue
			}
			n := rng.NormFloat64()
			if heavy {
				c := rng.NormFloat64()*rng.NormFloat64() + rng.NormFloat64()*rng.NormFloat64() + rng.NormFloat64()*rng.NormFloat64()
				n /= math.Sqrt(math.Abs(c)/3 + 1e-3)
			}
			l := 0.0
			for k := range 3 {
				l += la.At(i, k) * lb.At(j, k)
			}
			y := mat.Row(nil, i, u)[0]*v.At(j, 0) + u.At(i, 1)*v.At(j, 1) + 0.01*n + level*l/math.Sqrt(3)
			rows, cols, vals = append(rows, i), append(cols, j), append(vals, y)
		}
	}
	o, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	return o, u.RawMatrix(), v.RawMatrix()
}

// TestSpectralRatio: on residuals of independent noise (Gaussian or
// heavy-tailed, shapes from 60×40 to 400×300, rates 0.2 to 0.8) the
// ratio stays below SpectralMax with a margin; a rank-3 part left in the
// residual at the noise's level or above puts it over, where the
// sketch's statistic did not see it at p = 0.5.
func TestSpectralRatio(t *testing.T) {
	worst := 0.0
	for _, sh := range [][2]int{{60, 40}, {150, 120}, {400, 300}, {1000, 60}} {
		for _, p := range []float64{0.2, 0.5, 0.8} {
			for _, heavy := range []bool{false, true} {
				o, u, v := spectralCase(t, sh[0], sh[1], p, 0, heavy, uint64(sh[0]))
				r := SpectralRatio(o, u, v, CSR{RowPtr: make([]int, sh[0]+1)}, 1, 2)
				worst = math.Max(worst, r)
				if r > 1.25 {
					t.Errorf("%d×%d, p %g, heavy %v: noise gives %.3g", sh[0], sh[1], p, heavy, r)
				}
			}
		}
	}
	t.Logf("largest ratio on noise: %.3g", worst)
	for _, level := range []float64{0.01, 0.05} {
		o, u, v := spectralCase(t, 150, 120, 0.5, level, false, 7)
		r := SpectralRatio(o, u, v, CSR{RowPtr: make([]int, 151)}, 1, 2)
		t.Logf("a missed rank-3 part at %g (noise 0.01): %.3g", level, r)
		if !(r > SpectralMax) {
			t.Errorf("a missed rank-3 part at %g: ratio %.3g, not above %g", level, r, SpectralMax)
		}
	}
}

// BenchmarkSpectralRatio times the spectral check on a 2000×2000 rank-5
// matrix observed at 10% (400,000 entries) against one residual pass
// with the sketch's products (ResidualProducts), the pass the structure
// check already makes: their ratio is the check's cost.
func BenchmarkSpectralRatio(b *testing.B) {
	const d, r = 2000, 5
	rng := rand.New(rand.NewPCG(1, 2))
	u, v := mat.NewDense(d, r, nil), mat.NewDense(d, r, nil)
	for _, m := range []*mat.Dense{u, v} {
		raw := m.RawMatrix()
		for k := range raw.Data {
			raw.Data[k] = rng.NormFloat64()
		}
	}
	var rows, cols []int
	var vals []float64
	for i := range d {
		for j := range d {
			if rng.Float64() < 0.1 {
				y := mat.Dot(u.RowView(i), v.RowView(j)) + 0.01*rng.NormFloat64()
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, y)
			}
		}
	}
	o, err := observed.FromTriplets(d, d, rows, cols, vals)
	if err != nil {
		b.Fatal(err)
	}
	sp := CSR{RowPtr: make([]int, d+1)}
	b.Run("spectral", func(b *testing.B) {
		for range b.N {
			SpectralRatio(o, u.RawMatrix(), v.RawMatrix(), sp, 1, 0)
		}
	})
	b.Run("undetermined", func(b *testing.B) {
		qu, _ := factor.ThinQ(u)
		qv, _ := factor.ThinQ(v)
		for range b.N {
			if _, _, _, bad := Undetermined(o, qu, qv, sp, 0); bad {
				b.Fatal("a line of random factors flagged")
			}
		}
	})
	b.Run("residual-pass", func(b *testing.B) {
		x, z := mat.NewDense(d, 2*r+8, nil), mat.NewDense(d, r, nil)
		ex, etz := mat.NewDense(d, 2*r+8, nil), mat.NewDense(d, r, nil)
		for range b.N {
			ResidualProducts(blas64.General{}, o, u.RawMatrix(), v.RawMatrix(), sp, x.RawMatrix(), z.RawMatrix(), ex.RawMatrix(), etz.RawMatrix(), 0)
		}
	})
}
