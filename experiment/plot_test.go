package experiment

import (
	"bytes"
	"image"
	"image/png"
	"slices"
	"testing"
)

// TestTicks125: a log axis over at most three decades is labelled at 1, 2
// and 5 times the powers of ten inside it, and only there; a wider axis
// keeps gonum's powers of ten.
func TestTicks125(t *testing.T) {
	labels := func(min, max float64) []string {
		var out []string
		for _, tk := range (ticks125{}).Ticks(min, max) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, tc := range []struct {
		min, max float64
		want     []string
	}{
		{2, 50, []string{"2", "5", "10", "20", "50"}},
		{1.5, 1000, []string{"2", "5", "10", "20", "50", "100", "200", "500", "1000"}},
		{0.003, 0.4, []string{"0.005", "0.01", "0.02", "0.05", "0.1", "0.2"}},
	} {
		if got := labels(tc.min, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("[%g, %g]: labels %v, want %v", tc.min, tc.max, got, tc.want)
		}
	}
	// Ten decades: powers of ten only, none of 2 or 5 times one.
	for _, l := range labels(1e-10, 1) {
		if l[0] == '2' || l[0] == '5' {
			t.Errorf("[1e-10, 1]: label %s on a wide axis", l)
		}
	}
	// Minor ticks at the other integer multiples: 2–9 and 10–50 by 10.
	if got := len((ticks125{}).Ticks(2, 50)); got != 8+5 {
		t.Errorf("[2, 50]: %d ticks, want 13", got)
	}
}

// TestLegendOutsideAxes: the legend is drawn in a column to the right of
// the axes and nowhere else: two charts whose data fill the whole range
// and differ only in their series' names are identical, pixel for pixel,
// within the axes' width, and differ in the column, which widens with
// the longer name.
func TestLegendOutsideAxes(t *testing.T) {
	render := func(name string) image.Image {
		xs, ys := []float64{0, 1, 2, 3}, []float64{3, 0, 3, 0} // corners: where a legend inside would sit
		c := &chart{title: "t", xlabel: "x", ylabel: "y", series: []series{{name: name, xs: xs, ys: ys, points: true}}}
		var b bytes.Buffer
		if err := c.writePNG(&b); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	a, b := render("a"), render("a much longer name")
	axes := int(plotWidth.Dots(96))
	if a.Bounds().Dx() <= axes || b.Bounds().Dx() <= a.Bounds().Dx() || a.Bounds().Dy() != b.Bounds().Dy() {
		t.Fatalf("sizes %v and %v; the axes are %d wide", a.Bounds(), b.Bounds(), axes)
	}
	differ := false
	for y := range a.Bounds().Dy() {
		for x := range a.Bounds().Dx() {
			same := a.At(x, y) == b.At(x, y)
			if x < axes && !same {
				t.Fatalf("pixel (%d, %d) inside the axes depends on the legend", x, y)
			}
			differ = differ || !same
		}
	}
	if !differ {
		t.Error("the legends look the same")
	}
}
