package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/video"
)

func init() {
	register(&command{
		name:    "video",
		summary: "separate the background and the moving foreground of a video (Section 5.2)",
		run:     runVideo,
	})
}

// Video defaults (see docs/video.md for the measurements behind them).
const (
	// videoAlpha is the default α: the paper's video setting.
	videoAlpha = 0.2
	// videoFactorTol is the default stop on the relative factor change
	// (a relative step of 1e-3.5 ≈ 3e-4 of the factors): real convergence,
	// not the paper's 4e-4, which stops real footage after 2 iterations.
	videoFactorTol = 1e-7
	// videoGamma is the default γ of gd: the paper's video value. The
	// library's defaults (2 on all entries, 3 with --p < 1) mark 40% and
	// 60% of every pixel's observed values as foreground, which ruins the
	// background with --p < 1 (docs/video.md).
	videoGamma = 1
	// videoMaxIter caps the iterations of the default gd run.
	videoMaxIter = 500
)

// videoMemFactor is the peak memory of a run in units of the size of Y.
const videoMemFactor = 6

// The paper's Appendix B video settings (--preset paper).
const (
	paperRank      = 10
	paperAlpha     = 0.2
	paperMu        = 10
	paperGamma     = 1
	paperStep      = 0.5
	paperFactorTol = 4e-4
	paperResTol    = 1e-3 // AltProj and IALM
)

// videoFlags are the flags of "rpca video".
type videoFlags struct {
	solveFlags
	in, out       string
	frames        string
	scale         float64
	color         bool
	preset        string
	maxRank       int
	rankGap       float64
	maskThreshold float64
	maskFilter    int
	minObject     int
	foreground    string
	truth         string
	truthFrame    string
	force         bool
	montageFrames int
}

func (f *videoFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "video", "--in FRAMES_DIR_OR_VIDEO --out DIR [flags]", `
Separates a video with a static camera into its background (the low-rank
part M of Y, whose columns are the frames) and its moving foreground, as in
the paper's Section 5.2. Frames come from a directory of PNG, JPEG, BMP or
PGM/PPM images (sorted by name, all the same size; files named
groundtruth* are skipped) or from a video file decoded by an installed
ffmpeg. Frames are converted to grayscale unless --color is given, which
stacks the red, green and blue planes of a frame into one column (one
problem whose background is shared by the channels).

By default the rank is chosen from the data (the last k ≤ --max-rank with
σ_k/σ_{k+1} ≥ --rank-gap among the singular values of Y, or 1) and gd
runs to real convergence (factor change ≤ 1e-7, at most 500 iterations),
with α = 0.2, γ = 1 and the library's other gd defaults (step 0.5, μ = 10).
--preset paper uses the paper's Appendix B settings instead (r = 10,
α = 0.2, μ = 10, γ = 1, step 0.5, factor change ≤ 4e-4; residual 1e-3 for
altproj and ialm). Flags given on the command line override either.
--method median is the per-pixel temporal median, a baseline.

DIR receives background/, foreground/ (|Y − M|, or |S| with
--foreground sparse, scaled so that its 99.5% quantile is white) and mask/
(|Y − M| > --mask-threshold), one PNG per frame named like the input
frame; montage.png (original | background | foreground | mask for a few
frames, labelled with the method and run time) and summary.json. DIR is
written atomically: it appears complete or not at all, and an existing
non-empty DIR is replaced only with --force. With --truth MASK.png
--truth-frame NAME the mask of frame NAME is scored against MASK.png:
precision, recall and F-measure.`)
	f.allowAuto = true
	f.solveFlags.register(fs, 0, videoAlpha)
	// The shared flags, with what they mean for this command.
	for name, usage := range map[string]string{
		"rank":       "rank r of the background (0: choose it from the data, see --max-rank and --rank-gap; --preset paper: 10)",
		"method":     "method: auto (accaltproj, or gd with --p < 1; gd with --preset paper), accaltproj, gd (the paper's gradient descent), scaledgd, altproj, ialm, or median (the per-pixel temporal median, a baseline)",
		"gamma":      "gd: γ, the sparse estimator keeps ⌊γα·d⌋ per line in the iterations (0: 1 here, the paper's video value)",
		"factor-tol": fmt.Sprintf("gd: relative factor-change tolerance (0: %g, --preset paper: %g; <0: off)", videoFactorTol, paperFactorTol),
		"max-iter":   fmt.Sprintf("iteration cap (0: %d for gd, the method's default otherwise)", videoMaxIter),
		"tol":        fmt.Sprintf("relative residual tolerance ‖Y−UVᵀ−S‖/‖Y‖ (0: method default, --preset paper: %g for altproj and ialm; <0: off)", paperResTol),
	} {
		fs.Lookup(name).Usage = usage
	}
	fs.StringVar(&f.in, "in", "", "directory of frame images, or a video file (needs ffmpeg)")
	fs.StringVar(&f.out, "out", "", "output directory (created atomically)")
	fs.StringVar(&f.frames, "frames", "", "frame range a:b (0-based, b exclusive; either may be omitted) of the sorted frames")
	fs.Float64Var(&f.scale, "scale", 1, "downscale frames by this factor, 1/n for an integer n (0.5, 0.25, …)")
	fs.BoolVar(&f.color, "color", false, "keep the three color channels (stacked as rows of one problem)")
	fs.StringVar(&f.preset, "preset", "", "parameter preset: empty (defaults measured on real footage) or paper (the paper's Appendix B settings)")
	fs.IntVar(&f.maxRank, "max-rank", video.DefaultMaxRank, "largest rank the automatic rank rule may choose (--rank 0)")
	fs.Float64Var(&f.rankGap, "rank-gap", video.DefaultMinGap, "automatic rank rule: the rank is the last k ≤ --max-rank with σ_k/σ_{k+1} ≥ this (> 1)")
	fs.Float64Var(&f.maskThreshold, "mask-threshold", video.DefaultMaskThreshold, "foreground mask threshold on the foreground magnitude, intensities in [0, 1]")
	fs.IntVar(&f.maskFilter, "mask-filter", video.DefaultMaskFilter, "radius of the majority filter on each frame's mask (2: 5×5 windows; 0: off)")
	fs.IntVar(&f.minObject, "min-object", video.DefaultMinObject, "drop foreground regions of fewer pixels than this (≤ 1: off)")
	fs.StringVar(&f.foreground, "foreground", "residual", "foreground image and mask source: residual (|Y − M|) or sparse (|S|, the method's sparse part)")
	fs.StringVar(&f.truth, "truth", "", "ground-truth mask image of one frame (nonzero = foreground) to score the mask")
	fs.StringVar(&f.truthFrame, "truth-frame", "", "name of the frame that --truth belongs to (required with --truth)")
	fs.BoolVar(&f.force, "force", false, "replace DIR if it exists and is not empty")
	fs.IntVar(&f.montageFrames, "montage-frames", 4, "number of frames shown in montage.png")
	return fs
}

// videoSummary is summary.json and the --json output.
type videoSummary struct {
	Method        string             `json:"method"`
	Preset        string             `json:"preset"`
	Input         string             `json:"input"`
	Output        string             `json:"output"`
	Frames        int                `json:"frames"`
	FirstFrame    string             `json:"first_frame"`
	LastFrame     string             `json:"last_frame"`
	Width         int                `json:"width"`
	Height        int                `json:"height"`
	Channels      int                `json:"channels"`
	Scale         float64            `json:"scale"`
	Rank          int                `json:"rank,omitempty"`
	RankRule      string             `json:"rank_rule,omitempty"`
	RankReason    string             `json:"rank_reason,omitempty"`
	Alpha         float64            `json:"alpha"`
	P             float64            `json:"p"`
	Seed          uint64             `json:"seed"`
	MaxIter       int                `json:"max_iter,omitempty"`
	FactorTol     float64            `json:"factor_tol,omitempty"`
	ResidualTol   float64            `json:"residual_tol,omitempty"`
	Params        map[string]float64 `json:"params,omitempty"`
	Iterations    int                `json:"iterations"`
	Seconds       float64            `json:"seconds"`
	RankSeconds   float64            `json:"rank_seconds,omitempty"`
	LoadSeconds   float64            `json:"load_seconds"`
	StopReason    string             `json:"stop_reason"`
	Residual      *number            `json:"residual"`
	Foreground    string             `json:"foreground"`
	MaskThreshold float64            `json:"mask_threshold"`
	MaskFilter    int                `json:"mask_filter_radius"`
	MinObject     int                `json:"min_object_pixels"`
	DisplayScale  float64            `json:"foreground_display_scale"`
	Truth         *truthScore        `json:"truth,omitempty"`
}

// truthScore is the score of one frame's mask against a ground truth.
type truthScore struct {
	Mask      string  `json:"mask"`
	Frame     string  `json:"frame"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F         float64 `json:"f_measure"`
}

func runVideo(ctx context.Context, e *env, args []string) error {
	var f videoFlags
	fs := f.register(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	opts, err := f.prepare(set)
	if err != nil {
		return err
	}
	// Refuse an existing output before the (possibly long) work.
	dir, err := formats.NewAtomicDir(f.out, f.force, f.in, f.truth)
	if err != nil {
		if errors.Is(err, formats.ErrDirExists) {
			return fmt.Errorf("%s exists and is not empty; use --force to replace it", f.out)
		}
		return fmt.Errorf("--out: %v", err)
	}
	defer dir.Abort()

	if _, err := os.Stat(f.in); err != nil {
		return fmt.Errorf("--in: %v", err)
	}
	vprog := newProgress(e, &f.solveFlags)
	vprog.stage("loading frames from %s", f.in)
	t0 := time.Now()
	seq, err := video.Load(ctx, f.in, opts)
	if err != nil {
		return err
	}
	load := time.Since(t0)
	_, d2 := seq.Y.Dims()
	sum := &videoSummary{
		Method: f.method, Preset: f.preset, Input: f.in, Output: f.out,
		Frames: d2, FirstFrame: seq.Names[0], LastFrame: seq.Names[d2-1],
		Width: seq.Width, Height: seq.Height, Channels: seq.Channels(), Scale: f.scale,
		Alpha: f.alpha, P: f.p, Seed: f.seed, LoadSeconds: load.Seconds(),
		Foreground: f.foreground, MaskThreshold: f.maskThreshold, MaskFilter: f.maskFilter, MinObject: f.minObject,
	}
	truth, truthIdx, err := f.loadTruth(seq)
	if err != nil {
		return err
	}

	bg, fg, err := f.separate(ctx, e, seq, sum)
	if err != nil {
		return err
	}

	// Outputs.
	g := seq.Geometry
	sum.DisplayScale = video.DisplayScale(fg, 0, f.maskThreshold)
	mask := pixelMasks(fg, g, f.maskThreshold)
	cleanMasks(mask, g, f.maskFilter, f.minObject)
	gray := video.Geometry{Width: g.Width, Height: g.Height}
	if truth != nil {
		pred := make([]bool, g.Pixels())
		for i := range pred {
			pred[i] = mask.At(i, truthIdx) > 0
		}
		sc, err := metrics.Detect(pred, truth)
		if err != nil {
			return err
		}
		sum.Truth = &truthScore{Mask: f.truth, Frame: seq.Names[truthIdx], Precision: sc.Precision, Recall: sc.Recall, F: sc.F}
	}
	writes := []struct {
		sub string
		m   video.Matrix
		g   video.Geometry
	}{
		{"background", bg, g},
		{"foreground", video.Magnitude(fg, sum.DisplayScale), g},
		{"mask", mask, gray},
	}
	vprog.stage("writing %d PNGs into %s", len(writes)*len(seq.Names)+1, f.out)
	for _, w := range writes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := video.WriteFrames(dir.Join(w.sub), seq.Names, w.m, w.g); err != nil {
			return err
		}
	}
	mont, err := videoMontage(seq, bg, fg, mask, sum, f.montageFrames, truthIdx)
	if err != nil {
		return err
	}
	if err := video.WritePNG(dir.Join("montage.png"), mont); err != nil {
		return err
	}
	if err := formats.WriteFileAtomic(dir.Join("summary.json"), func(w io.Writer) error { return writeJSON(w, sum) }); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := dir.Commit(); err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	if f.jsonOut {
		return writeJSON(e.stdout, sum)
	}
	_, err = fmt.Fprintln(e.stdout, summaryLine(sum))
	return err
}

// prepare validates the flags, applies the preset and the video defaults
// to the flags not given on the command line (set), and returns the
// loading options.
func (f *videoFlags) prepare(set map[string]bool) (video.Options, error) {
	var opts video.Options
	usage := func(format string, a ...any) error {
		return fmt.Errorf(format+": %w", append(a, errUsage)...)
	}
	if f.in == "" {
		return opts, usage("video: --in FRAMES_DIR_OR_VIDEO is required (run 'rpca video -h' for help)")
	}
	if f.out == "" {
		return opts, usage("video: --out DIR is required (run 'rpca video -h' for help)")
	}
	if absPath(f.in) == absPath(f.out) {
		return opts, usage("video: --out must differ from --in")
	}
	r, err := video.ParseRange(f.frames)
	if err != nil {
		return opts, usage("--frames: %v", strings.TrimPrefix(err.Error(), "video: "))
	}
	// The library reads scale 0 as "not set" (1); on the command line the
	// default is 1, so an explicit 0 is a mistake.
	if f.scale == 0 {
		return opts, usage("--scale: scale 0 must be in (0, 1]")
	}
	if _, err := video.ScaleFactor(f.scale); err != nil {
		return opts, usage("--scale: %v", strings.TrimPrefix(err.Error(), "video: "))
	}
	if math.IsNaN(f.maskThreshold) || f.maskThreshold < 0 {
		return opts, usage("--mask-threshold must be non-negative, got %v", f.maskThreshold)
	}
	if f.maskFilter < 0 || f.maskFilter > 50 {
		return opts, usage("--mask-filter must be a radius from 0 (off) to 50, got %d", f.maskFilter)
	}
	if f.minObject < 0 {
		return opts, usage("--min-object must be non-negative (0 or 1: off), got %d", f.minObject)
	}
	if f.foreground != "residual" && f.foreground != "sparse" {
		return opts, usage("--foreground must be residual or sparse, got %q", f.foreground)
	}
	if f.maxRank < 1 {
		return opts, usage("--max-rank must be at least 1, got %d", f.maxRank)
	}
	if !(f.rankGap > 1) || math.IsInf(f.rankGap, 0) {
		return opts, usage("--rank-gap must be a finite number above 1, got %v", f.rankGap)
	}
	if f.montageFrames < 1 {
		return opts, usage("--montage-frames must be at least 1, got %d", f.montageFrames)
	}
	if f.rank < 0 {
		return opts, usage("--rank must be at least 1 (or 0 to choose it from the data), got %d", f.rank)
	}
	switch f.method {
	case methodAuto, "":
		// AccAltProj for the full frames: the background's spectrum is
		// dominated by the mean frame (σ₁/σ₂ = 12–27 on the clips), which
		// slows the gradient method at ranks above 1; the paper's gradient
		// method with --p < 1 (Algorithm 2) or --preset paper (whose
		// settings are the gradient method's).
		f.method = autoMethod(f.p < 1 || f.preset == "paper")
	case "gd", "scaledgd", "accaltproj", "altproj", "ialm", "median":
	default:
		return opts, usage("unknown --method %q (want auto, accaltproj, gd, scaledgd, altproj, ialm or median)", f.method)
	}
	if f.method == "median" && f.foreground == "sparse" {
		return opts, usage("--method median has no sparse part; use --foreground residual")
	}
	// def gives a flag that was not set, or set to 0 ("default"), the
	// value v of the preset.
	def := func(name string, p *float64, v float64) {
		if !set[name] || *p == 0 {
			*p = v
		}
	}
	switch f.preset {
	case "":
		if f.method == "gd" {
			def("factor-tol", &f.factorTol, videoFactorTol)
			def("gamma", &f.gamma, videoGamma)
			if f.maxIter == 0 {
				f.maxIter = videoMaxIter
			}
		}
	case "paper":
		if !set["rank"] {
			f.rank = paperRank
		}
		if !set["alpha"] {
			f.alpha = paperAlpha
		}
		def("mu", &f.mu, paperMu)
		if f.method == "gd" {
			def("gamma", &f.gamma, paperGamma)
			def("step", &f.step, paperStep)
			def("factor-tol", &f.factorTol, paperFactorTol)
		} else {
			def("tol", &f.tol, paperResTol)
		}
	default:
		return opts, usage("--preset must be empty or paper, got %q", f.preset)
	}
	// The checks of the shared flags, with the rank (maybe still 0 = auto)
	// checked after the data are loaded.
	rank := f.rank
	f.rank = max(rank, 1)
	err = f.check()
	f.rank = rank
	if err != nil {
		return opts, err
	}
	if f.method != "gd" && f.method != "scaledgd" && f.method != "median" && f.p < 1 {
		return opts, usage("--p < 1 (subsampling) works with --method gd only")
	}
	opts = video.Options{Range: r, Scale: f.scale, Color: f.color}
	// Y, M, the foreground, the mask and the sorted magnitudes for the
	// display scale each take about the size of Y: refuse a Y above a
	// sixth of the free memory (video.Load says to use --frames or --scale).
	if free := availableMemory() / videoMemFactor; free < float64(video.DefaultMaxBytes) {
		opts.MaxBytes = max(int64(free), 1)
	}
	return opts, nil
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// loadTruth loads --truth and finds the frame it belongs to; it returns a
// nil mask without --truth.
func (f *videoFlags) loadTruth(seq *video.Sequence) ([]bool, int, error) {
	if f.truth == "" {
		if f.truthFrame != "" {
			return nil, 0, fmt.Errorf("--truth-frame needs --truth MASK.png: %w", errUsage)
		}
		return nil, -1, nil
	}
	if f.truthFrame == "" {
		return nil, 0, fmt.Errorf("--truth needs --truth-frame NAME, the frame the mask belongs to: %w", errUsage)
	}
	mask, w, h, err := video.LoadMask(f.truth, f.scale)
	if err != nil {
		return nil, 0, fmt.Errorf("--truth: %v", strings.TrimPrefix(err.Error(), "video: "))
	}
	if w != seq.Width || h != seq.Height {
		return nil, 0, fmt.Errorf("--truth: %s is %d×%d after scaling, but the frames are %d×%d", f.truth, w, h, seq.Width, seq.Height)
	}
	stem := func(s string) string { b := filepath.Base(s); return strings.TrimSuffix(b, filepath.Ext(b)) }
	idx := -1
	for k, n := range seq.Names {
		if n == f.truthFrame || stem(n) == stem(f.truthFrame) {
			idx = k
			break
		}
	}
	if idx < 0 {
		return nil, 0, fmt.Errorf("--truth-frame %s is not among the %d selected frames (%s … %s)", f.truthFrame, len(seq.Names), seq.Names[0], seq.Names[len(seq.Names)-1])
	}
	return mask, idx, nil
}

// separate runs the chosen method and returns the background M and the
// foreground (Y − M, or S) as d1×d2 matrices; it fills in sum.
func (f *videoFlags) separate(ctx context.Context, e *env, seq *video.Sequence, sum *videoSummary) (bg *mat.Dense, fg video.Matrix, err error) {
	y := seq.Y
	d1, d2 := y.Dims()
	if f.method == "median" {
		t0 := time.Now()
		med, err := video.MedianBackground(ctx, y)
		if err != nil {
			return nil, nil, err
		}
		bg = mat.NewDense(d1, d2, nil)
		for j := 0; j < d2; j++ {
			bg.SetCol(j, med.RawVector().Data)
		}
		sum.Seconds = time.Since(t0).Seconds()
		sum.StopReason = "exact"
		sum.Residual = nil
		sum.Alpha, sum.P = 0, 1
		var r mat.Dense
		r.Sub(y, bg)
		return bg, &r, nil
	}
	if f.rank == 0 {
		t0 := time.Now()
		c, err := video.ChooseRank(ctx, y, f.maxRank, f.rankGap)
		if err != nil {
			return nil, nil, err
		}
		f.rank = c.Rank
		sum.RankSeconds = time.Since(t0).Seconds()
		sum.RankRule, sum.RankReason = "auto", c.Reason()
	} else {
		sum.RankRule = "flag"
		sum.RankReason = "--rank given"
		if f.preset == "paper" && f.rank == paperRank {
			sum.RankRule, sum.RankReason = "preset", "the paper's r = 10 (--preset paper)"
		}
	}
	if m := min(d1, d2); f.rank >= m {
		return nil, nil, fmt.Errorf("--rank %d must be smaller than min(pixels, frames) = min(%d, %d) = %d; use a lower rank or more frames: %w", f.rank, d1, d2, m, errUsage)
	}
	sum.Rank = f.rank
	method, err := f.newMethod()
	if err != nil {
		return nil, nil, err
	}
	s := f.settings()
	prog := newProgress(e, &f.solveFlags)
	s.Callback = prog.callback
	prog.stage("solving %d×%d at rank %d with %s (initialization, then iterations)", d1, d2, f.rank, method.Name())
	res, err := rpca.Solve(ctx, &rpca.Problem{Dense: y}, s, method)
	prog.done()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, nil, err
		}
		return nil, nil, err // the error chain is kept; main prints "rpca: " once
	}
	prog.warnUnconverged(res)
	sum.Method = res.Method
	sum.Rank = res.U.RawMatrix().Cols // the rank the method used (IALM finds its own)
	sum.MaxIter, sum.FactorTol, sum.ResidualTol = f.maxIter, f.factorTol, f.tol
	sum.Params = res.Params
	sum.Iterations = res.Iterations
	sum.Seconds = res.Elapsed.Seconds()
	sum.StopReason = string(res.Stop)
	sum.Residual = finite(res.Residual)
	bg = res.LowRank()
	if f.foreground == "sparse" {
		return bg, res.S, nil
	}
	var r mat.Dense
	r.Sub(y, bg)
	return bg, &r, nil
}

// pixelMasks returns the pixels×frames 0/1 matrix of the foreground masks:
// 1 where the magnitude of fg exceeds the threshold in any channel.
func pixelMasks(fg video.Matrix, g video.Geometry, threshold float64) *mat.Dense {
	_, d2 := fg.Dims()
	p := g.Pixels()
	out := mat.NewDense(p, d2, nil)
	set := func(i, j int, v float64) {
		if math.Abs(v) > threshold {
			out.Set(i%p, j, 1)
		}
	}
	switch m := fg.(type) {
	case *rpca.Sparse:
		m.Do(set)
	case *mat.Dense:
		raw := m.RawMatrix()
		for i := 0; i < raw.Rows; i++ {
			for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
				set(i, j, v)
			}
		}
	default:
		r, c := fg.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				set(i, j, fg.At(i, j))
			}
		}
	}
	return out
}

// cleanMasks applies video.CleanMask to every frame (column) of mask.
func cleanMasks(mask *mat.Dense, g video.Geometry, radius, minSize int) {
	if radius <= 0 && minSize <= 1 {
		return
	}
	p, d2 := mask.Dims()
	col := make([]bool, p)
	for j := 0; j < d2; j++ {
		for i := range col {
			col[i] = mask.At(i, j) > 0
		}
		for i, v := range video.CleanMask(col, g.Width, g.Height, radius, minSize) {
			x := 0.0
			if v {
				x = 1
			}
			mask.Set(i, j, x)
		}
	}
}

// videoMontage lays out original | background | foreground | mask for n
// evenly spaced frames (the truth frame among them when there is one).
func videoMontage(seq *video.Sequence, bg *mat.Dense, fg video.Matrix, mask *mat.Dense, sum *videoSummary, n, truthIdx int) (image.Image, error) {
	d2 := len(seq.Names)
	n = min(n, d2)
	idx := make([]int, n)
	for k := range idx {
		idx[k] = (2*k + 1) * d2 / (2 * n)
	}
	if truthIdx >= 0 {
		near := 0
		dist := func(j int) int { return max(j-truthIdx, truthIdx-j) }
		for k, j := range idx {
			if dist(j) < dist(idx[near]) {
				near = k
			}
		}
		idx[near] = truthIdx
	}
	g := seq.Geometry
	gray := video.Geometry{Width: g.Width, Height: g.Height}
	method := sum.Method
	if sum.Rank > 0 {
		method += fmt.Sprintf(" r=%d", sum.Rank)
	}
	if sum.Preset != "" {
		method += " (" + sum.Preset + ")"
	}
	fgLabel := "foreground |Y-M|"
	if sum.Foreground == "sparse" {
		fgLabel = "foreground |S|"
	}
	var rows [][]video.Panel
	for _, j := range idx {
		frame := func(m video.Matrix, gg video.Geometry) (image.Image, error) { return video.FrameImage(m, j, gg) }
		orig, err := frame(seq.Y, g)
		if err != nil {
			return nil, err
		}
		b, err := frame(bg, g)
		if err != nil {
			return nil, err
		}
		fgImg, err := frame(video.Magnitude(fg, sum.DisplayScale), g)
		if err != nil {
			return nil, err
		}
		mk, err := frame(mask, gray)
		if err != nil {
			return nil, err
		}
		mlabel := fmt.Sprintf("mask >%g", sum.MaskThreshold)
		if sum.Truth != nil && j == truthIdx {
			mlabel += fmt.Sprintf(" F=%.2f", sum.Truth.F)
		}
		rows = append(rows, []video.Panel{
			{Image: orig, Label: seq.Names[j]},
			{Image: b, Label: fmt.Sprintf("%s %.2fs", method, sum.Seconds)},
			{Image: fgImg, Label: fgLabel},
			{Image: mk, Label: mlabel},
		})
	}
	zoom := 1
	if g.Width < 200 {
		zoom = 2
	}
	m := video.Montage(rows, video.MontageOptions{Zoom: zoom})
	if g.Color {
		return m, nil
	}
	// Gray frames, black labels on white: a gray PNG is a third the size.
	gm := image.NewGray(m.Bounds())
	draw.Draw(gm, gm.Bounds(), m, m.Bounds().Min, draw.Src)
	return gm, nil
}

// summaryLine is the one-line summary printed on success.
func summaryLine(s *videoSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %d frames of %d×%d", s.Method, s.Frames, s.Width, s.Height)
	if s.Channels == 3 {
		b.WriteString(" (color)")
	}
	if s.Rank > 0 {
		fmt.Fprintf(&b, ", rank %d (%s)", s.Rank, s.RankRule)
	}
	if s.Method != "median" {
		fmt.Fprintf(&b, ", %d iterations (%s)", s.Iterations, s.StopReason)
	}
	fmt.Fprintf(&b, " in %.2fs", s.Seconds)
	if s.Truth != nil {
		fmt.Fprintf(&b, "; %s: precision %.3f, recall %.3f, F %.3f", s.Truth.Frame, s.Truth.Precision, s.Truth.Recall, s.Truth.F)
	}
	fmt.Fprintf(&b, "; wrote %s", s.Output)
	return b.String()
}
