package video

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/gif"
	"path/filepath"
	"testing"

	"github.com/rpca-gd/rpca/internal/testfile"
	"gonum.org/v1/gonum/mat"
)

// TestWritePreview writes an animation of a gray clip and its mask and
// reads it back: the frame count is capped, the two panels sit side by
// side, and a pixel that is white in the mask is white in the animation.
func TestWritePreview(t *testing.T) {
	g := Geometry{Width: 20, Height: 10}
	const frames = 30
	y := mat.NewDense(g.Rows(), frames, nil)
	mask := mat.NewDense(g.Pixels(), frames, nil)
	for j := 0; j < frames; j++ {
		for i := 0; i < g.Pixels(); i++ {
			y.Set(i, j, 0.5)
		}
		mask.Set(j%g.Pixels(), j, 1) // one white pixel, moving
	}
	path := filepath.Join(t.TempDir(), "preview.gif")
	cols := []PreviewColumn{{"original", y, g}, {"mask", mask, g}}
	if err := WritePreview(context.Background(), path, cols, PreviewOptions{MaxFrames: 10}); err != nil {
		t.Fatal(err)
	}
	anim := readGIF(t, path)
	if len(anim.Image) != 10 {
		t.Fatalf("%d frames, want 10", len(anim.Image))
	}
	// Layout of Montage: gap 4, a header row, then a labelled cell.
	b := anim.Image[0].Bounds()
	if b.Dx() != 4+2*(g.Width+4) {
		t.Errorf("width %d", b.Dx())
	}
	for k, img := range anim.Image {
		j := k * frames / 10
		i := j % g.Pixels()
		x0 := 4 + (g.Width + 4) // second column
		y0 := 4 + labelHeight + 4 + labelHeight
		r, gg, bb, _ := img.At(x0+i%g.Width, y0+i/g.Width).RGBA()
		if r>>8 != 255 || gg>>8 != 255 || bb>>8 != 255 {
			t.Fatalf("frame %d: mask pixel %d is (%d, %d, %d), want white", k, i, r>>8, gg>>8, bb>>8)
		}
		if r, _, _, _ := img.At(4+i%g.Width, y0+i/g.Width).RGBA(); r>>8 != 128 {
			t.Fatalf("frame %d: original pixel %d, want gray 128", k, r>>8)
		}
	}
	if err := WritePreview(context.Background(), path, []PreviewColumn{{"bad", y, Geometry{Width: 3, Height: 3}}}, PreviewOptions{}); err == nil {
		t.Error("mismatched geometry accepted")
	}
}

// readGIF decodes the animated GIF at path.
func readGIF(t *testing.T, path string) *gif.GIF {
	t.Helper()
	f := bytes.NewReader(testfile.Read(t, path))
	anim, err := gif.DecodeAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return anim
}

// TestQuantizer: the arithmetic palette mapping agrees with the palette's
// own nearest-colour search on web-safe colours and on grays.
func TestQuantizer(t *testing.T) {
	q := newQuantizer(true)
	m := image.NewRGBA(image.Rect(0, 0, 6*6*6+256, 1))
	x := 0
	for r := 0; r < 6; r++ {
		for g := 0; g < 6; g++ {
			for b := 0; b < 6; b++ {
				m.SetRGBA(x, 0, color.RGBA{uint8(51 * r), uint8(51 * g), uint8(51 * b), 255})
				x++
			}
		}
	}
	for v := 0; v < 256; v++ {
		m.SetRGBA(x, 0, color.RGBA{uint8(v), uint8(v), uint8(v), 255})
		x++
	}
	p := q.quantize(m)
	for x := 0; x < m.Bounds().Dx(); x++ {
		if want := uint8(q.pal.Index(m.At(x, 0))); p.Pix[x] != want && !(x < 216 && m.Pix[4*x] == m.Pix[4*x+1] && m.Pix[4*x+1] == m.Pix[4*x+2]) {
			t.Fatalf("pixel %d %v: index %d, want %d", x, m.At(x, 0), p.Pix[x], want)
		}
	}
}

// TestZeroMeansDefault checks the option convention of Montage's Gap and
// Generate's Noise: 0 is the default, a negative value none.
func TestZeroMeansDefault(t *testing.T) {
	for _, c := range []struct{ v, want float64 }{{0, 0.02}, {-1, 0}, {-0.5, 0}, {0.3, 0.3}} {
		if got := zeroMeansDefault(c.v, 0.02); got != c.want {
			t.Errorf("zeroMeansDefault(%v, 0.02) = %v, want %v", c.v, got, c.want)
		}
	}
	if got := zeroMeansDefault(0, 4) + zeroMeansDefault(-3, 4) + zeroMeansDefault(7, 4); got != 4+0+7 {
		t.Errorf("int cases sum to %d, want 11", got)
	}
}
