package tsvd

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// eps is the double-precision unit roundoff.
const eps = 0x1p-52

// gaussian returns an r×c matrix of independent N(0, sd²) entries.
func gaussian(rng *rand.Rand, r, c int, sd float64) *mat.Dense {
	d := make([]float64, r*c)
	for i := range d {
		d[i] = sd * rng.NormFloat64()
	}
	return mat.NewDense(r, c, d)
}

// orthonormal returns an r×c matrix with random orthonormal columns.
func orthonormal(rng *rand.Rand, r, c int) *mat.Dense {
	var qr mat.QR
	qr.Factorize(gaussian(rng, r, c, 1))
	var q mat.Dense
	qr.QTo(&q)
	return mat.DenseCopyOf(q.Slice(0, r, 0, c))
}

// withSpectrum returns U·diag(s)·Vᵀ with random orthonormal U (m×k) and V
// (n×k), k = len(s).
func withSpectrum(rng *rand.Rand, m, n int, s []float64) *mat.Dense {
	k := len(s)
	u, v := orthonormal(rng, m, k), orthonormal(rng, n, k)
	for j := range k {
		for i := range m {
			u.Set(i, j, u.At(i, j)*s[j])
		}
	}
	var a mat.Dense
	a.Mul(u, v.T())
	return &a
}

func general(a *mat.Dense) blas64.General { return a.RawMatrix() }

func toDense(g blas64.General) *mat.Dense {
	d := mat.NewDense(g.Rows, g.Cols, nil)
	for i := range g.Rows {
		copy(d.RawRowView(i), g.Data[i*g.Stride:i*g.Stride+g.Cols])
	}
	return d
}

// reference is gonum's full SVD of a.
type reference struct {
	s    []float64
	u, v *mat.Dense
}

func fullSVD(t *testing.T, a *mat.Dense) reference {
	t.Helper()
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		t.Fatal("reference SVD failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	return reference{s: svd.Values(nil), u: &u, v: &v}
}

// opNorm returns the spectral norm of a.
func opNorm(a mat.Matrix) float64 {
	var svd mat.SVD
	svd.Factorize(a, mat.SVDNone)
	return svd.Values(nil)[0]
}

// sinTheta returns ‖(I − Q·Qᵀ)·W‖₂ for Q with orthonormal columns: the
// sine of the largest principal angle between span(W) and span(Q) when W
// is orthonormal too.
func sinTheta(q, w mat.Matrix) float64 {
	var c, p, d mat.Dense
	c.Mul(q.T(), w)
	p.Mul(q, &c)
	d.Sub(w, &p)
	return opNorm(&d)
}

// orthError returns max |QᵀQ − I|.
func orthError(q *mat.Dense) float64 {
	var g mat.Dense
	g.Mul(q.T(), q)
	r, _ := g.Dims()
	e := 0.0
	for i := range r {
		for j := range r {
			want := 0.0
			if i == j {
				want = 1
			}
			e = max(e, math.Abs(g.At(i, j)-want))
		}
	}
	return e
}

// check compares res with the reference SVD of a. The tolerances follow
// from the stopping rule ‖Aᵀuᵢ − σᵢvᵢ‖ ≤ tol·σ₁ with A·vᵢ = σᵢuᵢ (to
// rounding): each computed σ̃ᵢ is within its residual of σᵢ (eigenvalue
// residual bound for the augmented symmetric matrix [0 A; Aᵀ 0]), and by
// Wedin's theorem the top-k subspaces (k ≤ rank) are within
// √rank·tol·σ₁/(σ̃_k − σ_{k+1}) in sin θ. Rounding adds a few hundred ε·σ₁
// (products and Gram–Schmidt over a few hundred terms). Subspace checks
// are made for every k ≤ 12 and k = rank whose gap makes the bound
// meaningful (< 1e-3).
func check(t *testing.T, a *mat.Dense, res *Result, rank int, tol float64) {
	t.Helper()
	m, n := a.Dims()
	ref := fullSVD(t, a)
	s1 := ref.s[0]
	round := 1e3 * eps * s1
	if len(res.S) != rank || res.U.Rows != m || res.U.Cols != rank || res.V.Rows != n || res.V.Cols != rank {
		t.Fatalf("result shapes: %d values, U %d×%d, V %d×%d; want %d, %d×%d, %d×%d",
			len(res.S), res.U.Rows, res.U.Cols, res.V.Rows, res.V.Cols, rank, m, rank, n, rank)
	}
	if !res.Converged {
		t.Errorf("not converged after %d iterations; residuals %v", res.Iterations, res.Residuals)
	}
	for i := range rank {
		if d := math.Abs(res.S[i] - ref.s[i]); d > tol*s1+round {
			t.Errorf("σ_%d = %.17g, want %.17g (error %.3g > %.3g)", i+1, res.S[i], ref.s[i], d, tol*s1+round)
		}
		if i > 0 && res.S[i] > res.S[i-1] {
			t.Errorf("singular values not sorted at %d: %v", i, res.S)
		}
	}
	u, v := toDense(res.U), toDense(res.V)
	if e := orthError(u); e > 1e3*eps {
		t.Errorf("UᵀU deviates from I by %.3g", e)
	}
	if e := orthError(v); e > 1e3*eps {
		t.Errorf("VᵀV deviates from I by %.3g", e)
	}
	// Residuals A·V − U·Σ and Aᵀ·U − V·Σ.
	us := mat.DenseCopyOf(u)
	vs := mat.DenseCopyOf(v)
	for j := range rank {
		for i := range m {
			us.Set(i, j, us.At(i, j)*res.S[j])
		}
		for i := range n {
			vs.Set(i, j, vs.At(i, j)*res.S[j])
		}
	}
	var av, atu mat.Dense
	av.Mul(a, v)
	av.Sub(&av, us)
	atu.Mul(a.T(), u)
	atu.Sub(&atu, vs)
	bound := math.Sqrt(float64(rank))*tol*s1 + round
	if r := mat.Norm(&av, 2); r > round {
		t.Errorf("‖A·V − U·Σ‖_F = %.3g > %.3g", r, round)
	}
	if r := mat.Norm(&atu, 2); r > bound {
		t.Errorf("‖Aᵀ·U − V·Σ‖_F = %.3g > %.3g", r, bound)
	}
	for i, r := range res.Residuals {
		if r > tol*s1 {
			t.Errorf("reported residual %d = %.3g > tol·σ₁ = %.3g", i, r, tol*s1)
		}
	}
	for k := 1; k <= rank && k < len(ref.s); k++ {
		if k > 12 && k != rank {
			continue // keep the test fast for large ranks
		}
		gap := res.S[k-1] - ref.s[k]
		limit := (bound + round) / gap
		if gap <= 0 || limit > 1e-3 {
			continue
		}
		// Allow a factor 2 for the rounding in forming the angles.
		if st := sinTheta(u.Slice(0, m, 0, k), ref.u.Slice(0, m, 0, k)); st > 2*limit+1e-12 {
			t.Errorf("left top-%d subspace: sin θ = %.3g > %.3g", k, st, 2*limit+1e-12)
		}
		if st := sinTheta(v.Slice(0, n, 0, k), ref.v.Slice(0, n, 0, k)); st > 2*limit+1e-12 {
			t.Errorf("right top-%d subspace: sin θ = %.3g > %.3g", k, st, 2*limit+1e-12)
		}
	}
}

func compute(t *testing.T, a *mat.Dense, opt Options) *Result {
	t.Helper()
	res, err := Compute(context.Background(), Dense{A: general(a), Workers: 2}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestAccuracy(t *testing.T) {
	type tc struct {
		name string
		a    func(rng *rand.Rand) *mat.Dense
		rank int
	}
	powerSpectrum := func(k int, pow float64) []float64 {
		s := make([]float64, k)
		for i := range s {
			s[i] = math.Pow(float64(i+1), -pow)
		}
		return s
	}
	cases := []tc{
		{"gaussian 300x200", func(r *rand.Rand) *mat.Dense { return gaussian(r, 300, 200, 1) }, 10},
		{"gaussian 200x300", func(r *rand.Rand) *mat.Dense { return gaussian(r, 200, 300, 1) }, 10},
		{"gaussian 500x500 rank 1", func(r *rand.Rand) *mat.Dense { return gaussian(r, 500, 500, 1) }, 1},
		{"exact rank 5 of 300x200, rank 10", func(r *rand.Rand) *mat.Dense {
			return withSpectrum(r, 300, 200, []float64{10, 8, 6, 4, 2})
		}, 10},
		{"exact rank 10 of 200x300", func(r *rand.Rand) *mat.Dense {
			return withSpectrum(r, 200, 300, powerSpectrum(10, 1))
		}, 10},
		{"rank 10 plus noise 500x500", func(r *rand.Rand) *mat.Dense {
			a := withSpectrum(r, 500, 500, []float64{20, 18, 15, 12, 11, 10, 9, 8, 7, 6})
			a.Add(a, gaussian(r, 500, 500, 1e-3))
			return a
		}, 10},
		{"decay i^-1/2 500x500", func(r *rand.Rand) *mat.Dense {
			return withSpectrum(r, 500, 500, powerSpectrum(500, 0.5))
		}, 10},
		{"decay 1/i 300x200", func(r *rand.Rand) *mat.Dense {
			return withSpectrum(r, 300, 200, powerSpectrum(200, 1))
		}, 10},
		{"repeated values 300x200", func(r *rand.Rand) *mat.Dense {
			s := powerSpectrum(200, 1)
			copy(s, []float64{5, 5, 5, 3, 3, 3, 3, 2})
			return withSpectrum(r, 300, 200, s)
		}, 7},
		{"rank 40 of 300x200, block 32 < rank", func(r *rand.Rand) *mat.Dense { return gaussian(r, 300, 200, 1) }, 40},
		{"rank 60 of 1/i 500x400, block 32 < rank", func(r *rand.Rand) *mat.Dense {
			return withSpectrum(r, 500, 400, powerSpectrum(400, 1))
		}, 60},
		{"rank 190 of 200x300 (dense)", func(r *rand.Rand) *mat.Dense { return gaussian(r, 200, 300, 1) }, 190},
		{"full rank of 60x80 (dense)", func(r *rand.Rand) *mat.Dense { return gaussian(r, 60, 80, 1) }, 60},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			a := c.a(rng)
			res := compute(t, a, Options{Rank: c.rank, Seed: 7})
			t.Logf("iterations %d, products %d, columns %d", res.Iterations, res.Products, res.Columns)
			check(t, a, res, c.rank, DefaultTol)
		})
	}
}

// TestRepeatedSubspace checks that a singular value of multiplicity 3
// inside the requested rank yields its whole 3-dimensional singular
// subspace (the individual vectors are not unique).
func TestRepeatedSubspace(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m, n := 300, 250
	s := []float64{4, 2, 2, 2, 1, 0.5, 0.25}
	u, v := orthonormal(rng, m, len(s)), orthonormal(rng, n, len(s))
	a := mat.NewDense(m, n, nil)
	for j, sj := range s {
		var o mat.Dense
		o.Outer(sj, u.ColView(j), v.ColView(j))
		a.Add(a, &o)
	}
	a.Add(a, gaussian(rng, m, n, 1e-4)) // noise norm ≈ 1e-4·(√m+√n) ≈ 3e-3
	res := compute(t, a, Options{Rank: 5, Seed: 1})
	ru, rv := toDense(res.U), toDense(res.V)
	// The noise E moves the cluster's subspace by at most ‖E‖/gap ≈
	// 3e-3/1 (Wedin, gaps 2 → 1 on both sides), and the tolerance
	// contributes ~1e-10; 1e-2 separates this from a wrong subspace
	// (sin θ ≈ 1).
	const want = 1e-2
	if st := sinTheta(ru.Slice(0, m, 1, 4), u.Slice(0, m, 1, 4)); st > want {
		t.Errorf("left cluster subspace sin θ = %.3g", st)
	}
	if st := sinTheta(rv.Slice(0, n, 1, 4), v.Slice(0, n, 1, 4)); st > want {
		t.Errorf("right cluster subspace sin θ = %.3g", st)
	}
	check(t, a, res, 5, DefaultTol)
}

func TestLooseTolerance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	s := make([]float64, 200)
	for i := range s {
		s[i] = 1 / math.Sqrt(float64(i+1))
	}
	a := withSpectrum(rng, 300, 200, s)
	loose := compute(t, a, Options{Rank: 8, Tol: 1e-4, Seed: 2})
	check(t, a, loose, 8, 1e-4)
	tight := compute(t, a, Options{Rank: 8, Tol: 1e-12, Seed: 2})
	check(t, a, tight, 8, 1e-12)
	if loose.Iterations >= tight.Iterations {
		t.Errorf("loose tolerance took %d iterations, tight %d", loose.Iterations, tight.Iterations)
	}
}

// TestWarmStart perturbs a matrix by E and checks that starting from the
// previous right singular vectors converges in fewer iterations than a
// cold start, to the same accuracy. The start's residual is about ‖E‖
// (≈ 37δ for N(0, δ²) entries) against O(σ₁) for a random start, and each
// iteration reduces residuals by a roughly constant factor (about 5 for
// this 1/i spectrum), so the iterations saved grow with log(1/‖E‖): the
// test requires a saving of at least 2 iterations at δ = 1e-9 and of at
// least half of them at δ = 1e-12 (start residual 4e-11 < Tol: one
// iteration suffices in exact arithmetic).
func TestWarmStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	m, n, rank := 400, 300, 10
	s := make([]float64, 300)
	for i := range s {
		s[i] = 1 / float64(i+1)
	}
	a := withSpectrum(rng, m, n, s)
	first := compute(t, a, Options{Rank: rank, Seed: 1})
	noise := gaussian(rng, m, n, 1)
	for _, delta := range []float64{1e-9, 1e-12} {
		b := mat.DenseCopyOf(noise)
		b.Scale(delta, b)
		b.Add(b, a)
		cold := compute(t, b, Options{Rank: rank, Seed: 2})
		for _, cols := range []int{rank, rank - 3, 25} {
			start := first.V
			if cols > rank {
				// More columns than the block: extra columns are truncated.
				ext := mat.NewDense(n, cols, nil)
				ext.Slice(0, n, 0, rank).(*mat.Dense).Copy(toDense(first.V))
				ext.Slice(0, n, rank, cols).(*mat.Dense).Copy(gaussian(rng, n, cols-rank, 1))
				start = general(ext)
			} else {
				start.Cols = cols
			}
			warm := compute(t, b, Options{Rank: rank, Seed: 2, Start: start})
			check(t, b, warm, rank, DefaultTol)
			t.Logf("δ = %g, start with %d columns: warm %d iterations, cold %d", delta, cols, warm.Iterations, cold.Iterations)
			// With fewer columns than the rank, the missing directions
			// start from random vectors: only accuracy is checked.
			if cols < rank {
				continue
			}
			if delta == 1e-9 && warm.Iterations > cold.Iterations-2 || delta == 1e-12 && 2*warm.Iterations > cold.Iterations {
				t.Errorf("δ = %g, start with %d columns: warm start took %d iterations, cold %d", delta, cols, warm.Iterations, cold.Iterations)
			}
		}
	}
	// The unperturbed matrix converges at once from its own vectors.
	if again := compute(t, a, Options{Rank: rank, Seed: 3, Start: first.V}); again.Iterations != 1 {
		t.Errorf("restart from the converged vectors took %d iterations, want 1", again.Iterations)
	}
	// Also when Rank exceeds the default block size, which then grows to
	// hold the warm start.
	big := compute(t, a, Options{Rank: 50, Seed: 4})
	if again := compute(t, a, Options{Rank: 50, Seed: 5, Start: big.V}); again.Iterations != 1 {
		t.Errorf("rank 50: restart from the converged vectors took %d iterations, want 1", again.Iterations)
	}
}

func TestCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := gaussian(rng, 300, 200, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compute(ctx, Dense{A: general(a)}, Options{Rank: 5}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before start: error %v, want context.Canceled", err)
	}
	// Cancel during the iteration, from inside a product.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	op := &countingOp{Operator: Dense{A: general(a)}, after: 3, cancel: cancel}
	_, err := Compute(ctx, op, Options{Rank: 5, Tol: 1e-15, MaxIter: 100})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during iteration: error %v, want context.Canceled", err)
	}
	if op.calls != 3 {
		t.Errorf("%d products after cancellation at product 3", op.calls)
	}
}

// countingOp counts products and calls cancel at product after.
type countingOp struct {
	Operator
	calls, after int
	cancel       func()
}

func (c *countingOp) tick() {
	c.calls++
	if c.calls == c.after {
		c.cancel()
	}
}

func (c *countingOp) MulTo(dst, x blas64.General)      { c.tick(); c.Operator.MulTo(dst, x) }
func (c *countingOp) MulTransTo(dst, x blas64.General) { c.tick(); c.Operator.MulTransTo(dst, x) }

func TestErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	a := gaussian(rng, 30, 20, 1)
	op := Dense{A: general(a)}
	ctx := context.Background()
	bad := []Options{
		{Rank: 0},
		{Rank: -1},
		{Rank: 21},
		{Rank: 2, Oversample: -1},
		{Rank: 2, BlockSize: -1},
		{Rank: 2, MaxBasis: -1},
		{Rank: 2, MaxIter: -1},
		{Rank: 2, Tol: -1},
		{Rank: 2, Tol: math.NaN()},
		{Rank: 2, Start: blas64.General{Rows: 30, Cols: 2, Stride: 2, Data: make([]float64, 60)}},
	}
	for _, o := range bad {
		if _, err := Compute(ctx, op, o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
	a.Set(3, 4, math.NaN())
	for _, rank := range []int{2, 15} { // iterative and dense paths
		if _, err := Compute(ctx, op, Options{Rank: rank}); !errors.Is(err, ErrNonFinite) {
			t.Errorf("rank %d: NaN entry gave error %v, want ErrNonFinite", rank, err)
		}
	}
	big := gaussian(rng, 300, 200, 1)
	start := gaussian(rng, 200, 3, 1)
	start.Set(5, 1, math.Inf(1))
	if _, err := Compute(ctx, Dense{A: general(big)}, Options{Rank: 3, Start: general(start)}); err == nil {
		t.Error("non-finite warm start: no error")
	}
}

func TestZeroMatrix(t *testing.T) {
	a := mat.NewDense(300, 200, nil)
	res := compute(t, a, Options{Rank: 4, Seed: 1})
	for i, s := range res.S {
		if s != 0 {
			t.Errorf("σ_%d = %g, want 0", i+1, s)
		}
	}
	if e := orthError(toDense(res.U)); e > 1e3*eps {
		t.Errorf("UᵀU deviates from I by %.3g", e)
	}
	if e := orthError(toDense(res.V)); e > 1e3*eps {
		t.Errorf("VᵀV deviates from I by %.3g", e)
	}
}

// TestDeterministic checks that the result depends only on the seed.
func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	a := gaussian(rng, 300, 200, 1)
	run := func(seed uint64, workers int) *Result {
		r, err := Compute(context.Background(), csrOp(a), Options{Rank: 6, Seed: seed, Workers: workers, Tol: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	x, y, z := run(1, 1), run(1, 2), run(2, 2)
	same := func(p, q *Result) bool {
		if p.Iterations != q.Iterations {
			return false
		}
		for i, v := range p.U.Data {
			if q.U.Data[i] != v {
				return false
			}
		}
		for i, v := range p.V.Data {
			if q.V.Data[i] != v {
				return false
			}
		}
		return true
	}
	if !same(x, y) {
		t.Error("same seed, different worker counts: results differ")
	}
	if same(x, z) {
		t.Error("different seeds gave bitwise identical results")
	}
}

// csr is a sparse matrix in compressed sparse row form, an Operator
// written independently of Dense.
type csr struct {
	m, n   int
	rowPtr []int
	col    []int
	val    []float64
}

func csrOp(a *mat.Dense) *csr {
	m, n := a.Dims()
	c := &csr{m: m, n: n, rowPtr: make([]int, m+1)}
	for i := range m {
		for j := range n {
			if v := a.At(i, j); v != 0 {
				c.col = append(c.col, j)
				c.val = append(c.val, v)
			}
		}
		c.rowPtr[i+1] = len(c.val)
	}
	return c
}

func (c *csr) Dims() (int, int) { return c.m, c.n }

func (c *csr) MulTo(dst, x blas64.General) {
	k := x.Cols
	for i := range c.m {
		d := dst.Data[i*dst.Stride : i*dst.Stride+k]
		clear(d)
		for p := c.rowPtr[i]; p < c.rowPtr[i+1]; p++ {
			xr := x.Data[c.col[p]*x.Stride:]
			for j := range d {
				d[j] += c.val[p] * xr[j]
			}
		}
	}
}

func (c *csr) MulTransTo(dst, x blas64.General) {
	k := x.Cols
	for j := range c.n {
		clear(dst.Data[j*dst.Stride : j*dst.Stride+k])
	}
	for i := range c.m {
		xr := x.Data[i*x.Stride : i*x.Stride+k]
		for p := c.rowPtr[i]; p < c.rowPtr[i+1]; p++ {
			d := dst.Data[c.col[p]*dst.Stride:]
			for j, v := range xr {
				d[j] += c.val[p] * v
			}
		}
	}
}

// TestCustomOperator runs a sparse operator (20% density) and the dense
// one on the same matrix: both must match the reference, and each other
// to the accuracy of the stopping rule.
func TestCustomOperator(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m, n := 300, 250
	a := mat.NewDense(m, n, nil)
	for i := range m {
		for j := range n {
			if rng.Float64() < 0.2 {
				a.Set(i, j, rng.NormFloat64())
			}
		}
	}
	opt := Options{Rank: 8, Seed: 3}
	sp, err := Compute(context.Background(), csrOp(a), opt)
	if err != nil {
		t.Fatal(err)
	}
	check(t, a, sp, 8, DefaultTol)
	de := compute(t, a, opt)
	for i := range sp.S {
		if d := math.Abs(sp.S[i] - de.S[i]); d > 2*DefaultTol*de.S[0] {
			t.Errorf("σ_%d: sparse %.17g, dense %.17g", i+1, sp.S[i], de.S[i])
		}
	}
}

func TestComputeAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	s := make([]float64, 200)
	for i := range s {
		s[i] = 10 * math.Pow(0.9, float64(i))
	}
	a := withSpectrum(rng, 300, 200, s)
	const threshold = 1.0 // 10·0.9^i > 1 for i ≤ 21: 22 values
	res, err := ComputeAbove(context.Background(), Dense{A: general(a)}, threshold, Options{Rank: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, v := range s {
		if v > threshold {
			want++
		}
	}
	if len(res.S) != want {
		t.Fatalf("%d values above %g, want %d", len(res.S), threshold, want)
	}
	check(t, a, res, want, DefaultTol)
}

// TestOrthonormalizer checks block orthonormalization on hard inputs: a
// column already in the span of the basis, a duplicated column, a zero
// column and a tiny multiple of a basis vector plus rounding-level noise.
// The result must be orthonormal and reproduce the input through the
// returned coefficients (Y = W·coef), with the dependent columns replaced.
func TestOrthonormalizer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	dim, p, b := 3000, 6, 7 // dim > rowChunk exercises the chunked products
	basis := blas64.General{Rows: dim, Cols: p + b, Stride: p + b + 3, Data: make([]float64, dim*(p+b+3))}
	q := orthonormal(rng, dim, p)
	g := gaussian(rng, dim, b, 1)
	for i := range dim {
		for j := range p {
			basis.Data[i*basis.Stride+j] = q.At(i, j)
		}
		y := basis.Data[i*basis.Stride+p:]
		y[0] = g.At(i, 0)
		y[1] = 2*q.At(i, 1) - 3*q.At(i, 4) // in span(Q)
		y[2] = g.At(i, 2)
		y[3] = g.At(i, 2) // duplicate of column 2
		y[4] = 0
		y[5] = 1e-3*q.At(i, 0) + 1e-20*g.At(i, 5)
		y[6] = g.At(i, 6) + 5*q.At(i, 2)
	}
	orig := toDense(colRange(basis, p, p+b))
	coef := blas64.General{Rows: p + b, Cols: b, Stride: b, Data: make([]float64, (p+b)*b)}
	o := &orthonormalizer{basisOps: basisOps{workers: 3}, rng: rand.New(rand.NewPCG(1, 1))}
	if got := o.block(basis, p, b, coef); got != 4 {
		t.Errorf("%d columns deflated, want 4 (columns 1, 3, 4, 5)", got)
	}
	w := toDense(colRange(basis, 0, p+b))
	if e := orthError(w); e > 100*eps {
		t.Errorf("basis deviates from orthonormal by %.3g", e)
	}
	// Dropped remainders are at most dropRatio·‖yⱼ‖ (≤ 1e-13·√dim·5).
	var rec mat.Dense
	rec.Mul(w, toDense(coef))
	rec.Sub(&rec, orig)
	if e := mat.Norm(&rec, math.Inf(1)); e > 1e-12 {
		t.Errorf("W·coef differs from the input by %.3g", e)
	}
	for i := range b {
		for j := range i {
			if c := coef.Data[(p+i)*b+j]; c != 0 {
				t.Errorf("coef[%d][%d] = %g below the diagonal of the new block", p+i, j, c)
			}
		}
	}
}

func TestDenseOperator(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	a := gaussian(rng, 37, 23, 1)
	x, y := gaussian(rng, 23, 5, 1), gaussian(rng, 37, 5, 1)
	op := Dense{A: general(a), Workers: 2}
	var want, wantT mat.Dense
	want.Mul(a, x)
	wantT.Mul(a.T(), y)
	got, gotT := mat.NewDense(37, 5, nil), mat.NewDense(23, 5, nil)
	op.MulTo(general(got), general(x))
	op.MulTransTo(general(gotT), general(y))
	// Sums of 23 or 37 products of O(1) terms: rounding ≤ 100ε·‖·‖.
	if !mat.EqualApprox(got, &want, 1e-12) || !mat.EqualApprox(gotT, &wantT, 1e-12) {
		t.Error("Dense products differ from gonum's")
	}
}

// TestMaxIter checks that running out of iterations is not an error: the
// triplets are still orthonormal with A·V = U·Σ, and Converged is false.
func TestMaxIter(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	a := gaussian(rng, 400, 300, 1)
	res := compute(t, a, Options{Rank: 10, MaxIter: 2, Seed: 1})
	if res.Converged || res.Iterations != 2 || res.Products != 4 {
		t.Errorf("converged %v after %d iterations, %d products; want false, 2, 4", res.Converged, res.Iterations, res.Products)
	}
	u, v := toDense(res.U), toDense(res.V)
	if e := max(orthError(u), orthError(v)); e > 1e3*eps {
		t.Errorf("bases deviate from orthonormal by %.3g", e)
	}
	ref := fullSVD(t, a)
	for i, s := range res.S {
		// Ritz values never exceed the singular values (interlacing).
		if s > ref.s[i]*(1+1e-12) {
			t.Errorf("Ritz value %d = %g above σ = %g", i, s, ref.s[i])
		}
	}
}

// TestMaxIterRaised checks that a basis smaller than Rank after MaxIter
// iterations is still grown to Rank (MaxIter raised to ⌈Rank/b⌉).
func TestMaxIterRaised(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	a := gaussian(rng, 400, 300, 1)
	res := compute(t, a, Options{Rank: 60, BlockSize: 16, MaxIter: 1, Seed: 1})
	if res.Iterations != 4 || len(res.S) != 60 {
		t.Errorf("%d iterations, %d values; want 4, 60", res.Iterations, len(res.S))
	}
	if e := max(orthError(toDense(res.U)), orthError(toDense(res.V))); e > 1e3*eps {
		t.Errorf("bases deviate from orthonormal by %.3g", e)
	}
}

func TestComputeAboveNone(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	a := gaussian(rng, 100, 80, 1)
	res, err := ComputeAbove(context.Background(), Dense{A: general(a)}, 1e6, Options{Rank: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.S) != 0 || res.U.Cols != 0 || res.V.Cols != 0 {
		t.Errorf("got %d values above 1e6, want none", len(res.S))
	}
}

func TestWrapError(t *testing.T) {
	if WrapError("m", nil) != nil || WrapError("m", context.Canceled) != context.Canceled || WrapError("m", context.DeadlineExceeded) != context.DeadlineExceeded {
		t.Error("nil or context errors changed")
	}
	base := errors.New("no convergence")
	if err := WrapError("altproj", base); !errors.Is(err, base) || err.Error() != "altproj: truncated SVD: no convergence" {
		t.Errorf("wrapped: %v", err)
	}
}
