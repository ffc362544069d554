package video

import (
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Panel is one cell of a montage: an image with a label above it.
type Panel struct {
	Image image.Image // nil leaves the cell empty
	Label string      // e.g. "GD p=1 · 1.23 s"; clipped to the cell width
}

// MontageOptions configures [Montage].
type MontageOptions struct {
	// Zoom enlarges every image by this integer factor (nearest
	// neighbour), for small frames; 0 means 1.
	Zoom int
	// Gap is the space in pixels between cells and around the grid;
	// 0 means 4, negative means none.
	Gap int
	// Headers, when not empty, are column titles in a row of their own
	// above the grid.
	Headers []string
}

// label metrics of basicfont.Face7x13.
const (
	labelPad    = 3
	labelHeight = 13 + 2*labelPad
)

// Montage lays panels out in a grid, rows[i][j] in row i and column j,
// each under its label, on a white background. All cells have the size of
// the largest (zoomed) image; smaller images are centred. Labels use a
// 7×13 bitmap font covering ASCII; '·', '×', dashes and common Greek
// letters are drawn with ASCII look-alikes (τ as "tau"), other characters
// as a box.
func Montage(rows [][]Panel, opts MontageOptions) *image.RGBA {
	return montageTo(nil, rows, opts)
}

// montageTo is Montage drawing into dst when dst has the montage's size
// (a preview's frames reuse one canvas), into a new image otherwise; it
// returns the image drawn.
func montageTo(dst *image.RGBA, rows [][]Panel, opts MontageOptions) *image.RGBA {
	zoom := max(opts.Zoom, 1)
	gap := zeroMeansDefault(opts.Gap, 4)
	cw, ch, ncols := 0, 0, 0
	for _, row := range rows {
		ncols = max(ncols, len(row))
		for _, p := range row {
			if p.Image != nil {
				b := p.Image.Bounds()
				cw = max(cw, b.Dx()*zoom)
				ch = max(ch, b.Dy()*zoom)
			}
		}
	}
	cellH := labelHeight + ch
	ncols = max(ncols, len(opts.Headers))
	cw = max(cw, 1)
	head := 0
	if len(opts.Headers) > 0 {
		head = labelHeight + gap
	}
	width := gap + ncols*(cw+gap)
	height := gap + head + len(rows)*(cellH+gap)
	if r := image.Rect(0, 0, max(width, 1), max(height, 1)); dst == nil || dst.Rect != r {
		dst = image.NewRGBA(r)
	}
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	for j, h := range opts.Headers {
		x0 := gap + j*(cw+gap)
		r := image.Rect(x0, gap, x0+cw, gap+labelHeight)
		draw.Draw(dst, r, image.NewUniform(color.Gray{Y: 0xdd}), image.Point{}, draw.Src)
		drawLabel(dst, r, h)
	}
	for i, row := range rows {
		for j, p := range row {
			x0 := gap + j*(cw+gap)
			y0 := gap + head + i*(cellH+gap)
			cell := image.Rect(x0, y0, x0+cw, y0+cellH)
			if p.Label != "" {
				drawLabel(dst, image.Rect(x0, y0, x0+cw, y0+labelHeight), p.Label)
			}
			if p.Image != nil {
				b := p.Image.Bounds()
				w, h := b.Dx()*zoom, b.Dy()*zoom
				ox := x0 + (cw-w)/2
				oy := y0 + labelHeight + (ch-h)/2
				drawZoomed(dst, image.Rect(ox, oy, ox+w, oy+h).Intersect(cell), p.Image, zoom)
			}
		}
	}
	return dst
}

// drawZoomed copies src into r of dst, enlarged by zoom.
func drawZoomed(dst *image.RGBA, r image.Rectangle, src image.Image, zoom int) {
	if zoom == 1 {
		draw.Draw(dst, r, src, src.Bounds().Min, draw.Src)
		return
	}
	sb := src.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		sy := sb.Min.Y + (y-r.Min.Y)/zoom
		for x := r.Min.X; x < r.Max.X; x++ {
			dst.Set(x, y, src.At(sb.Min.X+(x-r.Min.X)/zoom, sy))
		}
	}
}

// asciiFor gives look-alikes for characters the bitmap font lacks.
var asciiFor = map[rune]string{
	'×': "x", '–': "-", '—': "-", '−': "-", '≈': "~", '…': "...", '‖': "||",
	'α': "alpha", 'β': "beta", 'γ': "gamma", 'λ': "lambda", 'µ': "mu",
	'μ': "mu", 'ρ': "rho", 'σ': "sigma", 'τ': "tau",
}

// drawLabel writes text in black into r of dst, clipped to r.
func drawLabel(dst *image.RGBA, r image.Rectangle, text string) {
	clip, ok := dst.SubImage(r).(*image.RGBA)
	if !ok {
		return
	}
	face := basicfont.Face7x13
	d := &font.Drawer{
		Dst:  clip,
		Src:  image.NewUniform(color.Black),
		Face: face,
		Dot:  fixed.P(r.Min.X+labelPad, r.Min.Y+labelPad+face.Ascent),
	}
	for _, c := range text {
		switch {
		case c == '·' || c == '•':
			// A raised full stop makes a middle dot.
			d.Dot.Y -= fixed.I(4)
			d.DrawString(".")
			d.Dot.Y += fixed.I(4)
		case asciiFor[c] != "":
			d.DrawString(asciiFor[c])
		default:
			d.DrawString(string(c))
		}
		if d.Dot.X.Round() >= r.Max.X {
			return
		}
	}
}

// zeroMeansDefault reads an option whose zero value means the default def
// and whose negative values mean none: it returns def for 0, 0 for v < 0
// and v otherwise.
func zeroMeansDefault[T int | float64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
