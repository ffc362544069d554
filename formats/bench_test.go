package formats

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func benchMatrix(r, c int) *mat.Dense {
	rng := rand.New(rand.NewPCG(9, 9))
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

// BenchmarkReadNpy reads a 1000×1000 float64 array (8 MB) from memory.
func BenchmarkReadNpy(b *testing.B) {
	var buf bytes.Buffer
	WriteNpy(&buf, benchMatrix(1000, 1000))
	raw := buf.Bytes()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := ReadNpy(bytes.NewReader(raw), "b.npy"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteNpy writes a 1000×1000 float64 array to memory.
func BenchmarkWriteNpy(b *testing.B) {
	m := benchMatrix(1000, 1000)
	var buf bytes.Buffer
	b.SetBytes(8e6)
	for b.Loop() {
		buf.Reset()
		WriteNpy(&buf, m)
	}
}

// BenchmarkReadCSV reads a 1000×200 CSV of full-precision numbers.
func BenchmarkReadCSV(b *testing.B) {
	var buf bytes.Buffer
	WriteDelimited(&buf, benchMatrix(1000, 200), ",")
	raw := buf.Bytes()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := ReadDelimited(bytes.NewReader(raw), "b.csv", TextOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
