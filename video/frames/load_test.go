package frames

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/video/internal/videotest"
)

// rgbFrame is a test frame (videotest.Frame).
type rgbFrame = videotest.Frame

func TestLoadDirGrayNaturalOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	dir := t.TempDir()
	// Frames named so that plain string order differs from natural order.
	names := []string{"frame1.png", "frame2.png", "frame9.png", "frame10.png", "frame11.png", "frame100.png"}
	frames := map[string]rgbFrame{}
	for _, name := range slices.Backward(names) {
		f := videotest.RandomFrame(rng, 7, 5, true)
		frames[name] = f
		videotest.WriteImage(t, filepath.Join(dir, name), f, true)
	}
	// Files that are not frames.
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(dir, "frame5.png.bak"), []byte("x"), 0o644)
	videotest.WriteImage(t, filepath.Join(dir, ".hidden.png"), videotest.RandomFrame(rng, 3, 3, true), true)
	videotest.WriteImage(t, filepath.Join(dir, "groundtruth_frame2.png"), videotest.RandomFrame(rng, 9, 9, true), true)
	os.Mkdir(filepath.Join(dir, "sub.png"), 0o755)

	s, err := LoadDir(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Names, names) {
		t.Fatalf("names %v, want %v", s.Names, names)
	}
	if s.Width != 7 || s.Height != 5 || s.Color {
		t.Fatalf("geometry %+v", s.Geometry)
	}
	if r, c := s.Y.Dims(); r != 35 || c != len(names) {
		t.Fatalf("Y is %d×%d", r, c)
	}
	for k, name := range names {
		f := frames[name]
		for i := 0; i < 35; i++ {
			if got, want := s.Y.At(i, k), float64(f.Pix[3*i])/255; got != want {
				t.Fatalf("%s pixel %d: %v, want %v", name, i, got, want)
			}
		}
	}

	// With no exclusions the (differently sized) ground truth is a frame,
	// and the size check names it.
	_, err = LoadDir(context.Background(), dir, Options{Exclude: []string{}})
	if err == nil || !strings.Contains(err.Error(), "groundtruth_frame2.png is 9×9") || !strings.Contains(err.Error(), "frame1.png is 7×5") {
		t.Fatalf("mismatch error %v", err)
	}
	// Include patterns choose the files.
	s, err = LoadDir(context.Background(), dir, Options{Include: []string{"frame1*.png"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"frame1.png", "frame10.png", "frame11.png", "frame100.png"}; !slices.Equal(s.Names, want) {
		t.Fatalf("included %v, want %v", s.Names, want)
	}
	s, err = LoadDir(context.Background(), dir, Options{Exclude: []string{"groundtruth*", "frame1?.png"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"frame1.png", "frame2.png", "frame9.png", "frame100.png"}; !slices.Equal(s.Names, want) {
		t.Fatalf("after exclusion %v, want %v", s.Names, want)
	}
	if _, err := LoadDir(context.Background(), dir, Options{Include: []string{"[x"}}); err == nil || !strings.Contains(err.Error(), "bad pattern") {
		t.Fatalf("bad pattern: %v", err)
	}
}

func TestNaturalLess(t *testing.T) {
	sorted := []string{"a", "a0", "a01", "a1", "a2", "a10", "a10b", "a10c", "a011x", "b", "frame2.png", "frame10.png"}
	for i := range sorted {
		for j := range sorted {
			if got, want := naturalLess(sorted[i], sorted[j]), i < j; got != want {
				t.Errorf("naturalLess(%q, %q) = %v, want %v", sorted[i], sorted[j], got, want)
			}
		}
	}
}

func TestLoadDirFormats(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	dir := t.TempDir()
	color := videotest.RandomFrame(rng, 6, 4, false)
	gray := videotest.RandomFrame(rng, 6, 4, true)
	// Lossless formats give the luma exactly (up to float rounding).
	files := []struct {
		name string
		f    rgbFrame
		gray bool
	}{
		{"a1.png", color, false}, {"a2.bmp", color, false}, {"a3.ppm", color, false},
		{"a4.png", gray, true}, {"a5.bmp", gray, true}, {"a6.pgm", gray, true},
	}
	for _, f := range files {
		videotest.WriteImage(t, filepath.Join(dir, f.name), f.f, f.gray)
	}
	// 16-bit and plain PGM, written by hand: the same gray levels v become
	// 257·v of 65535, and plain text with maxval 255.
	var p16 bytes.Buffer
	fmt.Fprintf(&p16, "P5 6 4 65535\n")
	for i := 0; i < 24; i++ {
		v := uint16(gray.Pix[3*i]) * 257
		p16.Write([]byte{byte(v >> 8), byte(v)})
	}
	os.WriteFile(filepath.Join(dir, "a7.pgm"), p16.Bytes(), 0o644)
	var p2 bytes.Buffer
	fmt.Fprintf(&p2, "P2\n6 4\n# comment\n255\n")
	for i := 0; i < 24; i++ {
		fmt.Fprintf(&p2, "%d%s", gray.Pix[3*i], map[bool]string{true: "\n", false: " "}[i%6 == 5])
	}
	os.WriteFile(filepath.Join(dir, "a8.pgm"), p2.Bytes(), 0o644)
	// A P5 file with maxval 15 is rescaled to the full range.
	var p4 bytes.Buffer
	fmt.Fprintf(&p4, "P5 6 4 15\n")
	for i := 0; i < 24; i++ {
		p4.WriteByte(gray.Pix[3*i] / 17)
	}
	os.WriteFile(filepath.Join(dir, "a9.pgm"), p4.Bytes(), 0o644)

	s, err := LoadDir(context.Background(), dir, Options{Color: ColorGray})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Names) != 9 {
		t.Fatalf("names %v", s.Names)
	}
	for k := 0; k < 9; k++ {
		src := gray
		if k < 3 {
			src = color
		}
		for i := 0; i < 24; i++ {
			want := src.Luma(i)
			if k == 8 {
				want = float64(gray.Pix[3*i]/17) / 15
			}
			// 1e-12: the loader's sum of three products and division may
			// round differently from this expression by a few ulps.
			if got := s.Y.At(i, k); math.Abs(got-want) > 1e-12 {
				t.Fatalf("%s pixel %d: %v, want %v", s.Names[k], i, got, want)
			}
		}
	}

	// JPEG is lossy: at quality 100 a gray image comes back within a few
	// levels (quantization of DCT coefficients at q100 is by 1).
	jdir := t.TempDir()
	videotest.WriteImage(t, filepath.Join(jdir, "j.jpg"), gray, true)
	videotest.WriteImage(t, filepath.Join(jdir, "k.jpg"), color, false)
	s, err = LoadDir(context.Background(), jdir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for k, src := range []rgbFrame{gray, color} {
		for i := 0; i < 24; i++ {
			if got, want := s.Y.At(i, k), src.Luma(i); math.Abs(got-want) > 6.0/255 {
				t.Fatalf("jpeg %d pixel %d: %v, want %v", k, i, got, want)
			}
		}
	}
}

func TestLoadDirColor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	dir := t.TempDir()
	f0, f1 := videotest.RandomFrame(rng, 5, 3, false), videotest.RandomFrame(rng, 5, 3, true)
	videotest.WriteImage(t, filepath.Join(dir, "0.png"), f0, false)
	videotest.WriteImage(t, filepath.Join(dir, "1.pgm"), f1, true)
	s, err := LoadDir(context.Background(), dir, Options{Color: ColorRGB})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := s.Y.Dims(); r != 45 || c != 2 || s.Rows() != 45 || s.Channels() != 3 {
		t.Fatalf("Y is %d×%d", r, c)
	}
	for k, f := range []rgbFrame{f0, f1} {
		for ch := 0; ch < 3; ch++ {
			for i := 0; i < 15; i++ {
				if got, want := s.Y.At(ch*15+i, k), float64(f.Pix[3*i+ch])/255; math.Abs(got-want) > 1e-15 {
					t.Fatalf("frame %d channel %d pixel %d: %v, want %v", k, ch, i, got, want)
				}
			}
		}
	}
}

func TestLoadDirRangeScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	dir := t.TempDir()
	var frames []rgbFrame
	for k := 0; k < 6; k++ {
		f := videotest.RandomFrame(rng, 7, 5, true) // odd size: last column and row dropped at scale 1/2
		frames = append(frames, f)
		videotest.WriteImage(t, filepath.Join(dir, fmt.Sprintf("f%02d.png", k)), f, true)
	}
	s, err := LoadDir(context.Background(), dir, Options{Range: Range{Start: 2, End: 5}, Scale: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Names, []string{"f02.png", "f03.png", "f04.png"}) || s.Width != 3 || s.Height != 2 {
		t.Fatalf("names %v size %d×%d", s.Names, s.Width, s.Height)
	}
	for k := 0; k < 3; k++ {
		f := frames[k+2]
		for oy := 0; oy < 2; oy++ {
			for ox := 0; ox < 3; ox++ {
				sum := 0
				for _, d := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
					sum += int(f.Pix[3*((2*oy+d[0])*7+2*ox+d[1])])
				}
				want := float64(sum) / (4 * 255)
				if got := s.Y.At(oy*3+ox, k); math.Abs(got-want) > 1e-15 {
					t.Fatalf("frame %d (%d,%d): %v, want %v", k, ox, oy, got, want)
				}
			}
		}
	}
	// Open-ended and clamped ranges.
	for _, c := range []struct {
		r    Range
		want int
	}{{Range{4, 0}, 2}, {Range{0, 100}, 6}, {Range{5, 6}, 1}} {
		s, err := LoadDir(context.Background(), dir, Options{Range: c.r})
		if err != nil || len(s.Names) != c.want {
			t.Fatalf("range %v: %v frames, err %v", c.r, s, err)
		}
	}
	if _, err := LoadDir(context.Background(), dir, Options{Range: Range{6, 0}}); err == nil || !strings.Contains(err.Error(), "selects no frames") {
		t.Fatalf("empty range: %v", err)
	}
	if _, err := LoadDir(context.Background(), dir, Options{Scale: 0.3}); err == nil {
		t.Fatal("scale 0.3 accepted")
	}
	if _, err := LoadDir(context.Background(), dir, Options{Scale: 0.125}); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Fatalf("scale 1/8 of 7×5: %v", err)
	}
	if _, err := LoadDir(context.Background(), dir, Options{MaxBytes: 100}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("memory limit: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadDir(ctx, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled load: %v", err)
	}
}

func TestParseRangeScaleFactor(t *testing.T) {
	good := map[string]Range{"": {}, "3:10": {3, 10}, ":10": {0, 10}, "5:": {5, 0}, " 2 : 4 ": {2, 4}, "7": {7, 8}, "0:": {}}
	for s, want := range good {
		if got, err := ParseRange(s); err != nil || got != want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"5:5", "5:3", "-1:3", "a:b", "1:2:3", "1.5:"} {
		if _, err := ParseRange(s); err == nil {
			t.Errorf("ParseRange(%q) accepted", s)
		}
	}
	if r := (Range{3, 10}); r.String() != "3:10" {
		t.Errorf("String %q", r.String())
	}
	for s, want := range map[float64]int{0: 1, 1: 1, 0.5: 2, 0.25: 4, 0.2: 5, 1.0 / 3: 3, 0.1: 10} {
		if got, err := ScaleFactor(s); err != nil || got != want {
			t.Errorf("ScaleFactor(%v) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []float64{0.3, 0.4, 2, -0.5, math.NaN(), math.Inf(1), 0.33} {
		if _, err := ScaleFactor(s); err == nil {
			t.Errorf("ScaleFactor(%v) accepted", s)
		}
	}
}

func TestLoadDirErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadDir(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "no frame images") {
		t.Fatalf("empty dir: %v", err)
	}
	if _, err := LoadDir(context.Background(), filepath.Join(dir, "missing"), Options{}); err == nil {
		t.Fatal("missing dir: no error")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for k := 0; k < 5; k++ {
		videotest.WriteImage(t, filepath.Join(dir, fmt.Sprintf("f%d.png", k)), videotest.RandomFrame(rng, 4, 4, true), true)
	}
	os.WriteFile(filepath.Join(dir, "f3.png"), []byte("not a png at all"), 0o644)
	_, err := LoadDir(context.Background(), dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "f3.png") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("corrupt frame: %v", err)
	}
	// Truncated PNG and PGM frames.
	var buf bytes.Buffer
	png.Encode(&buf, videotest.RandomFrame(rng, 4, 4, true).Gray())
	os.WriteFile(filepath.Join(dir, "f3.png"), buf.Bytes()[:buf.Len()-20], 0o644)
	if _, err := LoadDir(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "f3.png") {
		t.Fatalf("truncated png: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "f3.png"), buf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "f4.pgm"), []byte("P5 4 4 255\nabc"), 0o644)
	if _, err := LoadDir(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "f4.pgm") || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated pgm: %v", err)
	}
	if _, err := Load(context.Background(), filepath.Join(dir, "f3.png"), Options{}); err == nil || !strings.Contains(err.Error(), "single image") {
		t.Fatalf("Load of an image file: %v", err)
	}
}

func TestLoadMask(t *testing.T) {
	dir := t.TempDir()
	path := videotest.WriteMask(t, filepath.Join(dir, "gt.png"))
	mask, w, h, err := LoadMask(path, 1)
	if err != nil || w != 4 || h != 2 {
		t.Fatal(err, w, h)
	}
	if want := []bool{true, true, false, false, true, true, false, true}; !slices.Equal(mask, want) {
		t.Fatalf("mask %v, want %v", mask, want)
	}
	mask, w, h, err = LoadMask(path, 0.5)
	if err != nil || w != 2 || h != 1 || !slices.Equal(mask, []bool{true, false}) {
		t.Fatalf("scaled mask %v %d×%d %v", mask, w, h, err)
	}
}

// TestColorAuto: by default a directory of colour frames loads in colour,
// and gray frames (stored as gray images, or as RGB images whose channels
// are equal) load as gray; ColorGray and ColorRGB override.
func TestColorAuto(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		name      string
		grayPix   bool // R = G = B
		grayImage bool // stored as a gray image
		mode      ColorMode
		want      bool
	}{
		{"colour", false, false, ColorAuto, true},
		{"gray image", true, true, ColorAuto, false},
		{"RGB with equal channels", true, false, ColorAuto, false},
		{"colour forced gray", false, false, ColorGray, false},
		{"gray forced colour", true, true, ColorRGB, true},
	} {
		dir := t.TempDir()
		for k := 0; k < 3; k++ {
			videotest.WriteImage(t, filepath.Join(dir, fmt.Sprintf("f%d.png", k)), videotest.RandomFrame(rng, 6, 4, tc.grayPix), tc.grayImage)
		}
		s, err := LoadDir(context.Background(), dir, Options{Color: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		if s.Color != tc.want {
			t.Errorf("%s: colour %v, want %v", tc.name, s.Color, tc.want)
		}
		if r, _ := s.Y.Dims(); r != s.Rows() {
			t.Errorf("%s: %d rows for %+v", tc.name, r, s.Geometry)
		}
	}
}

// TestRGBPlanesFastPaths: the direct reads of *image.RGBA, opaque
// *image.NRGBA and *image.YCbCr (a sub-image, 4:2:0) give exactly the
// planes of the generic colour-model path,
// and a translucent NRGBA still goes through the colour model.
func TestRGBPlanesFastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const w, h = 7, 5
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	nrgba := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < w*h; i++ {
		for c := 0; c < 3; c++ {
			v := uint8(rng.IntN(256))
			rgba.Pix[4*i+c], nrgba.Pix[4*i+c] = v, v
		}
		rgba.Pix[4*i+3], nrgba.Pix[4*i+3] = 255, 255
	}
	generic := func(img image.Image) [][]float64 {
		// An image.Image that is none of the fast-path types.
		return planesOf(struct{ image.Image }{img})
	}
	// What the JPEG decoder returns: chroma at half resolution both ways,
	// read through a sub-image whose bounds do not start at 0.
	ycc := image.NewYCbCr(image.Rect(0, 0, w+3, h+2), image.YCbCrSubsampleRatio420)
	for _, p := range [][]uint8{ycc.Y, ycc.Cb, ycc.Cr} {
		for i := range p {
			p[i] = uint8(rng.IntN(256))
		}
	}
	sub := ycc.SubImage(image.Rect(3, 2, w+3, h+2))
	for name, img := range map[string]image.Image{"rgba": rgba, "nrgba": nrgba, "ycbcr": sub} {
		got, want := planesOf(img), generic(img)
		for c := range want {
			if !slices.Equal(got[c], want[c]) {
				t.Errorf("%s: channel %d differs from the colour-model path", name, c)
			}
		}
	}
	nrgba.Pix[3] = 128 // translucent: premultiplied by the colour model
	got, want := planesOf(nrgba), generic(nrgba)
	if !slices.Equal(got[0], want[0]) || got[0][0] == float64(nrgba.Pix[0])/255 && nrgba.Pix[0] > 1 {
		t.Errorf("translucent NRGBA: %v, want %v", got[0][0], want[0][0])
	}
}

func TestDefaultMemoryLimit(t *testing.T) {
	var o Options
	if got := o.maxBytes(); got < 1 || got > DefaultMaxBytes {
		t.Errorf("default limit %d, want in [1, %d]", got, DefaultMaxBytes)
	}
}

// BenchmarkRGBPlanes converts a 320×240 frame as the JPEG decoder returns
// it (YCbCr 4:2:0) to colour planes, by the direct read (ycbcr) and by the
// colour model through At (generic), in the same run.
func BenchmarkRGBPlanes(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	ycc := image.NewYCbCr(image.Rect(0, 0, 320, 240), image.YCbCrSubsampleRatio420)
	for _, p := range [][]uint8{ycc.Y, ycc.Cb, ycc.Cr} {
		for i := range p {
			p[i] = uint8(rng.IntN(256))
		}
	}
	for name, img := range map[string]image.Image{"ycbcr": ycc, "generic": struct{ image.Image }{ycc}} {
		b.Run(name, func(b *testing.B) {
			planes := [][]float64{make([]float64, 320*240), make([]float64, 320*240), make([]float64, 320*240)}
			for b.Loop() {
				rgbPlanes(planes, img)
			}
		})
	}
}

// planesOf returns rgbPlanes of img in new planes.
func planesOf(img image.Image) [][]float64 {
	n := img.Bounds().Dx() * img.Bounds().Dy()
	planes := [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
	rgbPlanes(planes, img)
	return planes
}
