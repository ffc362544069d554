package experiment

import (
	"fmt"
	"image"
	"image/png"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// series is one curve of a line plot.
type series struct {
	name   string
	xs, ys []float64
	points bool // draw markers at the data points
	noLine bool // markers only (points over named categories)
}

// chart describes a line plot. Its legend is drawn in a column of its
// own to the right of the axes, so that it covers neither data nor the
// title, however the data fall.
type chart struct {
	title, xlabel, ylabel string
	logX, logY            bool
	series                []series
	xticks                []plot.Tick // named x positions (categories); nil: numbers
}

// Plot size: 6×4 inches at the PNG default of 96 dpi (576×384 pixels),
// plus the legend's column.
const (
	plotWidth  = 6 * vg.Inch
	plotHeight = 4 * vg.Inch
	legendGap  = vg.Length(10) // points between the axes and the legend
)

// build turns the chart into a gonum plot.
func (c *chart) build() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.title
	p.Title.Padding = vg.Points(8) // room between the title and a legend at the top
	p.X.Label.Text = c.xlabel
	p.Y.Label.Text = c.ylabel
	p.Add(plotter.NewGrid())
	if c.logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = ticks125{}
	}
	if c.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = ticks125{}
	}
	if c.xticks != nil {
		p.X.Tick.Marker = plot.ConstantTicks(c.xticks)
		p.X.Min, p.X.Max = c.xticks[0].Value-0.5, c.xticks[len(c.xticks)-1].Value+0.5
	}
	p.Legend.Top, p.Legend.Left = true, true // icons first, in writePNG's column
	nonEmpty := 0
	for i, s := range c.series {
		xys := make(plotter.XYs, 0, len(s.xs))
		for k := range s.xs {
			x, y := s.xs[k], s.ys[k]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) ||
				(c.logX && x <= 0) || (c.logY && y <= 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		nonEmpty++
		var sc *plotter.Scatter
		if s.points || s.noLine {
			var err error
			if sc, err = plotter.NewScatter(xys); err != nil {
				return nil, err
			}
			sc.Color, sc.Shape = plotutil.Color(i), draw.CircleGlyph{}
		}
		if s.noLine { // larger markers, one shape per series
			sc.Shape, sc.Radius = plotutil.Shape(i), vg.Points(4)
			p.Add(sc)
			p.Legend.Add(s.name, sc)
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		if s.points {
			p.Add(sc)
			p.Legend.Add(s.name, line, sc)
		} else {
			p.Legend.Add(s.name, line)
		}
	}
	if nonEmpty == 0 {
		return nil, fmt.Errorf("plot %q has no finite data", c.title)
	}
	// Widen log axes by a margin; this also gives a single point a
	// non-empty (and positive) range.
	if c.logX {
		p.X.Min, p.X.Max = p.X.Min/1.3, p.X.Max*1.3
	}
	if c.logY {
		p.Y.Min, p.Y.Max = p.Y.Min/1.3, p.Y.Max*1.3
	}
	return p, nil
}

// writePNG renders the chart as a PNG: the axes in plotWidth×plotHeight,
// and the legend, when there is one, in a column to their right, its top
// level with the top of the axes.
func (c *chart) writePNG(w io.Writer) error {
	p, err := c.build()
	if err != nil {
		return err
	}
	return renderPNG(w, p)
}

// renderPNG draws p with its legend moved out of the axes (see
// chart.writePNG) and encodes it as a PNG.
func renderPNG(w io.Writer, p *plot.Plot) error {
	legend := p.Legend
	p.Legend = plot.NewLegend() // no entries: the axes draw none
	var legendWidth vg.Length
	if r := legend.Rectangle(draw.Canvas{}); r.Max.X > r.Min.X {
		legendWidth = r.Max.X - r.Min.X + 2*legendGap
	}
	img := vgimg.New(plotWidth+legendWidth, plotHeight)
	dc := draw.New(img)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	if legendWidth > 0 {
		area := p.DataCanvas(draw.Crop(dc, 0, -legendWidth, 0, 0))
		col := draw.Crop(dc, plotWidth+legendGap, 0, 0, 0)
		col.Max.Y = area.Max.Y
		legend.Draw(col)
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// writeImagePNG encodes an image with the best compression; RGBA images
// whose pixels are all gray are stored as 8-bit gray, a third of the size.
func writeImagePNG(w io.Writer, img image.Image) error {
	if rgba, ok := img.(*image.RGBA); ok {
		if g := grayIfGray(rgba); g != nil {
			img = g
		}
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	return enc.Encode(w, img)
}

// grayIfGray returns img as *image.Gray when every pixel has R = G = B,
// else nil.
func grayIfGray(img *image.RGBA) *image.Gray {
	b := img.Bounds()
	g := image.NewGray(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[(y-b.Min.Y)*img.Stride:]
		for x := 0; x < b.Dx(); x++ {
			r, gg, bb := row[4*x], row[4*x+1], row[4*x+2]
			if r != gg || r != bb {
				return nil
			}
			g.Pix[(y-b.Min.Y)*g.Stride+x] = r
		}
	}
	return g
}

// ticks125 marks a log axis at 1, 2 and 5 times the powers of ten, with
// the other integer multiples as unlabelled minor ticks, when the axis
// spans at most three decades (gonum/plot's LogTicks labels only the
// powers of ten, so an axis from 2 to 50 had one label); wider axes keep
// LogTicks.
type ticks125 struct{}

// Ticks returns the ticks of [min, max] (plot.Ticker).
func (ticks125) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) || math.Log10(max/min) > 3 {
		return plot.LogTicks{Prec: -1}.Ticks(min, max)
	}
	var out []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		p := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < min*(1-1e-12) || v > max*(1+1e-12) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = fmt.Sprintf("%g", v)
			}
			out = append(out, t)
		}
	}
	return out
}
