package experiment

import (
	"context"
	"fmt"
	"image"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/altproj"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/video"
	"github.com/rpca-gd/rpca/video/frames"
)

// The video settings of the paper's Appendix B (video.Presets["paper"]):
// r = 10, α = 0.2, μ = 10, γ = 1, η = 1/(2σ̂₁) (step constant 0.5), GD
// stops when the relative factor change is at most 4e-4; AltProj
// (default parameters) and IALM (λ = 1/√d1) stop at
// ‖Y − M − S‖_F/‖Y‖_F ≤ 1e-3. "Default parameters" of AltProj are those
// of the authors' code, which ends a stage early when an iteration lowers
// the residual by less than 10% (altprojStallTol).
var paperVideo = video.Presets["paper"]

// fixedMaskThreshold is the fixed foreground threshold the experiment
// reports beside the tool's decision: |Y − M| > 0.1 (a tenth of the
// intensity range), unfiltered.
const fixedMaskThreshold = 0.1

// SyntheticFrames is the value of Options.Frames that selects the
// generated clip.
const SyntheticFrames = "synthetic"

// DefaultFrames returns the shared benchmark clips, ../shared/data
// relative to the root of the module containing the working directory,
// or "" when that directory does not exist.
func DefaultFrames() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			data := filepath.Join(dir, "..", "shared", "data")
			if st, err := os.Stat(data); err == nil && st.IsDir() {
				return filepath.Clean(data)
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// clip is one video with its optional ground truth.
type clip struct {
	name  string
	seq   *frames.Sequence
	truth map[int][]bool // frame index → true foreground mask (row-major pixels)
}

// videoRun is the outcome of one method on one clip.
type videoRun struct {
	label   string
	res     *rpca.Result
	seconds float64
}

// runVideo separates foreground and background of each clip with GD
// (p = 1 and a subsampled p), AltProj and IALM with the paper's video
// settings. Files: video_runs.csv (time, iterations, stop rule, residual
// per clip and method), video_scores.csv (precision, recall and F-measure
// of the foreground masks where a ground truth exists) and one montage
// video-CLIP.png per clip: for a few frames, the original and the four
// backgrounds titled with method and time.
func runVideo(ctx context.Context, w *writer, o *Options) error {
	clips, err := loadClips(ctx, w, o)
	if err != nil {
		return err
	}
	q := o.subRate()
	maxIter := pick(o.MaxIter, o.Quick, 500, 1000)
	factorTol := pick(o.FactorTol, false, 0, paperVideo.FactorTol)
	runHeader := []string{"clip", "width", "height", "frames", "method", "rank", "iterations", "seconds", "stop", "residual"}
	scoreHeader := []string{"clip", "frame", "method", "mask", "threshold", "precision", "recall", "f_measure"}
	var runRows, scoreRows [][]string
	w.sumf("video: r=%d alpha=%g; GD gamma=%g mu=%g step 1/(2 sigma1), stops at factor change %g (<= 0: off) or %d iterations; AltProj and IALM (lambda=1/sqrt(d1)) stop at residual %g", pick(o.Rank, false, 0, paperVideo.Rank), paperVideo.Alpha, pick(o.Gamma, false, 0, paperVideo.Gamma), paperVideo.Mu, factorTol, maxIter, paperVideo.ResidualTol)
	w.sumf("%-14s %-10s %4s %6s %9s  %-12s %9s", "clip", "method", "rank", "iters", "seconds", "stop", "residual")
	for _, c := range clips {
		g := c.seq.Geometry
		d1, d2 := c.seq.Y.Dims()
		rank := pick(o.Rank, false, 0, paperVideo.Rank)
		if rank >= min(d1, d2) {
			return fmt.Errorf("video: clip %s has %d frames; rank %d needs more", c.name, d2, rank)
		}
		methods := []struct {
			label  string
			m      rpca.Method
			sample float64 // the rate the problem is subsampled at here (0: all)
			stop   rpca.Stop
		}{
			{"GD p=1", &gd.Method{Step: gd.StepFixed, Gamma: pick(o.Gamma, false, 0, paperVideo.Gamma), StepConst: pick(o.Step, false, 0, paperVideo.StepConst), Mu: paperVideo.Mu}, 0,
				rpca.Stop{FactorTol: factorTol, ResidualTol: -1, MaxIter: maxIter}},
			{fmt.Sprintf("GD p=%g", q), &gd.Method{Step: gd.StepFixed, Gamma: pick(o.Gamma, false, 0, paperVideo.Gamma), StepConst: pick(o.Step, false, 0, paperVideo.StepConst), Mu: paperVideo.Mu}, q,
				rpca.Stop{FactorTol: factorTol, ResidualTol: -1, MaxIter: maxIter}},
			{"AltProj", &altproj.Method{StallTol: altprojStallTol}, 0, rpca.Stop{ResidualTol: paperVideo.ResidualTol, MaxIter: o.MaxIter}},
			{"IALM", &ialm.Method{}, 0, rpca.Stop{ResidualTol: paperVideo.ResidualTol, MaxIter: o.MaxIter}},
		}
		w.logf("video: clip %s: %d×%d, %d frames (d1=%d, d2=%d)", c.name, g.Width, g.Height, d2, d1, d2)
		var runs []videoRun
		dense := &rpca.Problem{Dense: c.seq.Y}
		for _, me := range methods {
			if err := ctx.Err(); err != nil {
				return err
			}
			prob, extra := dense, time.Duration(0)
			if me.sample > 0 && me.sample < 1 {
				// Subsample here rather than in GD, so that no pixel
				// (row) or frame (column) is left without an entry; the
				// sampling time counts as part of the run.
				t0 := time.Now()
				obs, err := rpca.Sampling{P: me.sample, Seed: o.Seed, Cover: true}.Dense(c.seq.Y)
				if err != nil {
					return fmt.Errorf("video: %s: %w", c.name, err)
				}
				extra = time.Since(t0)
				prob = &rpca.Problem{Observed: obs}
			}
			s := rpca.Settings{Rank: rank, Alpha: paperVideo.Alpha, Seed: o.Seed, Workers: o.Workers, Stop: me.stop}
			t := newTrace(w, c.name+" "+me.label)
			res, _, err := solveCapped(ctx, 0, prob, s, me.m, t)
			if err != nil {
				return fmt.Errorf("video: %s: %s: %w", c.name, me.label, err)
			}
			secs := (res.Elapsed + extra).Seconds()
			w.logf("video: %s %s: %d iterations, %.2fs (%s), residual %.3g", c.name, me.label, res.Iterations, secs, res.Stop, res.Residual)
			w.sumf("%-14s %-10s %4d %6d %9.2f  %-12s %9.3g", c.name, me.label, res.U.RawMatrix().Cols, res.Iterations, secs, res.Stop, res.Residual)
			_, k := res.U.Dims()
			runRows = append(runRows, []string{c.name, itoa(g.Width), itoa(g.Height), itoa(d2), me.label, itoa(k), itoa(res.Iterations), num(secs), string(res.Stop), num(res.Residual)})
			runs = append(runs, videoRun{label: me.label, res: res, seconds: secs})
		}
		backgrounds := make([]*mat.Dense, len(runs))
		for k, run := range runs {
			backgrounds[k] = run.res.LowRank()
		}
		rows, err := scoreClip(ctx, c, runs, backgrounds)
		if err != nil {
			return err
		}
		scoreRows = append(scoreRows, rows...)
		if err := writeMontage(w, c, runs, backgrounds); err != nil {
			return err
		}
	}
	if err := w.writeCSV("video_runs.csv", runHeader, runRows); err != nil {
		return err
	}
	if len(scoreRows) > 0 {
		w.sumf("foreground masks against the ground truth ('decision': the tool's foreground decision on Y - M, video.Masks with its defaults; 'fixed': |Y - M| > %g):", fixedMaskThreshold)
		w.sumf("%-14s %-16s %-10s %-8s %9s %7s %9s", "clip", "frame", "method", "mask", "precision", "recall", "F")
		for _, r := range scoreRows {
			w.sumf("%-14s %-16s %-10s %-8s %9s %7s %9s", r[0], r[1], r[2], r[3], r[5], r[6], r[7])
		}
	}
	return w.writeCSV("video_scores.csv", scoreHeader, scoreRows)
}

// loadClips resolves Options.Frames and loads the clips.
func loadClips(ctx context.Context, w *writer, o *Options) ([]*clip, error) {
	src := o.Frames
	if src == "" {
		src = DefaultFrames()
		if src == "" {
			src = SyntheticFrames
		}
	}
	maxFrames := pick(o.MaxFrames, o.Quick, 30, 0)
	if src == SyntheticFrames {
		// 100 frames, so that subsampling at p = 0.2 still leaves about
		// twice r entries per pixel; the clip is small either way.
		n := 100
		if o.MaxFrames > 0 {
			n = min(n, o.MaxFrames)
		}
		w.logf("video: generated clip (64×48, %d frames: static background with noise, moving square)", n)
		return []*clip{syntheticClip(64, 48, n)}, nil
	}
	scale := pick(o.Scale, o.Quick, 0.5, 1)
	opts := frames.Options{Scale: scale, Range: frames.Range{End: maxFrames}}
	dirs := []string{src}
	if names, err := frames.ListFrames(src, opts); err != nil {
		return nil, err
	} else if len(names) == 0 {
		ents, err := os.ReadDir(src)
		if err != nil {
			return nil, err
		}
		dirs = dirs[:0]
		for _, e := range ents {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			// A clip is a directory of at least two frames; one image
			// (highway-dev's ROI.bmp beside its input/ directory) is not.
			sub := filepath.Join(src, e.Name())
			if names, err := frames.ListFrames(sub, opts); err == nil && len(names) >= 2 {
				dirs = append(dirs, sub)
			} else if err == nil && len(names) == 1 {
				w.logf("video: skipped %s: one image is not a clip", sub)
			}
		}
		if len(dirs) == 0 {
			return nil, fmt.Errorf("video: no frames in %s or its subdirectories", src)
		}
	}
	var clips []*clip
	for _, dir := range dirs {
		seq, err := frames.LoadDir(ctx, dir, opts)
		if err != nil {
			return nil, err
		}
		c := &clip{name: filepath.Base(dir), seq: seq}
		if err := c.loadTruth(dir, scale); err != nil {
			return nil, err
		}
		w.logf("video: loaded %s: %d frames of %d×%d (scale %g), %d ground-truth masks", c.name, len(seq.Names), seq.Width, seq.Height, scale, len(c.truth))
		clips = append(clips, c)
	}
	return clips, nil
}

// truthFrameFix names the frame a shipped ground-truth mask really
// outlines, where its file name says otherwise. The hall clip's
// groundtruth_frame0016.png outlines the people as they stand in
// frame0019.png: against a per-pixel median background (a method-free
// check, `rpca video --method median --truth … --truth-frame frameNNNN.png`)
// its precision is 0.59 on frame 16 and peaks at 0.92 on frame 19
// (F 0.47 and 0.69; frames 13–22 rise to 19 and fall after), and the
// outline drawn over both frames (docs/img/video-hall-truth.png) fits
// frame 19. Keys are clip directory name and mask file name.
var truthFrameFix = map[[2]string]string{
	{"hall", "groundtruth_frame0016.png"}: "frame0019.png",
}

// loadTruth reads the masks groundtruth_NAME beside the frames, NAME
// being the file name of a loaded frame (corrected by truthFrameFix).
func (c *clip) loadTruth(dir string, scale float64) error {
	matches, err := filepath.Glob(filepath.Join(dir, "groundtruth_*"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		frame := strings.TrimPrefix(filepath.Base(m), "groundtruth_")
		if f, ok := truthFrameFix[[2]string{filepath.Base(filepath.Clean(dir)), filepath.Base(m)}]; ok {
			frame = f
		}
		j := slices.Index(c.seq.Names, frame)
		if j < 0 {
			continue // the frame is outside the loaded range
		}
		mask, mw, mh, err := frames.LoadMask(m, scale)
		if err != nil {
			return err
		}
		if mw != c.seq.Width || mh != c.seq.Height {
			return fmt.Errorf("video: mask %s is %d×%d, frames are %d×%d", m, mw, mh, c.seq.Width, c.seq.Height)
		}
		if c.truth == nil {
			c.truth = map[int][]bool{}
		}
		c.truth[j] = mask
	}
	return nil
}

// syntheticClip generates n frames of w×h gray pixels: a static smooth
// background with values in [0.3, 0.7] plus Gaussian noise of standard
// deviation 0.01 (camera noise; it also breaks the ties of a perfectly
// constant background), and a bright 10×10 square moving diagonally,
// with its mask as ground truth on every frame.
func syntheticClip(w, h, n int) *clip {
	const side = 10
	rng := rand.New(rand.NewPCG(7, 11))
	g := frames.Geometry{Width: w, Height: h}
	y := mat.NewDense(g.Rows(), n, nil)
	c := &clip{name: "synthetic", seq: &frames.Sequence{Geometry: g, Y: y}, truth: map[int][]bool{}}
	for j := 0; j < n; j++ {
		c.seq.Names = append(c.seq.Names, fmt.Sprintf("frame%04d.png", j+1))
		x0 := (3 * j) % (w - side)
		y0 := (2 * j) % (h - side)
		mask := make([]bool, g.Pixels())
		for py := 0; py < h; py++ {
			for px := 0; px < w; px++ {
				v := 0.5 + 0.2*math.Sin(float64(px)/5)*math.Cos(float64(py)/7) + 0.01*rng.NormFloat64()
				if px >= x0 && px < x0+side && py >= y0 && py < y0+side {
					v = 1
					mask[py*w+px] = true
				}
				y.Set(py*w+px, j, v)
			}
		}
		c.truth[j] = mask
	}
	return c
}

// scoreClip compares the foreground masks of every method with the
// ground truth: the tool's foreground decision ([video.Masks] with its
// defaults) on Y − M, and the fixed threshold |Y − M| > 0.1 without
// cleaning, the same rules for every method. Real clips are scored per
// ground-truth frame; the generated clip over all its frames pooled
// ("all").
func scoreClip(ctx context.Context, c *clip, runs []videoRun, backgrounds []*mat.Dense) ([][]string, error) {
	if len(c.truth) == 0 {
		return nil, nil
	}
	frames := make([]int, 0, len(c.truth))
	for j := range c.truth {
		frames = append(frames, j)
	}
	slices.Sort(frames)
	groups := [][]int{}
	labels := []string{}
	if c.name == "synthetic" {
		groups = append(groups, frames)
		labels = append(labels, "all")
	} else {
		for _, j := range frames {
			groups = append(groups, []int{j})
			labels = append(labels, c.seq.Names[j])
		}
	}
	y := c.seq.Y
	p := c.seq.Pixels()
	kinds := []struct {
		name string
		opt  video.MaskOptions
	}{
		{"decision", video.MaskOptions{}},
		{"fixed", video.MaskOptions{Threshold: fixedMaskThreshold, Filter: -1, MinObject: -1, Smooth: -1, Displacement: -1}},
	}
	var rows [][]string
	for k, run := range runs {
		var r mat.Dense
		r.Sub(y, backgrounds[k])
		for _, kind := range kinds {
			masks, rep, err := video.Masks(ctx, &r, y, backgrounds[k], c.seq.Geometry, kind.opt)
			if err != nil {
				return nil, err
			}
			tau := rep.Options.Threshold
			if rep.Rule == "noise" {
				tau = rep.Options.NoiseFactor * rep.Noise
			}
			for gi, group := range groups {
				var pred, truth []bool
				for _, j := range group {
					truth = append(truth, c.truth[j]...)
					for i := 0; i < p; i++ {
						pred = append(pred, masks.At(i, j) > 0)
					}
				}
				sc, err := metrics.Detect(pred, truth)
				if err != nil {
					return nil, err
				}
				rows = append(rows, []string{c.name, labels[gi], run.label, kind.name, num(tau), num(sc.Precision), num(sc.Recall), num(sc.F)})
			}
		}
	}
	return rows, nil
}

// montageWidth is the largest panel width of a montage; wider frames are
// shown shrunk by an integer factor (display only; the methods ran on the
// frames as loaded).
const montageWidth = 180

// writeMontage writes video-CLIP.png: for a few frames (those with a
// ground truth first), the original and the background of each method.
func writeMontage(w *writer, c *clip, runs []videoRun, backgrounds []*mat.Dense) error {
	g := c.seq.Geometry
	n := len(c.seq.Names)
	var show []int
	for j := 0; j < n && len(show) < 2; j++ {
		if c.truth[j] != nil && c.name != "synthetic" {
			show = append(show, j)
		}
	}
	// Fill up with frames a third and three quarters into the clip,
	// skipping any within a tenth of the clip of one already shown.
	near := func(j int) bool {
		for _, s := range show {
			if abs(j-s) < max(1, n/10) {
				return true
			}
		}
		return false
	}
	for _, j := range []int{n / 3, (3 * n) / 4, 2 * n / 3, n - 1} {
		if len(show) < 2 && !near(j) {
			show = append(show, j)
		}
	}
	shrink := 1
	for g.Width/shrink > montageWidth {
		shrink++
	}
	zoom := 1
	for g.Width*zoom < 150 {
		zoom++
	}
	var grid [][]video.Panel
	for _, j := range show {
		img, err := video.FrameImage(c.seq.Y, j, g)
		if err != nil {
			return err
		}
		row := []video.Panel{{Image: video.Shrink(img, shrink), Label: strings.TrimSuffix(c.seq.Names[j], filepath.Ext(c.seq.Names[j]))}}
		for k, run := range runs {
			bg, err := video.FrameImage(backgrounds[k], j, g)
			if err != nil {
				return err
			}
			row = append(row, video.Panel{Image: video.Shrink(bg, shrink), Label: fmt.Sprintf("%s · %s", run.label, fmtSeconds(run.seconds))})
		}
		grid = append(grid, row)
	}
	img := video.Montage(grid, video.MontageOptions{Zoom: zoom})
	var out image.Image = img
	if g := grayIfGray(img); g != nil {
		out = posterize(g, 64)
	}
	return w.writeFile("video-"+c.name+".png", func(f io.Writer) error { return writeImagePNG(f, out) })
}

// posterize reduces a gray image to the given number of levels (a power
// of two up to 256), the middle of each band, in place. It is for display
// only: 64 levels look the same to the eye and make montages of noisy
// frames about 30% smaller as PNG.
func posterize(g *image.Gray, levels int) *image.Gray {
	step := 256 / levels
	if step <= 1 {
		return g
	}
	for i, v := range g.Pix {
		g.Pix[i] = uint8(min(int(v)/step*step+step/2, 255))
	}
	return g
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// fmtSeconds formats a run time for a panel title.
func fmtSeconds(s float64) string {
	switch {
	case s < 0.1:
		return fmt.Sprintf("%.0fms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2fs", s)
	}
	return fmt.Sprintf("%.1fs", s)
}
