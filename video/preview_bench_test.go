package video

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/video/frames"
)

// BenchmarkPreviewMP4: the MP4 preview of 50 frames of 320×240 colour in
// the four columns of rpca video (frame, background, foreground, mask),
// ffmpeg's encoding included (skipped without ffmpeg).
func BenchmarkPreviewMP4(b *testing.B) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		b.Skip("no ffmpeg")
	}
	const n = 50
	g := frames.Geometry{Width: 320, Height: 240, Color: true}
	cols := make([]PreviewColumn, 4)
	for c := range cols {
		m := mat.NewDense(g.Rows(), n, nil)
		raw := m.RawMatrix()
		for i := range raw.Rows {
			for j := range n {
				raw.Data[i*raw.Stride+j] = float64((i*7+j*13+c*5)%251) / 250
			}
		}
		cols[c] = PreviewColumn{Title: []string{"original", "background", "foreground", "mask"}[c], M: m, G: g}
	}
	dir := b.TempDir()
	b.ResetTimer()
	for range b.N {
		if err := WritePreview(context.Background(), filepath.Join(dir, "p.mp4"), cols, PreviewOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
