package video

import (
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rpca-gd/rpca/internal/pngenc"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/video/frames"
	"gonum.org/v1/gonum/mat"
)

// Matrix is the read access that the image writers need. *mat.Dense and
// other gonum matrices, *rpca.Sparse and the views returned by
// [Magnitude], [Excess] and [Masks] read it.
type Matrix interface {
	Dims() (rows, cols int)
	At(i, j int) float64
}

// to8 maps a value in [0, 1] to 0–255, clamping outside values (NaN → 0).
func to8(v float64) uint8 {
	switch {
	case !(v > 0): // also NaN
		return 0
	case v >= 1:
		return 255
	}
	// math.Round for a positive x below 256, without its call: the
	// integer part and the fraction are exact.
	x := v * 255
	i := int(x)
	if x-float64(i) >= 0.5 {
		i++
	}
	return uint8(i)
}

// column returns column j of m (fast for *mat.Dense).
func column(m Matrix, j int) []float64 {
	r, _ := m.Dims()
	col := make([]float64, r)
	if d, ok := m.(*mat.Dense); ok {
		raw := d.RawMatrix()
		for i := range col {
			col[i] = raw.Data[i*raw.Stride+j]
		}
		return col
	}
	for i := range col {
		col[i] = m.At(i, j)
	}
	return col
}

// FrameImage returns column j of m, laid out as geometry g describes, as
// an *image.Gray (or an *image.RGBA for color), with values clamped to
// [0, 1] and rounded to 8 bits.
func FrameImage(m Matrix, j int, g frames.Geometry) (image.Image, error) {
	r, c := m.Dims()
	if r != g.Rows() {
		return nil, fmt.Errorf("video: matrix has %d rows, but %d×%d×%d frames need %d", r, g.Width, g.Height, g.Channels(), g.Rows())
	}
	if j < 0 || j >= c {
		return nil, fmt.Errorf("video: frame %d out of range (matrix has %d columns)", j, c)
	}
	col := column(m, j)
	return planeImage(col, g), nil
}

// planeImage converts one frame column to an image.
func planeImage(col []float64, g frames.Geometry) image.Image {
	return planeImageTo(nil, col, g)
}

// planeImageTo is planeImage drawing into dst when dst is an image of the
// type and size it makes (so that a preview's frames reuse one image
// instead of touching fresh memory for every frame), a new image
// otherwise; it returns the image drawn.
func planeImageTo(dst image.Image, col []float64, g frames.Geometry) image.Image {
	rect := image.Rect(0, 0, g.Width, g.Height)
	p := g.Pixels()
	if !g.Color {
		img, ok := dst.(*image.Gray)
		if !ok || img.Rect != rect {
			img = image.NewGray(rect)
		}
		for y := 0; y < g.Height; y++ {
			for x := 0; x < g.Width; x++ {
				img.Pix[y*img.Stride+x] = to8(col[y*g.Width+x])
			}
		}
		return img
	}
	img, ok := dst.(*image.RGBA)
	if !ok || img.Rect != rect {
		img = image.NewRGBA(rect)
	}
	w := g.Width
	for y := 0; y < g.Height; y++ {
		r, gr, b := col[y*w:(y+1)*w], col[p+y*w:p+(y+1)*w], col[2*p+y*w:2*p+(y+1)*w]
		pix := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x, v := range r {
			q := pix[4*x : 4*x+4 : 4*x+4]
			q[0], q[1], q[2], q[3] = to8(v), to8(gr[x]), to8(b[x]), 255
		}
	}
	return img
}

// pngName returns the output file name for a frame: its base name with
// the extension replaced by ".png".
func pngName(name string) string {
	base := filepath.Base(name)
	return strings.TrimSuffix(base, filepath.Ext(base)) + ".png"
}

// WriteFrames writes every column k of m as the PNG file
// dir/pngName(names[k]), creating dir if needed. Each file is written
// atomically ([outdir.WriteFile]); to make the whole directory
// appear at once, write into an [outdir.Dir]. Two names that map
// to the same output file are an error. Frames are encoded and written by
// several goroutines, so that the per-file syncs of the atomic writes
// overlap; the error reported is that of the first failing frame.
func WriteFrames(dir string, names []string, m Matrix, g frames.Geometry) error {
	return writeFrames(dir, names, m, g, outdir.WriteFile)
}

// writeFrames is [WriteFrames] with each file written by create.
func writeFrames(dir string, names []string, m Matrix, g frames.Geometry, create outdir.WriteFunc) error {
	fs, err := newFrameSet(dir, names, m, g, create)
	if err != nil {
		return err
	}
	_, c := m.Dims()
	for j0 := 0; j0 < c; j0 += writeBlock {
		nb := min(writeBlock, c-j0)
		fs.gather(j0, nb)
		if err := writeSets(j0, nb, fs); err != nil {
			return err
		}
	}
	return nil
}

// frameSet is a directory of frame PNGs being written from the columns
// of a matrix, writeBlock frames at a time: the columns of a block are
// gathered in one pass over the rows (a column of a row-major matrix
// touches a cache line per entry), then encoded and written by several
// goroutines, so that the per-file writes overlap.
type frameSet struct {
	dir    string
	names  []string
	m      Matrix
	g      frames.Geometry
	create outdir.WriteFunc
	cols   [][]float64 // the gathered block
}

// newFrameSet checks that m has a column per name and g's rows and that
// no two names map to the same file, and creates dir.
func newFrameSet(dir string, names []string, m Matrix, g frames.Geometry, create outdir.WriteFunc) (*frameSet, error) {
	r, c := m.Dims()
	if len(names) != c {
		return nil, fmt.Errorf("video: %d names for %d frames", len(names), c)
	}
	if r != g.Rows() {
		return nil, fmt.Errorf("video: matrix has %d rows, but %d×%d×%d frames need %d", r, g.Width, g.Height, g.Channels(), g.Rows())
	}
	seen := make(map[string]string, len(names))
	for _, name := range names {
		out := pngName(name)
		if prev, dup := seen[out]; dup {
			return nil, fmt.Errorf("video: frames %s and %s would both be written as %s", prev, name, out)
		}
		seen[out] = name
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("video: %v", err)
	}
	return &frameSet{dir: dir, names: names, m: m, g: g, create: create, cols: newColumns(writeBlock, r)}, nil
}

// gather fills the block with columns j0 … j0+nb−1.
func (fs *frameSet) gather(j0, nb int) { gatherColumns(fs.cols[:nb], fs.m, j0) }

// writeSets encodes and writes the gathered frames j0 … j0+nb−1 of every
// set, all files of the block at once; the error reported is that of the
// first failing file.
func writeSets(j0, nb int, sets ...*frameSet) error {
	errs := make([]error, nb*len(sets))
	var wg sync.WaitGroup
	for s, fs := range sets {
		for k := 0; k < nb; k++ {
			wg.Add(1)
			go func(e *error, col []float64, name string) {
				defer wg.Done()
				img := planeImage(col, fs.g)
				path := filepath.Join(fs.dir, pngName(name))
				if err := fs.create(path, func(w io.Writer) error { return pngenc.Encode(w, img) }); err != nil {
					*e = fmt.Errorf("video: writing %s: %v", path, err)
				}
			}(&errs[s*nb+k], fs.cols[k], fs.names[j0+k])
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeBlock is the number of frames gathered and written at once, more
// than the cores so that encoding and writing overlap. Each set holds a
// block of float64 columns (3 sets of 8 colour 320×240 frames: 44 MB):
// 16 took 27 MiB more of a stream's peak, for no speed (farm-bench,
// 2026-11-27).
const writeBlock = 8

// writePNG writes img as a PNG file atomically.
func writePNG(path string, img image.Image) error {
	return outdir.WriteFile(path, func(w io.Writer) error { return png.Encode(w, img) })
}
