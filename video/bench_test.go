package video

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rpca-gd/rpca/video/frames"
	"github.com/rpca-gd/rpca/video/internal/videotest"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkLoadDir loads 50 gray 176×144 PNG frames (the size of the hall
// sequence), decoding in parallel.
func BenchmarkLoadDir(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	dir := b.TempDir()
	for k := 0; k < 50; k++ {
		videotest.WriteImage(b, filepath.Join(dir, fmt.Sprintf("frame%04d.png", k)), videotest.RandomFrame(rng, 176, 144, true), true)
	}
	for _, scale := range []float64{1, 0.5} {
		b.Run(fmt.Sprintf("scale=%v", scale), func(b *testing.B) {
			for b.Loop() {
				if _, err := frames.LoadDir(context.Background(), dir, frames.Options{Scale: scale}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGatherColumns: copying 16 frames of a 320×240 colour clip of
// 200 frames (pixels × frames, row-major) into frame columns, the
// transpose that the masks, the PNGs and the preview start from.
func BenchmarkGatherColumns(b *testing.B) {
	const rows, frames = 320 * 240 * 3, 200
	y := mat.NewDense(rows, frames, nil)
	for i := range y.RawMatrix().Data {
		y.RawMatrix().Data[i] = float64(i % 251)
	}
	u, q := mat.NewDense(rows, 4, nil), mat.NewDense(frames, 4, nil)
	for i := range u.RawMatrix().Data {
		u.RawMatrix().Data[i] = float64(i % 7)
	}
	for i := range q.RawMatrix().Data {
		q.RawMatrix().Data[i] = float64(i % 5)
	}
	dst := newColumns(16, rows)
	for _, c := range []struct {
		name string
		m    Matrix
	}{{"dense", y}, {"lowrank-4", LowRank{U: u, Q: q}}, {"residual-4", residual{y: y, m: LowRank{U: u, Q: q}}},
		{"lowrank-1", LowRank{U: colOf(u), Q: colOf(q)}}, {"residual-1", residual{y: y, m: LowRank{U: colOf(u), Q: colOf(q)}}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(rows * 16 * 8)
			for b.Loop() {
				for j0 := 0; j0+16 <= frames; j0 += 16 {
					gatherColumns(dst, c.m, j0)
				}
			}
		})
	}
}

// colOf returns the first column of m as a matrix.
func colOf(m *mat.Dense) *mat.Dense {
	r, _ := m.Dims()
	return mat.DenseCopyOf(m.Slice(0, r, 0, 1))
}

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
