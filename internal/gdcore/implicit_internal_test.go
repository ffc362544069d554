package gdcore

import (
	"github.com/rpca-gd/rpca"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// TestImplicitStepAgainstLeastSquares checks one UpdateALS sweep with
// GD.Implicit against plain gonum least squares, with and without the
// biases, on a random 30×24 problem with 10% of the entries in S_t:
//   - each row i of U becomes z_i plus the ridge fit of y_ij − v_j·z_i on
//     v_j over the row's entries outside S_t (P's ridge, Z from Y);
//   - Y then moves to the minimiser of Σ (y_ij − u_i·v_j)² + λ_y‖Y‖² over
//     the entries outside S_t with P = U − Z fixed, a least-squares
//     problem in the 24·r unknowns of Y solved here by QR on its explicit
//     design (the step's conjugate gradients are run to convergence, 300
//     steps, for the comparison); U's rows move with z;
//   - each row of V is the ridge fit against the final U (the column
//     half-step is the plain one).
//
// The tolerance 1e-7 (relative) is far above the rounding of these small
// systems and far below any error in the equations.
//
// With Huber weights (huber > 0: every entry counts, weighted by
// min(1, τ/|e|) at its residual e when the Y step starts), the Y step is
// checked against the weighted least-squares problem (its design rows
// and targets scaled by √w); the row and column fits' weights have tests
// of their own.
func TestImplicitStepAgainstLeastSquares(t *testing.T) {
	for _, biases := range []bool{false, true} {
		checkImplicitStep(t, 3, 0.7, 1.3, biases, 0)
	}
	checkImplicitStep(t, 3, 0.7, 1.3, false, 3)
}

func checkImplicitStep(t *testing.T, r int, lambda, lambdaY float64, biases bool, huber float64) {
	rng := rand.New(rand.NewPCG(uint64(r), 23))
	d1, d2 := 30, 24
	var rows, cols []int
	var vals []float64
	for i := range d1 {
		for j := range d2 {
			if rng.Float64() < 0.45 || j == i%d2 {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, rng.NormFloat64())
			}
		}
	}
	m, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	q, err := (&GD{Update: UpdateALS, Ridge: lambda, Biases: biases, Implicit: lambdaY, Huber: huber}).paramsFor(d1, d2, m.Rate(), rpca.Settings{Rank: r, Workers: 2, Alpha: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	st := newObservedState(m, &q)
	for k := range st.keep {
		st.keep[k] = huber == 0 && rng.Float64() < 0.1 // with Huber weights no entry is set aside
	}
	if huber > 0 {
		st.tau = 0.9 // below many of the residuals of these N(0, 1) values, so that weights bite
	}
	u, v, w, fixU, fixV := randomALSFactors(rng, d1, d2, r, biases)
	a := newALSUpdate(st, &q)
	a.im.cg = 300
	// A non-zero Y to start from, and Z to match.
	for k := range a.im.y.Data {
		a.im.y.Data[k] = 0.3 * rng.NormFloat64()
	}
	zOf := func(y blas64.General) [][]float64 {
		z := make([][]float64, d1)
		for i := range d1 {
			z[i] = make([]float64, w)
			for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
				l := int(m.ColIdx[k])
				for c := range r {
					z[i][c] += y.Data[l*r+c] / math.Sqrt(float64(m.RowPtr[i+1]-m.RowPtr[i]))
				}
			}
		}
		return z
	}
	z0 := zOf(a.im.y)
	for i := range d1 {
		copy(a.im.z.Data[i*w:i*w+w], z0[i])
	}
	y0 := kernels.NewGeneral(d2, r)
	copy(y0.Data, a.im.y.Data)
	un, vn := kernels.NewGeneral(d1, w), kernels.NewGeneral(d2, w)
	if err := a.step(un, vn, u, v, blas64.General{}, blas64.General{}, 1); err != nil {
		t.Fatal(err)
	}

	// less returns y − vec·v_j for entry k (in column j), and v_j.
	less := func(k int, vec []float64) (float64, []float64) {
		j := int(m.ColIdx[k])
		vj := v.Data[j*w : j*w+w]
		t := m.Val[k]
		for c := range w {
			t -= vj[c] * vec[c]
		}
		return t, vj
	}

	// 1. The row fits, from the final U less the Y step's move of z.
	z1 := zOf(a.im.y)
	for i := range d1 {
		if huber > 0 {
			break // weighted row fits: tested elsewhere
		}
		var xs [][]float64
		var ys []float64
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			if st.keep[k] {
				continue
			}
			t, vj := less(k, z0[i])
			x := vj
			if fixU >= 0 { // U's held 1 pairs with V's column fixU (c_j)
				x = append(append([]float64{}, vj[:fixU]...), vj[fixU+1:]...)
				t -= vj[fixU]
			}
			xs, ys = append(xs, x), append(ys, t)
		}
		p := make([]float64, 0, w)
		for c := range w {
			if c == fixU {
				continue
			}
			p = append(p, un.Data[i*w+c]-z1[i][c])
		}
		checkLine(t, "row (P)", i, len(p), lambda, xs, ys, p)
	}

	// 2. The Y step against QR on its explicit design, with P fixed.
	pRows := make([][]float64, d1) // P = U_after_rows − Z₀
	for i := range d1 {
		pRows[i] = make([]float64, w)
		for c := range w {
			pRows[i][c] = un.Data[i*w+c] - z1[i][c]
		}
	}
	nk := 0
	for k := range st.keep {
		if !st.keep[k] {
			nk++
		}
	}
	nu := d2 * r
	design := mat.NewDense(nk+nu, nu, nil)
	target := mat.NewVecDense(nk+nu, nil)
	row := 0
	for i := range d1 {
		n := math.Sqrt(float64(m.RowPtr[i+1] - m.RowPtr[i]))
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			if st.keep[k] {
				continue
			}
			t, vj := less(k, pRows[i])
			sw := 1.0 // √w, the Huber weight at the residual where the Y step starts
			if huber > 0 {
				cur := make([]float64, w)
				for c := range w {
					cur[c] = pRows[i][c] + z0[i][c]
				}
				if e, _ := less(k, cur); math.Abs(e) > st.tau {
					sw = math.Sqrt(st.tau / math.Abs(e))
				}
			}
			for k2 := m.RowPtr[i]; k2 < m.RowPtr[i+1]; k2++ {
				l := int(m.ColIdx[k2])
				for c := range r {
					design.Set(row, l*r+c, design.At(row, l*r+c)+sw*vj[c]/n)
				}
			}
			target.SetVec(row, sw*t)
			row++
		}
	}
	sl := math.Sqrt(lambdaY)
	for c := range nu {
		design.Set(nk+c, c, sl)
	}
	var want mat.VecDense
	if err := want.SolveVec(design, target); err != nil {
		t.Fatal(err)
	}
	for c := range nu {
		if d := math.Abs(a.im.y.Data[c] - want.AtVec(c)); d > 1e-7*(1+math.Abs(want.AtVec(c))) {
			t.Errorf("biases %v: Y entry %d is %v, want %v", biases, c, a.im.y.Data[c], want.AtVec(c))
			break
		}
	}
	for i := range d1 {
		for c := range w {
			if d := math.Abs(a.im.z.Data[i*w+c] - z1[i][c]); d > 1e-12*(1+math.Abs(z1[i][c])) {
				t.Fatalf("biases %v: Z row %d does not match Y", biases, i)
			}
		}
	}

	// 3. The column fits against the final U.
	for j := range d2 {
		if huber > 0 {
			break // weighted column fits: tested elsewhere
		}
		var xs [][]float64
		var ys []float64
		for i := range d1 {
			for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
				if int(m.ColIdx[k]) != j || st.keep[k] {
					continue
				}
				ui := un.Data[i*w : i*w+w]
				x, t := ui, m.Val[k]
				if fixV >= 0 {
					x = append(append([]float64{}, ui[:fixV]...), ui[fixV+1:]...)
					t -= ui[fixV]
				}
				xs, ys = append(xs, x), append(ys, t)
			}
		}
		z := vn.Data[j*w : j*w+w]
		if fixV >= 0 {
			z = append(append([]float64{}, z[:fixV]...), z[fixV+1:]...)
		}
		checkLine(t, "column", j, len(z), lambda, xs, ys, z)
	}
}
