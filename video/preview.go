package video

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"io"

	"github.com/rpca-gd/rpca/outdir"
)

// Defaults of [WritePreview].
const (
	DefaultPreviewFrames = 100 // frames shown, evenly spaced
	DefaultPreviewWidth  = 960 // largest width of the animation in pixels
	DefaultPreviewDelay  = 10  // time per frame, in hundredths of a second
)

// PreviewColumn is one column of an animated preview: a matrix whose
// columns are frames of the given geometry, under a title.
type PreviewColumn struct {
	Title string
	M     Matrix
	G     Geometry
}

// PreviewOptions configure [WritePreview]. Zero values take the defaults.
type PreviewOptions struct {
	MaxFrames int // at most this many frames, evenly spaced
	MaxWidth  int // panels shrink by an integer factor to fit
	Delay     int // hundredths of a second per frame
}

// WritePreview writes an animated GIF to path (atomically): the columns
// side by side under their titles, one animation frame per video frame
// (at most MaxFrames, evenly spaced). Gray columns use 256 gray levels;
// when any column is in colour, the frames are mapped to the web-safe
// palette plus 40 grays.
func WritePreview(ctx context.Context, path string, cols []PreviewColumn, opts PreviewOptions) error {
	p, err := newPreview(cols, opts)
	if err != nil {
		return err
	}
	// The shown frames' columns are gathered previewBlock source frames
	// at a time, in one pass over each matrix's rows.
	bufs := make([][][]float64, len(cols))
	for c, col := range cols {
		bufs[c] = newColumns(previewBlock, col.G.Rows())
	}
	shown := make([][]float64, len(cols))
	for j0 := 0; j0 < p.frames && p.next() >= 0; j0 += previewBlock {
		if err := ctx.Err(); err != nil {
			return err
		}
		nb := min(previewBlock, p.frames-j0)
		for c, col := range cols {
			gatherColumns(bufs[c][:nb], col.M, j0)
		}
		for j := p.next(); j >= 0 && j < j0+nb; j = p.next() {
			for c := range cols {
				shown[c] = bufs[c][j-j0]
			}
			p.add(shown)
		}
	}
	return p.write(path)
}

// preview builds the animation of [WritePreview] a frame at a time.
type preview struct {
	cols      []PreviewColumn
	headers   []string
	frames, n int // source frames, shown frames
	shrink    int
	delay     int
	q         *quantizer
	anim      gif.GIF
}

// newPreview checks the columns and sizes the animation.
func newPreview(cols []PreviewColumn, opts PreviewOptions) (*preview, error) {
	if len(cols) == 0 {
		return nil, errors.New("video: a preview needs at least one column")
	}
	_, frames := cols[0].M.Dims()
	colour := false
	for _, c := range cols {
		r, n := c.M.Dims()
		if n != frames || r != c.G.Rows() {
			return nil, fmt.Errorf("video: preview column %q is %d×%d, want %d×%d", c.Title, r, n, c.G.Rows(), frames)
		}
		colour = colour || c.G.Color
	}
	if frames == 0 {
		return nil, errors.New("video: a preview needs at least one frame")
	}
	maxFrames, maxWidth, delay := opts.MaxFrames, opts.MaxWidth, opts.Delay
	if maxFrames <= 0 {
		maxFrames = DefaultPreviewFrames
	}
	if maxWidth <= 0 {
		maxWidth = DefaultPreviewWidth
	}
	if delay <= 0 {
		delay = DefaultPreviewDelay
	}
	shrink := 1
	for len(cols)*(cols[0].G.Width/shrink+4)+4 > maxWidth && cols[0].G.Width/shrink > 16 {
		shrink++
	}
	p := &preview{cols: cols, frames: frames, n: min(maxFrames, frames), shrink: shrink, delay: delay, q: newQuantizer(colour)}
	for _, c := range cols {
		p.headers = append(p.headers, c.Title)
	}
	return p, nil
}

// next returns the source frame that the next animation frame shows, or
// −1 when the animation is complete: the k-th of n shows k·frames/n.
func (p *preview) next() int {
	k := len(p.anim.Image)
	if k >= p.n {
		return -1
	}
	return k * p.frames / p.n
}

// add appends the animation frame of the source frame next() returns,
// given that frame's column of every preview column.
func (p *preview) add(cols [][]float64) {
	row := make([]Panel, len(p.cols))
	for c, col := range p.cols {
		row[c] = Panel{Image: Shrink(planeImage(cols[c], col.G), p.shrink)}
	}
	m := Montage([][]Panel{row}, MontageOptions{Headers: p.headers})
	p.anim.Image = append(p.anim.Image, p.q.quantize(m))
	p.anim.Delay = append(p.anim.Delay, p.delay)
}

// write writes the animation to path, atomically.
func (p *preview) write(path string) error {
	return outdir.WriteFile(path, func(w io.Writer) error { return gif.EncodeAll(w, &p.anim) })
}

// previewBlock is the number of source frames whose columns
// [WritePreview] gathers at once.
const previewBlock = 8

// quantizer maps RGBA images to a palette by arithmetic, not by the
// palette's linear nearest-colour search (256 comparisons per pixel).
type quantizer struct {
	pal    color.Palette
	colour bool
	gray   [256]uint8 // palette index of each gray level
}

func newQuantizer(colour bool) *quantizer {
	q := &quantizer{pal: grayPalette(), colour: colour}
	if colour {
		q.pal = colourPalette()
	}
	for v := range q.gray {
		q.gray[v] = uint8(q.pal.Index(color.Gray{Y: uint8(v)}))
	}
	return q
}

// quantize returns m on the palette: gray pixels (r = g = b) at their
// nearest palette gray, others at the nearest web-safe colour (levels
// 0, 51, …, 255 per channel; palette.WebSafe lists blue fastest).
func (q *quantizer) quantize(m *image.RGBA) *image.Paletted {
	b := m.Bounds()
	p := image.NewPaletted(b, q.pal)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			o := m.PixOffset(x, y)
			r, g, bb := m.Pix[o], m.Pix[o+1], m.Pix[o+2]
			idx := q.gray[r]
			if q.colour && (r != g || g != bb) {
				l := func(v uint8) uint8 { return uint8((int(v) + 25) / 51) }
				idx = 36*l(r) + 6*l(g) + l(bb)
			}
			p.Pix[p.PixOffset(x, y)] = idx
		}
	}
	return p
}

// grayPalette is the 256 gray levels.
func grayPalette() color.Palette {
	p := make(color.Palette, 256)
	for i := range p {
		p[i] = color.Gray{Y: uint8(i)}
	}
	return p
}

// colourPalette is the 216 web-safe colours and 40 further grays.
func colourPalette() color.Palette {
	p := append(color.Palette{}, palette.WebSafe...)
	for i := 0; i < 40; i++ {
		v := uint8(3 + i*250/39)
		p = append(p, color.Gray{Y: v})
	}
	return p
}

// Shrink reduces img by the integer factor n, each output pixel the
// mean of an n×n block (n ≤ 1 returns img).
func Shrink(img image.Image, n int) image.Image {
	if n <= 1 {
		return img
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()/n, b.Dy()/n))
	for y := 0; y < out.Rect.Dy(); y++ {
		for x := 0; x < out.Rect.Dx(); x++ {
			var sum [3]uint32
			for dy := 0; dy < n; dy++ {
				for dx := 0; dx < n; dx++ {
					r, g, bb, _ := img.At(b.Min.X+x*n+dx, b.Min.Y+y*n+dy).RGBA()
					sum[0] += r >> 8
					sum[1] += g >> 8
					sum[2] += bb >> 8
				}
			}
			nn := uint32(n * n)
			off := y*out.Stride + 4*x
			out.Pix[off] = uint8((sum[0] + nn/2) / nn)
			out.Pix[off+1] = uint8((sum[1] + nn/2) / nn)
			out.Pix[off+2] = uint8((sum[2] + nn/2) / nn)
			out.Pix[off+3] = 255
		}
	}
	return out
}
