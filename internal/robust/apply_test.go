package robust

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Apply against Value entry by entry, on a strided dense matrix and on
// flat values, with gross entries set aside.
func TestApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d1, d2, stride = 7, 5, 9
	data := make([]float64, d1*stride)
	for k := range data {
		data[k] = 1000 + rng.NormFloat64()
	}
	data[2*stride+3], data[6*stride+4] = 1e300, -1e300
	dense := Values{Dense: blas64.General{Rows: d1, Cols: d2, Stride: stride, Data: data}}
	fr := Analyze(dense, true, true)
	if len(fr.Gross) != 2 || fr.Loc == 0 || !fr.Transform {
		t.Fatalf("the frame should set 2 entries aside and remove a location: %+v", fr)
	}
	got := fr.Apply(dense)
	for i := range d1 {
		for j := range d2 {
			want := fr.Value(data[i*stride+j], fr.Loc/2)
			if k := i*d2 + j; k == fr.Gross[0] || k == fr.Gross[1] {
				want = fr.GrossValue()
			}
			if got[i*d2+j] != want {
				t.Fatalf("(%d, %d): %v, want %v", i, j, got[i*d2+j], want)
			}
		}
	}
	flat := Values{Flat: []float64{3, 1e300, 5, 4, 6, 2, 4.5}}
	ff := Analyze(flat, true, true)
	out := ff.Apply(flat)
	for k, x := range flat.Flat {
		want := ff.Value(x, ff.Loc/2)
		if k == 1 {
			want = ff.GrossValue()
		}
		if out[k] != want {
			t.Errorf("flat %d: %v, want %v", k, out[k], want)
		}
	}
}

// Truth's factors multiply to (A·Bᵀ − c')/scale.
func TestTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := mat.NewDense(6, 2, nil), mat.NewDense(4, 2, nil)
	for _, m := range []*mat.Dense{a, b} {
		r, c := m.Dims()
		for i := range r {
			for j := range c {
				m.Set(i, j, rng.NormFloat64())
			}
		}
	}
	var m mat.Dense
	m.Mul(a, b.T())
	for _, fr := range []Frame{{Scale: 4}, {Scale: 0.5, Loc: 7}} {
		af, bf := fr.Truth(a, b)
		var got mat.Dense
		got.Mul(af, bf.T())
		for i := range 6 {
			for j := range 4 {
				want := (m.At(i, j) - fr.Loc) / fr.Scale
				if math.Abs(got.At(i, j)-want) > 1e-14*(1+math.Abs(want)) {
					t.Errorf("loc %g scale %g (%d, %d): %v, want %v", fr.Loc, fr.Scale, i, j, got.At(i, j), want)
				}
			}
		}
	}
}
