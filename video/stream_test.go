package video

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rpca-gd/rpca/video/frames"
	"gonum.org/v1/gonum/mat"
)

// streamMasks feeds the clip's frames to a Subtractor one by one and
// returns the masks as a pixels × frames matrix, scored only from frame
// skip on (the warm-up's frames are left empty in the score's copy).
func streamMasks(t *testing.T, c *Clip, o StreamOptions) (*mat.Dense, *Subtractor) {
	t.Helper()
	s, err := NewSubtractor(c.Geometry, o)
	if err != nil {
		t.Fatal(err)
	}
	_, n := c.Y.Dims()
	masks := mat.NewDense(c.Pixels(), n, nil)
	for j := range n {
		f, err := s.Apply(context.Background(), mat.Col(nil, j, c.Y))
		if err != nil {
			t.Fatal(err)
		}
		masks.SetCol(j, f.Mask)
	}
	return masks, s
}

// TestSubtractorScenes: frame by frame, with only the frames before each
// one known, the stream's masks score, over the frames after the first
// fit, F ≥ 0.99 on the static scene and ≥ 0.85 on every other (measured
// 2026-11-28, with tracking: 0.876–1.000; 0.84–1.00 without it, the
// floor was then 0.8; the batch separation, which sees the whole clip
// and so each frame's future, scores 0.91–1.00), and beat the per-pixel
// median (batch) by 0.1 under the illumination ramp and the swaying
// texture (measured 0.94 and 0.89 against 0.54 and 0.52), where a
// low-rank background is needed.
func TestSubtractorScenes(t *testing.T) {
	if testing.Short() {
		t.Skip("12 separations")
	}
	for _, sc := range Scenes {
		c, err := Generate(sc, GenerateOptions{Width: 64, Height: 48, Frames: 120, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		masks, s := streamMasks(t, c, StreamOptions{History: 60, Refit: 20, Warmup: 20})
		after := func(m Matrix) float64 {
			sub := &Clip{Sequence: &frames.Sequence{Geometry: c.Geometry}, Truth: c.Truth[20:]}
			rows, cols := m.Dims()
			d := mat.NewDense(rows, cols, nil)
			for i := range rows {
				for j := range cols {
					d.Set(i, j, m.At(i, j))
				}
			}
			sc, err := sub.Score(d.Slice(0, rows, 20, cols))
			if err != nil {
				t.Fatal(err)
			}
			return sc.F
		}
		batch, err := Separate(context.Background(), c.Sequence, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		med := DefaultOptions()
		med.Method = nil
		median, err := Separate(context.Background(), c.Sequence, med)
		if err != nil {
			t.Fatal(err)
		}
		fs, fb, fm := after(masks), after(batch.Masks), after(median.Masks)
		t.Logf("%-12s stream F %.3f (rank %d, %d fits, %.2fs), batch %.3f, median %.3f", sc, fs, s.Rank, s.Fits, s.FitSeconds, fb, fm)
		switch {
		case sc == SceneStatic && fs < 0.99:
			t.Errorf("%s: stream F %.3f", sc, fs)
		case fs < 0.85:
			t.Errorf("%s: stream F %.3f, below 0.85", sc, fs)
		case (sc == SceneIllumination || sc == SceneWaving) && !(fs > fm+0.1):
			t.Errorf("%s: stream F %.3f, median %.3f; want the stream well ahead", sc, fs, fm)
		}
	}
}

// TestSubtractorInput: bad options and frames are errors; a cancelled
// context stops Apply.
func TestSubtractorInput(t *testing.T) {
	g := frames.Geometry{Width: 8, Height: 6}
	for name, o := range map[string]StreamOptions{
		"history 1":      {History: 1},
		"warm-up 1":      {Warmup: 1},
		"warm-up > hist": {History: 10, Warmup: 11},
		"refit negative": {Refit: -1},
		"track above 1":  {Track: 1.5},
		"track infinite": {Track: math.Inf(1)},
		"track NaN":      {Track: math.NaN()},
	} {
		if _, err := NewSubtractor(g, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewSubtractor(frames.Geometry{}, StreamOptions{}); err == nil {
		t.Error("empty geometry accepted")
	}
	med := DefaultOptions()
	med.Method = nil
	for o, want := range map[*StreamOptions]float64{
		{}:                    DefaultTrack,
		{Track: -1}:           0,
		{Track: 0.25}:         0.25,
		{Track: 1, Fit: &med}: 0, // the median is not tracked
	} {
		s, err := NewSubtractor(g, *o)
		if err != nil {
			t.Fatalf("Track %g: %v", o.Track, err)
		}
		if s.track != want {
			t.Errorf("Track %g (median %v): tracking %v, want %g", o.Track, o.Fit != nil, s.track, want)
		}
	}
	s, err := NewSubtractor(g, StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), make([]float64, 47)); !errors.Is(err, ErrFrameSize) {
		t.Errorf("short frame: %v", err)
	}
	nan := make([]float64, 48)
	nan[3] = 0 / zero()
	if _, err := s.Apply(context.Background(), nan); err == nil {
		t.Error("NaN accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Apply(ctx, make([]float64, 48)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func zero() float64 { return 0 }

// TestSubtractorPush: Push holds the warm-up frames back and returns
// them together, then one frame a call, and from the last warm-up frame
// on its frames are Apply's, bit for bit (the same fits, the same
// projections). The held frames are decided against the fit to them, not
// the median of the frames before them: under an illumination ramp their
// masks are better (F 0.76 against 0.53 for Apply's, measured). Flush
// decides held frames when the input ends inside the warm-up, against
// their median when they are too few for the model (5 frames here).
func TestSubtractorPush(t *testing.T) {
	c, err := Generate(SceneIllumination, GenerateOptions{Width: 40, Height: 30, Frames: 40, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, track := range []float64{-1, 0, 0.2} { // off, the default, a part
		testPush(t, c, StreamOptions{History: 30, Refit: 5, Warmup: 10, Track: track})
	}
}

func testPush(t *testing.T, c *Clip, o StreamOptions) {
	push, err := NewSubtractor(c.Geometry, o)
	if err != nil {
		t.Fatal(err)
	}
	apply, err := NewSubtractor(c.Geometry, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rows, n := c.Y.Dims()
	pushed := mat.NewDense(c.Pixels(), n, nil)
	applied := mat.NewDense(c.Pixels(), n, nil)
	got := 0
	for j := range n {
		col := mat.Col(nil, j, c.Y)
		fs, err := push.Push(ctx, col)
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		switch {
		case j < 9:
			want = 0
		case j == 9:
			want = 10
		}
		if len(fs) != want {
			t.Fatalf("frame %d: Push returned %d frames, want %d", j, len(fs), want)
		}
		fa, err := apply.Apply(ctx, col)
		if err != nil {
			t.Fatal(err)
		}
		applied.SetCol(j, fa.Mask)
		for _, f := range fs {
			pushed.SetCol(got, f.Mask)
			if got >= 9 && got == j && !slices.Equal(f.Background, fa.Background) {
				t.Fatalf("track %g, frame %d: Push's background differs from Apply's after the warm-up", o.Track, j)
			}
			got++
		}
	}
	if got != n || rows != c.Geometry.Rows() {
		t.Fatalf("%d frames returned for %d", got, n)
	}
	warm := func(m *mat.Dense) float64 {
		sub := &Clip{Sequence: &frames.Sequence{Geometry: c.Geometry}, Truth: c.Truth[:9]}
		sc, err := sub.Score(m.Slice(0, c.Pixels(), 0, 9))
		if err != nil {
			t.Fatal(err)
		}
		return sc.F
	}
	fp, fa := warm(pushed), warm(applied)
	t.Logf("warm-up frames: F %.3f held back, %.3f against the running median", fp, fa)
	if !(fp > fa+0.1) {
		t.Errorf("warm-up frames: F %.3f held back, %.3f against the running median; want the held frames well ahead", fp, fa)
	}

	short, err := NewSubtractor(c.Geometry, o)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 5 {
		if fs, err := short.Push(ctx, mat.Col(nil, j, c.Y)); err != nil || len(fs) != 0 {
			t.Fatalf("frame %d of a short input: %d frames, %v", j, len(fs), err)
		}
	}
	fs, err := short.Flush(ctx)
	if err != nil || len(fs) != 5 {
		t.Fatalf("Flush: %d frames, %v; want the 5 held", len(fs), err)
	}
	if fs, err := short.Push(ctx, mat.Col(nil, 5, c.Y)); err != nil || len(fs) != 1 {
		t.Fatalf("after Flush: %d frames, %v; want one a call", len(fs), err)
	}
}

// TestSubtractorHistoryIntact: the fits read the history in place (the
// ring, or while it fills a view of its first columns, is handed to the
// solver without a copy), so they must leave it as it was: after 90
// frames and several fits through a ring of 30, its columns are still the
// last 30 frames, bit for bit, and after 25 frames its first 25.
func TestSubtractorHistoryIntact(t *testing.T) {
	c, err := Generate(SceneIllumination, GenerateOptions{Width: 40, Height: 30, Frames: 90, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, s := streamMasks(t, c, StreamOptions{History: 30, Refit: 7, Warmup: 10})
	if s.Fits < 8 {
		t.Fatalf("%d fits; want the ring refitted many times", s.Fits)
	}
	checkRing := func(s *Subtractor, from, to int) {
		t.Helper()
		for j := from; j < to; j++ {
			want := mat.Col(nil, j, c.Y)
			got := s.hist.col(nil, j%30)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("history column of frame %d, pixel %d: %v, want %v", j, i, got[i], want[i])
				}
			}
		}
	}
	checkRing(s, 60, 90)

	// While the ring fills, the fits (at 10, 17 and 24 frames) see a view
	// of its first columns, which they must not write either.
	s, err = NewSubtractor(c.Geometry, StreamOptions{History: 30, Refit: 7, Warmup: 10})
	if err != nil {
		t.Fatal(err)
	}
	for j := range 25 {
		if _, err := s.Apply(context.Background(), mat.Col(nil, j, c.Y)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Fits != 3 {
		t.Fatalf("%d fits while the ring filled; want 3", s.Fits)
	}
	checkRing(s, 0, 25)
}

// BenchmarkSubtractorApply: the cost of one frame of 320×240 colour
// between two fits (the projection and the decision), after a warm-up
// and a first fit that are not timed, with the model fixed between fits
// (track=0) and tracked (the default: the step after each frame too).
func BenchmarkSubtractorApply(b *testing.B) {
	c, err := Generate(SceneStatic, GenerateOptions{Width: 320, Height: 240, Frames: 40, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	cols := make([][]float64, 40)
	for j := range cols {
		cols[j] = mat.Col(nil, j, c.Y)
	}
	for _, track := range []float64{-1, DefaultTrack} {
		b.Run(fmt.Sprintf("track=%g", max(track, 0)), func(b *testing.B) {
			s, err := NewSubtractor(c.Geometry, StreamOptions{History: 20, Warmup: 20, Refit: 1 << 30, Track: track})
			if err != nil {
				b.Fatal(err)
			}
			for j := range 20 {
				if _, err := s.Apply(context.Background(), cols[j]); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				if _, err := s.Apply(context.Background(), cols[20+k%20]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStreamWindowBackgrounds: a stream window decides the frames between
// two fits at once, and keeps its backgrounds as each frame's basis and
// coefficients (or its column, for a frame compared with the median),
// forming them again when they are gathered or read entry by entry; its
// masks and backgrounds must be those of Push, frame after frame, bit for
// bit (the backgrounds the window holds as columns, in float32, rounded
// to float32), and the window's residual Y − M too, with and without
// tracking.
func TestStreamWindowBackgrounds(t *testing.T) {
	c, err := Generate(SceneIllumination, GenerateOptions{Width: 40, Height: 30, Frames: 60, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, track := range []float64{-1, 0} { // off, the default
		testWindowBackgrounds(t, c, StreamOptions{History: 30, Refit: 7, Warmup: 10, Track: track})
	}
}

// testWindowBackgrounds is TestStreamWindowBackgrounds with the options o:
// with tracking, the held frames' backgrounds must survive the steps
// that follow them (the basis they hold is copied before a step).
func testWindowBackgrounds(t *testing.T, c *Clip, o StreamOptions) {
	for _, n := range []int{60, 2} { // two frames: decided by Flush (one is refused)
		seq := &frames.Sequence{Geometry: c.Geometry, Names: c.Names[:n], Y: mat.DenseCopyOf(c.Y.Slice(0, c.Rows(), 0, n))}
		s, err := NewSubtractor(c.Geometry, o)
		if err != nil {
			t.Fatal(err)
		}
		sep, err := s.separate(context.Background(), seq, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := sep.Background.(*projected); !ok {
			t.Fatalf("the window's background is a %T", sep.Background)
		}
		ref, err := NewSubtractor(c.Geometry, o)
		if err != nil {
			t.Fatal(err)
		}
		var nFrames []*Frame
		for j := range n {
			fs, err := ref.Push(context.Background(), mat.Col(nil, j, seq.Y))
			if err != nil {
				t.Fatal(err)
			}
			nFrames = append(nFrames, fs...)
		}
		fs, err := ref.Flush(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		nFrames = append(nFrames, fs...)
		if len(nFrames) != n {
			t.Fatalf("%d frames from Push and Flush, want %d", len(nFrames), n)
		}
		for j, f := range nFrames { // the window decides its frames between two fits at once
			for i, v := range sep.Masks.Frame(j) {
				if float64(v) != f.Mask[i] {
					t.Fatalf("%d frames, frame %d, pixel %d: mask %d, want %v", n, j, i, v, f.Mask[i])
				}
			}
		}
		cols := newColumns(min(n, 16), c.Rows())
		res := newColumns(min(n, 16), c.Rows())
		for j0 := 0; j0 < n; j0 += len(cols) {
			nb := min(len(cols), n-j0)
			gatherColumns(cols[:nb], sep.Background, j0)
			gatherColumns(res[:nb], sep.Foreground, j0)
			for k := range nb {
				want := slices.Clone(nFrames[j0+k].Background)
				if nFrames[j0+k].basisT == nil { // held in float32 (projected)
					for i, v := range want {
						want[i] = float64(float32(v))
					}
				}
				for i, v := range cols[k] {
					if v != want[i] || sep.Background.At(i, j0+k) != want[i] || res[k][i] != seq.Y.At(i, j0+k)-want[i] {
						t.Fatalf("%d frames, frame %d, entry %d: gathered %v, At %v, residual %v; want %v and %v", n, j0+k, i, v, sep.Background.At(i, j0+k), res[k][i], want[i], seq.Y.At(i, j0+k)-want[i])
					}
				}
			}
		}
	}
}

// TestHeldFramesAtOnce: the frames Push holds back are decided at once
// against the first fit, as decide would decide each of them after it.
func TestHeldFramesAtOnce(t *testing.T) {
	c, err := Generate(SceneSmallSlow, GenerateOptions{Width: 40, Height: 30, Frames: 12, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSubtractor(c.Geometry, StreamOptions{History: 20, Warmup: 12})
	if err != nil {
		t.Fatal(err)
	}
	var held []*Frame
	for j := range 12 {
		fs, err := s.Push(context.Background(), mat.Col(nil, j, c.Y))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, fs...)
	}
	if len(held) != 12 || s.Fits != 1 {
		t.Fatalf("%d frames after %d fits; want the 12 held frames after the first fit", len(held), s.Fits)
	}
	for k, f := range held {
		want, err := s.decide(context.Background(), mat.Col(nil, k, c.Y))
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Mask {
			if f.Mask[i] != want.Mask[i] || f.Background[i] != want.Background[i] {
				t.Fatalf("held frame %d, entry %d: mask %v, background %v; want %v, %v", k, i, f.Mask[i], f.Background[i], want.Mask[i], want.Background[i])
			}
		}
	}
}

// TestDecideOneIsMasks: the stream's decision of one frame with reused
// buffers gives what Masks gives for that frame as a one-column matrix,
// to the bit, under the default options and under each option that
// changes the path (no shadow test, a fixed threshold),
// with the buffers reused from one frame to the next.
func TestDecideOneIsMasks(t *testing.T) {
	c, err := Generate(SceneShadows, GenerateOptions{Width: 48, Height: 36, Frames: 10, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	med, err := MedianBackground(context.Background(), c.Y)
	if err != nil {
		t.Fatal(err)
	}
	bg := med.RawVector().Data
	ctx := context.Background()
	for _, o := range []MaskOptions{{}, {KeepShadows: true}, {KeepShadows: true, Displacement: -1}, {Displacement: 2}, {Threshold: 0.05}} {
		o = o.withDefaults()
		w, res := newFrameWork(c.Geometry), make([]float64, len(bg))
		_, n := c.Y.Dims()
		var shadows, fg int
		for j := range n {
			y := mat.Col(nil, j, c.Y)
			yd, bd := mat.NewDense(len(y), 1, y), mat.NewDense(len(bg), 1, bg)
			var r mat.Dense
			r.Sub(yd, bd)
			want, rep, err := Masks(ctx, &r, yd, bd, c.Geometry, o)
			if err != nil {
				t.Fatal(err)
			}
			d := o.decideOne(w, res, y, bg, nil, c.Geometry)
			got, noise, shadow := d.mask, d.noise, d.shadow
			for i, v := range got {
				if v != (want.Data[i] == 1) {
					t.Fatalf("%+v, frame %d, pixel %d: %v, Masks says %d", o, j, i, v, want.Data[i])
				}
				if v {
					fg++
				}
			}
			if noise != rep.Noise || shadow != rep.Shadow || d.displaced != rep.Displaced {
				t.Fatalf("%+v, frame %d: noise %v, %d shadows, %d displaced; Masks %v, %d, %d", o, j, noise, shadow, d.displaced, rep.Noise, rep.Shadow, rep.Displaced)
			}
			shadows += shadow
		}
		if fg == 0 || (!o.KeepShadows && o.Threshold == 0 && shadows == 0) {
			t.Errorf("%+v: %d foreground pixels and %d shadows over the clip; the comparison shows nothing", o, fg, shadows)
		}
	}
}

// TestHistoryNoise: the stream's per-pixel noise levels against a slow
// reference (each entry of the background by At, the low quartile by a
// sort), for a low-rank background, a dense one and the median, on one
// worker and on three.
func TestHistoryNoise(t *testing.T) {
	c, err := Generate(SceneWaving, GenerateOptions{Width: 40, Height: 30, Frames: 24, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	rows, n := c.Y.Dims()
	rng := rand.New(rand.NewPCG(1, 2))
	u, q := mat.NewDense(rows, 2, nil), mat.NewDense(n, 2, nil)
	for i := range rows {
		u.Set(i, 0, rng.Float64())
		u.Set(i, 1, 0.1*rng.NormFloat64())
	}
	for j := range n {
		q.Set(j, 0, 1)
		q.Set(j, 1, rng.NormFloat64())
	}
	med, err := MedianBackground(context.Background(), c.Y)
	if err != nil {
		t.Fatal(err)
	}
	dense := mat.NewDense(rows, n, nil)
	dense.Mul(u, q.T())
	for _, bg := range []Matrix{LowRank{U: u, Q: q}, dense, medianMatrix{med.RawVector().Data, n}} {
		want := make([]float64, rows)
		abs := make([]float64, n)
		for i := range rows {
			for j := range n {
				abs[j] = math.Abs(c.Y.At(i, j) - bg.At(i, j))
			}
			slices.Sort(abs)
			want[i] = abs[(n+3)/4-1] / 0.3186
		}
		for _, workers := range []int{1, 3} {
			got, err := historyNoise(context.Background(), denseRows{c.Y}, func(dst []float64, i int) []float64 { return matrixRow(dst, bg, i) }, workers)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-12*max(want[i], 1e-3) {
					t.Fatalf("%T, %d workers, row %d: %v, want %v", bg, workers, i, got[i], want[i])
				}
			}
		}
	}
}

// medianMatrix is a column repeated n times, through At only.
type medianMatrix struct {
	col []float64
	n   int
}

func (m medianMatrix) Dims() (int, int)    { return len(m.col), m.n }
func (m medianMatrix) At(i, _ int) float64 { return m.col[i] }
func (m medianMatrix) T() mat.Matrix       { return mat.Transpose{Matrix: m} }

// TestSubtractorPixelNoise: a stream with the per-pixel noise level
// (which marked nothing before it was taken from the history, and was
// then refused) keeps more of the swaying texture out of the masks: on
// the waving scene, F over the frames after the first fit is above the
// stream's without it by 0.02 (measured 2026-11-27: 0.854 against
// 0.806), without tracking. (With tracking, the default since
// 2026-11-28, the stream scores 0.954 there without the per-pixel level
// and 0.916 with it: the option stays off by default.)
func TestSubtractorPixelNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("two streams")
	}
	c, err := Generate(SceneWaving, GenerateOptions{Width: 80, Height: 60, Frames: 100, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	score := func(pixel bool) (float64, *Subtractor) {
		fit := DefaultOptions()
		fit.Mask.PixelNoise = pixel
		masks, s := streamMasks(t, c, StreamOptions{Fit: &fit, Track: -1})
		from := s.warmup
		sub := &Clip{Sequence: &frames.Sequence{Geometry: c.Geometry}, Truth: c.Truth[from:]}
		sc, err := sub.Score(masks.Slice(0, c.Pixels(), from, 100))
		if err != nil {
			t.Fatal(err)
		}
		return sc.F, s
	}
	plain, _ := score(false)
	f, s := score(true)
	t.Logf("waving, stream: F %.3f with the per-pixel noise, %.3f without", f, plain)
	if !(f >= plain+0.02) {
		t.Errorf("F %.3f with the per-pixel noise, %.3f without", f, plain)
	}
	if len(s.pixNoise) != c.Rows() {
		t.Fatalf("%d levels for %d rows", len(s.pixNoise), c.Rows())
	}
}
