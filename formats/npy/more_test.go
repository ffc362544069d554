package npy

import (
	"bytes"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/rpca-gd/rpca/internal/testmat"
	"github.com/rpca-gd/rpca/outdir"
	"gonum.org/v1/gonum/mat"
)

func TestWriteNpyWith(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := testmat.Normal(rng, 4, 3)
	for _, opt := range []Options{{}, {Float32: true}, {FortranOrder: true}, {Float32: true, FortranOrder: true}} {
		var buf bytes.Buffer
		if err := WriteWith(&buf, m, opt); err != nil {
			t.Fatal(err)
		}
		h, err := ReadHeader(bytes.NewReader(buf.Bytes()), "x")
		if err != nil {
			t.Fatal(err)
		}
		if h.FortranOrder != opt.FortranOrder || (h.Descr == "<f4") != opt.Float32 || h.DataOffset%64 != 0 {
			t.Fatalf("%+v: header %+v", opt, h)
		}
		got, err := Read(bytes.NewReader(buf.Bytes()), "x")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			for j := 0; j < 3; j++ {
				want := m.At(i, j)
				if opt.Float32 {
					want = float64(float32(want))
				}
				if got.At(i, j) != want {
					t.Fatalf("%+v: (%d,%d) = %v, want %v", opt, i, j, got.At(i, j), want)
				}
			}
		}
	}
}

func TestNpyScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := testmat.Normal(rng, 5, 4)
	for _, opt := range []Options{{}, {FortranOrder: true}, {Float32: true}} {
		p := filepath.Join(t.TempDir(), "m.npy")
		if err := outdir.WriteFile(p, func(w io.Writer) error { return WriteWith(w, m, opt) }); err != nil {
			t.Fatal(err)
		}
		nf, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got := mat.NewDense(5, 4, nil)
		seen := 0
		err = nf.Scan(func(i, j int, v float64) error {
			if got.At(i, j) != 0 {
				t.Fatalf("%+v: (%d,%d) twice", opt, i, j)
			}
			got.Set(i, j, v)
			seen++
			return nil
		})
		nf.Close()
		if err != nil || seen != 20 {
			t.Fatalf("%+v: %v, %d elements", opt, err, seen)
		}
		want := m
		if opt.Float32 {
			want = mat.NewDense(5, 4, nil)
			want.Apply(func(i, j int, v float64) float64 { return float64(float32(v)) }, m)
		}
		if !mat.Equal(got, want) {
			t.Fatalf("%+v: scan differs", opt)
		}
	}
}
