package gdcore

import (
	"github.com/rpca-gd/rpca"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// TestALSStepAgainstLeastSquares checks one UpdateALS step against gonum
// least squares, line by line: u_i solves (XᵀX + λI)u = Xᵀy over row i's
// entries outside the support of S_t (X holding the rows v_j), then v_j
// the same over column j's with the new U. Rows and columns with fewer
// than r such entries and λ = 0 are compared by their fitted values, the
// part least squares determines (the step's 1e-10 ridge picks the
// least-norm fit); so are all lines with λ = 0, since a line with about r
// entries has a nearly singular XᵀX whose solution the 1e-10 ridge moves
// by up to 1e-7 while the fitted values move by 1e-10 of ‖y‖. With
// λ = 0.7 the systems are well conditioned (condition below 10³), and
// the coefficients are compared. Ranks 3 and 10 cover the general and
// the unrolled accumulation. The tolerance 1e-7 is far above those
// effects and the rounding of r×r Cholesky, and far below any error in
// the equations (a wrong entry moves a coefficient by O(1)).
func TestALSStepAgainstLeastSquares(t *testing.T) {
	for _, r := range []int{3, 10} {
		for _, lambda := range []float64{0, 0.7} {
			checkALSStep(t, r, lambda, false, false)
		}
	}
}

// TestALSStepHuberAgainstLeastSquares is the same check with GD.Huber,
// with and without the biases: no entry is set aside, and each entry's
// regressors and target are scaled by √w, w = min(1, τ/|res|), with res
// its residual at the line's current row and the other factor's newest
// rows (U's rows against V, then V's rows against the new U): weighted
// least squares, the iteratively reweighted step of the Huber loss.
// τ is set to about the median residual, so that half the entries are
// down-weighted.
func TestALSStepHuberAgainstLeastSquares(t *testing.T) {
	for _, r := range []int{3, 10} {
		for _, lambda := range []float64{0, 0.7} {
			checkALSStep(t, r, lambda, false, true)
		}
	}
	checkALSStep(t, 9, 0.7, true, true)
}

// TestALSStepBiasesAgainstLeastSquares is the same check with GD.Biases:
// the factors are U = [U₀ b 1] and V = [V₀ 1 c]; row i solves for
// [u₀ᵢ bᵢ] on the regressors [v₀ⱼ 1] with targets y_ij − c_j and keeps
// its last column at 1, and column j solves for [v₀ⱼ cⱼ] on [u₀ᵢ 1]
// with targets y_ij − b_i and keeps its column r at 1. Rank 9 makes 10
// unknowns, the unrolled accumulation.
func TestALSStepBiasesAgainstLeastSquares(t *testing.T) {
	for _, r := range []int{3, 9} {
		for _, lambda := range []float64{0, 0.7} {
			checkALSStep(t, r, lambda, true, false)
		}
	}
}

func checkALSStep(t *testing.T, r int, lambda float64, biases, huber bool) {
	rng := rand.New(rand.NewPCG(uint64(r), 17))
	d1, d2 := 40, 35
	var rows, cols []int
	var vals []float64
	for i := range d1 {
		p := 0.5
		if i%7 == 0 {
			p = 0.08 // rows with fewer than r entries
		}
		for j := range d2 {
			if rng.Float64() < p || j == i%d2 {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, rng.NormFloat64())
			}
		}
	}
	m, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	g := &GD{Update: UpdateALS, Ridge: lambda, Biases: biases}
	if huber {
		g.Huber = 3
	}
	q, err := g.paramsFor(d1, d2, m.Rate(), rpca.Settings{Rank: r, Workers: 2, Alpha: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	st := newObservedState(m, &q)
	for k := range st.keep {
		st.keep[k] = rng.Float64() < 0.1 && !huber
	}

	u, v, w, fixU, fixV := randomALSFactors(rng, d1, d2, r, biases)
	if huber { // about the median of |y − uᵀv| for N(0, 1) entries (variance 1 + w)
		st.tau = 0.67 * math.Sqrt(float64(1+w))
	}
	un, vn := kernels.NewGeneral(d1, w), kernels.NewGeneral(d2, w)
	if err := newALSUpdate(st, &q).step(un, vn, u, v, blas64.General{}, blas64.General{}, 1); err != nil {
		t.Fatal(err)
	}
	// line checks one line: its regressors are the rows x of the other
	// factor without column fix (whose value is subtracted from y), and
	// its solution is z without column fix, which must be 1.
	line := func(what string, l, fix int, xs [][]float64, ys, z []float64) {
		if fix < 0 {
			checkLine(t, what, l, r, lambda, xs, ys, z)
			return
		}
		regs := make([][]float64, len(xs))
		for k, x := range xs {
			regs[k] = append(slices.Clone(x[:fix]), x[fix+1:]...)
			ys[k] -= x[fix]
		}
		if z[fix] != 1 {
			t.Errorf("%s %d: column %d is %v, want 1", what, l, fix, z[fix])
		}
		checkLine(t, what, l, r+1, lambda, regs, ys, append(slices.Clone(z[:fix]), z[fix+1:]...))
	}
	// add appends an entry's regressors x and target y, scaled by the
	// square root of its Huber weight at the line's current row cur.
	add := func(xs [][]float64, ys []float64, x []float64, y float64, cur []float64) ([][]float64, []float64) {
		if !huber {
			return append(xs, x), append(ys, y)
		}
		res := y
		for c := range x {
			res -= x[c] * cur[c]
		}
		s := math.Sqrt(min(1, st.tau/math.Abs(res)))
		sx := make([]float64, len(x))
		for c := range x {
			sx[c] = s * x[c]
		}
		return append(xs, sx), append(ys, s*y)
	}
	// Rows against V, then columns against the new U.
	for i := range d1 {
		var xs [][]float64
		var ys []float64
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			if !st.keep[k] {
				j := int(m.ColIdx[k])
				xs, ys = add(xs, ys, v.Data[j*w:j*w+w], m.Val[k], u.Data[i*w:i*w+w])
			}
		}
		line("row", i, fixU, xs, ys, un.Data[i*w:i*w+w])
	}
	for j := range d2 {
		var xs [][]float64
		var ys []float64
		for i := range d1 {
			for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
				if int(m.ColIdx[k]) == j && !st.keep[k] {
					xs, ys = add(xs, ys, un.Data[i*w:i*w+w], m.Val[k], v.Data[j*w:j*w+w])
				}
			}
		}
		line("column", j, fixV, xs, ys, vn.Data[j*w:j*w+w])
	}
}

// checkLine compares the step's solution z for one line with the ridge
// least-squares fit of ys on the rows xs (its fitted values when the
// problem is underdetermined).
func checkLine(t *testing.T, what string, l, r int, lambda float64, xs [][]float64, ys, z []float64) {
	t.Helper()
	n := len(xs)
	if n == 0 {
		if lambda == 0 && mat.Norm(mat.NewVecDense(r, z), 2) != 0 {
			t.Errorf("%s %d has no entries but got %v", what, l, z)
		}
		return
	}
	x := mat.NewDense(n, r, nil)
	for k, row := range xs {
		x.SetRow(k, row)
	}
	y := mat.NewVecDense(n, ys)
	fit := mat.NewVecDense(n, nil)
	fit.MulVec(x, mat.NewVecDense(r, z))
	if lambda == 0 {
		// Compare the fitted values, which least squares determines
		// however ill-conditioned XᵀX is (a line with about r entries).
		var want mat.VecDense
		if err := want.SolveVec(x, y); err != nil { // QR, or least norm when n < r
			t.Fatal(err)
		}
		var wantFit mat.VecDense
		wantFit.MulVec(x, &want)
		if d := distance(fit, &wantFit); d > 1e-7*(1+mat.Norm(y, 2)) {
			t.Errorf("r=%d λ=0: %s %d with %d entries: fitted values off by %.3g", r, what, l, n, d)
		}
		return
	}
	var a mat.Dense
	a.Mul(x.T(), x)
	for c := range r {
		a.Set(c, c, a.At(c, c)+lambda)
	}
	var rhs, want mat.VecDense
	rhs.MulVec(x.T(), y)
	if err := want.SolveVec(&a, &rhs); err != nil {
		t.Fatal(err)
	}
	for c := range r {
		if d := math.Abs(z[c] - want.AtVec(c)); d > 1e-7*(1+math.Abs(want.AtVec(c))) {
			t.Errorf("r=%d λ=%g: %s %d with %d entries: component %d is %v, want %v", r, lambda, what, l, n, c, z[c], want.AtVec(c))
			return
		}
	}
}

// randomALSFactors returns random d1×w and d2×w factors for an ALS step
// test: w = r, or with the biases w = r + 2 with U's column fixU = r + 1
// and V's column fixV = r held at 1 (fixU = fixV = −1 without).
func randomALSFactors(rng *rand.Rand, d1, d2, r int, biases bool) (u, v blas64.General, w, fixU, fixV int) {
	w, fixU, fixV = r, -1, -1 // factor width, the columns held at 1
	if biases {
		w, fixU, fixV = r+2, r+1, r
	}
	u, v = randomGeneral(rng, d1, w), randomGeneral(rng, d2, w)
	if biases {
		for i := range d1 {
			u.Data[i*w+fixU] = 1
		}
		for j := range d2 {
			v.Data[j*w+fixV] = 1
		}
	}
	return u, v, w, fixU, fixV
}

func randomGeneral(rng *rand.Rand, rows, cols int) blas64.General {
	g := kernels.NewGeneral(rows, cols)
	for k := range g.Data {
		g.Data[k] = rng.NormFloat64()
	}
	return g
}

func distance(a, b *mat.VecDense) float64 {
	var d mat.VecDense
	d.SubVec(a, b)
	return mat.Norm(&d, 2)
}
