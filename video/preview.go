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
	"path/filepath"
	"strings"

	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/video/frames"
)

// Defaults of [WritePreview]. A GIF shows fewer, smaller frames than an
// MP4, whose compression keeps every frame at full size small.
const (
	DefaultPreviewFrames   = 100  // GIF: frames shown, evenly spaced (MP4: all)
	DefaultPreviewWidth    = 960  // GIF: largest width of the animation in pixels
	DefaultPreviewWidthMP4 = 1920 // MP4: largest width
	DefaultPreviewDelay    = 10   // time per frame, in hundredths of a second
)

// PreviewColumn is one column of an animated preview: a matrix whose
// columns are frames of the given geometry, under a title.
type PreviewColumn struct {
	Title string
	M     Matrix
	G     frames.Geometry
}

// PreviewOptions configure [WritePreview]. Zero values take the defaults.
type PreviewOptions struct {
	MaxFrames int // at most this many frames, evenly spaced
	MaxWidth  int // panels shrink by an integer factor to fit
	Delay     int // hundredths of a second per frame
	// Names, when given, are the frames' names (one per column of the
	// matrices), shown after the frame's number above the first column.
	Names []string
	// LookPath finds ffmpeg for an MP4 (nil: exec.LookPath).
	LookPath func(file string) (string, error)
}

// WritePreview writes an animation to path (atomically): the columns
// side by side under their titles, one animation frame per video frame
// (at most MaxFrames, evenly spaced), each labelled with its number
// ("k/N") and its name, or "frame k/N" without names. A path ending in .mp4 is an H.264 video that ffmpeg encodes
// (ErrNoFFmpeg without it); any other is an animated GIF, in which gray
// columns use 256 gray levels and, when any column is in colour, the
// frames are mapped to the web-safe palette plus 40 grays.
func WritePreview(ctx context.Context, path string, cols []PreviewColumn, opts PreviewOptions) (err error) {
	p, err := newPreview(ctx, path, cols, opts)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			p.abort()
		}
	}()
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
			if err := p.add(shown); err != nil {
				return err
			}
		}
	}
	return p.write()
}

// preview builds the animation of [WritePreview] a frame at a time.
type preview struct {
	cols      []PreviewColumn
	headers   []string
	frames, n int // source frames, shown frames
	shrink    int
	delay     int
	names     []string
	path      string
	q         *quantizer // GIF
	anim      gif.GIF
	mp4       *mp4Writer // MP4
	shown     int        // animation frames added
	// canvas and panels are reused from one animation frame to the next.
	canvas *image.RGBA
	panels []image.Image
}

// newPreview checks the columns and sizes the animation to path, whose
// extension chooses its format.
func newPreview(ctx context.Context, path string, cols []PreviewColumn, opts PreviewOptions) (*preview, error) {
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
	isMP4 := strings.EqualFold(filepath.Ext(path), ".mp4")
	maxFrames, maxWidth, delay := opts.MaxFrames, opts.MaxWidth, opts.Delay
	if maxFrames <= 0 {
		maxFrames = DefaultPreviewFrames
		if isMP4 {
			maxFrames = frames
		}
	}
	if maxWidth <= 0 {
		maxWidth = DefaultPreviewWidth
		if isMP4 {
			maxWidth = DefaultPreviewWidthMP4
		}
	}
	if delay <= 0 {
		delay = DefaultPreviewDelay
	}
	shrink := 1
	for len(cols)*(cols[0].G.Width/shrink+4)+4 > maxWidth && cols[0].G.Width/shrink > 16 {
		shrink++
	}
	if opts.Names != nil && len(opts.Names) != frames {
		return nil, fmt.Errorf("video: %d preview frame names for %d frames", len(opts.Names), frames)
	}
	p := &preview{cols: cols, frames: frames, n: min(maxFrames, frames), shrink: shrink, delay: delay, names: opts.Names, path: path}
	if isMP4 {
		var err error
		if p.mp4, err = newMP4Writer(ctx, path, max(1, 100/delay), opts.LookPath); err != nil {
			return nil, err
		}
	} else {
		p.q = newQuantizer(colour)
	}
	for _, c := range cols {
		p.headers = append(p.headers, c.Title)
	}
	return p, nil
}

// next returns the source frame that the next animation frame shows, or
// −1 when the animation is complete: the k-th of n shows k·frames/n.
func (p *preview) next() int {
	k := p.shown
	if k >= p.n {
		return -1
	}
	return k * p.frames / p.n
}

// add appends the animation frame of the source frame next() returns,
// given that frame's column of every preview column.
func (p *preview) add(cols [][]float64) error {
	f := p.next()
	row := make([]Panel, len(p.cols))
	if p.panels == nil {
		p.panels = make([]image.Image, len(p.cols))
	}
	for c, col := range p.cols {
		p.panels[c] = planeImageTo(p.panels[c], cols[c], col.G)
		row[c] = Panel{Image: Shrink(p.panels[c], p.shrink)}
	}
	row[0].Label = fmt.Sprintf("frame %d/%d", f+1, p.frames)
	if p.names != nil { // short, to fit a panel of 160 pixels
		row[0].Label = fmt.Sprintf("%d/%d %s", f+1, p.frames, p.names[f])
	}
	m := montageTo(p.canvas, [][]Panel{row}, MontageOptions{Headers: p.headers})
	p.canvas = m
	p.shown++
	if p.mp4 != nil {
		return p.mp4.add(m)
	}
	p.anim.Image = append(p.anim.Image, p.q.quantize(m))
	p.anim.Delay = append(p.anim.Delay, p.delay)
	return nil
}

// write writes the animation to its path, atomically.
func (p *preview) write() error {
	if p.mp4 != nil {
		return p.mp4.finish()
	}
	return outdir.WriteFile(p.path, func(w io.Writer) error { return gif.EncodeAll(w, &p.anim) })
}

// abort drops an animation that will not be written (an MP4's encoder
// and temporary file).
func (p *preview) abort() {
	if p.mp4 != nil {
		p.mp4.abort()
	}
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
