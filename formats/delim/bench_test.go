package delim

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/rpca-gd/rpca/internal/testmat"
)

// BenchmarkReadCSV reads a 1000×200 CSV of full-precision numbers.
func BenchmarkReadCSV(b *testing.B) {
	var buf bytes.Buffer
	Write(&buf, testmat.Normal(rand.New(rand.NewPCG(9, 9)), 1000, 200), ",")
	raw := buf.Bytes()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(raw), "b.csv", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
