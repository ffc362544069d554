package ratings

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomRatings observes each entry of a d1×d2 matrix with probability p.
func randomRatings(rng *rand.Rand, d1, d2 int, p float64, value func(i, j int) float64) (rows, cols []int, vals []float64) {
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if rng.Float64() < p {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, value(i, j))
			}
		}
	}
	return rows, cols, vals
}

// TestFitBiasesMatchesNormalEquations compares many ALS sweeps with the
// exact minimiser of the regularised least-squares problem, solved by
// gonum from its normal equations (an independent reference). The
// objective is a convex quadratic, so 500 sweeps reach its minimiser to
// rounding; 1e-9 leaves a margin.
func TestFitBiasesMatchesNormalEquations(t *testing.T) {
	const d1, d2 = 30, 20
	rng := rand.New(rand.NewPCG(1, 2))
	rows, cols, vals := randomRatings(rng, d1, d2, 0.3, func(i, j int) float64 { return 3 + rng.NormFloat64() })
	const regRow, regCol = 2.0, 3.0
	b, err := FitBiases(d1, d2, rows, cols, vals, regRow, regCol, 500)
	if err != nil {
		t.Fatal(err)
	}
	// Unknowns x = (Row, Col); minimise ‖A·x − (v − Mean)‖² + x'·diag(reg)·x.
	n := d1 + d2
	ata := mat.NewDense(n, n, nil)
	atb := mat.NewVecDense(n, nil)
	for k, v := range vals {
		i, j := rows[k], d1+cols[k]
		for _, a := range []int{i, j} {
			for _, c := range []int{i, j} {
				ata.Set(a, c, ata.At(a, c)+1)
			}
			atb.SetVec(a, atb.AtVec(a)+v-b.Mean)
		}
	}
	for i := 0; i < d1; i++ {
		ata.Set(i, i, ata.At(i, i)+regRow)
	}
	for j := 0; j < d2; j++ {
		ata.Set(d1+j, d1+j, ata.At(d1+j, d1+j)+regCol)
	}
	var x mat.VecDense
	if err := x.SolveVec(ata, atb); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < d1; i++ {
		if d := math.Abs(b.Row[i] - x.AtVec(i)); d > 1e-9 {
			t.Fatalf("Row[%d] = %v, want %v", i, b.Row[i], x.AtVec(i))
		}
	}
	for j := 0; j < d2; j++ {
		if d := math.Abs(b.Col[j] - x.AtVec(d1+j)); d > 1e-9 {
			t.Fatalf("Col[%d] = %v, want %v", j, b.Col[j], x.AtVec(d1+j))
		}
	}
}

// TestFitBiasesRecoversKnownBiases: ratings generated as mean + row bias
// + column bias + noise (σ = 0.1), 40% observed, are fitted with little
// regularisation; the biases come back to about σ/√(observations per
// line) ≈ 0.03 (bound 0.1), up to the constant that the model cannot
// tell between Mean, Row and Col, which the comparison removes by
// centring both sides.
func TestFitBiasesRecoversKnownBiases(t *testing.T) {
	const d1, d2 = 200, 150
	rng := rand.New(rand.NewPCG(3, 4))
	row, col := make([]float64, d1), make([]float64, d2)
	for i := range row {
		row[i] = rng.NormFloat64()
	}
	for j := range col {
		col[j] = 0.5 * rng.NormFloat64()
	}
	rows, cols, vals := randomRatings(rng, d1, d2, 0.4, func(i, j int) float64 { return 3.5 + row[i] + col[j] + 0.1*rng.NormFloat64() })
	b, err := FitBiases(d1, d2, rows, cols, vals, 0.01, 0.01, 200)
	if err != nil {
		t.Fatal(err)
	}
	centre := func(x []float64) []float64 {
		m := 0.0
		for _, v := range x {
			m += v
		}
		m /= float64(len(x))
		out := make([]float64, len(x))
		for k, v := range x {
			out[k] = v - m
		}
		return out
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"row", b.Row, row}, {"column", b.Col, col}} {
		g, w := centre(c.got), centre(c.want)
		worst := 0.0
		for k := range g {
			worst = math.Max(worst, math.Abs(g[k]-w[k]))
		}
		if worst > 0.1 {
			t.Errorf("%s biases off by up to %.3g", c.name, worst)
		}
	}
	// Unknown rows and columns fall back to the mean.
	if p := b.Predict(-1, d2); p != b.Mean {
		t.Errorf("unknown pair predicted %v, want the mean %v", p, b.Mean)
	}
}

func TestFitBiasesBadInput(t *testing.T) {
	for _, c := range []struct {
		name       string
		d1, d2     int
		rows, cols []int
		vals       []float64
		reg        float64
		sweeps     int
	}{
		{"empty", 2, 2, nil, nil, nil, 1, 1},
		{"size", 0, 2, []int{0}, []int{0}, []float64{1}, 1, 1},
		{"lengths", 2, 2, []int{0, 1}, []int{0}, []float64{1}, 1, 1},
		{"range", 2, 2, []int{2}, []int{0}, []float64{1}, 1, 1},
		{"NaN", 2, 2, []int{0}, []int{0}, []float64{math.NaN()}, 1, 1},
		{"Inf", 2, 2, []int{0}, []int{0}, []float64{math.Inf(1)}, 1, 1},
		{"negative reg", 2, 2, []int{0}, []int{0}, []float64{1}, -1, 1},
		{"no sweeps", 2, 2, []int{0}, []int{0}, []float64{1}, 1, 0},
	} {
		if _, err := FitBiases(c.d1, c.d2, c.rows, c.cols, c.vals, c.reg, c.reg, c.sweeps); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
