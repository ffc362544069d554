package video

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/video/frames"
)

// pooledF scores the masks of every frame of a generated clip against its
// truth, pooled over the frames.
func pooledF(t *testing.T, c *Clip, masks Matrix) metrics.Scores {
	t.Helper()
	s, err := c.Score(masks)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSeparateScenes: at the defaults, every generated scene is separated
// with F ≥ 0.9 (the video issue's target), the static clip has an empty
// mask and a black display, and the scenes whose background changes are
// where the low-rank model must beat the temporal median (which the test
// checks is below 0.9 there, so that the scenes do test the model).
func TestSeparateScenes(t *testing.T) {
	if testing.Short() {
		t.Skip("solves six clips")
	}
	ctx := context.Background()
	for _, sc := range Scenes {
		c, err := Generate(sc, GenerateOptions{Width: 80, Height: 60, Frames: 100, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		sep, err := Separate(ctx, c.Sequence, DefaultOptions())
		if err != nil {
			t.Fatalf("%s: %v", sc, err)
		}
		s := pooledF(t, c, sep.Masks)
		t.Logf("%s: rank %d (%s), F %.3f (precision %.3f, recall %.3f)", sc, sep.Rank, sep.RankRule, s.F, s.Precision, s.Recall)
		if sc == SceneStatic {
			if s.FalsePos != 0 {
				t.Errorf("static: %d foreground pixels, want none", s.FalsePos)
			}
			// Camera noise shows dark: black up to 3σ, so the mean
			// display value is a small fraction of white.
			disp := Excess(sep.Foreground, sep.DisplayFloor, sep.DisplayScale)
			r, n := disp.Dims()
			sum := 0.0
			for j := 0; j < n; j++ {
				for i := 0; i < r; i++ {
					sum += disp.At(i, j)
				}
			}
			if mean := sum / float64(r*n); mean > 0.01 {
				t.Errorf("static: mean display value %.3g; noise must show dark", mean)
			}
			continue
		}
		if s.F < 0.9 {
			t.Errorf("%s: F %.3f < 0.9", sc, s.F)
		}
		switch sc {
		case SceneIllumination, SceneWaving:
			med := DefaultOptions()
			med.Method = nil
			ms, err := Separate(ctx, c.Sequence, med)
			if err != nil {
				t.Fatal(err)
			}
			if f := pooledF(t, c, ms.Masks).F; f >= 0.9 {
				t.Errorf("%s: the temporal median scores F %.3f; the scene does not test the low-rank model", sc, f)
			}
		case SceneLightSwitch:
			if sep.Rank != 2 {
				t.Errorf("light switch: rank %d, want 2 (%s)", sep.Rank, sep.RankReason)
			}
		}
	}
}

// TestStaticNoiseFree: a clip without noise and without motion: no
// foreground, and a display that is black.
func TestStaticNoiseFree(t *testing.T) {
	c, err := Generate(SceneStatic, GenerateOptions{Width: 40, Height: 30, Frames: 12, Noise: -1, Gray: true})
	if err != nil {
		t.Fatal(err)
	}
	sep, err := Separate(context.Background(), c.Sequence, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if sep.MaskReport.Foreground != 0 {
		t.Errorf("foreground fraction %v, want 0", sep.MaskReport.Foreground)
	}
	disp := Excess(sep.Foreground, sep.DisplayFloor, sep.DisplayScale)
	for j := 0; j < 12; j++ {
		for _, v := range column(disp, j) {
			if to8(v) != 0 {
				t.Fatalf("display %v, want black", v)
			}
		}
	}
}

// TestMasksFixedMatchesThreshold: with a fixed threshold and no cleaning
// the decision is |R| > τ in any channel, checked against a direct loop.
func TestMasksFixedMatchesThreshold(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := frames.Geometry{Width: 9, Height: 7, Color: true}
	const nFrames = 4
	r := mat.NewDense(g.Rows(), nFrames, nil)
	for i := 0; i < g.Rows(); i++ {
		for j := 0; j < nFrames; j++ {
			r.Set(i, j, 0.3*rng.NormFloat64())
		}
	}
	const tau = 0.25
	m, rep, err := Masks(context.Background(), r, nil, nil, g, MaskOptions{Threshold: tau, Filter: -1, MinObject: -1, Smooth: -1, KeepShadows: true, Displacement: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rule != "fixed" {
		t.Errorf("rule %q", rep.Rule)
	}
	p := g.Pixels()
	for i := 0; i < p; i++ {
		for j := 0; j < nFrames; j++ {
			want := math.Abs(r.At(i, j)) > tau || math.Abs(r.At(p+i, j)) > tau || math.Abs(r.At(2*p+i, j)) > tau
			if got := m.At(i, j) > 0; got != want {
				t.Fatalf("pixel %d frame %d: %v, want %v", i, j, got, want)
			}
		}
	}
}

// TestMasksNoiseRule: Gaussian noise of σ = 0.02 with a 6×6 block of
// +0.2: the block and nothing else is foreground at the default k = 6
// (the block is 10σ, the noise exceeds 6σ with probability 2e-9 per
// pixel), and the
// reported noise level is σ within 10% (the median of 2400 half-normal
// values has a relative standard error of about 3%).
func TestMasksNoiseRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	g := frames.Geometry{Width: 60, Height: 40}
	const nFrames, sigma = 3, 0.02
	r := mat.NewDense(g.Rows(), nFrames, nil)
	block := func(i int) bool { x, y := i%g.Width, i/g.Width; return x >= 20 && x < 26 && y >= 10 && y < 16 }
	for i := 0; i < g.Rows(); i++ {
		for j := 0; j < nFrames; j++ {
			v := sigma * rng.NormFloat64()
			if block(i) {
				v += 0.2
			}
			r.Set(i, j, v)
		}
	}
	m, rep, err := Masks(context.Background(), r, nil, nil, g, MaskOptions{KeepShadows: true, Displacement: -1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.Noise-sigma) > 0.1*sigma {
		t.Errorf("noise %v, want %v", rep.Noise, sigma)
	}
	for i := 0; i < g.Pixels(); i++ {
		for j := 0; j < nFrames; j++ {
			if got := m.At(i, j) > 0; got != block(i) {
				t.Fatalf("pixel (%d, %d) frame %d: %v", i%g.Width, i/g.Width, j, got)
			}
		}
	}
}

// TestShadowSuppression: in colour, a region darkened by 0.6 in every
// channel is a shadow and is cleared; a region of another colour with
// the same darkening of the red channel is not.
func TestShadowSuppression(t *testing.T) {
	g := frames.Geometry{Width: 30, Height: 20, Color: true}
	p := g.Pixels()
	object := func(i int) bool { return i%g.Width >= 20 }
	y, bg, r := shadowFrame(g, func(x int) bool { return x < 10 }, func(x int) bool { return x >= 20 },
		func(c int, v float64) float64 { return v * []float64{0.6, 1.8, 0.2}[c] })
	m, rep, err := Masks(context.Background(), r, y, bg, g, MaskOptions{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < p; i++ {
		// The filter may change the border column of each region.
		if x := i % g.Width; x == 9 || x == 10 || x == 19 || x == 20 {
			continue
		}
		if got := m.At(i, 0) > 0; got != object(i) {
			t.Fatalf("pixel (%d, %d): foreground %v, want %v", i%g.Width, i/g.Width, got, object(i))
		}
	}
	if rep.Shadow == 0 {
		t.Error("no shadow pixels reported")
	}
}

// shadowFrame builds one colour frame of g over a textured background of
// one colour: the columns x where shadow(x) darkened by 0.6 in every
// channel, those where object(x) painted by paint(c, v) from the
// background's value v. It returns the frame, the background and the
// residual frame − background.
func shadowFrame(g frames.Geometry, shadow, object func(x int) bool, paint func(c int, v float64) float64) (y, bg, r *mat.Dense) {
	p := g.Pixels()
	y, bg = mat.NewDense(g.Rows(), 1, nil), mat.NewDense(g.Rows(), 1, nil)
	for i := 0; i < p; i++ {
		x := i % g.Width
		base := []float64{0.5, 0.4, 0.6}
		for c := 0; c < 3; c++ {
			v := base[c] * (1 + 0.1*math.Sin(float64(i)))
			bg.Set(c*p+i, 0, v)
			switch {
			case shadow(x):
				v *= 0.6
			case object(x):
				v = paint(c, v)
			}
			y.Set(c*p+i, 0, v)
		}
	}
	r = new(mat.Dense)
	r.Sub(y, bg)
	return y, bg, r
}

func TestSeparateErrors(t *testing.T) {
	c, err := Generate(SceneStatic, GenerateOptions{Width: 32, Height: 24, Frames: 10, Gray: true})
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Settings.Rank = 10
	if _, err := Separate(context.Background(), c.Sequence, o); err == nil {
		t.Error("rank 10 of 10 frames accepted")
	}
	o = DefaultOptions()
	o.Mask.Threshold = -1
	if _, err := Separate(context.Background(), c.Sequence, o); err == nil {
		t.Error("negative threshold accepted")
	}
	o = DefaultOptions()
	o.Mask.Displacement = MaxDisplacement + 1 // its shifts would not fit a word
	if _, err := Separate(context.Background(), c.Sequence, o); err == nil {
		t.Error("displacement radius above MaxDisplacement accepted")
	}
	if _, err := NewSubtractor(c.Geometry, StreamOptions{Fit: &o}); err == nil {
		t.Error("subtractor with a displacement radius above MaxDisplacement accepted")
	}
	if _, _, err := Masks(context.Background(), mat.NewDense(c.Rows(), 1, nil), nil, nil, c.Geometry, MaskOptions{KeepShadows: true}); err == nil {
		t.Error("displacement test without the frames and the background accepted")
	}
	o = DefaultOptions()
	o.Method, o.SparseForeground = nil, true
	if _, err := Separate(context.Background(), c.Sequence, o); err == nil {
		t.Error("sparse foreground of the median accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Separate(ctx, c.Sequence, DefaultOptions()); err == nil {
		t.Error("cancelled context: no error")
	}
	if _, err := c.Score(mat.NewDense(1, 1, nil)); err == nil {
		t.Error("masks of the wrong size scored")
	}
	if _, err := Generate("nosuch", GenerateOptions{}); err == nil {
		t.Error("unknown scene accepted")
	}
}

// TestPresetFill: zero settings take the preset's values, given ones stay;
// the gradient settings only for the gradient methods; rank and α only
// when not given (0 is a value of theirs).
func TestPresetFill(t *testing.T) {
	p := Presets["paper"]
	got := p.Fill(Preset{Gamma: 2}, "gd", false, false)
	want := p
	want.Name, want.Gamma, want.ResidualTol = "", 2, 0
	if got != want {
		t.Errorf("gd: %+v, want %+v", got, want)
	}
	got = p.Fill(Preset{}, "ialm", true, true)
	if want := (Preset{Mu: p.Mu, ResidualTol: p.ResidualTol}); got != want {
		t.Errorf("ialm with rank and α given: %+v, want %+v", got, want)
	}
}

// TestSeparateMethodRank: with a method that sets its own rank (IALM),
// the separation reports that rank and says that the rule's choice was
// only a hint, instead of the rule's rank and reason beside another
// rank.
func TestSeparateMethodRank(t *testing.T) {
	c, err := Generate(SceneIllumination, GenerateOptions{Width: 40, Height: 30, Frames: 30, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Method = &ialm.Method{}
	sep, err := Separate(context.Background(), c.Sequence, o)
	if err != nil {
		t.Fatal(err)
	}
	got := sep.Result.U.RawMatrix().Cols
	if sep.RankRule != "method" || sep.Rank != got || !strings.Contains(sep.RankReason, fmt.Sprintf("own rank: %d", got)) {
		t.Errorf("rank %d (%s: %q); the method's rank is %d", sep.Rank, sep.RankRule, sep.RankReason, got)
	}
	sep, err = Separate(context.Background(), c.Sequence, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if sep.RankRule == "method" {
		t.Errorf("a method with a fixed rank reports the rule %q", sep.RankRule)
	}
}

// TestOneFrame: one frame is refused with ErrTooFewFrames, by the batch
// separation (with the median as with a solver) and by a stream's job,
// instead of a mask with no foreground (a stream of one frame compared
// it with itself).
func TestOneFrame(t *testing.T) {
	c, err := Generate(SceneStatic, GenerateOptions{Width: 32, Height: 24, Frames: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	one := &frames.Sequence{Geometry: c.Geometry, Names: c.Names[:1], Y: mat.DenseCopyOf(c.Y.Slice(0, c.Rows(), 0, 1))}
	med := DefaultOptions()
	med.Method = nil
	for _, o := range []SeparateOptions{DefaultOptions(), med} {
		if _, err := Separate(context.Background(), one, o); !errors.Is(err, ErrTooFewFrames) {
			t.Errorf("method %v: %v, want ErrTooFewFrames", o.Method, err)
		}
	}
	dir := t.TempDir()
	if err := WriteFrames(dir, one.Names, one.Y, one.Geometry); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Job{Input: dir, Dir: t.TempDir(), Separate: DefaultOptions(), Stream: &StreamOptions{}})
	if !errors.Is(err, ErrTooFewFrames) {
		t.Errorf("stream: %v, want ErrTooFewFrames", err)
	}
}

// TestDisplacement: a frame that is its background shifted by one pixel
// (a camera that shook), with a red square on it: stripes on the left, a
// plain area with the square on the right. Without the displacement test
// the stripes' edges are foreground; with it only the square is, whole.
func TestDisplacement(t *testing.T) {
	g := frames.Geometry{Width: 40, Height: 30, Color: true}
	p := g.Pixels()
	background := func(x int) []float64 {
		switch {
		case x >= 20:
			return []float64{0.5, 0.5, 0.5}
		case (x/2)%2 == 0:
			return []float64{0.2, 0.5, 0.3}
		}
		return []float64{0.8, 0.4, 0.7}
	}
	object := func(x, y int) bool { return x >= 26 && x < 36 && y >= 10 && y < 20 }
	y, bg := mat.NewDense(g.Rows(), 1, nil), mat.NewDense(g.Rows(), 1, nil)
	for i := 0; i < p; i++ {
		x, row := i%g.Width, i/g.Width
		for c := 0; c < 3; c++ {
			bg.Set(c*p+i, 0, background(x)[c])
			v := background(x + 1)[c]
			if object(x, row) {
				v = []float64{0.95, 0.05, 0.05}[c]
			}
			y.Set(c*p+i, 0, v)
		}
	}
	var r mat.Dense
	r.Sub(y, bg)
	for _, radius := range []int{-1, 0, 2} {
		// Without the filter, which would remove lines one pixel wide.
		o := MaskOptions{Threshold: 0.05, KeepShadows: true, Filter: -1, Displacement: radius}
		m, rep, err := Masks(context.Background(), &r, y, bg, g, o)
		if err != nil {
			t.Fatal(err)
		}
		outside, missed := 0, 0
		for i := 0; i < p; i++ {
			x, row := i%g.Width, i/g.Width
			switch on := m.At(i, 0) > 0; {
			case object(x, row) && !on:
				missed++
			case on && !object(x, row):
				outside++
			}
		}
		if missed > 0 {
			t.Errorf("displacement %d: %d pixels of the square missed", radius, missed)
		}
		if radius < 0 {
			if outside == 0 || rep.Displaced != 0 {
				t.Errorf("displacement off: %d pixels outside the square, %d displaced; want some and none", outside, rep.Displaced)
			}
			continue
		}
		if outside > 0 || rep.Displaced == 0 {
			t.Errorf("displacement %d: %d pixels outside the square, %d displaced; want none and some", radius, outside, rep.Displaced)
		}
	}
}

// TestDisplacementTexture: a gray square of one value on a background of
// random values. Each of its pixels matches some background pixel within
// two pixels (each neighbour does with probability 0.1, and there are 24),
// but no single shift matches more than a few of them, so the square is
// an object and stays whole.
func TestDisplacementTexture(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	g := frames.Geometry{Width: 40, Height: 30}
	p := g.Pixels()
	object := func(i int) bool { x, y := i%g.Width, i/g.Width; return x >= 14 && x < 26 && y >= 9 && y < 21 }
	const tau = 0.05
	y, bg := mat.NewDense(p, 1, nil), mat.NewDense(p, 1, nil)
	for i := 0; i < p; i++ {
		v := rng.Float64()
		bg.Set(i, 0, v)
		if object(i) {
			v = 0.5
		}
		y.Set(i, 0, v)
	}
	var r mat.Dense
	r.Sub(y, bg)
	m, rep, err := Masks(context.Background(), &r, y, bg, g, MaskOptions{Threshold: tau, KeepShadows: true, Filter: -1, Smooth: -1, MinObject: -1, Displacement: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < p; i++ {
		want := object(i) && math.Abs(0.5-bg.At(i, 0)) > tau
		if got := m.At(i, 0) > 0; got != want {
			t.Fatalf("pixel (%d, %d): foreground %v, want %v (%d displaced)", i%g.Width, i/g.Width, got, want, rep.Displaced)
		}
	}
}

// TestShadowBesideObject: a cast shadow that touches the object casting
// it. The shadow's column next to the object has three of its nine 3×3
// neighbours on the object; their median ratio is the shadow's, so it is
// cleared like the rest of the shadow, and the object stays whole.
func TestShadowBesideObject(t *testing.T) {
	g := frames.Geometry{Width: 30, Height: 20, Color: true}
	p := g.Pixels()
	object := func(x int) bool { return x >= 18 && x < 26 }
	y, bg, r := shadowFrame(g, func(x int) bool { return x >= 8 && x < 18 }, object,
		func(c int, _ float64) float64 { return []float64{0.9, 0.9, 0.1}[c] })
	m, _, err := Masks(context.Background(), r, y, bg, g, MaskOptions{Threshold: 0.05, Filter: -1, MinObject: -1, Smooth: -1, Displacement: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < p; i++ {
		x, row := i%g.Width, i/g.Width
		if got := m.At(i, 0) > 0; got != object(x) {
			t.Fatalf("pixel (%d, %d): foreground %v, want %v", x, row, got, object(x))
		}
	}
}
