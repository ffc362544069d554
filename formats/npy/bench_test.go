package npy

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/rpca-gd/rpca/internal/testmat"
)

// BenchmarkReadNpy reads a 1000×1000 float64 array (8 MB) from memory.
func BenchmarkReadNpy(b *testing.B) {
	var buf bytes.Buffer
	Write(&buf, testmat.Normal(rand.New(rand.NewPCG(9, 9)), 1000, 1000))
	raw := buf.Bytes()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(raw), "b.npy"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteNpy writes a 1000×1000 float64 array to memory.
func BenchmarkWriteNpy(b *testing.B) {
	m := testmat.Normal(rand.New(rand.NewPCG(9, 9)), 1000, 1000)
	var buf bytes.Buffer
	b.SetBytes(8e6)
	for b.Loop() {
		buf.Reset()
		Write(&buf, m)
	}
}
