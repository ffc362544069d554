package factor

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestBalance: against A·Bᵀ formed and decomposed by a full SVD: the
// balanced factors reproduce the product, UᵀU = VᵀV = Σ, and σ are the
// product's singular values (to 1e-12 relative: a few orthogonal
// transformations of well-conditioned 3-column factors).
func TestBalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const d1, d2, r = 20, 15, 3
	a, b := mat.NewDense(d1, r, nil), mat.NewDense(d2, r, nil)
	for _, m := range []*mat.Dense{a, b} {
		rows, _ := m.Dims()
		for i := range rows {
			for j := range r {
				m.Set(i, j, rng.NormFloat64())
			}
		}
	}
	var p mat.Dense
	p.Mul(a, b.T())
	us, vs, sig, ok := Balance(a, b)
	if !ok {
		t.Fatal("Balance failed")
	}
	var svd mat.SVD
	svd.Factorize(&p, mat.SVDNone)
	want := svd.Values(nil)
	tol := 1e-12 * want[0]
	var q mat.Dense
	q.Mul(us, vs.T())
	q.Sub(&q, &p)
	if e := mat.Norm(&q, math.Inf(1)); e > tol*float64(d1) {
		t.Errorf("U·Vᵀ − A·Bᵀ: %.3g", e)
	}
	var gu, gv mat.Dense
	gu.Mul(us.T(), us)
	gv.Mul(vs.T(), vs)
	for i := range r {
		if math.Abs(sig[i]-want[i]) > tol {
			t.Errorf("σ_%d = %v, want %v", i+1, sig[i], want[i])
		}
		for j := range r {
			w := 0.0
			if i == j {
				w = want[i]
			}
			if math.Abs(gu.At(i, j)-w) > tol || math.Abs(gv.At(i, j)-w) > tol {
				t.Errorf("UᵀU, VᵀV at (%d, %d): %v, %v, want %v", i, j, gu.At(i, j), gv.At(i, j), w)
			}
		}
	}
}

// TestThinQ: Q·R = A to rounding and QᵀQ = I, for a tall A and, with the
// columns past d zero, for a wide one (d < k).
func TestThinQ(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	for _, dims := range [][2]int{{12, 4}, {3, 5}} {
		d, k := dims[0], dims[1]
		a := mat.NewDense(d, k, nil)
		for i := range d {
			for j := range k {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		q, r := ThinQ(a)
		var qr, qtq mat.Dense
		qm := mat.NewDense(q.Rows, q.Cols, q.Data)
		qr.Mul(qm, r)
		qr.Sub(&qr, a)
		if e := mat.Norm(&qr, math.Inf(1)); e > 1e-13 {
			t.Errorf("%d×%d: ‖QR − A‖ = %.3g", d, k, e)
		}
		qtq.Mul(qm.T(), qm)
		for i := range k {
			for j := range k {
				want := 0.0
				if i == j && i < min(d, k) {
					want = 1
				}
				if math.Abs(qtq.At(i, j)-want) > 1e-13 {
					t.Errorf("%d×%d: (QᵀQ)[%d,%d] = %v, want %v", d, k, i, j, qtq.At(i, j), want)
				}
			}
		}
	}
}
