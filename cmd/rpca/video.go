package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/gcpolicy"
	"github.com/rpca-gd/rpca/internal/note"
	"github.com/rpca-gd/rpca/internal/progress"
	"github.com/rpca-gd/rpca/internal/solveflags"
	"github.com/rpca-gd/rpca/methods"
	"github.com/rpca-gd/rpca/video"
	"github.com/rpca-gd/rpca/video/frames"
)

func init() {
	register(&command{
		name:    "video",
		summary: "separate the background and the moving foreground of a video (Section 5.2)",
		run:     withFlags(runVideo),
	})
}

// videoFlags are the flags of "rpca video".
type videoFlags struct {
	solveflags.Flags
	in, out       string
	frames        string
	scale         float64
	color, gray   bool
	preset        string
	maxRank       int
	rankGap       float64
	maskThreshold float64
	noiseFactor   float64
	pixelNoise    bool
	maskSmooth    int
	maskFilter    int
	minObject     int
	keepShadows   bool
	displacement  int
	foreground    string
	truth         string
	truthFrame    string
	truthDir      string
	force         bool
	montageFrames int
	preview       bool
	window        int
	sketchRows    int
	stream        bool
	history       int
	refit         int
	track         float64
}

func (f *videoFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "video", "--in FRAMES_DIR_OR_VIDEO --out DIR [flags]", nil)
	f.AllowAuto, f.RankAuto, f.Alpha = true, true, video.Presets[""].Alpha
	f.Flags.Register(fs, solveflags.Solve)
	// The shared flags, with what they mean for this command.
	for name, usage := range map[string]string{
		"rank":       "rank `r` of the background, a positive integer, or auto to choose it from the data (see --max-rank and --rank-gap; --preset paper: 10)",
		"method":     "method: auto (scaledgd; gd with --p < 1 or --preset paper), accaltproj, gd (the paper's gradient descent), scaledgd, altproj, ialm, or median (the per-pixel temporal median, a baseline)",
		"gamma":      "gd: γ, the sparse estimator keeps ⌊γα·d⌋ per line in the iterations (0: 1 here, the paper's video value)",
		"factor-tol": fmt.Sprintf("gd: relative factor-change tolerance (0: %g, --preset paper: %g; <0: off)", video.Presets[""].FactorTol, video.Presets["paper"].FactorTol),
		"max-iter":   fmt.Sprintf("iteration cap (0: %d for gd, the method's default otherwise)", video.Presets[""].MaxIter),
		"tol":        fmt.Sprintf("relative residual tolerance ‖Y−UVᵀ−S‖/‖Y‖ (0: method default, --preset paper: %g for altproj and ialm; <0: off)", video.Presets["paper"].ResidualTol),
	} {
		fs.Lookup(name).Usage = usage
	}
	fs.StringVar(&f.in, "in", "", "directory of frame images, a video file or a URL such as a camera's rtsp://… (needs ffmpeg), or - for YUV4MPEG2 frames on standard input (ffmpeg -i SOURCE -f yuv4mpegpipe - | rpca video --in - …)")
	fs.StringVar(&f.out, "out", "", "output directory (created atomically)")
	fs.StringVar(&f.frames, "frames", "", "frame range a:b (0-based, b exclusive; either may be omitted) of the sorted frames")
	cliflag.Var(fs, &f.scale, "scale", 1, cliflag.Rate, "in (0, 1]", "downscale frames by this factor, 1/n for an integer n (0.5, 0.25, …)")
	fs.BoolVar(&f.color, "color", false, "keep the three colour channels even if the frames look gray")
	fs.BoolVar(&f.gray, "gray", false, "convert colour frames to gray (luma)")
	fs.StringVar(&f.preset, "preset", "", "parameter preset: empty (defaults measured on real footage) or paper (the paper's Appendix B settings)")
	cliflag.Var(fs, &f.maxRank, "max-rank", video.DefaultMaxRank, cliflag.AtLeast(1), "at least 1", "largest rank the automatic rank rule may choose (--rank auto)")
	cliflag.Var(fs, &f.rankGap, "rank-gap", video.DefaultMinGap, func(x float64) bool { return x > 1 && cliflag.Finite(x) }, "a finite number above 1", "automatic rank rule: the rank is the last k ≤ --max-rank with σ_k/σ_{k+1} ≥ this (> 1)")
	cliflag.Var(fs, &f.maskThreshold, "mask-threshold", 0, cliflag.OrDefault, "a non-negative number (0: from the noise)", "fixed foreground threshold on the residual, intensities in [0, 1] (0: --noise-factor times each frame's noise level)")
	cliflag.Var(fs, &f.noiseFactor, "noise-factor", video.DefaultNoiseFactor, cliflag.Positive, "a positive number", "foreground when the residual exceeds this many times the frame's noise level")
	fs.BoolVar(&f.pixelNoise, "pixel-noise", false, "also scale the threshold by each pixel's own noise level over time (for moving backgrounds such as foliage; with --stream, over the history at each fit)")
	cliflag.Var(fs, &f.sketchRows, "sketch-rows", video.DefaultSketchRows, cliflag.AtLeast(0), "a number of rows (0: all)", "solve on this many rows of Y (pixel channels, drawn at random) and fit every row to the background's frame components found there (0: solve on all rows)")
	cliflag.Var(fs, &f.maskSmooth, "mask-smooth", video.DefaultMaskSmooth, cliflag.Between(0, 50), "a radius from 0 (off) to 50", "radius of a box mean of the normalised residual before thresholding, a pixel's own residual also above half the threshold: fills holes inside objects without spreading them (0: off)")
	cliflag.Var(fs, &f.maskFilter, "mask-filter", video.DefaultMaskFilter, cliflag.Between(0, 50), "a radius from 0 (off) to 50", "radius of the majority filter on each frame's mask (1: 3×3 windows; 0: off)")
	cliflag.Var(fs, &f.minObject, "min-object", video.DefaultMinObject, cliflag.AtLeast(0), "non-negative (0 or 1: off)", "drop foreground regions of fewer pixels than this (≤ 1: off)")
	cliflag.Var(fs, &f.displacement, "displacement", video.DefaultDisplacement, cliflag.Between(0, video.MaxDisplacement), fmt.Sprintf("a radius from 0 (off) to %d", video.MaxDisplacement), "drop foreground regions that one shift of the background by at most this many pixels explains in at least half of their pixels above the threshold (camera shake, swaying leaves; 0: off)")
	fs.BoolVar(&f.keepShadows, "keep-shadows", false, "count cast shadows as foreground (by default a pixel darker than the background by one factor in every channel, keeping its colour and its texture, is a shadow)")
	cliflag.Var(fs, &f.foreground, "foreground", "residual", cliflag.OneOf("residual", "sparse"), "residual or sparse", "foreground image and mask source: residual (|Y − M|) or sparse (|S|, the method's sparse part)")
	fs.StringVar(&f.truth, "truth", "", "ground-truth mask image of one frame (nonzero = foreground) to score the mask")
	fs.StringVar(&f.truthFrame, "truth-frame", "", "name of the frame that --truth belongs to (required with --truth)")
	fs.StringVar(&f.truthDir, "truth-dir", "", "directory of ground truths in the layout of the CDnet 2014 benchmark (gt + the frame name's digits + .png; 255 foreground, 0 and 50 background, other values not scored): the masks of every frame that has one are scored, pooled (needs --scale 1)")
	fs.BoolVar(&f.force, "force", false, "replace DIR if it exists and is not empty")
	cliflag.Var(fs, &f.montageFrames, "montage-frames", 4, cliflag.AtLeast(1), "at least 1", "number of frames shown in montage.png")
	cliflag.Var(fs, &f.window, "window", 0, func(n int) bool { return n == 0 || n >= video.MinWindow }, fmt.Sprintf("0 (off) or at least %d frames", video.MinWindow), fmt.Sprintf("separate the clip in windows of this many frames (at least %d; a short last window joins the one before), so that memory is bounded by a window (0: the whole clip at once; with --stream, the outputs are written every %d frames)", video.MinWindow, video.StreamWindow))
	fs.BoolVar(&f.stream, "stream", false, "separate the frames one by one, each from the frames before it only, as OpenCV's background subtractors do: the first 50 frames (at most --history) are held back and decided together against a fit to them, then the background is fitted again every --refit frames to the last --history frames, each frame is projected on it, and the model is turned toward the frame's background (--track) (video.Subtractor.Push)")
	cliflag.Var(fs, &f.history, "history", video.DefaultHistory, cliflag.AtLeast(video.DefaultWarmup), fmt.Sprintf("at least %d frames", video.DefaultWarmup), "with --stream: the number of past frames the background is fitted to")
	cliflag.Var(fs, &f.refit, "refit", video.DefaultRefit, cliflag.AtLeast(1), "at least 1 frame", "with --stream: the number of frames between two fits of the background")
	cliflag.Var(fs, &f.track, "track", video.DefaultTrack, func(t float64) bool { return t >= 0 && t <= 1 }, "between 0 and 1", "with --stream: between two fits, turn the background model toward every frame's background (its pixels not in the mask) by this fraction of the rotation that takes it in (GRASTA's geodesic step; 0: off)")
	fs.BoolVar(&f.preview, "preview", true, "write an animation of original | background | foreground | mask: preview.mp4, every frame at full size, when ffmpeg is installed; else preview.gif, at most 100 frames, shrunk to 960 pixels")
	return fs
}

func runVideo(ctx context.Context, e *env, f *videoFlags, fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	ch, opts, err := f.prepare(set)
	if err != nil {
		return err
	}
	// Refuse an existing output before the (possibly long) work.
	if err := checkOutputDir(f.out, f.force, f.in, f.truth); err != nil {
		return err
	}
	if f.in == frames.StdinInput && e.stdinIsTerminal {
		return cliflag.Usagef("video: --in - reads YUV4MPEG2 frames from standard input, which is a terminal here; pipe them in (ffmpeg -i SOURCE -f yuv4mpegpipe - | rpca video --in - …)")
	}
	if f.in != frames.StdinInput && !frames.IsURL(f.in) {
		if _, err := os.Stat(f.in); err != nil {
			return fmt.Errorf("--in: %v", err)
		}
	}
	prog := newProgress(e, &f.Flags)
	defer prog.Done() // stops the heartbeat on every return
	opts.Stdin = e.stdin
	job, err := f.job(ch, opts, prog)
	if err != nil {
		return err
	}
	// A window of frames is large whatever the clip (200 frames of
	// 320×240 in colour: 370 MB as float64), and its size is known only
	// once the frames are decoded. A stream holds less (its history as
	// 16-bit levels, windows of video.StreamWindow frames), and the
	// collections of the tighter target then cost more than the memory
	// they save (docs/video.md).
	if job.Stream != nil {
		gcpolicy.Tighten(gcpolicy.LargeData)
	} else {
		gcpolicy.Tighten(gcpolicy.HugeData)
	}
	from := f.in
	if from == frames.StdinInput {
		from = "standard input"
	}
	prog.Stagef("loading frames from %s", from)
	rep, err := video.RunDir(ctx, job, f.out, f.force, f.in, f.truth)
	prog.Done()
	switch {
	case errors.Is(err, video.ErrRankTooLarge):
		return cliflag.Usagef("--rank: %w; use a lower rank or more frames", err)
	case errors.Is(err, video.ErrTruthFrame):
		return fmt.Errorf("--truth-frame: %w", err)
	case err != nil:
		return outDirError(err, f.out) // the error chain is kept; main prints "rpca: " once
	}
	printNotes(e, f.Quiet, rep.Notes(), videoRemedies(rep))
	return printReport(e, f.JSON, rep)
}

// videoRemedies are the command line's remedies for the notes of rep.
func videoRemedies(rep *video.Report) map[note.Kind]string {
	m := rep.Mask
	rule := fmt.Sprintf("--noise-factor %g", m.NoiseFactor)
	if m.Rule == "fixed" {
		rule = fmt.Sprintf("--mask-threshold %g", m.Threshold)
	}
	return map[note.Kind]string{
		video.NoteNoForeground: fmt.Sprintf(": lower %s or --min-object %d", rule, m.MinObject),
		video.NoteUnconverged:  ": raise --max-iter",
		video.NoteNotFitted:    ": give it more frames or larger ones",
	}
}

// job is the separation the flags ask for, with the method and settings
// that video.Choose made of them (ch).
func (f *videoFlags) job(ch video.Choice, opts frames.Options, prog *progress.Printer) (video.Job, error) {
	st := ch.Options.Settings
	j := video.Job{
		Input: f.in, Load: opts, Window: f.window, MontageFrames: f.montageFrames, Preview: f.preview,
		Separate: ch.Options,
		RankRule: "flag", RankReason: "--rank given",
		TruthDir: f.truthDir,
		Report: video.Report{
			Method: ch.Method, Preset: f.preset, Input: f.in, Output: f.out, Scale: f.scale,
			Alpha: st.Alpha, P: f.SampleRate, Seed: f.Seed, Foreground: f.foreground,
			MaxIter: st.Stop.MaxIter, FactorTol: st.Stop.FactorTol, ResidualTol: st.Stop.ResidualTol,
		},
	}
	sep := &j.Separate
	sep.MaxRank, sep.MinGap, sep.SketchRows = f.maxRank, f.rankGap, cmp.Or(f.sketchRows, -1)
	sep.Mask, sep.Stage, sep.Settings.Callback = f.maskOptions(), prog.Stage, prog.Record
	if ch.RankByPreset {
		j.RankRule, j.RankReason = "preset", fmt.Sprintf("the %s preset's r = %d", f.preset, st.Rank)
	}
	if f.stream {
		j.Stream = &video.StreamOptions{History: f.history, Refit: f.refit, Track: cmp.Or(f.track, -1)}
	}
	if f.truth == "" {
		return j, nil
	}
	var err error
	if j.Truth, err = video.LoadTruth(f.truth, f.truthFrame, f.scale); err != nil {
		return j, fmt.Errorf("--truth: %w", err)
	}
	return j, nil
}

// prepare validates the flags, has video.Choose resolve the method and
// apply the preset to the flags not given on the command line (set), and
// returns its choice and the loading options.
func (f *videoFlags) prepare(set map[string]bool) (video.Choice, frames.Options, error) {
	var opts frames.Options
	if err := f.checkVideo(); err != nil {
		return video.Choice{}, opts, err
	}
	if err := firstBroken(
		rule{(set["history"] || set["refit"] || set["track"]) && !f.stream, "--history, --refit and --track tune --stream"},
		rule{f.stream && f.foreground == "sparse", "--stream decides on the residual Y − M: drop --foreground sparse"},
		rule{set["track"] && f.track > 0 && f.Method == video.MethodMedian, "--track turns a low-rank background; --method median has none: drop --track"},
	); err != nil {
		return video.Choice{}, opts, err
	}
	r, err := frames.ParseRange(f.frames)
	if err != nil {
		return video.Choice{}, opts, cliflag.Usagef("--frames: %w", err)
	}
	if _, err := frames.ScaleFactor(f.scale); err != nil {
		return video.Choice{}, opts, cliflag.Usagef("--scale: %w", err)
	}
	ch, err := video.Choose(video.Request{Method: f.Method, Preset: f.preset, Rank: f.Rank, Alpha: f.Alpha,
		Given: slices.Collect(maps.Keys(set)), FactorTol: f.FactorTol, ResidualTol: f.Tol, MaxIter: f.MaxIter,
		Params: f.Params, SampleRate: f.SampleRate, SparseForeground: f.foreground == "sparse", Seed: f.Seed, Workers: f.Workers})
	if err := chooseError(err, ch.Method); err != nil {
		return ch, opts, err
	}
	opts = frames.Options{Range: r, Scale: f.scale}
	if f.color {
		opts.Color = frames.ColorRGB
	} else if f.gray {
		opts.Color = frames.ColorGray
	}
	return ch, opts, nil
}

// chooseError is the command line's error for an error of video.Choose
// for --method method.
func chooseError(err error, method string) error {
	var re *video.RequestError
	errors.As(err, &re)
	switch {
	case errors.Is(err, video.ErrUnknownPreset):
		return cliflag.Usagef("--preset must be empty or paper")
	case errors.Is(err, video.ErrUnknownMethod):
		return cliflag.Usagef("unknown --method %q (want auto, %s or median)", method, strings.Join(methods.Names(), ", "))
	case errors.Is(err, video.ErrMedianOptions):
		return cliflag.Usagef("--method median has no sparse part and none of the robust-PCA methods' settings: drop --%s", strings.Join(re.Options, ", --"))
	case errors.Is(err, video.ErrSubsample):
		return cliflag.Usagef("--p < 1 (subsampling) works with --method gd or scaledgd only")
	case err != nil:
		return solveflags.ParamError(err, method)
	}
	return nil
}

// checkVideo checks the flags of this command that need no data.
func (f *videoFlags) checkVideo() error {
	return firstBroken(
		rule{f.in == "", "video: --in FRAMES_DIR_OR_VIDEO is required (run 'rpca video -h' for help)"},
		rule{f.out == "", "video: --out DIR is required (run 'rpca video -h' for help)"},
		rule{absPath(f.in) == absPath(f.out), "video: --out must differ from --in"},
		rule{f.color && f.gray, "--color and --gray exclude each other"},
		rule{f.truth == "" && f.truthFrame != "", "--truth-frame needs --truth MASK.png"},
		rule{f.truthDir != "" && f.scale != 1, "--truth-dir scores the frames at their size: drop --scale"},
		rule{f.truth != "" && f.truthFrame == "", "--truth needs --truth-frame NAME, the frame the mask belongs to"},
	)
}

// maskOptions are the foreground decision's options from the flags.
func (f *videoFlags) maskOptions() video.MaskOptions {
	off := func(v, offAt int) int {
		if v <= offAt {
			return -1
		}
		return v
	}
	return video.MaskOptions{
		Threshold: f.maskThreshold, NoiseFactor: f.noiseFactor, PixelNoise: f.pixelNoise,
		Smooth: off(f.maskSmooth, 0), Filter: off(f.maskFilter, 0), MinObject: off(f.minObject, 1),
		KeepShadows: f.keepShadows, Displacement: off(f.displacement, 0),
	}
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
