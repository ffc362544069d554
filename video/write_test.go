package video

import (
	"context"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/video/frames"
	"github.com/rpca-gd/rpca/video/internal/videotest"
	"gonum.org/v1/gonum/mat"
)

func TestWriteFramesRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	in := t.TempDir()
	videotest.WriteImage(t, filepath.Join(in, "a1.jpg"), videotest.RandomFrame(rng, 8, 6, true), true)
	videotest.WriteImage(t, filepath.Join(in, "a2.pgm"), videotest.RandomFrame(rng, 8, 6, true), true)
	videotest.WriteImage(t, filepath.Join(in, "a3.png"), videotest.RandomFrame(rng, 8, 6, false), false)
	for _, colorMode := range []bool{false, true} {
		s, err := frames.LoadDir(context.Background(), in, frames.Options{Color: colorOf(colorMode)})
		if err != nil {
			t.Fatal(err)
		}
		// Write into an atomic output directory, as the CLI does.
		outDir := filepath.Join(t.TempDir(), "out")
		d, err := outdir.New(outDir, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFrames(d.Join("frames"), s.Names, s.Y, s.Geometry); err != nil {
			t.Fatal(err)
		}
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
		back, err := frames.LoadDir(context.Background(), filepath.Join(outDir, "frames"), frames.Options{Color: colorOf(colorMode)})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a1.png", "a2.png", "a3.png"}; !slices.Equal(back.Names, want) {
			t.Fatalf("written names %v, want %v", back.Names, want)
		}
		// Writing rounds to 8 bits: at most half a level of error, and none
		// for values that came from 8-bit gray or color samples.
		r, c := s.Y.Dims()
		for j := 0; j < c; j++ {
			for i := 0; i < r; i++ {
				diff := math.Abs(back.Y.At(i, j) - s.Y.At(i, j))
				tol := 0.5/255 + 1e-12
				if colorMode || j < 2 {
					tol = 1e-12
				}
				if diff > tol {
					t.Fatalf("color=%v frame %d value %d: wrote %v, read %v", colorMode, j, i, s.Y.At(i, j), back.Y.At(i, j))
				}
			}
		}
	}
}

func TestFrameImageClamp(t *testing.T) {
	g := frames.Geometry{Width: 3, Height: 2}
	y := mat.NewDense(6, 2, []float64{
		-0.5, 0,
		1.5, 0,
		math.NaN(), 0,
		0.5, 0,
		1.0 / 255, 0,
		math.Inf(1), 0,
	})
	img, err := FrameImage(y, 0, g)
	if err != nil {
		t.Fatal(err)
	}
	gray := img.(*image.Gray)
	if want := []uint8{0, 255, 0, 128, 1, 255}; !slices.Equal(gray.Pix, want) {
		t.Fatalf("pixels %v, want %v", gray.Pix, want)
	}
	if _, err := FrameImage(y, 2, g); err == nil {
		t.Error("column out of range accepted")
	}
	if _, err := FrameImage(y, 0, frames.Geometry{Width: 2, Height: 2}); err == nil {
		t.Error("wrong geometry accepted")
	}
	// Color layout: planes R, G, B.
	c := mat.NewDense(3, 1, []float64{1, 0.2, 0})
	img, err = FrameImage(c, 0, frames.Geometry{Width: 1, Height: 1, Color: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := img.At(0, 0).(color.RGBA); got != (color.RGBA{255, 51, 0, 255}) {
		t.Fatalf("color pixel %v", got)
	}
}

func TestWriteFramesErrors(t *testing.T) {
	y := mat.NewDense(4, 2, nil)
	g := frames.Geometry{Width: 2, Height: 2}
	dir := t.TempDir()
	if err := WriteFrames(dir, []string{"a.png"}, y, g); err == nil {
		t.Error("name count mismatch accepted")
	}
	if err := WriteFrames(dir, []string{"a.jpg", "a.png"}, y, g); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("duplicate output names: %v", err)
	}
	if err := WriteFrames(dir, []string{"a.png", "b.png"}, y, frames.Geometry{Width: 3, Height: 3}); err == nil {
		t.Error("geometry mismatch accepted")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left %d files", len(ents))
	}
}

// sparseCols is a sparse matrix with a Do method, like *rpca.Sparse.
type sparseCols struct {
	r, c int
	m    map[[2]int]float64
}

func (s *sparseCols) Dims() (int, int)    { return s.r, s.c }
func (s *sparseCols) At(i, j int) float64 { return s.m[[2]int{i, j}] }
func (s *sparseCols) Do(fn func(i, j int, v float64)) {
	for k, v := range s.m {
		fn(k[0], k[1], v)
	}
}

func TestRobustScale(t *testing.T) {
	// 1000 nonzero magnitudes 1..1000 with random signs among 9000 zeros:
	// the nearest-rank 0.995 quantile of the nonzeros is ⌈995⌉ = 995.
	rng := rand.New(rand.NewPCG(7, 7))
	d := mat.NewDense(100, 100, nil)
	sp := &sparseCols{100, 100, map[[2]int]float64{}}
	perm := rng.Perm(10000)
	for v := 1; v <= 1000; v++ {
		p := perm[v]
		val := float64(v)
		if rng.IntN(2) == 0 {
			val = -val
		}
		d.Set(p/100, p%100, val)
		sp.m[[2]int{p / 100, p % 100}] = val
	}
	if got := RobustScale(d, 0); got != 995 {
		t.Errorf("dense RobustScale = %v, want 995", got)
	}
	if got := RobustScale(sp, 0); got != 995 {
		t.Errorf("sparse RobustScale = %v, want 995", got)
	}
	if got := RobustScale(d, 1); got != 1000 {
		t.Errorf("q=1: %v, want 1000", got)
	}
	if got := RobustScale(d, 0.5); got != 500 {
		t.Errorf("q=0.5: %v, want 500", got)
	}
	if got := RobustScale(mat.NewDense(2, 2, nil), 0); got != 1 {
		t.Errorf("zero matrix: %v, want 1", got)
	}
}

func TestMagnitudeMask(t *testing.T) {
	s := mat.NewDense(4, 1, []float64{-0.3, 0.05, 0.2, -0.1})
	mag := Magnitude(s, 0.2)
	for i, want := range []float64{1, 0.25, 1, 0.5} {
		if got := mag.At(i, 0); math.Abs(got-want) > 1e-15 {
			t.Errorf("magnitude %d = %v, want %v", i, got, want)
		}
	}
	// Excess: black up to the floor 0.1, white from the scale 0.3.
	ex := Excess(s, 0.1, 0.3)
	for i, want := range []float64{1, 0, 0.5, 0} {
		if got := ex.At(i, 0); math.Abs(got-want) > 1e-15 {
			t.Errorf("excess %d = %v, want %v", i, got, want)
		}
	}
}

func TestMontage(t *testing.T) {
	a := image.NewGray(image.Rect(0, 0, 4, 3))
	for i := range a.Pix {
		a.Pix[i] = 50
	}
	b := image.NewGray(image.Rect(0, 0, 2, 2))
	for i := range b.Pix {
		b.Pix[i] = 200
	}
	m := Montage([][]Panel{
		{{a, "GD p=1 · 1.23 s"}, {b, ""}},
		{{nil, "empty"}},
	}, MontageOptions{Zoom: 2, Gap: 5})
	// Cells are 8×6 images (4×3 zoomed) under a 19-pixel label row.
	cellW, cellH := 8, labelHeight+6
	if got, want := m.Bounds(), image.Rect(0, 0, 5+2*(cellW+5), 5+2*(cellH+5)); got != want {
		t.Fatalf("bounds %v, want %v", got, want)
	}
	// Panel a fills its cell below the label.
	for y := 0; y < 6; y++ {
		for x := 0; x < 8; x++ {
			if got := m.RGBAAt(5+x, 5+labelHeight+y); got != (color.RGBA{50, 50, 50, 255}) {
				t.Fatalf("panel a pixel (%d,%d) = %v", x, y, got)
			}
		}
	}
	// Panel b (4×4 after zoom) is centred in its 8×6 cell.
	x0, y0 := 5+cellW+5+2, 5+labelHeight+1
	if got := m.RGBAAt(x0, y0); got != (color.RGBA{200, 200, 200, 255}) {
		t.Fatalf("panel b corner = %v", got)
	}
	if got := m.RGBAAt(x0-1, y0); got != (color.RGBA{255, 255, 255, 255}) {
		t.Fatalf("left of panel b = %v, want background", got)
	}
	// Labels leave dark pixels inside (and only inside) their cell's label
	// row; the unlabeled cell has none.
	dark := func(x0, x1, y0, y1 int) int {
		n := 0
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				if m.RGBAAt(x, y).R < 128 {
					n++
				}
			}
		}
		return n
	}
	if n := dark(5, 5+cellW, 5, 5+labelHeight); n == 0 {
		t.Error("label of panel a not drawn")
	}
	if n := dark(5+cellW, 5+cellW+5, 0, 5+labelHeight); n != 0 {
		t.Errorf("label overflows its cell: %d dark pixels in the gap", n)
	}
	if n := dark(5+cellW+5, 5+2*cellW+5, 5, 5+labelHeight); n != 0 {
		t.Errorf("unlabelled cell has %d dark pixels", n)
	}
	if n := dark(5, 5+cellW, 5+cellH+5, 5+cellH+5+labelHeight); n == 0 {
		t.Error("label of the empty panel not drawn")
	}
}

func TestDrawLabelMiddleDot(t *testing.T) {
	// "a·b" and "a.b" differ only in the height of the dot.
	draw := func(s string) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, 40, labelHeight))
		for i := range img.Pix {
			img.Pix[i] = 255
		}
		drawLabel(img, img.Bounds(), s)
		return img
	}
	dot, stop := draw("a·b"), draw("a.b")
	lowest := func(img *image.RGBA) int { // lowest dark row in the second glyph cell
		low := -1
		for y := 0; y < labelHeight; y++ {
			for x := labelPad + 7; x < labelPad+14; x++ {
				if img.RGBAAt(x, y).R < 128 {
					low = y
				}
			}
		}
		return low
	}
	if ld, ls := lowest(dot), lowest(stop); ld < 0 || ls < 0 || ls-ld != 4 {
		t.Fatalf("middle dot at row %d, full stop at row %d; want 4 rows higher", ld, ls)
	}
}

// TestDisplayScaleFloor: the display range never drops below the mask
// threshold (rounding noise stays black), and is the robust maximum when
// that is larger.
func TestDisplayScaleFloor(t *testing.T) {
	noise := mat.NewDense(3, 2, []float64{1e-6, -2e-6, 1e-7, 0, 3e-6, 1e-6})
	if s := DisplayScale(noise, 1, 0.1); s != 0.1 {
		t.Errorf("noise: scale %v, want the threshold 0.1", s)
	}
	motion := mat.NewDense(2, 2, []float64{0.5, -0.8, 0, 0.3})
	if s := DisplayScale(motion, 1, 0.1); s != 0.8 {
		t.Errorf("motion: scale %v, want the maximum 0.8", s)
	}
}

func colorOf(rgb bool) frames.ColorMode {
	if rgb {
		return frames.ColorRGB
	}
	return frames.ColorGray
}
