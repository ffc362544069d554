package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// TestResidualProducts checks the one-pass residual against the obvious
// computation: E = Y − U·Vᵀ − S entry by entry on the observed entries,
// its sum of squares on S's support, the rows' sums of squares with that
// support zeroed, and the products E_off·X and E_offᵀ·Z by triple loops;
// on a dense Y (blocks of rows, parallel sums) and on half of its
// entries. The sums are taken in other orders, so they agree to rounding:
// 1e-12 relative.
func TestResidualProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d1, d2, k, m = 130, 90, 3, 5
	gen := func(r, c int) blas64.General {
		a := kernels.NewGeneral(r, c)
		for i := range a.Data {
			a.Data[i] = rng.NormFloat64()
		}
		return a
	}
	y, u, v, x, z := gen(d1, d2), gen(d1, k), gen(d2, k), gen(d2, k+m), gen(d1, k)
	var sp CSR
	sp.RowPtr = make([]int, d1+1)
	inS := map[[2]int]float64{}
	for i := range d1 {
		for j := range d2 {
			if rng.Float64() < 0.05 {
				s := rng.NormFloat64()
				sp.ColIdx, sp.Val = append(sp.ColIdx, int32(j)), append(sp.Val, s)
				inS[[2]int{i, j}] = s
			}
		}
		sp.RowPtr[i+1] = len(sp.Val)
	}
	var rows, cols []int
	var vals []float64
	for i := range d1 {
		for j := range d2 {
			if _, s := inS[[2]int{i, j}]; s || rng.Float64() < 0.5 {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, y.Data[i*y.Stride+j])
			}
		}
	}
	obs, err := observed.FromTriplets(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		o    *observed.Matrix
	}{{"dense", nil}, {"observed", obs}} {
		seen := func(i, j int) bool { return true }
		if c.o != nil {
			set := map[[2]int]bool{}
			for q := range rows {
				set[[2]int{rows[q], cols[q]}] = true
			}
			seen = func(i, j int) bool { return set[[2]int{i, j}] }
		}
		// The reference.
		e := make([]float64, d1*d2)
		wantOn, wantRow := 0.0, make([]float64, d1)
		for i := range d1 {
			for j := range d2 {
				if !seen(i, j) {
					continue
				}
				r := y.Data[i*y.Stride+j]
				for l := range k {
					r -= u.Data[i*u.Stride+l] * v.Data[j*v.Stride+l]
				}
				if s, ok := inS[[2]int{i, j}]; ok {
					wantOn += (r - s) * (r - s)
					continue
				}
				e[i*d2+j] = r
				wantRow[i] += r * r
			}
		}
		ex, etz := kernels.NewGeneral(d1, k+m), kernels.NewGeneral(d2, k)
		on, rowSS := ResidualProducts(y, c.o, u, v, sp, x, z, ex, etz, 2)
		near := func(a, b, scale float64) bool { return math.Abs(a-b) <= 1e-12*scale }
		if !near(on, wantOn, wantOn) {
			t.Errorf("%s: sum of squares on S %v, want %v", c.name, on, wantOn)
		}
		total := 0.0
		for _, w := range wantRow {
			total += w
		}
		for i := range d1 {
			if !near(rowSS[i], wantRow[i], total) {
				t.Fatalf("%s: row %d: %v, want %v", c.name, i, rowSS[i], wantRow[i])
			}
		}
		scale := math.Sqrt(total) * math.Sqrt(float64(d1*d2))
		for i := range d1 {
			for c2 := range k + m {
				w := 0.0
				for j := range d2 {
					w += e[i*d2+j] * x.Data[j*x.Stride+c2]
				}
				if !near(ex.Data[i*ex.Stride+c2], w, scale) {
					t.Fatalf("%s: E·X[%d, %d] = %v, want %v", c.name, i, c2, ex.Data[i*ex.Stride+c2], w)
				}
			}
		}
		for j := range d2 {
			for c2 := range k {
				w := 0.0
				for i := range d1 {
					w += e[i*d2+j] * z.Data[i*z.Stride+c2]
				}
				if !near(etz.Data[j*etz.Stride+c2], w, scale) {
					t.Fatalf("%s: Eᵀ·Z[%d, %d] = %v, want %v", c.name, j, c2, etz.Data[j*etz.Stride+c2], w)
				}
			}
		}
	}
}

// TestSparseAllowed: α·n plus z binomial deviations plus one, z from the
// number of lines; 0 at α = 0.
func TestSparseAllowed(t *testing.T) {
	if SparseAllowed(0, 100, 10) != 0 {
		t.Error("α = 0")
	}
	z := math.Sqrt(2*math.Log(20)) + 0.5
	if got, want := SparseAllowed(0.1, 100, 10), 10+z*3+1; math.Abs(got-want) > 1e-12 {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestDroppedAgainstDirect compares Dropped with (E − D)·Q_V and
// (E − D)ᵀ·Q_U formed densely.
func TestDroppedAgainstDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d1, d2, k = 30, 20, 3
	e := mat.NewDense(d1, d2, nil)
	for i := range d1 {
		for j := range d2 {
			e.Set(i, j, rng.NormFloat64())
		}
	}
	randQ := func(n int) *mat.Dense {
		a := mat.NewDense(n, k, nil)
		for i := range n {
			for c := range k {
				a.Set(i, c, rng.NormFloat64())
			}
		}
		var qr mat.QR
		qr.Factorize(a)
		var q mat.Dense
		qr.QTo(&q)
		return mat.DenseCopyOf(q.Slice(0, n, 0, k))
	}
	qu, qv := randQ(d1), randQ(d2)
	// D: entries of E itself (on D's support E equals D).
	var drop []Entry
	dm := mat.NewDense(d1, d2, nil)
	for _, ij := range [][2]int{{0, 0}, {3, 7}, {29, 19}, {3, 8}} {
		v := e.At(ij[0], ij[1])
		drop = append(drop, Entry{Row: ij[0], Col: ij[1], Val: v})
		dm.Set(ij[0], ij[1], v)
	}
	var ex, etz mat.Dense
	ex.Mul(e, qv)
	etz.Mul(e.T(), qu)
	ss := mat.Norm(e, 2) * mat.Norm(e, 2)
	proj, ssFit := Dropped(ex.RawMatrix(), etz.RawMatrix(), k, qu.RawMatrix(), qv.RawMatrix(), drop, ss)

	var ed, a, b mat.Dense
	ed.Sub(e, dm)
	a.Mul(&ed, qv)
	b.Mul(ed.T(), qu)
	wantProj := mat.Norm(&a, 2)*mat.Norm(&a, 2) + mat.Norm(&b, 2)*mat.Norm(&b, 2)
	wantSS := mat.Norm(&ed, 2) * mat.Norm(&ed, 2)
	if math.Abs(proj-wantProj) > 1e-12*wantProj || math.Abs(ssFit-wantSS) > 1e-12*wantSS {
		t.Errorf("Dropped = %.15g, %.15g; direct %.15g, %.15g", proj, ssFit, wantProj, wantSS)
	}
	if p0, s0 := Dropped(ex.RawMatrix(), etz.RawMatrix(), k, qu.RawMatrix(), qv.RawMatrix(), nil, ss); math.Abs(s0-ss) > 0 || p0 <= 0 {
		t.Errorf("no entries dropped: %v, %v", p0, s0)
	}
}
