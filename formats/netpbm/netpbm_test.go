package netpbm

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDecodeKnown writes random images in each of the four encodings by
// hand (the format's definition: a header, then the samples as bytes,
// big-endian pairs or decimals) and checks every pixel that Decode and
// image.Decode return against the values written, rescaled to the colour
// type's range, and the size and model DecodeConfig reads.
func TestDecodeKnown(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const w, h = 7, 5
	for _, c := range []struct {
		magic    string
		channels int
		maxval   int
		model    color.Model
	}{
		{"P5", 1, 255, color.GrayModel}, {"P2", 1, 255, color.GrayModel}, {"P5", 1, 1000, color.Gray16Model},
		{"P6", 3, 255, color.RGBAModel}, {"P3", 3, 100, color.RGBAModel}, {"P6", 3, 65535, color.RGBA64Model},
	} {
		want := make([]int, w*h*c.channels)
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "%s\n# a comment\n%d %d\n%d\n", c.magic, w, h, c.maxval)
		for k := range want {
			want[k] = rng.IntN(c.maxval + 1)
			switch {
			case c.magic == "P2" || c.magic == "P3":
				fmt.Fprintf(&buf, "%d\n", want[k])
			case c.maxval > 255:
				buf.Write([]byte{byte(want[k] >> 8), byte(want[k])})
			default:
				buf.WriteByte(byte(want[k]))
			}
		}
		raw := buf.Bytes()
		cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
		wantFormat := map[int]string{1: "pgm", 3: "ppm"}[c.channels]
		if err != nil || format != wantFormat || cfg.Width != w || cfg.Height != h || cfg.ColorModel != c.model {
			t.Errorf("%s maxval %d: DecodeConfig %+v, %q, %v", c.magic, c.maxval, cfg, format, err)
		}
		img, format, err := image.Decode(bytes.NewReader(raw))
		if err != nil || format != wantFormat {
			t.Fatalf("%s maxval %d: %v (%q)", c.magic, c.maxval, err, format)
		}
		for y := range h {
			for x := range w {
				r, g, b, a := img.At(x, y).RGBA()
				got := []uint32{r, g, b}[:c.channels]
				for ch := range c.channels {
					v := uint32(want[(y*w+x)*c.channels+ch])
					// The 16-bit value of the rescaled sample: an 8-bit
					// type holds round(v·255/maxval), which RGBA()
					// widens by 257.
					exp := (v*65535 + uint32(c.maxval)/2) / uint32(c.maxval)
					if c.maxval <= 255 {
						exp = (v*255 + uint32(c.maxval)/2) / uint32(c.maxval) * 257
					}
					if got[ch] != exp {
						t.Fatalf("%s maxval %d: pixel (%d, %d) channel %d is %d, want %d", c.magic, c.maxval, x, y, ch, got[ch], exp)
					}
				}
				if a != 0xffff {
					t.Fatalf("%s: alpha %d", c.magic, a)
				}
			}
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := map[string]string{
		"":                           "missing magic",
		"P7 1 1 255\n\x00":           "unsupported magic",
		"P5 0 1 255\n":               "invalid size",
		"P5 1 1 0\n\x00":             "maxval",
		"P5 1 1 70000\n\x00\x00":     "maxval",
		"P5 2 2 255\n\x00":           "truncated",
		"P5 1 1 100\n\xff":           "exceeds maxval",
		"P2 2 1 255\n1 300\n":        "exceeds maxval",
		"P2 2 1 255\n1\n":            "sample 2",
		"P5 1x 1 255\n":              "unexpected",
		"P5 99999999999 1 255\n":     "too large",
		"P5 100000 100000 255\n":     "too large",
		"P5 1 1 255":                 "white space",
		"P5 1 # unterminated":        "comment",
		"P3 1 1 255\n1 2\n":          "sample 3",
		"P6 1 1 65535\n\x00\x00\x00": "truncated",
	}
	for in, want := range cases {
		_, err := Decode(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	// 16-bit PPM with maxval 1000 is rescaled to 16 bits.
	img, err := Decode(strings.NewReader("P6 1 1 1000\n\x03\xe8\x01\xf4\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, _ := img.At(0, 0).RGBA()
	if r != 65535 || g != 32768 || b != 0 {
		t.Fatalf("rescaled color %v %v %v", r, g, b)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("P5 2 2 255\n\x00\x01\x02\x03"))
	f.Add([]byte("P2\n# c\n2 1\n15\n3 15\n"))
	f.Add([]byte("P6 1 1 65535\n\x00\x01\x02\x03\x04\x05"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		img, err := Decode(bytes.NewReader(raw))
		if err == nil && img.Bounds().Empty() {
			t.Fatal("empty image without error")
		}
	})
}
