package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/video"
	"github.com/rpca-gd/rpca/video/frames"
)

// readTable reads a CSV file and returns its header and its rows as maps
// from column name to value.
func readTable(t *testing.T, path string, want []string) []map[string]string {
	t.Helper()
	f := bytes.NewReader(testfile.Read(t, path))
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) < 2 {
		t.Fatalf("%s: %d lines, want a header and data", path, len(recs))
	}
	if !slices.Equal(recs[0], want) {
		t.Fatalf("%s: header %v, want %v", path, recs[0], want)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for k, name := range recs[0] {
			m[name] = r[k]
		}
		rows = append(rows, m)
	}
	return rows
}

// num parses a CSV number.
func fnum(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

// checkPNG decodes a PNG and checks that it is at least w×h pixels and
// not of a single color.
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f := bytes.NewReader(testfile.Read(t, path))
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < w || b.Dy() < h {
		t.Fatalf("%s is %d×%d, want at least %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
	first := color.GrayModel.Convert(img.At(b.Min.X, b.Min.Y))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.GrayModel.Convert(img.At(x, y)) != first {
				return
			}
		}
	}
	t.Fatalf("%s has a single color", path)
}

func runQuick(t *testing.T, name string, o Options) string {
	t.Helper()
	o.Out = filepath.Join(t.TempDir(), name)
	o.Quick = true
	rep, err := Run(context.Background(), name, o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if rep.Dir != o.Out || rep.Summary == "" || !slices.Contains(rep.Files, "summary.txt") {
		t.Fatalf("%s: report %+v", name, rep)
	}
	for _, f := range rep.Files {
		if _, err := os.Stat(filepath.Join(rep.Dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return rep.Dir
}

func TestFig1aQuick(t *testing.T) {
	dir := runQuick(t, "fig1a", Options{D: 200, Rates: []float64{1, 0.6}})
	rows := readTable(t, filepath.Join(dir, "fig1a.csv"), []string{"p", "iter", "seconds", "rel_error", "log10_error"})
	byP := map[string][]float64{}
	for _, r := range rows {
		e := fnum(t, r["rel_error"])
		if got := fnum(t, r["log10_error"]); math.Abs(got-math.Log10(e)) > 1e-4 {
			t.Fatalf("log10_error %v for error %v", got, e)
		}
		byP[r["p"]] = append(byP[r["p"]], e)
	}
	if len(byP) != 2 {
		t.Fatalf("curves for %v, want p = 1 and 0.6", byP)
	}
	for p, errs := range byP {
		if errs[0] < 1e-3 || errs[len(errs)-1] > fig1aTarget {
			t.Errorf("p=%s: error from %.3g to %.3g, want a decrease from the initial error to %g", p, errs[0], errs[len(errs)-1], fig1aTarget)
		}
	}
	rates := readTable(t, filepath.Join(dir, "fig1a_rates.csv"), []string{"p", "observed_entries", "iterations", "seconds", "final_error", "contraction", "fit_points", "stop"})
	for _, r := range rates {
		if c := fnum(t, r["contraction"]); !(c > 0.3 && c < 1) {
			t.Errorf("p=%s: contraction %v, want geometric convergence", r["p"], c)
		}
		if r["stop"] != string(rpca.StopTargetError) {
			t.Errorf("p=%s stopped by %s", r["p"], r["stop"])
		}
	}
	checkPNG(t, filepath.Join(dir, "fig1a.png"), 300, 200)
}

func TestFig1bQuick(t *testing.T) {
	dir := runQuick(t, "fig1b", Options{Dims: []int{300, 600}})
	rows := readTable(t, filepath.Join(dir, "fig1b.csv"), []string{"d", "p", "observed_entries", "generate_seconds", "iterations", "seconds", "init_seconds", "final_error", "stop"})
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for _, r := range rows {
		d := fnum(t, r["d"])
		p := fnum(t, r["p"])
		n := fnum(t, r["observed_entries"])
		// |Φ| ~ Binomial(d², p): within 6 standard deviations.
		if mean := p * d * d; math.Abs(n-mean) > 6*math.Sqrt(mean) {
			t.Errorf("d=%v: %v observed entries, want about %v", d, n, mean)
		}
		if e := fnum(t, r["final_error"]); e > fig1bTarget || r["stop"] != string(rpca.StopTargetError) {
			t.Errorf("d=%v: final error %v (%s), want ≤ %g", d, e, r["stop"], fig1bTarget)
		}
		if s := fnum(t, r["seconds"]); !(s > 0 && s >= fnum(t, r["init_seconds"])) {
			t.Errorf("d=%v: %v seconds, init %s", d, s, r["init_seconds"])
		}
	}
	checkPNG(t, filepath.Join(dir, "fig1b.png"), 300, 200)
	sum, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil || !strings.Contains(string(sum), "slope") {
		t.Fatalf("summary %q (%v) has no slope", sum, err)
	}
}

func TestFig1cQuick(t *testing.T) {
	dir := runQuick(t, "fig1c", Options{D: 150, Rank: 3, Rates: []float64{0.5}})
	rows := readTable(t, filepath.Join(dir, "fig1c.csv"), []string{"method", "iter", "seconds", "rel_error", "log10_error"})
	last := map[string]float64{}
	prev := map[string]float64{}
	for _, r := range rows {
		m, s := r["method"], fnum(t, r["seconds"])
		if old, ok := prev[m]; ok && s < old {
			t.Fatalf("%s: time goes back from %v to %v", m, old, s)
		}
		prev[m] = s
		last[m] = fnum(t, r["rel_error"])
	}
	for _, m := range []string{"GD p=1", "GD p=0.5", "AltProj", "AltProj (no stall exit)", "IALM"} {
		e, ok := last[m]
		if !ok {
			t.Fatalf("no rows for %s", m)
		}
		if e > 1e-3 {
			t.Errorf("%s: final error %v", m, e)
		}
	}
	header := []string{"method", "iterations", "seconds", "final_error", "stop"}
	for _, l := range fig1cLevels {
		header = append(header, "seconds_to_"+num(l))
	}
	sum := readTable(t, filepath.Join(dir, "fig1c_summary.csv"), header)
	if len(sum) != 5 {
		t.Fatalf("%d summary rows, want 5", len(sum))
	}
	for _, r := range sum {
		// Reaching 1e-1 cannot take longer than reaching 1e-2.
		if a, b := fnum(t, r["seconds_to_0.1"]), fnum(t, r["seconds_to_0.01"]); a > b {
			t.Errorf("%s: %v s to 0.1 but %v s to 0.01", r["method"], a, b)
		}
	}
	checkPNG(t, filepath.Join(dir, "fig1c.png"), 300, 200)
}

func TestVideoQuickSynthetic(t *testing.T) {
	dir := runQuick(t, "video", Options{Frames: SyntheticFrames, MaxFrames: 60, MaxIter: 150})
	runs := readTable(t, filepath.Join(dir, "video_runs.csv"), []string{"clip", "width", "height", "frames", "method", "rank", "iterations", "seconds", "stop", "residual"})
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	for _, r := range runs {
		if r["clip"] != "synthetic" || r["width"] != "64" || r["height"] != "48" || r["frames"] != "60" {
			t.Errorf("run %v", r)
		}
		// GD keeps rank r; AltProj may stop at an earlier stage (rank ≤ r);
		// IALM's rank comes from its thresholding.
		if k := fnum(t, r["rank"]); k < 1 || (strings.HasPrefix(r["method"], "GD") && k != float64(paperVideo.Rank)) || (r["method"] == "AltProj" && k > float64(paperVideo.Rank)) {
			t.Errorf("%s: rank %v", r["method"], k)
		}
		if res := fnum(t, r["residual"]); !(res >= 0 && res < 0.5) {
			t.Errorf("%s: residual %v", r["method"], res)
		}
	}
	scores := readTable(t, filepath.Join(dir, "video_scores.csv"), []string{"clip", "frame", "method", "mask", "threshold", "precision", "recall", "f_measure"})
	if len(scores) != 8 {
		t.Fatalf("%d score rows, want 4 methods × 2 masks", len(scores))
	}
	for _, r := range scores {
		p, rc, f := fnum(t, r["precision"]), fnum(t, r["recall"]), fnum(t, r["f_measure"])
		if want := 2 * p * rc / (p + rc); p+rc > 0 && math.Abs(f-want) > 1e-4 {
			t.Errorf("%v: F = %v, want %v", r, f, want)
		}
		// The square stands out by at least 0.3 from the background, so
		// the convex program finds it; the others must see most of it.
		if r["method"] == "IALM" && f < 0.9 {
			t.Errorf("IALM %s mask: F = %v", r["mask"], f)
		}
		if r["method"] == "GD p=1" && r["mask"] == "decision" && rc < 0.8 {
			t.Errorf("GD p=1 decision mask: recall %v", rc)
		}
	}
	checkPNG(t, filepath.Join(dir, "video-synthetic.png"), 5*150, 2*100)
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Run(ctx, "fig9", Options{Out: t.TempDir()}); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Run(ctx, "fig1a", Options{}); err == nil {
		t.Error("no output directory: no error")
	}
	if _, err := Run(ctx, "fig1a", Options{Out: filepath.Join(t.TempDir(), "x"), Rates: []float64{1.5}}); err == nil {
		t.Error("rate 1.5: no error")
	}
	// An existing non-empty directory is kept without Force.
	out := t.TempDir()
	keep := filepath.Join(out, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Out: out, Quick: true, D: 100, Rank: 2, Rates: []float64{1}}
	if _, err := Run(ctx, "fig1a", o); !errors.Is(err, outdir.ErrExists) {
		t.Errorf("existing directory: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatal("existing directory was touched")
	}
	o.Force = true
	if _, err := Run(ctx, "fig1a", o); !errors.Is(err, outdir.ErrNotOurs) {
		t.Errorf("Force on a directory rpca did not write: %v", err)
	}
	if err := os.WriteFile(filepath.Join(out, outdir.OwnerMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, "fig1a", o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); !errors.Is(err, os.ErrNotExist) {
		t.Error("Force did not replace the directory")
	}
	// A cancelled run leaves nothing behind.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	o = Options{Out: filepath.Join(t.TempDir(), "c"), Quick: true, D: 100, Rank: 2}
	if _, err := Run(cctx, "fig1c", o); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(o.Out); !errors.Is(err, os.ErrNotExist) {
		t.Error("cancelled run left its directory")
	}
	ents, _ := os.ReadDir(filepath.Dir(o.Out))
	if len(ents) != 0 {
		t.Errorf("cancelled run left %d entries", len(ents))
	}
}

func TestFitRate(t *testing.T) {
	// Errors 0.5·ρ^t exactly, with a transient and a floor outside the
	// window that the fit must ignore.
	const rho = 0.8
	var recs []rpca.Record
	recs = append(recs, rpca.Record{Iter: 0, Error: 0.9})
	for it := 1; it < 80; it++ {
		recs = append(recs, rpca.Record{Iter: it, Error: 0.5 * math.Pow(rho, float64(it))})
	}
	recs = append(recs, rpca.Record{Iter: 80, Error: 1e-12}, rpca.Record{Iter: 81, Error: 1e-12})
	got, n := fitRate(recs, 1e-7, 1e-2)
	if math.Abs(got-rho) > 1e-9 {
		t.Errorf("rate %v, want %v", got, rho)
	}
	// The window holds the t with 1e-7 ≤ 0.5·0.8^t ≤ 1e-2.
	want := 0
	for it := 1; it < 80; it++ {
		if e := 0.5 * math.Pow(rho, float64(it)); e >= 1e-7 && e <= 1e-2 {
			want++
		}
	}
	if n != want {
		t.Errorf("%d points, want %d", n, want)
	}
	if r, _ := fitRate(recs[:2], 1e-7, 1); !math.IsNaN(r) {
		t.Errorf("two points: rate %v, want NaN", r)
	}
	a, b := lineFit([]float64{1, 2, 3, 4}, []float64{3, 5, 7, 9})
	if math.Abs(a-1) > 1e-12 || math.Abs(b-2) > 1e-12 {
		t.Errorf("lineFit: %v + %v x, want 1 + 2x", a, b)
	}
}

func TestImageHelpers(t *testing.T) {
	src := image.NewGray(image.Rect(0, 0, 4, 2))
	copy(src.Pix, []uint8{0, 10, 20, 30, 40, 50, 60, 70})
	got := video.Shrink(src, 2)
	b := got.Bounds()
	if b.Dx() != 2 || b.Dy() != 1 {
		t.Fatalf("shrunk to %v", b)
	}
	// Block means: (0+10+40+50)/4 = 25, (20+30+60+70)/4 = 45.
	for x, want := range []uint8{25, 45} {
		if g := color.GrayModel.Convert(got.At(x, 0)).(color.Gray).Y; g != want {
			t.Errorf("pixel %d = %d, want %d", x, g, want)
		}
	}
	p := image.NewGray(image.Rect(0, 0, 3, 1))
	copy(p.Pix, []uint8{0, 130, 255})
	posterize(p, 64)
	if !slices.Equal(p.Pix, []uint8{2, 130, 254}) {
		t.Errorf("posterize: %v", p.Pix)
	}
	if s := fmtSeconds(0.0123); s != "12ms" {
		t.Errorf("fmtSeconds(0.0123) = %q", s)
	}
	if s := fmtSeconds(12.34); s != "12.3s" {
		t.Errorf("fmtSeconds(12.34) = %q", s)
	}
}

// TestTruthFrameFix checks that a mask listed in truthFrameFix is scored
// against the frame it outlines, and any other mask against its namesake.
func TestTruthFrameFix(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{{"hall", "frame0019.png"}, {"other", "frame0016.png"}} {
		dir := filepath.Join(t.TempDir(), tc.dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		img := image.NewGray(image.Rect(0, 0, 4, 3))
		img.SetGray(1, 1, color.Gray{Y: 255})
		f, err := os.Create(filepath.Join(dir, "groundtruth_frame0016.png"))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
		c := &clip{name: tc.dir, seq: &frames.Sequence{Geometry: frames.Geometry{Width: 4, Height: 3}, Names: []string{"frame0016.png", "frame0019.png"}}}
		if err := c.loadTruth(dir, 1); err != nil {
			t.Fatal(err)
		}
		j := slices.Index(c.seq.Names, tc.want)
		if len(c.truth) != 1 || c.truth[j] == nil || !c.truth[j][1*4+1] {
			t.Errorf("%s: truth on frames %v, want only on %s with pixel (1,1) set", tc.dir, c.truth, tc.want)
		}
	}
}

// TestScenesQuick: one row per scene and method, F consistent with
// precision and recall, and on the illumination ramp the low-rank default
// beats the temporal median (the median background is wrong in most
// frames there).
func TestScenesQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("18 separations")
	}
	dir := runQuick(t, "scenes", Options{})
	rows := readTable(t, filepath.Join(dir, "scenes.csv"), []string{"scene", "method", "rank", "rank_rule", "precision", "recall", "f_measure", "seconds"})
	if len(rows) != 3*len(video.Scenes) {
		t.Fatalf("%d rows, want %d", len(rows), 3*len(video.Scenes))
	}
	f := map[[2]string]float64{}
	for _, r := range rows {
		p, rc, ff := fnum(t, r["precision"]), fnum(t, r["recall"]), fnum(t, r["f_measure"])
		if want := 2 * p * rc / (p + rc); p+rc > 0 && math.Abs(ff-want) > 1e-4 {
			t.Errorf("%v: F = %v, want %v", r, ff, want)
		}
		f[[2]string{r["scene"], r["method"]}] = ff
	}
	if d, m := f[[2]string{"illumination", "default (scaledgd)"}], f[[2]string{"illumination", "median"}]; !(d > m+0.1) {
		t.Errorf("illumination: default F %v, median F %v; want the default well ahead", d, m)
	}
	checkPNG(t, filepath.Join(dir, "scenes.png"), 576, 384)
}

// TestDemo runs the demo on a small problem: every method recovers M*
// (the instance is well inside the paper's regime), and the report
// explains each run.
func TestDemo(t *testing.T) {
	var stages []string
	rep, err := Demo(context.Background(), DemoOptions{D: 800, Rank: 3, Alpha: 0.05, Seed: 2, Stage: func(m string) { stages = append(stages, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 3 || len(stages) != 4 {
		t.Fatalf("%d runs, stages %q", len(rep.Runs), stages)
	}
	for _, r := range rep.Runs {
		if !(r.RelError < 1e-3) || !(r.RelError < r.InitError) || !r.Stop.Converged() {
			t.Errorf("%s: error %g (initial %g), stop %s", r.What, r.RelError, r.InitError, r.Stop)
		}
	}
	if s := rep.String(); strings.Count(s, "\n") != 5 || !strings.Contains(s, "800×800") {
		t.Errorf("report %q", s)
	}
}

// A clips directory is read one clip per subdirectory of at least two
// frames; a subdirectory with one image beside its frames' own directory
// (the CDnet layout of highway-dev: ROI.bmp, input/) is skipped, not
// loaded as a one-frame clip that the rank cannot fit.
func TestLoadClipsSkipsSingleImages(t *testing.T) {
	src := t.TempDir()
	img := image.NewGray(image.Rect(0, 0, 8, 6))
	write := func(path string) {
		t.Helper()
		testfile.WriteWith(t, path, func(w io.Writer) error { return png.Encode(w, img) })
	}
	for k := range 3 {
		img.Pix[k] = 200
		write(filepath.Join(src, "clip", fmt.Sprintf("frame%04d.png", k)))
	}
	write(filepath.Join(src, "cdnet", "ROI.png"))
	write(filepath.Join(src, "cdnet", "input", "in000001.png"))
	var log strings.Builder
	clips, err := loadClips(context.Background(), &writer{log: &log}, &Options{Frames: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(clips) != 1 || clips[0].name != "clip" || len(clips[0].seq.Names) != 3 {
		t.Fatalf("clips %v", clips)
	}
	if !strings.Contains(log.String(), "skipped") {
		t.Errorf("log %q", log.String())
	}
}
