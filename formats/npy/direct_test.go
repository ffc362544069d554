package npy

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// ReadDense's direct path (parts read at once into the matrix) against
// the decoding reader, on a file large enough for several parts, with
// special values; and a file cut short after Open is an error.
func TestReadDenseDirect(t *testing.T) {
	const rows, cols = 1200, 1100 // 10.6 MB: at least two parts of directPart
	rng := rand.New(rand.NewPCG(1, 1))
	m := mat.NewDense(rows, cols, nil)
	for i := range rows {
		for j := range cols {
			m.Set(i, j, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
		}
	}
	m.Set(0, 0, math.Copysign(0, -1))
	m.Set(rows-1, cols-1, math.SmallestNonzeroFloat64)
	path := filepath.Join(t.TempDir(), "m.npy")
	if err := WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read(bytes.NewReader(raw), path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadDense()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	w, g := want.RawMatrix().Data, got.RawMatrix().Data
	for k := range w {
		if math.Float64bits(w[k]) != math.Float64bits(g[k]) {
			t.Fatalf("entry %d: %v, want %v", k, g[k], w[k])
		}
	}
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(path, int64(len(raw)-100)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadDense(); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("a file cut short: %v", err)
	}
}
