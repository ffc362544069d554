package observed

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/internal/testmat"
)

// randomObserved returns a d1×d2 matrix observed with probability p and
// its dense form (missing entries NaN).
func randomObserved(t *testing.T, rng *rand.Rand, d1, d2 int, p float64) (*Matrix, [][]float64) {
	t.Helper()
	dense := make([][]float64, d1)
	var rows, cols []int
	var vals []float64
	for i := range dense {
		dense[i] = make([]float64, d2)
		for j := range dense[i] {
			dense[i][j] = math.NaN()
			if rng.Float64() < p {
				v := rng.NormFloat64()
				if rng.IntN(10) == 0 {
					v = 0 // observed zeros must stay observations
				}
				dense[i][j] = v
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
			}
		}
	}
	// Shuffle the triplets: FromTriplets must accept any order.
	rng.Shuffle(len(vals), func(a, b int) {
		rows[a], rows[b] = rows[b], rows[a]
		cols[a], cols[b] = cols[b], cols[a]
		vals[a], vals[b] = vals[b], vals[a]
	})
	m, err := FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	return m, dense
}

func TestFromTripletsLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, dense := randomObserved(t, rng, 37, 23, 0.3)
	n := 0
	for i := range dense {
		for j := range dense[i] {
			if !math.IsNaN(dense[i][j]) {
				n++
			}
		}
	}
	if m.NNZ() != n {
		t.Fatalf("NNZ = %d, want %d", m.NNZ(), n)
	}
	// CSR: every stored entry matches, columns strictly increase.
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		for k := range cols {
			if k > 0 && cols[k] <= cols[k-1] {
				t.Fatalf("row %d columns not increasing", i)
			}
			if got, want := vals[k], dense[i][cols[k]]; got != want {
				t.Fatalf("(%d,%d) = %v, want %v", i, cols[k], got, want)
			}
		}
	}
	// CSC: column j lists its rows increasingly and points at the right CSR slots.
	seen := 0
	for j := 0; j < m.Cols; j++ {
		prev := int32(-1)
		for q := m.ColPtr[j]; q < m.ColPtr[j+1]; q++ {
			i := m.RowIdx[q]
			if i <= prev {
				t.Fatalf("column %d rows not increasing", j)
			}
			prev = i
			// The CSR row i must hold column j.
			lo, hi := m.RowPtr[i], m.RowPtr[i+1]
			if _, found := slices.BinarySearch(m.ColIdx[lo:hi], int32(j)); !found {
				t.Fatalf("CSC slot %d of column %d points to the wrong entry", q, j)
			}
			seen++
		}
	}
	if seen != n {
		t.Fatalf("CSC has %d entries, want %d", seen, n)
	}
}

func TestFromTripletsErrors(t *testing.T) {
	cases := []struct {
		name       string
		d1, d2     int
		rows, cols []int
		vals       []float64
		want       string
	}{
		{"duplicate", 3, 3, []int{0, 1, 0}, []int{1, 1, 1}, []float64{1, 2, 3}, "more than once"},
		{"row out of range", 3, 3, []int{3}, []int{0}, []float64{1}, "outside"},
		{"negative col", 3, 3, []int{0}, []int{-1}, []float64{1}, "outside"},
		{"nan", 3, 3, []int{0}, []int{0}, []float64{math.NaN()}, "non-finite"},
		{"inf", 3, 3, []int{0}, []int{0}, []float64{math.Inf(1)}, "non-finite"},
		{"lengths", 3, 3, []int{0, 1}, []int{0}, []float64{1}, "equal lengths"},
		{"size", 0, 3, nil, nil, nil, "positive"},
	}
	for _, c := range cases {
		_, err := FromTriplets(c.d1, c.d2, c.rows, c.cols, c.vals)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestSampleDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	y := testmat.NormalGeneral(rng, 300, 200)
	y.Data[0] = 0 // a zero value must be kept if sampled
	for _, p := range []float64{1, 0.3, 0.02} {
		m, err := SampleDense(y, p, 7, false)
		if err != nil {
			t.Fatal(err)
		}
		n := float64(y.Rows * y.Cols)
		// Binomial count: allow 5 standard deviations.
		if got, sd := float64(m.NNZ()), math.Sqrt(n*p*(1-p)); math.Abs(got-n*p) > 5*sd+1e-9 {
			t.Errorf("p=%v: %v entries sampled, want %v ± %v", p, got, n*p, 5*sd)
		}
		for i := 0; i < m.Rows; i++ {
			cols, vals := m.Row(i)
			for k, c := range cols {
				if vals[k] != y.Data[i*y.Stride+int(c)] {
					t.Fatalf("sampled value at (%d,%d) differs", i, c)
				}
			}
		}
		again, _ := SampleDense(y, p, 7, false)
		if again.NNZ() != m.NNZ() {
			t.Errorf("p=%v: same seed gave %d and %d entries", p, m.NNZ(), again.NNZ())
		}
	}
	for _, p := range []float64{0, -0.1, 1.5, math.NaN()} {
		if _, err := SampleDense(y, p, 1, false); err == nil {
			t.Errorf("p=%v accepted", p)
		}
	}
}

// TestProducts checks the kernels of ops.go against obvious loops over the
// dense form, for the unrolled rank 10 and the blocked loops of other
// ranks (blocks of eight and four, and remainders), with one and several chunks
// and workers. Tolerance: every output is a sum of at most 61 products of
// N(0, 1) numbers (|sum| of absolute terms ≲ 200), summed in a different
// order than the reference; the rounding difference is below 200·2⁻⁵²·few
// ≈ 1e-13, so 1e-12 leaves room without hiding a wrong term (≥ 1e-3).
func TestProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d1, d2 = 61, 45
	m, dense := randomObserved(t, rng, d1, d2, 0.4)
	for _, r := range []int{10, 3, 4, 5, 12, 19} {
		for _, size := range []int{1 << 20, 37} { // one chunk, many chunks
			p := newPlan(m, size)
			for _, workers := range []int{1, 3} {
				checkProducts(t, rng, m, dense, p, r, workers)
			}
		}
	}
}

func checkProducts(t *testing.T, rng *rand.Rand, m *Matrix, dense [][]float64, p *Plan, r, workers int) {
	t.Helper()
	d1, d2 := m.Rows, m.Cols
	u, v := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r)
	e := make([]float64, m.NNZ())
	ss := p.Residual(e, u, v, workers)
	wantSS := 0.0
	q := 0
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if math.IsNaN(dense[i][j]) {
				continue
			}
			dot := 0.0
			for k := 0; k < r; k++ {
				dot += u.Data[i*r+k] * v.Data[j*r+k]
			}
			want := dense[i][j] - dot
			if math.Abs(e[q]-want) > 1e-12 {
				t.Fatalf("r=%d: residual at (%d,%d) = %v, want %v", r, i, j, e[q], want)
			}
			wantSS += want * want
			q++
		}
	}
	if math.Abs(ss-wantSS) > 1e-10*wantSS {
		t.Errorf("r=%d: sum of squares %v, want %v", r, ss, wantSS)
	}

	// ZeroMulBoth with a random support; garbage in the outputs must be
	// overwritten.
	keep := make([]bool, len(e))
	for k := range keep {
		keep[k] = rng.IntN(5) == 0
	}
	ez := slices.Clone(e)
	x1 := testmat.NormalGeneral(rng, d1, r)
	gu, gv := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r)
	ssz := p.ZeroMulBoth(gu, gv, ez, keep, x1, v, workers)
	wantZ := 0.0
	for k := range e {
		want := e[k]
		if keep[k] {
			want = 0
		}
		if ez[k] != want {
			t.Fatalf("r=%d: ZeroMulBoth left e[%d] = %v, want %v", r, k, ez[k], want)
		}
		wantZ += want * want
	}
	if math.Abs(ssz-wantZ) > 1e-10*wantZ {
		t.Errorf("r=%d: ZeroMulBoth sum of squares %v, want %v", r, ssz, wantZ)
	}

	x2 := testmat.NormalGeneral(rng, d2, r)
	ev := testmat.NormalGeneral(rng, d1, r) // garbage: must be overwritten
	etu := testmat.NormalGeneral(rng, d2, r)
	p.MulVals(ev, ez, x2, workers)
	p.MulTransVals(etu, ez, x1, workers)
	wantEV := make([]float64, d1*r)
	wantGU := make([]float64, d1*r)
	wantEtU := make([]float64, d2*r)
	q = 0
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if math.IsNaN(dense[i][j]) {
				continue
			}
			for c := 0; c < r; c++ {
				wantEV[i*r+c] += ez[q] * x2.Data[j*r+c]
				wantGU[i*r+c] += ez[q] * v.Data[j*r+c]
				wantEtU[j*r+c] += ez[q] * x1.Data[i*r+c]
			}
			q++
		}
	}
	for k := range wantEV {
		if math.Abs(ev.Data[k]-wantEV[k]) > 1e-12 {
			t.Fatalf("r=%d: MulVals entry %d = %v, want %v", r, k, ev.Data[k], wantEV[k])
		}
		if math.Abs(gu.Data[k]-wantGU[k]) > 1e-12 {
			t.Fatalf("r=%d: ZeroMulBoth E·V entry %d = %v, want %v", r, k, gu.Data[k], wantGU[k])
		}
	}
	for k := range wantEtU {
		if math.Abs(etu.Data[k]-wantEtU[k]) > 1e-12 {
			t.Fatalf("r=%d: MulTransVals entry %d = %v, want %v", r, k, etu.Data[k], wantEtU[k])
		}
		if math.Abs(gv.Data[k]-wantEtU[k]) > 1e-12 {
			t.Fatalf("r=%d: ZeroMulBoth Eᵀ·U entry %d = %v, want %v", r, k, gv.Data[k], wantEtU[k])
		}
	}

	// The column-tiled kernel (rank 10 only) must agree with the plain
	// one: the same E, the sums reordered by block.
	if r == 10 {
		tp := newPlan(m, 1<<20)
		tp.tile = 8 * r * 7 // blocks of 7 columns
		e3 := slices.Clone(e)
		gu3, gv3 := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r)
		if ss3 := tp.ZeroMulBothTiled(gu3, gv3, e3, keep, x1, v, workers); math.Abs(ss3-wantZ) > 1e-10*wantZ {
			t.Errorf("ZeroMulBothTiled sum of squares %v, want %v", ss3, wantZ)
		}
		if !slices.Equal(e3, ez) {
			t.Fatalf("ZeroMulBothTiled values differ from ZeroMulBoth")
		}
		for k := range wantGU {
			if math.Abs(gu3.Data[k]-wantGU[k]) > 1e-12 {
				t.Fatalf("ZeroMulBothTiled E·V entry %d = %v, want %v", k, gu3.Data[k], wantGU[k])
			}
		}
		for k := range wantEtU {
			if math.Abs(gv3.Data[k]-wantEtU[k]) > 1e-12 {
				t.Fatalf("ZeroMulBothTiled Eᵀ·U entry %d = %v, want %v", k, gv3.Data[k], wantEtU[k])
			}
		}
	}

	// The column-tiled Eᵀ·X (any rank).
	{
		tp := newPlan(m, 1<<20)
		tp.tile = 8 * r * 5 // blocks of 5 columns
		got := testmat.NormalGeneral(rng, d2, r)
		tp.MulTransVals(got, ez, x1, workers)
		if len(tp.tileCols) < 2 {
			t.Fatalf("r=%d: tiling not used", r)
		}
		for k := range wantEtU {
			if math.Abs(got.Data[k]-wantEtU[k]) > 1e-12 {
				t.Fatalf("r=%d: tiled MulTransVals entry %d = %v, want %v", r, k, got.Data[k], wantEtU[k])
			}
		}
	}

	// The operator scales both products.
	op := NewOperator(p, ez, 0.5, workers)
	ov, ot := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r)
	op.MulTo(ov, x2)
	op.MulTransTo(ot, x1)
	for k := range wantEV {
		if math.Abs(ov.Data[k]-0.5*wantEV[k]) > 1e-12 {
			t.Fatalf("r=%d: Operator.MulTo entry %d = %v, want %v", r, k, ov.Data[k], 0.5*wantEV[k])
		}
	}
	for k := range wantEtU {
		if math.Abs(ot.Data[k]-0.5*wantEtU[k]) > 1e-12 {
			t.Fatalf("r=%d: Operator.MulTransTo entry %d = %v, want %v", r, k, ot.Data[k], 0.5*wantEtU[k])
		}
	}
}

// TestBuildCSCBlocks checks that the parallel CSC build gives the same
// arrays for any number of row blocks (including empty blocks).
func TestBuildCSCBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	m, _ := randomObserved(t, rng, 53, 41, 0.3)
	ref := *m
	ref.buildCSC(1)
	for _, nb := range []int{2, 3, 7, 60} {
		got := *m
		got.buildCSC(nb)
		if !slices.Equal(got.ColPtr, ref.ColPtr) || !slices.Equal(got.RowIdx, ref.RowIdx) {
			t.Fatalf("%d blocks: CSC arrays differ from the serial build", nb)
		}
	}
}

func TestEmptyLines(t *testing.T) {
	m, err := FromTriplets(3, 4, []int{0, 2}, []int{1, 1}, []float64{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.EmptyLines(); r != 1 || c != 3 {
		t.Errorf("EmptyLines = %d, %d; want 1, 3", r, c)
	}
}

// TestReductionsIgnoreWorkers: the kernels that sum partial buffers
// (ZeroMulBoth, MulTransVals and the column-tiled ZeroMulBothTiled) give
// bitwise identical results for 1, 2, 3, 4 and 8 workers.
func TestReductionsIgnoreWorkers(t *testing.T) {
	const d1, d2, r = 300, 250, 10
	rng := rand.New(rand.NewPCG(21, 22))
	var rows, cols []int
	var vals []float64
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if rng.Float64() < 0.2 {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, rng.NormFloat64())
			}
		}
	}
	m, err := FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	u, v, x := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r), testmat.NormalGeneral(rng, d1, r)
	keep := make([]bool, m.NNZ())
	for k := range keep {
		keep[k] = rng.Float64() < 0.1
	}
	type out struct {
		ss     float64
		gu, gv []float64
	}
	run := func(tiled bool, workers int) out {
		p := newPlan(m, 1<<20)
		if tiled {
			p.tile = 8 * r * 9 // blocks of 9 columns
		}
		e := slices.Clone(m.Val)
		gu, gv := testmat.NormalGeneral(rng, d1, r), testmat.NormalGeneral(rng, d2, r)
		var ss float64
		if tiled {
			ss = p.ZeroMulBothTiled(gu, gv, e, keep, u, v, workers)
		} else {
			ss = p.ZeroMulBoth(gu, gv, e, keep, u, v, workers)
			p.MulTransVals(gv, e, x, workers) // the untiled transpose product
		}
		return out{ss, gu.Data, gv.Data}
	}
	for _, tiled := range []bool{false, true} {
		ref := run(tiled, 1)
		for _, w := range []int{2, 3, 4, 8} {
			got := run(tiled, w)
			if got.ss != ref.ss || !slices.Equal(got.gu, ref.gu) || !slices.Equal(got.gv, ref.gv) {
				t.Errorf("tiled=%v: %d workers differ from 1", tiled, w)
			}
		}
	}
}
