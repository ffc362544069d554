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
	if len(cols) == 0 {
		return errors.New("video: a preview needs at least one column")
	}
	_, frames := cols[0].M.Dims()
	colour := false
	for _, c := range cols {
		r, n := c.M.Dims()
		if n != frames || r != c.G.Rows() {
			return fmt.Errorf("video: preview column %q is %d×%d, want %d×%d", c.Title, r, n, c.G.Rows(), frames)
		}
		colour = colour || c.G.Color
	}
	if frames == 0 {
		return errors.New("video: a preview needs at least one frame")
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
	q := newQuantizer(colour)
	headers := make([]string, len(cols))
	for k, c := range cols {
		headers[k] = c.Title
	}
	n := min(maxFrames, frames)
	anim := &gif.GIF{LoopCount: 0}
	// The shown frames are j = k·frames/n; their columns are gathered
	// previewBlock source frames at a time, in one pass over each
	// matrix's rows.
	bufs := make([][][]float64, len(cols))
	for c, col := range cols {
		bufs[c] = newColumns(previewBlock, col.G.Rows())
	}
	k := 0
	for j0 := 0; j0 < frames && k < n; j0 += previewBlock {
		if err := ctx.Err(); err != nil {
			return err
		}
		nb := min(previewBlock, frames-j0)
		for c, col := range cols {
			gatherColumns(bufs[c][:nb], col.M, j0)
		}
		for ; k < n && k*frames/n < j0+nb; k++ {
			j := k * frames / n
			row := make([]Panel, len(cols))
			for c, col := range cols {
				row[c] = Panel{Image: Shrink(planeImage(bufs[c][j-j0], col.G), shrink)}
			}
			m := Montage([][]Panel{row}, MontageOptions{Headers: headers})
			anim.Image = append(anim.Image, q.quantize(m))
			anim.Delay = append(anim.Delay, delay)
		}
	}
	return outdir.WriteFile(path, func(w io.Writer) error { return gif.EncodeAll(w, anim) })
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
