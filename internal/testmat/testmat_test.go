package testmat

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRelErr checks the reference on a case worked by hand: UVᵀ = 2·ABᵀ
// gives an error of exactly 1, and equal products give 0.
func TestRelErr(t *testing.T) {
	a := mat.NewDense(3, 1, []float64{1, 2, 3})
	b := mat.NewDense(2, 1, []float64{4, 5})
	u := mat.NewDense(3, 1, []float64{2, 4, 6})
	if e := RelErr(u, b, a, b); math.Abs(e-1) > 1e-15 {
		t.Errorf("RelErr = %v, want 1", e)
	}
	if e := RelErr(a, b, a, b); e != 0 {
		t.Errorf("RelErr of equal products = %v, want 0", e)
	}
}

// TestNormal checks the shape, the row-major order of the draws and that
// the sample moments are those of N(0, 1) within 5 standard errors.
func TestNormal(t *testing.T) {
	m := Normal(rand.New(rand.NewPCG(1, 2)), 300, 200)
	if r, c := m.Dims(); r != 300 || c != 200 {
		t.Fatalf("dims %d×%d", r, c)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if first, second := rng.NormFloat64(), rng.NormFloat64(); m.At(0, 0) != first || m.At(0, 1) != second {
		t.Errorf("draws not in row-major order")
	}
	var sum, sq float64
	for _, x := range m.RawMatrix().Data {
		sum += x
		sq += x * x
	}
	n := 300.0 * 200
	if mean := sum / n; math.Abs(mean) > 5/math.Sqrt(n) {
		t.Errorf("mean %v", mean)
	}
	if v := sq / n; math.Abs(v-1) > 5*math.Sqrt(2/n) {
		t.Errorf("variance %v", v)
	}
	g := NormalGeneral(rand.New(rand.NewPCG(1, 2)), 300, 200)
	if g.Stride != 200 || g.Data[1] != m.At(0, 1) {
		t.Errorf("NormalGeneral differs from Normal")
	}
}
