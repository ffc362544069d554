package outdir

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// A file larger than several writeback chunks, written in pieces of odd
// sizes, ends with exactly the bytes given.
func TestWriteFileEarlyWriteback(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	want := make([]byte, 2*writebackChunk+12345)
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "big.bin")
	err := WriteFile(path, func(w io.Writer) error {
		for rest := want; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(3<<20))
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%d bytes read back, %d written, or their contents differ", len(got), len(want))
	}
}
