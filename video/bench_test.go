package video

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// BenchmarkLoadDir loads 50 gray 176×144 PNG frames (the size of the hall
// sequence), decoding in parallel.
func BenchmarkLoadDir(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	dir := b.TempDir()
	for k := 0; k < 50; k++ {
		writeImage(b, filepath.Join(dir, fmt.Sprintf("frame%04d.png", k)), randomFrame(rng, 176, 144, true), true)
	}
	for _, scale := range []float64{1, 0.5} {
		b.Run(fmt.Sprintf("scale=%v", scale), func(b *testing.B) {
			for b.Loop() {
				if _, err := LoadDir(context.Background(), dir, Options{Scale: scale}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
