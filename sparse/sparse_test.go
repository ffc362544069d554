package sparse

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/errs"
)

// An Observed built from triplets in any order reads back, through
// every accessor, as the dense reference it came from; a Matrix likewise
// through At, Do, DoRows and ToDense.
func TestAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d1, d2 = 9, 7
	ref := mat.NewDense(d1, d2, nil)
	seen := mat.NewDense(d1, d2, nil)
	var rows, cols []int
	var vals []float64
	for _, k := range rng.Perm(d1 * d2) {
		if rng.Float64() < 0.4 {
			i, j := k/d2, k%d2
			v := rng.NormFloat64()
			if len(vals) == 3 {
				v = 0 // an observed zero is an observation
			}
			ref.Set(i, j, v)
			seen.Set(i, j, 1)
			rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
		}
	}
	o, err := NewObserved(d1, d2, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := o.Dims(); r != d1 || c != d2 || o.Len() != len(vals) || o.NNZ() != len(vals) {
		t.Fatalf("dims %d×%d, %d entries; want %d×%d, %d", r, c, o.Len(), d1, d2, len(vals))
	}
	if want := float64(len(vals)) / (d1 * d2); o.Rate() != want {
		t.Errorf("rate %v, want %v", o.Rate(), want)
	}
	n := 0
	lastI, lastJ := -1, -1
	o.Do(func(i, j int, v float64) {
		if i < lastI || (i == lastI && j <= lastJ) {
			t.Fatalf("Do out of row-major order at (%d, %d)", i, j)
		}
		lastI, lastJ = i, j
		if seen.At(i, j) != 1 || v != ref.At(i, j) {
			t.Fatalf("Do gave (%d, %d) = %v, want %v (observed %v)", i, j, v, ref.At(i, j), seen.At(i, j))
		}
		n++
	})
	if n != len(vals) {
		t.Errorf("Do listed %d entries of %d", n, len(vals))
	}
	ptr, idx, val := o.CSR()
	for i := range d1 {
		rc, rv := o.Row(i)
		if len(rc) != ptr[i+1]-ptr[i] {
			t.Fatalf("row %d: %d entries, CSR says %d", i, len(rc), ptr[i+1]-ptr[i])
		}
		for q := range rc {
			if rc[q] != idx[ptr[i]+q] || rv[q] != val[ptr[i]+q] {
				t.Fatalf("row %d differs from CSR", i)
			}
		}
	}
	s := Where(d1, d2, ref.RawMatrix().Data, d2, func(x float64) bool { return math.Abs(x) > 0.5 })
	dense := s.ToDense()
	for i := range d1 {
		for j := range d2 {
			want := ref.At(i, j)
			if math.Abs(want) <= 0.5 {
				want = 0
			}
			if s.At(i, j) != want || dense.At(i, j) != want {
				t.Fatalf("S(%d, %d): At %v, ToDense %v, want %v", i, j, s.At(i, j), dense.At(i, j), want)
			}
		}
	}
	m := 0
	s.DoRows(2, 5, func(i, j int, v float64) {
		if i < 2 || i >= 5 || v != s.At(i, j) {
			t.Fatalf("DoRows(2, 5) gave (%d, %d) = %v", i, j, v)
		}
		m++
	})
	want := 0
	for i := 2; i < 5; i++ {
		want += s.RowPtr[i+1] - s.RowPtr[i]
	}
	if m != want {
		t.Errorf("DoRows(2, 5) listed %d entries, want %d", m, want)
	}
}

// The zero values and nil behave as empty matrices; malformed input is
// a bad-input error, never a panic.
func TestEmptyAndBadInput(t *testing.T) {
	var nilObs *Observed
	zero := &Observed{}
	for _, o := range []*Observed{nilObs, zero} {
		if r, c := o.Dims(); r != 0 || c != 0 || o.Len() != 0 || o.Rate() != 0 {
			t.Errorf("empty Observed: %d×%d, %d entries, rate %v", r, c, o.Len(), o.Rate())
		}
		o.Do(func(int, int, float64) { t.Error("Do listed an entry of an empty Observed") })
		if p, _, _ := o.CSR(); p != nil {
			t.Error("CSR of an empty Observed")
		}
		if c, _ := o.Row(0); c != nil {
			t.Error("Row of an empty Observed")
		}
	}
	var nilS *Matrix
	if nilS.NNZ() != 0 || nilS.At(3, 4) != 0 || !nilS.ToDense().IsEmpty() {
		t.Error("nil Matrix is not empty")
	}
	nilS.Do(func(int, int, float64) { t.Error("Do listed an entry of a nil Matrix") })
	for name, build := range map[string]func() error{
		"size":        func() error { _, err := NewObserved(0, 3, nil, nil, nil); return err },
		"lengths":     func() error { _, err := NewObserved(2, 2, []int{0}, []int{0, 1}, []float64{1}); return err },
		"duplicate":   func() error { _, err := NewObserved(2, 2, []int{0, 0}, []int{1, 1}, []float64{1, 2}); return err },
		"range":       func() error { _, err := NewObserved(2, 2, []int{2}, []int{0}, []float64{1}); return err },
		"NaN":         func() error { _, err := NewObserved(2, 2, []int{0}, []int{0}, []float64{math.NaN()}); return err },
		"huge sparse": func() error { _, err := NewObserved(1e9, 1e9, []int{0}, []int{0}, []float64{1}); return err },
		"CSR order":   func() error { _, err := NewObservedCSR(1, 3, []int{0, 2}, []int32{2, 0}, []float64{1, 2}); return err },
		"CSR NaN": func() error {
			_, err := NewObservedCSR(1, 3, []int{0, 1}, []int32{0}, []float64{math.Inf(1)})
			return err
		},
		"sample nil":  func() error { _, err := Sampling{P: 0.5}.Dense(nil); return err },
		"sample rate": func() error { _, err := SampleDense(mat.NewDense(2, 2, nil), 1.5, 1); return err },
	} {
		if err := build(); !errors.Is(err, errs.BadInput) {
			t.Errorf("%s: error %v, want a bad-input error", name, err)
		}
	}
}

// The sampler draws the same entries for the same P and seed, about a
// fraction P of them, and Cover leaves no row or column empty.
func TestSampling(t *testing.T) {
	y := mat.NewDense(300, 200, nil)
	for i := range 300 {
		for j := range 200 {
			y.Set(i, j, float64(i*200+j))
		}
	}
	a, err := Sampling{P: 0.1, Seed: 7}.Dense(y)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SampleDense(y, 0.1, 7)
	pa, ia, va := a.CSR()
	pb, ib, vb := b.CSR()
	if len(va) != len(vb) || len(pa) != len(pb) {
		t.Fatal("the same P and seed drew different entries")
	}
	for k := range va {
		if ia[k] != ib[k] || va[k] != vb[k] {
			t.Fatal("the same P and seed drew different entries")
		}
	}
	// 6,000 expected of 60,000; the count is binomial (sd about 73).
	if n := a.Len(); n < 5600 || n > 6400 {
		t.Errorf("%d entries drawn at P = 0.1 of 60,000", n)
	}
	a.Do(func(i, j int, v float64) {
		if v != y.At(i, j) {
			t.Fatalf("(%d, %d) = %v, want %v", i, j, v, y.At(i, j))
		}
	})
	c, err := Sampling{P: 0.001, Seed: 3, Cover: true}.Dense(y)
	if err != nil {
		t.Fatal(err)
	}
	rowN, colN := make([]int, 300), make([]int, 200)
	c.Do(func(i, j int, _ float64) { rowN[i]++; colN[j]++ })
	for i, n := range rowN {
		if n == 0 {
			t.Fatalf("Cover left row %d empty", i)
		}
	}
	for j, n := range colN {
		if n == 0 {
			t.Fatalf("Cover left column %d empty", j)
		}
	}
}

// Probability is the draw's P for a Sampling (with or without Cover) and
// 0 for given entries; WithValues keeps the positions and the
// probability and refuses a wrong number of values.
func TestProbabilityAndWithValues(t *testing.T) {
	y := mat.NewDense(40, 30, nil)
	for i := range 40 {
		for j := range 30 {
			y.Set(i, j, float64(i-j))
		}
	}
	for _, s := range []Sampling{{P: 0.25, Seed: 2}, {P: 0.05, Seed: 2, Cover: true}} {
		o, err := s.Dense(y)
		if err != nil {
			t.Fatal(err)
		}
		if o.Probability() != s.P || o.Rate() == s.P {
			t.Errorf("%+v: probability %v, rate %v", s, o.Probability(), o.Rate())
		}
		vals := make([]float64, o.Len())
		for k := range vals {
			vals[k] = float64(k)
		}
		w, err := o.WithValues(vals)
		if err != nil {
			t.Fatal(err)
		}
		if w.Probability() != s.P {
			t.Errorf("WithValues lost the probability: %v", w.Probability())
		}
		k := 0
		pa, ia, _ := o.CSR()
		pb, ib, _ := w.CSR()
		w.Do(func(i, j int, v float64) {
			if v != float64(k) {
				t.Fatalf("value %d is %v", k, v)
			}
			k++
		})
		for q := range ia {
			if ia[q] != ib[q] {
				t.Fatal("WithValues moved the positions")
			}
		}
		for q := range pa {
			if pa[q] != pb[q] {
				t.Fatal("WithValues moved the positions")
			}
		}
		if _, err := o.WithValues(vals[1:]); !errors.Is(err, errs.BadInput) {
			t.Errorf("a value short: %v", err)
		}
		bad := append([]float64(nil), vals...)
		bad[len(bad)/2] = math.NaN()
		if _, err := o.WithValues(bad); !errors.Is(err, errs.BadInput) {
			t.Errorf("a NaN value: %v", err)
		}
	}
	given, err := NewObserved(2, 2, []int{0, 1}, []int{1, 0}, []float64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if given.Probability() != 0 || (&Observed{}).Probability() != 0 {
		t.Error("given entries have a probability")
	}
	var nilObs *Observed
	for _, o := range []*Observed{nilObs, {}} {
		if _, err := o.WithValues(nil); !errors.Is(err, errs.BadInput) {
			t.Errorf("WithValues on an empty Observed: %v", err)
		}
	}
}

// Scaled is c times the dense form, and leaves its receiver alone.
func TestScaled(t *testing.T) {
	data := []float64{0, 2, 0, -3, 0, 0, 5, 0, 0, 0, 0, 7}
	s := Where(3, 4, data, 4, func(x float64) bool { return x != 0 })
	got := s.Scaled(-0.5).ToDense()
	for i := range 3 {
		for j := range 4 {
			if want := -0.5 * data[i*4+j]; got.At(i, j) != want {
				t.Errorf("(%d, %d): %v, want %v", i, j, got.At(i, j), want)
			}
		}
	}
	if s.Val[0] != 2 {
		t.Errorf("the receiver changed: %v", s.Val)
	}
}
