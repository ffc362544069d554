package video

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestLevels: every 16-bit sample l/65535 and every 8-bit sample c/255,
// computed as the decoders compute them, is a level (c/255 is level
// 257c), and values that are not one of them to the bit are not.
func TestLevels(t *testing.T) {
	tab := levelValue()
	for l := range levelScale + 1 {
		got, ok := level(tab, float64(l)/65535)
		if !ok || int(got) != l {
			t.Fatalf("%d/65535: level %d, %v", l, got, ok)
		}
	}
	for c := range 256 {
		got, ok := level(tab, float64(c)/255)
		if !ok || int(got) != 257*c {
			t.Fatalf("%d/255: level %d, %v; want %d", c, got, ok, 257*c)
		}
	}
	for _, v := range []float64{
		0.1, 0.5, math.Copysign(0, -1), -1e-300, 1e-300, math.Nextafter(1, 2), 2, -1,
		math.Nextafter(1.0/255, 1), math.Nextafter(200.0/255, 0), // one ulp off a level
		math.NaN(), math.Inf(1), math.Inf(-1), 1e300,
	} {
		if l, ok := level(tab, v); ok {
			t.Errorf("%v (bits %x) taken as level %d", v, math.Float64bits(v), l)
		}
	}
}

// TestHistoryReadsBack: a history returns exactly what was stored,
// through row, col, At and the view's rows, both while it holds levels
// (8- and 16-bit frames) and after a frame of other values turned it to
// float64, which keeps the frames stored before.
func TestHistoryReadsBack(t *testing.T) {
	const rows, size = 37, 9
	rng := rand.New(rand.NewPCG(5, 6))
	want := mat.NewDense(rows, size, nil)
	frame := func(j int, kind string) []float64 {
		f := make([]float64, rows)
		for i := range f {
			switch kind {
			case "8-bit":
				f[i] = float64(rng.IntN(256)) / 255
			case "16-bit":
				f[i] = float64(rng.IntN(65536)) / 65535
			default:
				f[i] = rng.Float64()
			}
		}
		want.SetCol(j, f)
		return f
	}
	h := newHistory(rows, size)
	check := func(n int, wide bool) {
		t.Helper()
		if (h.wide != nil) != wide || (h.levels == nil) != wide {
			t.Fatalf("after %d frames: float64 storage %v, want %v", n, h.wide != nil, wide)
		}
		v := h.first(n)
		if r, c := v.Dims(); r != rows || c != n {
			t.Fatalf("view of %d×%d, want %d×%d", r, c, rows, n)
		}
		buf := make([]float64, n)
		for i := range rows {
			got := v.row(buf, i)
			for j := range n {
				w := want.At(i, j)
				if got[j] != w || v.At(i, j) != w || v.T().At(j, i) != w {
					t.Fatalf("entry (%d, %d): row %v, At %v, want %v", i, j, got[j], v.At(i, j), w)
				}
			}
		}
		for j := range n {
			col := h.col(nil, j)
			for i := range rows {
				if col[i] != want.At(i, j) {
					t.Fatalf("column %d, entry %d: %v, want %v", j, i, col[i], want.At(i, j))
				}
			}
		}
	}
	for j := range 4 {
		h.set(j, frame(j, "8-bit"))
	}
	for j := 4; j < 7; j++ {
		h.set(j, frame(j, "16-bit"))
	}
	check(7, false)
	h.set(7, frame(7, "any"))
	check(8, true)
	h.set(8, frame(8, "8-bit"))
	h.set(0, frame(0, "any")) // the ring wraps
	check(9, true)
}

// TestHistoryFitsMatchDense: the rank rule, the median and the row fits
// read a history as they read the same frames in a *mat.Dense, to the
// bit.
func TestHistoryFitsMatchDense(t *testing.T) {
	c, err := Generate(SceneIllumination, GenerateOptions{Width: 40, Height: 30, Frames: 24, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	rows, n := c.Y.Dims()
	h := newHistory(rows, n+5)
	for j := range n {
		h.set(j, mat.Col(nil, j, c.Y))
	}
	if h.wide != nil {
		t.Fatal("a generated clip's 8-bit frames were not stored as levels")
	}
	v := h.first(n)
	ctx := context.Background()
	rd, err := ChooseRank(ctx, c.Y, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rh, err := ChooseRank(ctx, v, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Rank != rh.Rank || !equalBits(rd.Sigma, rh.Sigma) {
		t.Errorf("rank rule: %d %v from the history, %d %v from the matrix", rh.Rank, rh.Sigma, rd.Rank, rd.Sigma)
	}
	md, err := MedianBackground(ctx, c.Y)
	if err != nil {
		t.Fatal(err)
	}
	mh, err := medianRows(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	if !equalBits(md.RawVector().Data, mh.RawVector().Data) {
		t.Error("the median of the history differs from the matrix's")
	}
	basis := mat.NewDense(n, 2, nil)
	for j := range n {
		basis.Set(j, 0, 1)
		basis.Set(j, 1, float64(j))
	}
	q, err := rowSpace(basis)
	if err != nil {
		t.Fatal(err)
	}
	fd, sd, err := FitRows(ctx, c.Y, q, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	fh, sh, err := fitRows(ctx, v, q, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sd != sh || !equalBits(fd.U.RawMatrix().Data, fh.U.RawMatrix().Data) {
		t.Errorf("row fits differ: %+v from the history, %+v from the matrix", sh, sd)
	}
	if got := toDense(v); !mat.Equal(got, c.Y) {
		t.Error("toDense of the history differs from the frames")
	}
}

// TestSubtractorLevelsSame: a Subtractor whose history holds 16-bit
// levels gives the same frames, to the bit, as one whose history is
// float64 from the start.
func TestSubtractorLevelsSame(t *testing.T) {
	c, err := Generate(SceneLightSwitch, GenerateOptions{Width: 40, Height: 30, Frames: 60, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	o := StreamOptions{History: 25, Refit: 6, Warmup: 8}
	compact, err := NewSubtractor(c.Geometry, o)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := NewSubtractor(c.Geometry, o)
	if err != nil {
		t.Fatal(err)
	}
	wide.hist.widen()
	ctx := context.Background()
	_, n := c.Y.Dims()
	for j := range n {
		col := mat.Col(nil, j, c.Y)
		a, err := compact.Push(ctx, col)
		if err != nil {
			t.Fatal(err)
		}
		b, err := wide.Push(ctx, col)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("frame %d: %d frames out, want %d", j, len(a), len(b))
		}
		for k := range a {
			if !equalBits(a[k].Mask, b[k].Mask) || !equalBits(a[k].Background, b[k].Background) || a[k].Noise != b[k].Noise || a[k].Shadow != b[k].Shadow {
				t.Fatalf("frame %d, output %d differs between the two histories", j, k)
			}
		}
	}
	if compact.hist.wide != nil || compact.Fits < 5 || compact.Fits != wide.Fits || compact.Rank != wide.Rank {
		t.Fatalf("float64 storage %v; fits %d and %d, ranks %d and %d", compact.hist.wide != nil, compact.Fits, wide.Fits, compact.Rank, wide.Rank)
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
