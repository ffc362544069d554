package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/video/frames"
	"gonum.org/v1/gonum/mat"
)

// TestWritePreview writes an animation of a gray clip and its mask and
// reads it back: the frame count is capped, the two panels sit side by
// side, and a pixel that is white in the mask is white in the animation.
func TestWritePreview(t *testing.T) {
	g := frames.Geometry{Width: 20, Height: 10}
	const nFrames = 30
	y := mat.NewDense(g.Rows(), nFrames, nil)
	mask := mat.NewDense(g.Pixels(), nFrames, nil)
	for j := 0; j < nFrames; j++ {
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
		j := k * nFrames / 10
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
	if err := WritePreview(context.Background(), path, []PreviewColumn{{"bad", y, frames.Geometry{Width: 3, Height: 3}}}, PreviewOptions{}); err == nil {
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

// TestPreviewFrameLabels: every animation frame carries its number and
// name above the first column (the label area has text, and it differs
// from one frame to the next while the images are identical); a name
// list of the wrong length is refused.
func TestPreviewFrameLabels(t *testing.T) {
	g := frames.Geometry{Width: 140, Height: 6}
	const nFrames = 12
	y := mat.NewDense(g.Rows(), nFrames, nil) // every frame black
	names := make([]string, nFrames)
	for j := range names {
		names[j] = fmt.Sprintf("in%03d.png", j)
	}
	path := filepath.Join(t.TempDir(), "preview.gif")
	if err := WritePreview(context.Background(), path, []PreviewColumn{{"original", y, g}}, PreviewOptions{Names: names}); err != nil {
		t.Fatal(err)
	}
	anim := readGIF(t, path)
	label := func(img image.Image) (dark int, key string) {
		var b strings.Builder
		y0 := 4 + labelHeight + 4
		for yy := y0; yy < y0+labelHeight; yy++ {
			for x := 4; x < 4+g.Width; x++ {
				r, _, _, _ := img.At(x, yy).RGBA()
				if r>>8 < 128 {
					dark++
					b.WriteByte('#')
				} else {
					b.WriteByte('.')
				}
			}
		}
		return dark, b.String()
	}
	seen := map[string]bool{}
	for k, img := range anim.Image {
		dark, key := label(img)
		if dark < 20 || seen[key] {
			t.Fatalf("frame %d: label with %d dark pixels, seen before: %v", k, dark, seen[key])
		}
		seen[key] = true
	}
	if err := WritePreview(context.Background(), path, []PreviewColumn{{"original", y, g}}, PreviewOptions{Names: names[1:]}); err == nil {
		t.Error("11 names for 12 frames accepted")
	}
}

// TestPreviewMP4: with ffmpeg, a .mp4 path gets an H.264 video of every
// frame at full size, which loadVideo decodes back to the right number
// of frames, the montage's size (padded to even) and, H.264 being lossy,
// the panels' gray levels within 6 of 255; without ffmpeg (an injected
// LookPath that fails) it is ErrNoFFmpeg and PreviewName says .gif; a
// cancelled write leaves no file behind.
func TestPreviewMP4(t *testing.T) {
	g := frames.Geometry{Width: 40, Height: 30}
	const nFrames = 24
	y := mat.NewDense(g.Rows(), nFrames, nil)
	for j := range nFrames {
		for i := range g.Rows() {
			y.Set(i, j, 1) // white
		}
	}
	cols := []PreviewColumn{{"original", y, g}, {"copy", y, g}}
	dir := t.TempDir()
	noFFmpeg := func(string) (string, error) { return "", exec.ErrNotFound }
	if err := WritePreview(context.Background(), filepath.Join(dir, "p.mp4"), cols, PreviewOptions{LookPath: noFFmpeg}); !errors.Is(err, frames.ErrNoFFmpeg) {
		t.Errorf("without ffmpeg: %v", err)
	}
	if PreviewName(noFFmpeg) != "preview.gif" {
		t.Error("PreviewName without ffmpeg")
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed")
	}
	if PreviewName(nil) != "preview.mp4" {
		t.Error("PreviewName with ffmpeg")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WritePreview(ctx, filepath.Join(dir, "cancelled.mp4"), cols, PreviewOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	path := filepath.Join(dir, "p.mp4")
	if err := WritePreview(context.Background(), path, cols, PreviewOptions{}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
	seq, err := frames.Load(context.Background(), path, frames.Options{Color: frames.ColorGray})
	if err != nil {
		t.Fatal(err)
	}
	// Montage: gap 4, a header row, a labelled cell per column.
	wantW, wantH := 4+2*(g.Width+4), 4+labelHeight+4+labelHeight+g.Height+4
	wantW, wantH = wantW+wantW%2, wantH+wantH%2
	if _, n := seq.Y.Dims(); n != nFrames || seq.Width != wantW || seq.Height != wantH {
		t.Fatalf("decoded %d frames of %d×%d, want %d of %d×%d", n, seq.Width, seq.Height, nFrames, wantW, wantH)
	}
	y0 := 4 + labelHeight + 4 + labelHeight
	for _, x := range []int{4 + g.Width/2, 4 + g.Width + 4 + g.Width/2} {
		if v := seq.Y.At((y0+g.Height/2)*seq.Width+x, nFrames/2); math.Abs(v-1) > 6.0/255 {
			t.Errorf("panel pixel at x = %d: %v, want white", x, v)
		}
	}
}
