package pngenc

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// frame returns a w×h image whose pixels are smooth with noise (like a
// video frame) or, with flat, zero but for a block of 255 (like a mask).
func frame(rng *rand.Rand, w, h int, rgb, flat bool) image.Image {
	val := func(x, y, c int) uint8 {
		if flat {
			if x > w/3 && x < w/2 && y > h/4 {
				return 255
			}
			return 0
		}
		return uint8((x*3 + y*5 + c*70 + rng.IntN(9)) % 256)
	}
	r := image.Rect(0, 0, w, h)
	if !rgb {
		g := image.NewGray(r)
		for y := range h {
			for x := range w {
				g.SetGray(x, y, color.Gray{val(x, y, 0)})
			}
		}
		return g
	}
	m := image.NewRGBA(r)
	for y := range h {
		for x := range w {
			m.SetRGBA(x, y, color.RGBA{val(x, y, 0), val(x, y, 1), val(x, y, 2), 255})
		}
	}
	return m
}

// same reports whether a and b have the same bounds and colours.
func same(t *testing.T, a, b image.Image) bool {
	t.Helper()
	if a.Bounds().Size() != b.Bounds().Size() {
		return false
	}
	ab, bb := a.Bounds(), b.Bounds()
	for y := range ab.Dy() {
		for x := range ab.Dx() {
			r1, g1, b1, a1 := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, a2 := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				t.Logf("pixel (%d, %d): %v against %v", x, y, a.At(ab.Min.X+x, ab.Min.Y+y), b.At(bb.Min.X+x, bb.Min.Y+y))
				return false
			}
		}
	}
	return true
}

// TestRoundTrip: what Encode writes, image/png (which checks every CRC and
// the zlib stream) decodes to the same pixels and the same colour model,
// for gray and RGB frames of several sizes, natural and flat, whole and
// as sub-images (rows with a stride wider than the image).
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range [][2]int{{1, 1}, {7, 3}, {320, 240}, {33, 65}} {
		for _, rgb := range []bool{false, true} {
			for _, flat := range []bool{false, true} {
				img := frame(rng, size[0], size[1], rgb, flat)
				imgs := []image.Image{img}
				if size[0] > 4 && size[1] > 2 {
					sub := img.(interface {
						SubImage(image.Rectangle) image.Image
					}).SubImage(image.Rect(1, 1, size[0]-2, size[1]-1))
					imgs = append(imgs, sub)
				}
				for _, m := range imgs {
					var buf bytes.Buffer
					if err := Encode(&buf, m); err != nil {
						t.Fatal(err)
					}
					got, err := png.Decode(&buf)
					if err != nil {
						t.Fatalf("%v rgb %v: %v", m.Bounds(), rgb, err)
					}
					if !same(t, got, m) {
						t.Fatalf("%v rgb %v flat %v: the decoded image differs", m.Bounds(), rgb, flat)
					}
					if _, isGray := got.(*image.Gray); isGray == rgb {
						t.Fatalf("decoded as %T; want gray %v", got, !rgb)
					}
				}
			}
		}
	}
}

// TestLargeImageChunks: image data above one IDAT chunk's size is split
// over several chunks, which decode as one stream.
func TestLargeImageChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	img := image.NewGray(image.Rect(0, 0, 1500, 1000))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.Uint32()) // incompressible: 1.5 MB of data
	}
	var buf bytes.Buffer
	if err := Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("IDAT")); n < 2 {
		t.Fatalf("%d IDAT chunks; want the data split", n)
	}
	got, err := png.Decode(&buf)
	if err != nil || !same(t, got, img) {
		t.Fatalf("decoded %v; want the image back", err)
	}
}

// TestOtherImages: an RGBA image that is not opaque, other image types and
// an empty image are written by image/png, byte for byte as it writes
// them.
func TestOtherImages(t *testing.T) {
	rgba := frame(rand.New(rand.NewPCG(5, 6)), 9, 4, true, false).(*image.RGBA)
	copy(rgba.Pix[4*13:], []byte{5, 6, 7, 7}) // one translucent pixel (premultiplied), in the second row
	nrgba := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	nrgba.SetNRGBA(1, 1, color.NRGBA{10, 20, 30, 40})
	for _, img := range []image.Image{rgba, nrgba, image.NewGray16(image.Rect(0, 0, 2, 2))} {
		var buf, want bytes.Buffer
		if err := Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&want, img); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want.Bytes()) {
			t.Fatalf("%T: %d bytes, not image/png's %d", img, buf.Len(), want.Len())
		}
	}
	var buf bytes.Buffer
	if err := Encode(&buf, image.NewGray(image.Rect(0, 0, 0, 3))); err == nil {
		t.Fatal("an empty image was written")
	}
}

// failing is a writer that fails after n bytes.
type failing struct{ n int }

var errFull = errors.New("disk full")

func (f *failing) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// TestWriteError: a failing writer's error is returned, wherever the
// write fails.
func TestWriteError(t *testing.T) {
	img := frame(rand.New(rand.NewPCG(7, 8)), 50, 40, true, false)
	var buf bytes.Buffer
	if err := Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, 30, buf.Len() - 5} {
		if err := Encode(&failing{n: n}, img); !errors.Is(err, errFull) {
			t.Errorf("failing after %d bytes: %v; want the writer's error", n, err)
		}
	}
}

// BenchmarkEncode compares Encode with image/png at the same level on a
// 320×240 RGB frame of the video command's output, when one is given
// (PNGENC_FRAME=path), or a generated one.
func BenchmarkEncode(b *testing.B) {
	img := frame(rand.New(rand.NewPCG(9, 9)), 320, 240, true, false)
	if p := os.Getenv("PNGENC_FRAME"); p != "" {
		f, err := os.Open(filepath.Clean(p))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if img, err = png.Decode(f); err != nil {
			b.Fatal(err)
		}
		if n, ok := img.(*image.NRGBA); ok { // image/png decodes opaque RGB as RGBA
			img = &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
		}
	}
	var buf bytes.Buffer
	b.Run("pngenc", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			if err := Encode(&buf, img); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
	})
	b.Run("image-png", func(b *testing.B) {
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(&buf, img); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
	})
}
