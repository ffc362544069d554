package frames

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// y4mClip is a test clip in RGB, 0–255, with 2×2 blocks of one colour
// (so that 4:2:0 chroma subsampling loses nothing).
type y4mClip struct {
	w, h, frames int
	rgb          [][]float64 // per frame, interleaved
}

func newY4MClip(w, h, frames int, seed uint64) *y4mClip {
	rng := rand.New(rand.NewPCG(seed, 9))
	c := &y4mClip{w: w, h: h, frames: frames}
	for range frames {
		f := make([]float64, 3*w*h)
		for by := 0; by < h; by += 2 {
			for bx := 0; bx < w; bx += 2 {
				col := [3]float64{float64(rng.IntN(256)), float64(rng.IntN(256)), float64(rng.IntN(256))}
				for y := by; y < min(by+2, h); y++ {
					for x := bx; x < min(bx+2, w); x++ {
						copy(f[3*(y*w+x):], col[:])
					}
				}
			}
		}
		c.rgb = append(c.rgb, f)
	}
	return c
}

// encode writes the clip as YUV4MPEG2 with the BT.601 forward transform
// (the inverse of what the reader applies): chroma "420", "444" or
// "mono", in video range unless full.
func (c *y4mClip) encode(chroma string, full bool) []byte {
	var b bytes.Buffer
	tag := "C" + chroma
	if chroma == "420" {
		tag = "C420jpeg XYSCSS=420JPEG"
	}
	rng := "XCOLORRANGE=LIMITED"
	if full {
		rng = "XCOLORRANGE=FULL"
	}
	fmt.Fprintf(&b, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 %s %s\n", c.w, c.h, tag, rng)
	code := func(x, lo, span float64) byte { return byte(math.Round(min(max(lo+span*x, 0), 255))) }
	for _, f := range c.rgb {
		b.WriteString("FRAME\n")
		n := c.w * c.h
		yp, up, vp := make([]byte, n), make([]byte, n), make([]byte, n)
		for i := range n {
			r, g, bl := f[3*i]/255, f[3*i+1]/255, f[3*i+2]/255
			y := 0.299*r + 0.587*g + 0.114*bl
			u, v := (bl-y)/1.772, (r-y)/1.402
			if full {
				yp[i], up[i], vp[i] = code(y, 0, 255), code(u, 128, 255), code(v, 128, 255)
			} else {
				yp[i], up[i], vp[i] = code(y, 16, 219), code(u, 128, 224), code(v, 128, 224)
			}
		}
		b.Write(yp)
		switch chroma {
		case "444":
			b.Write(up)
			b.Write(vp)
		case "420":
			for _, p := range [][]byte{up, vp} {
				for y := 0; y < c.h; y += 2 {
					for x := 0; x < c.w; x += 2 {
						b.WriteByte(p[y*c.w+x])
					}
				}
			}
		}
	}
	return b.Bytes()
}

// TestY4MColour: frames read from YUV4MPEG2 on standard input come back
// as the RGB they were encoded from, in 4:2:0 (video range) and 4:4:4
// (full range). The tolerance, 3 levels of 255: the encoder rounds Y, Cb
// and Cr to whole codes (half a code each); through the inverse a half
// code of Cb moves blue by 1.772·255/224·0.5 ≈ 1.0 level and a half code
// of Y by 255/219·0.5 ≈ 0.6, and the reader rounds once more (0.5).
func TestY4MColour(t *testing.T) {
	c := newY4MClip(10, 6, 3, 1)
	for _, tc := range []struct {
		chroma string
		full   bool
	}{{"420", false}, {"444", true}, {"444", false}} {
		seq, err := Load(context.Background(), StdinInput, Options{Stdin: bytes.NewReader(c.encode(tc.chroma, tc.full))})
		if err != nil {
			t.Fatalf("%s full=%v: %v", tc.chroma, tc.full, err)
		}
		if seq.Width != c.w || seq.Height != c.h || !seq.Color || len(seq.Names) != c.frames {
			t.Fatalf("%s: %d×%d colour=%v, %d frames", tc.chroma, seq.Width, seq.Height, seq.Color, len(seq.Names))
		}
		worst := 0.0
		p := c.w * c.h
		for k, f := range c.rgb {
			for i := range p {
				for ch := range 3 {
					got := seq.Y.At(ch*p+i, k) * 255
					worst = max(worst, math.Abs(got-f[3*i+ch]))
				}
			}
		}
		if worst > 3 {
			t.Errorf("%s full=%v: off by %.1f levels", tc.chroma, tc.full, worst)
		}
	}
}

// TestY4MGray: a mono stream gives one channel, its luma expanded from
// video range (16 → 0, 235 → 255); --gray takes the luma of a colour
// stream.
func TestY4MGray(t *testing.T) {
	hdr := "YUV4MPEG2 W4 H2 F25:1 Cmono\n"
	frame := []byte{16, 235, 125, 126, 0, 255, 100, 200}
	in := hdr + "FRAME\n" + string(frame) + "FRAME\n" + string(frame)
	seq, err := Load(context.Background(), StdinInput, Options{Stdin: strings.NewReader(in)})
	if err != nil {
		t.Fatal(err)
	}
	if seq.Color || len(seq.Names) != 2 {
		t.Fatalf("colour %v, %d frames", seq.Color, len(seq.Names))
	}
	for i, v := range frame {
		want := math.Round(255*min(max((float64(v)-16)/219, 0), 1)) / 255
		if got := seq.Y.At(i, 1); got != want {
			t.Errorf("pixel %d: %v, want %v", i, got, want)
		}
	}
	c := newY4MClip(4, 4, 1, 2)
	seq, err = Load(context.Background(), StdinInput, Options{Color: ColorGray, Stdin: bytes.NewReader(c.encode("444", true))})
	if err != nil || seq.Color {
		t.Fatalf("--gray: colour %v, %v", seq != nil && seq.Color, err)
	}
	for i := range 16 {
		f := c.rgb[0]
		luma := 0.299*f[3*i] + 0.587*f[3*i+1] + 0.114*f[3*i+2]
		if got := seq.Y.At(i, 0) * 255; math.Abs(got-luma) > 1 {
			t.Errorf("gray pixel %d: %.1f, want the luma %.1f", i, got, luma)
		}
	}
}

// TestY4MErrors: what is not a stream this reader takes is an error that
// says why, never a panic or a hang.
func TestY4MErrors(t *testing.T) {
	frame := "FRAME\n" + strings.Repeat("x", 4*2+2*2*1)
	for name, tc := range map[string]struct{ in, want string }{
		"empty":        {"", "empty"},
		"not y4m":      {"P5\n4 2\n255\n", "YUV4MPEG2"},
		"no size":      {"YUV4MPEG2 F25:1\n", "no frame size"},
		"bad size":     {"YUV4MPEG2 W0 H2\n", "frame size"},
		"10-bit":       {"YUV4MPEG2 W4 H2 C420p10\n", "C420p10"},
		"no newline":   {"YUV4MPEG2 W4 H2", "header"},
		"cut frame":    {"YUV4MPEG2 W4 H2\n" + frame[:9], "cut off"},
		"not a FRAME":  {"YUV4MPEG2 W4 H2\n" + frame + "FRAMX\n", "does not start with FRAME"},
		"no frames":    {"YUV4MPEG2 W4 H2\n", "selects no frames"},
		"huge":         {"YUV4MPEG2 W100000 H100000\n", "frame size"},
		"cut at FRAME": {"YUV4MPEG2 W4 H2\n" + frame + "FRA", "cut off"},
	} {
		_, err := Load(context.Background(), StdinInput, Options{Stdin: strings.NewReader(tc.in)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error about %q", name, err, tc.want)
		}
		if name != "no frames" && !errors.Is(err, ErrY4M) {
			t.Errorf("%s: %v does not wrap ErrY4M", name, err)
		}
	}
}
