// Package videotest holds the helpers the video packages' tests share:
// random frames written as image files, and stand-ins for ffmpeg.
package videotest

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/image/bmp"
)

// Frame is a test frame: 8-bit RGB samples, row-major.
type Frame struct {
	W, H int
	Pix  []uint8 // 3 per pixel
}

// RandomFrame is a w×h frame of uniform random samples, gray (equal
// channels) or colour.
func RandomFrame(rng *rand.Rand, w, h int, gray bool) Frame {
	f := Frame{w, h, make([]uint8, 3*w*h)}
	for i := 0; i < w*h; i++ {
		if gray {
			v := uint8(rng.IntN(256))
			f.Pix[3*i], f.Pix[3*i+1], f.Pix[3*i+2] = v, v, v
		} else {
			f.Pix[3*i], f.Pix[3*i+1], f.Pix[3*i+2] = uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))
		}
	}
	return f
}

// Luma is the expected BT.601 luma of pixel i, computed directly.
func (f Frame) Luma(i int) float64 {
	return (0.299*float64(f.Pix[3*i]) + 0.587*float64(f.Pix[3*i+1]) + 0.114*float64(f.Pix[3*i+2])) / 255
}

// Gray is the frame's first channel as a gray image.
func (f Frame) Gray() *image.Gray {
	img := image.NewGray(image.Rect(0, 0, f.W, f.H))
	for i := 0; i < f.W*f.H; i++ {
		img.Pix[i] = f.Pix[3*i]
	}
	return img
}

// RGBA is the frame as an opaque RGBA image.
func (f Frame) RGBA() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, f.W, f.H))
	for i := 0; i < f.W*f.H; i++ {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = f.Pix[3*i], f.Pix[3*i+1], f.Pix[3*i+2], 255
	}
	return img
}

// WriteImage writes f to path in the format its extension names. Gray
// frames are stored as gray images where the format allows.
func WriteImage(t testing.TB, path string, f Frame, gray bool) {
	t.Helper()
	var buf bytes.Buffer
	var img image.Image = f.RGBA()
	if gray {
		img = f.Gray()
	}
	var err error
	switch ext := filepath.Ext(path); ext {
	case ".png":
		err = png.Encode(&buf, img)
	case ".jpg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 100})
	case ".bmp":
		err = bmp.Encode(&buf, img)
	case ".pgm": // binary 8-bit, written by hand with a comment in the header
		fmt.Fprintf(&buf, "P5\n# test frame\n%d %d\n255\n", f.W, f.H)
		buf.Write(f.Gray().Pix)
	case ".ppm":
		fmt.Fprintf(&buf, "P6 %d %d 255\n", f.W, f.H)
		buf.Write(f.Pix)
	default:
		t.Fatalf("unknown extension %s", ext)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteMask writes a 4×2 truth mask as a gray PNG at path and returns
// path: the left 2×2 block set, and one pixel of the right block (at
// x = 3, y = 1), so that it reads row-major as 1 1 0 0 / 1 1 0 1.
func WriteMask(t testing.TB, path string) string {
	t.Helper()
	m := image.NewGray(image.Rect(0, 0, 4, 2))
	for _, p := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {3, 1}} {
		m.Pix[p[1]*m.Stride+p[0]] = 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// FakeTools writes shell scripts standing in for ffprobe and ffmpeg and
// returns a LookPath that finds them. ffmpeg writes its process id to
// pidFile and then runs body.
func FakeTools(t *testing.T, body string) (lookPath func(string) (string, error), pidFile string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "pid")
	scripts := map[string]string{
		"ffprobe": "#!/bin/sh\necho 4x3\n",
		"ffmpeg":  "#!/bin/sh\necho $$ > " + pidFile + "\n" + body + "\n",
	}
	for name, s := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string) (string, error) {
		if _, ok := scripts[name]; ok {
			return filepath.Join(dir, name), nil
		}
		return "", exec.ErrNotFound
	}, pidFile
}
