package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/video"
	"github.com/rpca-gd/rpca/video/frames"
)

// clip is a synthetic video: a static textured background and a bright
// square moving over it.
type clip struct {
	w, h, frames int
	bg           []float64 // true background, row-major, 8-bit levels/255
	side         int       // square side
	names        []string
}

// squareAt reports whether pixel (x, y) is inside the square in frame k.
func (c *clip) squareAt(k, x, y int) bool {
	x0 := (3 * k) % (c.w - c.side)
	y0 := (2*k + 5) % (c.h - c.side)
	return x >= x0 && x < x0+c.side && y >= y0 && y < y0+c.side
}

// newClip writes the clip's frames as PNGs into a new temporary directory.
func newClip(t *testing.T) (*clip, string) {
	t.Helper()
	c := &clip{w: 48, h: 36, frames: 30, side: 7}
	rng := rand.New(rand.NewPCG(3, 4))
	c.bg = make([]float64, c.w*c.h)
	for y := 0; y < c.h; y++ {
		for x := 0; x < c.w; x++ {
			v := 0.35 + 0.15*math.Sin(float64(x)/3)*math.Cos(float64(y)/4) + 0.05*rng.Float64()
			c.bg[y*c.w+x] = math.Round(v*255) / 255
		}
	}
	dir := t.TempDir()
	for k := 0; k < c.frames; k++ {
		img := image.NewGray(image.Rect(0, 0, c.w, c.h))
		for y := 0; y < c.h; y++ {
			for x := 0; x < c.w; x++ {
				v := uint8(math.Round(c.bg[y*c.w+x] * 255))
				if c.squareAt(k, x, y) {
					v = 245
				}
				img.SetGray(x, y, color.Gray{Y: v})
			}
		}
		name := fmt.Sprintf("shot_%03d.png", k+1)
		c.names = append(c.names, name)
		writeTestPNG(t, filepath.Join(dir, name), img)
	}
	return c, dir
}

func writeTestPNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	testfile.WriteWith(t, path, func(w io.Writer) error { return png.Encode(w, img) })
}

// runVideoCmd runs "rpca video args..." with a fake environment.
func runVideoCmd(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	code = run(ctx, e, append([]string{"video"}, args...))
	return code, out.String(), errb.String()
}

func readSummary(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	return m
}

// readGray reads a grayscale PNG as levels/255.
func readGray(t *testing.T, path string) (vals []float64, w, h int) {
	t.Helper()
	img, err := frames.DecodeFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			vals = append(vals, float64(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)/255)
		}
	}
	return vals, b.Dx(), b.Dy()
}

// writeTruth writes the true mask of frame k as a PNG and returns its path.
func (c *clip) writeTruth(t *testing.T, k int) string {
	t.Helper()
	tm := image.NewGray(image.Rect(0, 0, c.w, c.h))
	for y := 0; y < c.h; y++ {
		for x := 0; x < c.w; x++ {
			if c.squareAt(k, x, y) {
				tm.SetGray(x, y, color.Gray{Y: 255})
			}
		}
	}
	path := filepath.Join(t.TempDir(), "gt.png")
	writeTestPNG(t, path, tm)
	return path
}

func TestVideoEndToEnd(t *testing.T) {
	c, in := newClip(t)
	// A ground-truth mask for one frame, to check the scoring.
	const truthK = 11
	truth := c.writeTruth(t, truthK)

	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", out, "--quiet",
		"--truth", truth, "--truth-frame", c.names[truthK])
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "scaledgd on 30 frames of 48×36") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("summary line %q", stdout)
	}
	for _, f := range []string{"montage.png", video.PreviewName(nil), "summary.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	for _, sub := range []string{"background", "foreground", "mask"} {
		ents, err := os.ReadDir(filepath.Join(out, sub))
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != c.frames {
			t.Errorf("%s: %d files, want %d", sub, len(ents), c.frames)
		}
		for _, name := range c.names {
			if _, err := os.Stat(filepath.Join(out, sub, name)); err != nil {
				t.Errorf("%s: %v", sub, err)
			}
		}
	}

	// Background: every frame's background must match the true one. If
	// the square were averaged in rather than separated (the plain
	// temporal mean), pixels on its path would be off by up to
	// (0.96 − 0.2)·(frames covered)/30 ≈ 0.05–0.08; 8-bit rounding of the
	// output adds at most 0.002. So a maximum error of 0.03 means the
	// square was removed, and the mean error must be at PNG-rounding level.
	meanBg := make([]float64, len(c.bg))
	for k := 0; k < c.frames; k++ {
		for i := range meanBg {
			v := c.bg[i]
			if c.squareAt(k, i%c.w, i/c.w) {
				v = 245.0 / 255
			}
			meanBg[i] += v / float64(c.frames)
		}
	}
	if e := maxAbsDiff(meanBg, c.bg); e <= 0.03 {
		t.Fatalf("test clip too easy: the temporal mean is within %.3f of the background", e)
	}
	var sumErr float64
	for _, name := range c.names {
		got, w, h := readGray(t, filepath.Join(out, "background", name))
		if w != c.w || h != c.h {
			t.Fatalf("background %s is %d×%d", name, w, h)
		}
		if e := maxAbsDiff(got, c.bg); e > 0.03 {
			t.Errorf("background %s: max error %.4f > 0.03", name, e)
		}
		for i := range got {
			sumErr += math.Abs(got[i] - c.bg[i])
		}
	}
	if mean := sumErr / float64(c.frames*len(c.bg)); mean > 0.005 {
		t.Errorf("background mean abs error %.4f > 0.005", mean)
	}

	// Mask against the known square over all frames.
	var pred, want []bool
	for k, name := range c.names {
		m, _, _ := readGray(t, filepath.Join(out, "mask", name))
		for i, v := range m {
			pred = append(pred, v > 0.5)
			want = append(want, c.squareAt(k, i%c.w, i/c.w))
		}
	}
	sc, err := metrics.Detect(pred, want)
	if err != nil {
		t.Fatal(err)
	}
	if sc.F < 0.95 {
		t.Errorf("mask F-measure %.3f < 0.95 (precision %.3f, recall %.3f)", sc.F, sc.Precision, sc.Recall)
	}

	sum := readSummary(t, out)
	if sum["rank"] != 1.0 || sum["rank_rule"] != "auto" || sum["frames"] != 30.0 || sum["width"] != 48.0 {
		t.Errorf("summary: rank %v (%v), frames %v, width %v", sum["rank"], sum["rank_rule"], sum["frames"], sum["width"])
	}
	if !strings.Contains(fmt.Sprint(sum["rank_reason"]), "σ1/σ2") {
		t.Errorf("rank_reason %q", sum["rank_reason"])
	}
	tr, _ := sum["truth"].(map[string]any)
	if tr == nil || tr["frame"] != c.names[truthK] || tr["f_measure"].(float64) < 0.95 {
		t.Errorf("truth score %v", sum["truth"])
	}
	if sum["stop_reason"] != "factor-tol" {
		t.Errorf("stop reason %v, want factor-tol (real convergence)", sum["stop_reason"])
	}

	// Existing output: refused without --force and left alone.
	code, _, stderr = runVideoCmd(t, context.Background(), "--in", in, "--out", out, "--quiet", "--method", "median")
	if code == 0 || !strings.Contains(stderr, "--force") {
		t.Errorf("second run without --force: exit %d, %q", code, stderr)
	}
	if readSummary(t, out)["method"] != "scaledgd" {
		t.Error("existing output was modified")
	}
	code, _, stderr = runVideoCmd(t, context.Background(), "--in", in, "--out", out, "--quiet", "--method", "median", "--force", "--json")
	if code != 0 {
		t.Fatalf("--force: exit %d, %q", code, stderr)
	}
	if readSummary(t, out)["method"] != "median" {
		t.Error("--force did not replace the output")
	}
}

func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

func TestVideoPresetPaper(t *testing.T) {
	_, in := newClip(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", out, "--preset", "paper", "--json")
	if code != 0 {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatalf("--json output: %v", err)
	}
	sum := readSummary(t, out)
	params, _ := sum["params"].(map[string]any)
	for _, c := range []struct {
		got  any
		want float64
		what string
	}{
		{sum["rank"], 10, "rank"},
		{sum["alpha"], 0.2, "alpha"},
		{sum["factor_tol"], 4e-4, "factor_tol"},
		{params["gamma"], 1, "gamma"},
		{params["step_const"], 0.5, "step constant"},
		{params["mu"], 10, "mu"},
		{js["rank"], 10, "rank in --json"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if sum["preset"] != "paper" || sum["rank_rule"] != "preset" {
		t.Errorf("preset %v, rank rule %v", sum["preset"], sum["rank_rule"])
	}

	// A flag given on the command line overrides the preset.
	out2 := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", out2, "--preset", "paper", "--rank", "2", "--quiet"); code != 0 {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	if s := readSummary(t, out2); s["rank"] != 2.0 || s["rank_rule"] != "flag" || s["factor_tol"] != 4e-4 {
		t.Errorf("--preset paper --rank 2: rank %v (%v), factor_tol %v", s["rank"], s["rank_rule"], s["factor_tol"])
	}
}

// TestVideoAutoRank writes a clip whose background has rank 3 (three
// textures with independently varying brightness) and a faint moving
// square, and checks that the default run picks rank 3.
func TestVideoAutoRank(t *testing.T) {
	const w, h, n, side = 40, 30, 36, 4
	rng := rand.New(rand.NewPCG(5, 6))
	tex := make([][]float64, 3)
	for k := range tex {
		tex[k] = make([]float64, w*h)
		for i := range tex[k] {
			tex[k][i] = rng.Float64()
		}
	}
	dir := t.TempDir()
	for j := 0; j < n; j++ {
		a := []float64{0.3, 0.2 * math.Cos(2*math.Pi*float64(j)/n), 0.2 * math.Sin(2*math.Pi*float64(j)/n)}
		img := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				v := 0.15 + a[0]*tex[0][i] + a[1]*(tex[1][i]-0.5) + a[2]*(tex[2][i]-0.5)
				if x0, y0 := j%(w-side), j%(h-side); x >= x0 && x < x0+side && y >= y0 && y < y0+side {
					v += 0.2
				}
				img.SetGray(x, y, color.Gray{Y: uint8(math.Round(255 * min(max(v, 0), 1)))})
			}
		}
		writeTestPNG(t, filepath.Join(dir, fmt.Sprintf("f%02d.png", j)), img)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runVideoCmd(t, context.Background(), "--in", dir, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	sum := readSummary(t, out)
	if sum["rank"] != 3.0 || sum["rank_rule"] != "auto" {
		t.Errorf("rank %v (%v), want 3 (auto): %v", sum["rank"], sum["rank_rule"], sum["rank_reason"])
	}
	// --max-rank caps the choice; --rank auto is the default spelled out,
	// and 0 its older spelling.
	out2 := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runVideoCmd(t, context.Background(), "--in", dir, "--out", out2, "--quiet", "--max-rank", "2", "--rank", "auto"); code != 0 {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	if r := readSummary(t, out2)["rank"]; r == 3.0 {
		t.Errorf("--max-rank 2 chose rank %v", r)
	}
	out2 = filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runVideoCmd(t, context.Background(), "--in", dir, "--out", out2, "--quiet", "--max-rank", "2", "--rank", "0"); code != 0 {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	if r := readSummary(t, out2)["rank"]; r == 3.0 {
		t.Errorf("--max-rank 2 chose rank %v", r)
	}
}

func TestVideoErrors(t *testing.T) {
	_, in := newClip(t)
	mixed := t.TempDir()
	for k, size := range []int{16, 16, 12, 16} {
		writeTestPNG(t, filepath.Join(mixed, fmt.Sprintf("m%d.png", k)), image.NewGray(image.Rect(0, 0, size, size)))
	}
	bad := t.TempDir()
	writeTestPNG(t, filepath.Join(bad, "a.png"), image.NewGray(image.Rect(0, 0, 8, 8)))
	if err := os.WriteFile(filepath.Join(bad, "b.png"), []byte("not a png"), 0o644); err != nil {
		t.Fatal(err)
	}
	movie := filepath.Join(t.TempDir(), "clip.mp4")
	if err := os.WriteFile(movie, []byte("not really a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no ffmpeg here
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing dir", []string{"--in", filepath.Join(in, "nope")}, 1, "no such file"},
		{"empty dir", []string{"--in", t.TempDir()}, 1, "no frame images"},
		{"mixed sizes", []string{"--in", mixed}, 1, "m2.png is 12×12"},
		{"unreadable", []string{"--in", bad}, 1, "b.png"},
		{"no ffmpeg", []string{"--in", movie}, 1, "ffmpeg is not installed"},
		{"rank too big", []string{"--in", in, "--rank", "30"}, 2, "rank 30 must be smaller than"},
		{"alpha", []string{"--in", in, "--alpha", "1.5"}, 2, "flag -alpha: must be in [0, 1)"},
		{"no in", nil, 2, "--in"},
		{"bad range", []string{"--in", in, "--frames", "5:2"}, 2, "--frames"},
		{"bad scale", []string{"--in", in, "--scale", "0.3"}, 2, "--scale"},
		{"range past end", []string{"--in", in, "--frames", "40:"}, 1, "selects no frames"},
		{"preset", []string{"--in", in, "--preset", "fast"}, 2, "--preset"},
		{"method", []string{"--in", in, "--method", "pca"}, 2, "--method"},
		{"truth without frame", []string{"--in", in, "--truth", filepath.Join(in, "shot_001.png")}, 2, "--truth-frame"},
		{"truth frame absent", []string{"--in", in, "--truth", filepath.Join(in, "shot_001.png"), "--truth-frame", "x.png"}, 1, "x.png is not among"},
		{"mask threshold", []string{"--in", in, "--mask-threshold", "-1"}, 2, "flag -mask-threshold"},
		{"p with ialm", []string{"--in", in, "--method", "ialm", "--p", "0.5"}, 2, "--p"},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			args := c.args
			if len(args) > 0 {
				args = append(args, "--out", out)
			}
			code, _, stderr := runVideoCmd(t, context.Background(), append(args, "--quiet")...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, c.code, c.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("error is not one line: %q", stderr)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("failed run left %d entries in the output's parent", len(ents))
			}
		})
	}
	if !strings.Contains(func() string {
		_, _, s := runVideoCmd(t, context.Background(), "--in", movie, "--out", filepath.Join(t.TempDir(), "o"))
		return s
	}(), "apt") {
		t.Error("the missing-ffmpeg error does not say how to install it")
	}
}

func TestVideoInterrupted(t *testing.T) {
	_, in := newClip(t)
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, _, stderr := runVideoCmd(t, ctx, "--in", in, "--out", filepath.Join(parent, "out"), "--quiet")
	if code != 130 {
		t.Errorf("exit %d, %q; want 130", code, stderr)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("interrupted run left %d entries", len(ents))
	}

	// Interrupted during the solve: the first progress line (--verbose)
	// cancels the context, as Ctrl-C would.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: cancelWriter{cancel}}
	code = run(ctx, e, []string{"video", "--in", in, "--out", filepath.Join(parent, "out"), "--verbose", "--rank", "2"})
	if code != 130 {
		t.Errorf("interrupted solve: exit %d; want 130", code)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("run interrupted in the solve left %d entries", len(ents))
	}
}

// TestVideoWindowsInterrupted: Ctrl-C after the first of two windows
// exits with 130 and leaves no output directory, although the first
// window's PNGs were written.
func TestVideoWindowsInterrupted(t *testing.T) {
	_, in := newClip(t)
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: cancelOn{"window 1 done", cancel}}
	code := run(ctx, e, []string{"video", "--in", in, "--out", filepath.Join(parent, "out"), "--verbose", "--window", "20"})
	if code != 130 {
		t.Errorf("exit %d; want 130", code)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("interrupted run left %d entries", len(ents))
	}
}

// cancelOn cancels a context when a write contains text.
type cancelOn struct {
	text   string
	cancel context.CancelFunc
}

func (w cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.text)) {
		w.cancel()
	}
	return len(p), nil
}

// cancelWriter cancels a context at the first write.
type cancelWriter struct{ cancel context.CancelFunc }

func (w cancelWriter) Write(p []byte) (int, error) {
	w.cancel()
	return len(p), nil
}

// TestVideoFFmpeg encodes the synthetic clip with ffmpeg and separates it
// from the video file; it runs only where ffmpeg is installed.
// TestVideoFFmpeg runs "rpca video" on a losslessly encoded copy of the
// test clip and on its frame directory with the same flags: decoding must
// give the same frames, so the outputs must be identical, image by image
// (the video's frames are named frame%06d.png by their 1-based index).
// Over all 30 frames the background must also be the true one; shorter
// ranges are not separable (the square stays on some pixels for more
// than α of the frames), which is why they are checked against the
// directory run and not against the truth.
func TestVideoFFmpeg(t *testing.T) {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed")
	}
	c, in := newClip(t)
	movie := filepath.Join(t.TempDir(), "clip.avi")
	cmd := exec.Command(ff, "-loglevel", "error", "-framerate", "10", "-i", filepath.Join(in, "shot_%03d.png"), "-c:v", "ffv1", "-pix_fmt", "gray", movie)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("ffmpeg cannot encode the test clip: %v: %s", err, b)
	}
	for _, tc := range []struct {
		args          []string
		first, frames int
		w             int
	}{
		{nil, 0, 30, c.w},
		{[]string{"--frames", "2:20"}, 2, 18, c.w},
		{[]string{"--frames", "5:", "--scale", "0.5"}, 5, 25, c.w / 2},
	} {
		fromVideo := filepath.Join(t.TempDir(), "video")
		fromDir := filepath.Join(t.TempDir(), "dir")
		for _, run := range [][]string{{"--in", movie, "--out", fromVideo}, {"--in", in, "--out", fromDir}} {
			if code, _, stderr := runVideoCmd(t, context.Background(), append(append(run, "--quiet"), tc.args...)...); code != 0 {
				t.Fatalf("%v: exit %d, %q", run, code, stderr)
			}
		}
		sum := readSummary(t, fromVideo)
		wantFirst := fmt.Sprintf("frame%06d.png", tc.first+1)
		if sum["frames"] != float64(tc.frames) || sum["first_frame"] != wantFirst || sum["width"] != float64(tc.w) {
			t.Errorf("%v: %v frames from %v, width %v; want %d from %s, width %d", tc.args, sum["frames"], sum["first_frame"], sum["width"], tc.frames, wantFirst, tc.w)
		}
		for k := tc.first; k < tc.first+tc.frames; k++ {
			for _, sub := range []string{"background", "mask"} {
				got, _, _ := readGray(t, filepath.Join(fromVideo, sub, fmt.Sprintf("frame%06d.png", k+1)))
				want, _, _ := readGray(t, filepath.Join(fromDir, sub, c.names[k]))
				if e := maxAbsDiff(got, want); e != 0 {
					t.Fatalf("%v: %s of frame %d differs from the frame-directory run by %.4f", tc.args, sub, k, e)
				}
			}
			if tc.args == nil {
				got, _, _ := readGray(t, filepath.Join(fromVideo, "background", fmt.Sprintf("frame%06d.png", k+1)))
				if e := maxAbsDiff(got, c.bg); e > 0.03 {
					t.Errorf("background of frame %d from the video: max error %.4f", k, e)
				}
			}
		}
	}
}

// TestVideoColor moves a red square whose luma (0.299·255 ≈ 76) equals the
// gray background's, so only --color can see it.
func TestVideoColor(t *testing.T) {
	const w, h, n, side = 40, 30, 24, 6
	at := func(k, x, y int) bool {
		x0, y0 := (3*k)%(w-side), (2*k)%(h-side)
		return x >= x0 && x < x0+side && y >= y0 && y < y0+side
	}
	dir := t.TempDir()
	for k := 0; k < n; k++ {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := color.RGBA{76, 76, 76, 255}
				if at(k, x, y) {
					c = color.RGBA{255, 0, 0, 255}
				}
				img.SetRGBA(x, y, c)
			}
		}
		writeTestPNG(t, filepath.Join(dir, fmt.Sprintf("c%02d.png", k)), img)
	}
	score := func(out string) float64 {
		var pred, want []bool
		for k := 0; k < n; k++ {
			m, _, _ := readGray(t, filepath.Join(out, "mask", fmt.Sprintf("c%02d.png", k)))
			for i, v := range m {
				pred = append(pred, v > 0.5)
				want = append(want, at(k, i%w, i/w))
			}
		}
		sc, err := metrics.Detect(pred, want)
		if err != nil {
			t.Fatal(err)
		}
		return sc.F
	}
	gray := filepath.Join(t.TempDir(), "gray")
	col := filepath.Join(t.TempDir(), "color")
	for _, run := range []struct {
		out  string
		args []string
	}{{gray, []string{"--gray"}}, {col, nil}} {
		if code, _, stderr := runVideoCmd(t, context.Background(), append([]string{"--in", dir, "--out", run.out, "--quiet"}, run.args...)...); code != 0 {
			t.Fatalf("%v: exit %d, %q", run.args, code, stderr)
		}
	}
	if f := score(gray); f > 0.5 {
		t.Errorf("--gray run found the equal-luma square (F = %.2f); the test does not test colour", f)
	}
	if f := score(col); f < 0.95 {
		t.Errorf("colour (the default for colour frames): mask F-measure %.3f < 0.95", f)
	}
	if s := readSummary(t, col); s["channels"] != 3.0 {
		t.Errorf("channels %v, want 3", s["channels"])
	}
	img, err := frames.DecodeFile(filepath.Join(col, "background", "c05.png"))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, _ := img.At(0, 0).RGBA(); r>>8 != 76 || g>>8 != 76 || b>>8 != 76 {
		t.Errorf("color background pixel (%d, %d, %d), want gray 76", r>>8, g>>8, b>>8)
	}
}

// TestVideoStaticClipIsBlack: a clip without motion has a foreground of
// rounding noise; the foreground panel must show it black (not stretched
// to white) and the mask must be empty.
func TestVideoStaticClipIsBlack(t *testing.T) {
	dir := t.TempDir()
	const w, h = 40, 30
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetGray(x, y, color.Gray{Y: uint8(40 + 3*x + 2*y)})
		}
	}
	for k := 0; k < 12; k++ {
		writeTestPNG(t, filepath.Join(dir, fmt.Sprintf("f%03d.png", k)), img)
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runVideoCmd(t, context.Background(), "--in", dir, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, sub := range []string{"foreground", "mask"} {
		ents, err := os.ReadDir(filepath.Join(out, sub))
		if err != nil || len(ents) != 12 {
			t.Fatalf("%s: %d files (%v)", sub, len(ents), err)
		}
		for _, e := range ents {
			f, err := os.Open(filepath.Join(out, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			m, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			b := m.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					if r, g, bb, _ := m.At(x, y).RGBA(); r > 0x0101 || g > 0x0101 || bb > 0x0101 {
						t.Fatalf("%s/%s: pixel (%d, %d) is not black: %v", sub, e.Name(), x, y, m.At(x, y))
					}
				}
			}
		}
	}
}

// TestVideoWindows: --window 20 on a 30-frame clip separates two windows
// (20 and 10 frames), writes every frame's outputs, scores the truth
// frame in the first window, and lists the windows in summary.json.
func TestVideoWindows(t *testing.T) {
	c, in := newClip(t)
	const truthK = 5
	truth := c.writeTruth(t, truthK)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", out, "--quiet", "--window", "20",
		"--truth", truth, "--truth-frame", c.names[truthK])
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	sum := readSummary(t, out)
	ws, _ := sum["windows"].([]any)
	if len(ws) != 2 || sum["frames"] != 30.0 {
		t.Fatalf("windows %v, frames %v", sum["windows"], sum["frames"])
	}
	if w1, _ := ws[1].(map[string]any); w1["frames"] != 10.0 || w1["first_frame"] != c.names[20] {
		t.Errorf("second window %v", w1)
	}
	for _, sub := range []string{"background", "foreground", "mask"} {
		ents, err := os.ReadDir(filepath.Join(out, sub))
		if err != nil || len(ents) != 30 {
			t.Errorf("%s: %d files (%v)", sub, len(ents), err)
		}
	}
	if tr, _ := sum["truth"].(map[string]any); tr == nil || tr["f_measure"].(float64) < 0.9 {
		t.Errorf("truth score %v", sum["truth"])
	}
	if code, _, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", out+"2", "--window", "5"); code != 2 || !strings.Contains(stderr, "flag -window") {
		t.Errorf("--window 5: exit %d, %q", code, stderr)
	}
}

// TestVideoWarnsWhenNotConverged: a window that ends at the iteration cap
// gives one warning line on stderr and is counted in summary.json; with
// --quiet there is no warning.
func TestVideoWarnsWhenNotConverged(t *testing.T) {
	_, in := newClip(t)
	dir := t.TempDir()
	r := runCLI(t, context.Background(), "video", "--in", in, "--out", filepath.Join(dir, "a"), "--rank", "2", "--max-iter", "2", "--factor-tol", "-1", "--preview=false")
	if r.code != 0 || strings.Count(r.stderr, "rpca: warning:") != 1 || !strings.Contains(r.stderr, "--max-iter") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	sum := readJSONFile(t, filepath.Join(dir, "a", "summary.json"))
	if sum["unconverged_windows"] != 1.0 || sum["stop_reason"] != "max-iter" {
		t.Errorf("summary: unconverged_windows %v, stop_reason %v", sum["unconverged_windows"], sum["stop_reason"])
	}
	r = runCLI(t, context.Background(), "video", "--in", in, "--out", filepath.Join(dir, "b"), "--rank", "2", "--max-iter", "2", "--factor-tol", "-1", "--preview=false", "--quiet")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("--quiet: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestVideoSketchRows: --sketch-rows solves on that many rows and fits
// the rest; the background is as good as the full solve's (the bound of
// TestVideoEndToEnd: 0.03 at most per pixel), and summary.json says how
// many rows the solver saw. --sketch-rows 0 solves on all rows.
func TestVideoSketchRows(t *testing.T) {
	c, in := newClip(t)
	for _, rows := range []string{"400", "0"} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", out, "--quiet", "--preview=false", "--sketch-rows", rows)
		if code != 0 {
			t.Fatalf("--sketch-rows %s: exit %d, stderr %q", rows, code, stderr)
		}
		for _, name := range c.names {
			got, _, _ := readGray(t, filepath.Join(out, "background", name))
			if e := maxAbsDiff(got, c.bg); e > 0.03 {
				t.Errorf("--sketch-rows %s: background %s: max error %.4f > 0.03", rows, name, e)
			}
		}
		sum := readSummary(t, out)
		want := map[string]any{"400": 400.0, "0": nil}[rows]
		if sum["sketch_rows"] != want {
			t.Errorf("--sketch-rows %s: summary sketch_rows %v, want %v", rows, sum["sketch_rows"], want)
		}
	}
}

// TestVideoStream: --stream separates the generated clip frame by frame:
// the summary says so, summary.json has the stream's settings and fits,
// every frame has its outputs, and the square is found (F ≥ 0.9 on the
// truth frame, late enough to follow the first fit).
func TestVideoStream(t *testing.T) {
	c, in := newClip(t)
	truthK := 25
	truth := c.writeTruth(t, truthK)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", out, "--quiet", "--preview=false",
		"--stream", "--history", "20", "--refit", "5", "--truth", truth, "--truth-frame", c.names[truthK])
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "frame by frame (") {
		t.Errorf("summary line %q", stdout)
	}
	sum := readJSONFile(t, filepath.Join(out, "summary.json"))
	st, _ := sum["stream"].(map[string]any)
	if st == nil || st["history"] != 20.0 || st["refit"] != 5.0 || !(st["fits"].(float64) >= 2) {
		t.Errorf("stream in summary.json: %v", sum["stream"])
	}
	if f := sum["truth"].(map[string]any)["f_measure"].(float64); f < 0.9 {
		t.Errorf("F %v on frame %d", f, truthK)
	}
	ents, err := os.ReadDir(filepath.Join(out, "mask"))
	if err != nil || len(ents) != c.frames {
		t.Errorf("mask: %d files (%v)", len(ents), err)
	}
}

// TestVideoStdinAndURL: --in - reads YUV4MPEG2 frames from standard input
// and a file:// URL goes to ffmpeg; both give, bit for bit, what the
// directory of the same frames gives. Standard input that is not
// YUV4MPEG2 is a one-line error that leaves no output.
func TestVideoStdinAndURL(t *testing.T) {
	c, in := newClip(t)
	var y4m bytes.Buffer
	fmt.Fprintf(&y4m, "YUV4MPEG2 W%d H%d F10:1 Ip A1:1 Cmono XCOLORRANGE=FULL\n", c.w, c.h)
	for k := range c.frames {
		y4m.WriteString("FRAME\n")
		for y := range c.h {
			for x := range c.w {
				v := uint8(math.Round(c.bg[y*c.w+x] * 255))
				if c.squareAt(k, x, y) {
					v = 245
				}
				y4m.WriteByte(v)
			}
		}
	}
	fromDir := filepath.Join(t.TempDir(), "dir")
	if code, _, stderr := runVideoCmd(t, context.Background(), "--in", in, "--out", fromDir, "--stream", "--quiet"); code != 0 {
		t.Fatalf("from the directory: exit %d, %q", code, stderr)
	}
	fromStdin := filepath.Join(t.TempDir(), "stdin")
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, stdin: bytes.NewReader(y4m.Bytes())}
	if code := run(context.Background(), e, []string{"video", "--in", "-", "--out", fromStdin, "--stream", "--quiet"}); code != 0 {
		t.Fatalf("from standard input: exit %d, %q", code, errb.String())
	}
	sameOutputs := func(dir string) {
		t.Helper()
		if sum := readSummary(t, dir); sum["frames"] != float64(c.frames) {
			t.Fatalf("%s: %v frames, want %d", dir, sum["frames"], c.frames)
		}
		for k := range c.frames {
			for _, sub := range []string{"background", "mask"} {
				got, _, _ := readGray(t, filepath.Join(dir, sub, fmt.Sprintf("frame%06d.png", k+1)))
				want, _, _ := readGray(t, filepath.Join(fromDir, sub, c.names[k]))
				if d := maxAbsDiff(got, want); d != 0 {
					t.Fatalf("%s: %s of frame %d differs from the directory's by %.4f", dir, sub, k, d)
				}
			}
		}
	}
	sameOutputs(fromStdin)

	bad := filepath.Join(t.TempDir(), "bad")
	errb.Reset()
	e.stdin = strings.NewReader("P5\n48 36\n255\n")
	if code := run(context.Background(), e, []string{"video", "--in", "-", "--out", bad, "--quiet"}); code != 1 || !strings.Contains(errb.String(), "YUV4MPEG2") || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
		t.Errorf("not YUV4MPEG2: exit %d, %q", code, errb.String())
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("output left after a failed run: %v", err)
	}

	// Standard input that is a terminal: a usage error, not a wait for
	// frames that cannot come.
	errb.Reset()
	tty := &env{stdout: &out, stderr: &errb, stdinIsTerminal: true}
	if code := run(context.Background(), tty, []string{"video", "--in", "-", "--out", bad, "--quiet"}); code != 2 || !strings.Contains(errb.String(), "terminal") {
		t.Errorf("--in - on a terminal: exit %d, %q", code, errb.String())
	}

	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed: the URL input is not tried")
	}
	movie := filepath.Join(t.TempDir(), "clip.avi")
	cmd := exec.Command(ff, "-loglevel", "error", "-framerate", "10", "-i", filepath.Join(in, "shot_%03d.png"), "-c:v", "ffv1", "-pix_fmt", "gray", movie)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("ffmpeg cannot encode the test clip: %v: %s", err, b)
	}
	fromURL := filepath.Join(t.TempDir(), "url")
	if code, _, stderr := runVideoCmd(t, context.Background(), "--in", "file://"+movie, "--out", fromURL, "--stream", "--quiet"); code != 0 {
		t.Fatalf("from a file:// URL: exit %d, %q", code, stderr)
	}
	sameOutputs(fromURL)

	// A URL that names nothing: ffmpeg's error in one line, exit 1, no
	// output.
	missing := filepath.Join(t.TempDir(), "missing")
	code, _, stderr := runVideoCmd(t, context.Background(), "--in", "file://"+filepath.Join(t.TempDir(), "none.avi"), "--out", missing, "--stream", "--quiet")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "none.avi") {
		t.Errorf("a URL to nothing: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("output left after a URL to nothing: %v", err)
	}
}

// TestVideoStdinInterrupted: an interrupt while standard input has
// stopped sending frames (its writer alive but silent) ends the run with
// exit 130 and no output, instead of waiting for a frame that does not
// come; the same before the header has arrived.
func TestVideoStdinInterrupted(t *testing.T) {
	c, _ := newClip(t)
	for _, frames := range []int{0, 5} {
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			if frames > 0 {
				fmt.Fprintf(pw, "YUV4MPEG2 W%d H%d F10:1 Cmono XCOLORRANGE=FULL\n", c.w, c.h)
				for range frames {
					pw.Write([]byte("FRAME\n"))
					pw.Write(make([]byte, c.w*c.h))
				}
			}
			cancel() // the writer stays open: the reader blocks from here
		}()
		parent := t.TempDir()
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, stdin: pr}
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, e, []string{"video", "--in", "-", "--out", filepath.Join(parent, "out"), "--stream", "--quiet"})
		}()
		select {
		case code := <-done:
			if code != 130 {
				t.Errorf("%d frames sent: exit %d, %q; want 130", frames, code, errb.String())
			}
		case <-time.After(time.Minute):
			t.Fatalf("%d frames sent: the run still waits for standard input after the interrupt", frames)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("%d frames sent: the interrupted run left %d entries", frames, len(ents))
		}
		pw.Close()
	}
}

// TestVideoEmptyMasksNoted: when no pixel of any frame comes out as
// foreground (here a moving square under --noise-factor 1000, or a fixed
// threshold above every residual, in batch and as a stream), a note on
// stderr says so and names the flags that decide it; the defaults, which
// find the square, print no such note.
func TestVideoEmptyMasksNoted(t *testing.T) {
	_, in := newClip(t)
	const note = "no pixel of any frame was marked as foreground"
	for _, c := range []struct {
		args []string
		want string // "" for no note
	}{
		{nil, ""},
		{[]string{"--noise-factor", "1000"}, "--noise-factor 1000"},
		{[]string{"--mask-threshold", "0.99"}, "--mask-threshold 0.99"},
		{[]string{"--stream", "--noise-factor", "1000"}, "--noise-factor 1000"},
	} {
		args := append([]string{"--in", in, "--out", filepath.Join(t.TempDir(), "out"), "--preview=false"}, c.args...)
		code, _, stderr := runVideoCmd(t, context.Background(), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if got := strings.Contains(stderr, note); got != (c.want != "") || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q; want the note %v (naming %q)", c.args, stderr, c.want != "", c.want)
		}
	}
}
