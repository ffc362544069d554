package video

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"math"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/video/frames"
)

// Job is one separation of a clip into an output directory: what Run
// does for rpca video.
type Job struct {
	// Input is a directory of frames or a video file (see Load); Load
	// selects and scales the frames.
	Input string
	Load  frames.Options
	// Window is the number of frames separated at a time (0: the whole
	// clip at once, or StreamWindow with Stream); see SeparateWindows.
	Window int
	// Stream, when set, separates the frames one by one with a
	// [Subtractor] (Separate's options as its Fit) instead of each window
	// as a whole: every frame's background is learnt from the frames
	// before it only.
	Stream   *StreamOptions
	Separate SeparateOptions
	// Dir is the output directory, which must exist (the caller makes it
	// atomic).
	Dir string
	// Create writes each frame PNG (nil: [outdir.WriteFile], atomic and
	// synced file by file); [RunDir] sets it to its [outdir.Dir]'s Create,
	// which writes in place and syncs once at Commit.
	Create outdir.WriteFunc
	// Truth, when set, is scored against the mask of its frame.
	Truth *Truth
	// TruthDir, when set, is a directory of ground truths in the layout
	// of the change-detection benchmark CDnet 2014 ([LabelsFor]): every
	// frame that has one is scored, and the counts are pooled over the
	// frames (Report.TruthDir).
	TruthDir string
	// MontageFrames is the number of frames in montage.png (0: 4).
	MontageFrames int
	// Preview writes PreviewName(Load.LookPath): preview.mp4 when ffmpeg
	// is installed, preview.gif otherwise.
	Preview bool
	// RankRule and RankReason, when set, report where a given rank
	// (SeparateOptions.Rank) came from instead of "given".
	RankRule, RankReason string
	// Report starts the report: Run fills in what the separation found
	// and keeps the rest (method, preset, input and flags for the record).
	Report Report
}

// Truth is a ground-truth mask of one frame.
type Truth struct {
	Path  string // the mask image, for the report
	Frame string // the name of its frame (with or without extension)
	Mask  []bool // row-major pixels, as frames.LoadMask returns them
	W, H  int
}

// LoadTruth reads the ground-truth mask image path (nonzero pixels are
// foreground) of the frame named frame, downscaled like the frames.
func LoadTruth(path, frame string, scale float64) (*Truth, error) {
	mask, w, h, err := frames.LoadMask(path, scale)
	if err != nil {
		return nil, err
	}
	return &Truth{Path: path, Frame: frame, Mask: mask, W: w, H: h}, nil
}

// AutoMethod is the method "auto" stands for in a separation: ScaledGD
// on the full frames, where AccAltProj at rank ≥ 2 leaves a swaying
// background in the residual (F 0.88 against 0.99 on the generated clip,
// docs/video.md) and the scaled steps keep the gradient method fast
// although the mean frame dominates the spectrum; the paper's gradient
// method (Algorithm 2) on a subsample, or with the paper's preset.
func AutoMethod(subsample bool, preset string) string {
	if subsample || preset == "paper" {
		return "gd"
	}
	return "scaledgd"
}

// ErrTruthFrame: the truth's frame is not among the separated frames.
var ErrTruthFrame = errors.New("video: the truth's frame is not among the frames")

// Report is summary.json of a separation.
type Report struct {
	Method          string       `json:"method"`
	Preset          string       `json:"preset"`
	Input           string       `json:"input"`
	Output          string       `json:"output"`
	Frames          int          `json:"frames"`
	FirstFrame      string       `json:"first_frame"`
	LastFrame       string       `json:"last_frame"`
	Width           int          `json:"width"`
	Height          int          `json:"height"`
	Channels        int          `json:"channels"`
	Scale           float64      `json:"scale"`
	Rank            int          `json:"rank,omitempty"`
	RankRule        string       `json:"rank_rule,omitempty"`
	RankReason      string       `json:"rank_reason,omitempty"`
	Alpha           float64      `json:"alpha"`
	P               float64      `json:"p"`
	Seed            uint64       `json:"seed"`
	MaxIter         int          `json:"max_iter,omitempty"`
	FactorTol       float64      `json:"factor_tol,omitempty"`
	ResidualTol     float64      `json:"residual_tol,omitempty"`
	Params          any          `json:"params,omitempty"`
	Iterations      int          `json:"iterations"`
	Seconds         float64      `json:"seconds"`
	RankSeconds     float64      `json:"rank_seconds,omitempty"`
	SketchRows      int          `json:"sketch_rows,omitempty"`       // rows the method solved on (0: all)
	RowFitSeconds   float64      `json:"row_fit_seconds,omitempty"`   // FitRows, all windows
	RowFitUnsettled int          `json:"row_fit_unsettled,omitempty"` // rows FitRows left unsettled
	LoadSeconds     float64      `json:"load_seconds"`
	StopReason      string       `json:"stop_reason"`
	Residual        *float64     `json:"residual"`
	Foreground      string       `json:"foreground"`
	Mask            MaskSummary  `json:"mask"`
	DisplayScale    float64      `json:"foreground_display_scale"`
	DisplayFloor    float64      `json:"foreground_display_floor"`
	Truth           *TruthScore  `json:"truth,omitempty"`
	TruthDir        *LabelsScore `json:"truth_dir,omitempty"`
	Window          int          `json:"window,omitempty"`
	Windows         []WindowInfo `json:"windows,omitempty"`
	// Unconverged counts the windows whose solve ended at its iteration
	// cap.
	Unconverged int `json:"unconverged_windows,omitempty"`
	// Unverified counts the windows whose low-rank fit rpca.Solve did
	// not verify (rpca.Verify), and Verification is the first window's.
	Unverified   int                `json:"unverified_windows,omitempty"`
	Verification *rpca.Verification `json:"verification,omitempty"`
	// Stream describes a frame-by-frame separation (Job.Stream).
	Stream *StreamReport `json:"stream,omitempty"`
}

// StreamReport is what summary.json says of a Subtractor's run.
type StreamReport struct {
	History    int     `json:"history"`
	Refit      int     `json:"refit"`
	Track      float64 `json:"track"`
	Warmup     int     `json:"warmup"`
	Fits       int     `json:"fits"`
	FitSeconds float64 `json:"fit_seconds"`
	Rank       int     `json:"last_rank"`
}

// WindowInfo is one window of a windowed run.
type WindowInfo struct {
	FirstFrame     string  `json:"first_frame"`
	Frames         int     `json:"frames"`
	Rank           int     `json:"rank,omitempty"`
	RankRule       string  `json:"rank_rule,omitempty"`
	Iterations     int     `json:"iterations"`
	Seconds        float64 `json:"seconds"`
	StopReason     string  `json:"stop_reason,omitempty"`
	ForegroundRate float64 `json:"foreground_fraction"`
}

// MaskSummary describes the foreground decision (the first window's).
type MaskSummary struct {
	Rule           string  `json:"rule"`
	Threshold      float64 `json:"threshold,omitempty"`
	NoiseFactor    float64 `json:"noise_factor,omitempty"`
	Noise          float64 `json:"noise"`
	PixelNoise     bool    `json:"pixel_noise"`
	Smooth         int     `json:"smooth_radius"`
	Filter         int     `json:"filter_radius"`
	MinObject      int     `json:"min_object_pixels"`
	Shadows        bool    `json:"shadows_removed"`
	ShadowPixels   int     `json:"shadow_pixels"`
	Displacement   int     `json:"displacement_radius"`
	Displaced      int     `json:"displaced_pixels"`
	ForegroundRate float64 `json:"foreground_fraction"`
}

// LabelsScore is the pooled score of the masks against the ground truths
// of a directory (Job.TruthDir), with the benchmark's rules.
type LabelsScore struct {
	Dir       string  `json:"dir"`
	Frames    int     `json:"frames"` // frames scored
	TruePos   int     `json:"true_positives"`
	FalsePos  int     `json:"false_positives"`
	FalseNeg  int     `json:"false_negatives"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F         float64 `json:"f_measure"`
}

// scoreLabels adds the window's masks of the frames that have a ground
// truth in j.TruthDir to rep.TruthDir.
func (j *Job) scoreLabels(seq *frames.Sequence, sep *Separation, rep *Report) error {
	if j.TruthDir == "" {
		return nil
	}
	if rep.TruthDir == nil {
		rep.TruthDir = &LabelsScore{Dir: j.TruthDir}
	}
	t := rep.TruthDir
	c := Counts{Frames: t.Frames, TruePos: t.TruePos, FalsePos: t.FalsePos, FalseNeg: t.FalseNeg}
	pred := make([]bool, seq.Pixels())
	for k, name := range seq.Names {
		l, err := LabelsFor(j.TruthDir, name)
		if errors.Is(err, ErrNoLabels) {
			continue
		}
		if err != nil {
			return err
		}
		if l.W != seq.Width || l.H != seq.Height {
			return fmt.Errorf("video: the ground truth %s is %d×%d, the frames %d×%d (score at --scale 1)", l.Path, l.W, l.H, seq.Width, seq.Height)
		}
		for i := range pred {
			pred[i] = sep.Masks.At(i, k) > 0
		}
		if err := c.Add(pred, l); err != nil {
			return err
		}
	}
	sc := c.Score()
	*t = LabelsScore{Dir: t.Dir, Frames: c.Frames, TruePos: c.TruePos, FalsePos: c.FalsePos, FalseNeg: c.FalseNeg,
		Precision: sc.Precision, Recall: sc.Recall, F: sc.F}
	return nil
}

// TruthScore is the score of one frame's mask against a ground truth.
type TruthScore struct {
	Mask      string  `json:"mask"`
	Frame     string  `json:"frame"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F         float64 `json:"f_measure"`
}

// Run separates the clip window by window and writes into j.Dir, for each
// window, background/, foreground/ (the residual above its display floor,
// scaled) and mask/, one PNG per frame; for the first window montage.png
// and, with j.Preview, the preview (PreviewName). It returns the report (which the
// caller writes as summary.json).
func Run(ctx context.Context, j Job) (*Report, error) {
	rep := j.Report
	size := j.Window
	switch {
	case size == 0 && j.Stream != nil:
		size = StreamWindow // a stream's memory does not grow with its length
		rep.Window = size
	case size == 0:
		size = math.MaxInt32 // the whole clip at once
	default:
		rep.Window = size
	}
	separate := func(ctx context.Context, seq *frames.Sequence) (*Separation, error) {
		return Separate(ctx, seq, j.Separate)
	}
	var sub *Subtractor
	firstSize := 0
	if j.Stream != nil {
		o := j.streamOptions()
		firstSize = o.Warmup // the first window holds the frames held back
		separate = func(ctx context.Context, seq *frames.Sequence) (*Separation, error) {
			if sub == nil {
				var err error
				if sub, err = NewSubtractor(seq.Geometry, o); err != nil {
					return nil, err
				}
			}
			return sub.separate(ctx, seq, j.Separate.Stage)
		}
	}
	err := separateWindows(ctx, j.Input, j.Load, size, firstSize, separate, func(w Window) error {
		return j.window(ctx, w, &rep)
	})
	if err != nil {
		return nil, err
	}
	if sub != nil {
		rep.Stream = &StreamReport{History: sub.history, Refit: sub.refit, Track: sub.track, Warmup: sub.warmup, Fits: sub.Fits, FitSeconds: sub.FitSeconds, Rank: sub.Rank}
	}
	if j.Truth != nil && rep.Truth == nil {
		return nil, fmt.Errorf("%w: %s is not among the %d frames (%s … %s)", ErrTruthFrame, j.Truth.Frame, rep.Frames, rep.FirstFrame, rep.LastFrame)
	}
	return &rep, nil
}

// streamOptions are the Subtractor's options of a stream job: Stream,
// with Separate as the fit, and a warm-up of StreamHold frames (at most
// the history) unless Stream sets one.
func (j *Job) streamOptions() StreamOptions {
	o := *j.Stream
	fit := j.Separate
	o.Fit = &fit
	if o.Warmup == 0 {
		o.Warmup = min(StreamHold, cmp.Or(o.History, DefaultHistory))
	}
	return o
}

// create is Create, or outdir.WriteFile when it is not set.
func (j *Job) create() outdir.WriteFunc {
	if j.Create != nil {
		return j.Create
	}
	return outdir.WriteFile
}

func (j *Job) stage(format string, a ...any) {
	if j.Separate.Stage != nil {
		j.Separate.Stage(fmt.Sprintf(format, a...))
	}
}

// window writes the outputs of one window and adds it to the report.
func (j *Job) window(ctx context.Context, w Window, rep *Report) error {
	seq, sep := w.Seq, w.Sep
	g := seq.Geometry
	gray := frames.Geometry{Width: g.Width, Height: g.Height}
	rep.addWindow(w)
	j.record(w, rep)
	truthIdx, err := j.score(seq, sep, rep)
	if err != nil {
		return err
	}
	if err := j.scoreLabels(seq, sep, rep); err != nil {
		return err
	}
	fg := Excess(sep.Foreground, sep.DisplayFloor, sep.DisplayScale)
	n := len(seq.Names)
	var sets []*frameSet
	for _, wr := range []struct {
		sub string
		m   Matrix
		g   frames.Geometry
	}{{"background", sep.Background, g}, {"foreground", fg, g}, {"mask", sep.Masks, gray}} {
		fs, err := newFrameSet(filepath.Join(j.Dir, wr.sub), seq.Names, wr.m, wr.g, j.create())
		if err != nil {
			return err
		}
		sets = append(sets, fs)
	}
	// The preview shows the first window; its frames come from the same
	// gathered columns as the PNGs, plus the frames themselves.
	var pv *preview
	var ycols [][]float64
	if j.Preview && w.Index == 0 {
		var err error
		pv, err = newPreview(ctx, filepath.Join(j.Dir, PreviewName(j.Load.LookPath)), []PreviewColumn{
			{Title: "original", M: seq.Y, G: g},
			{Title: "background", M: sep.Background, G: g},
			{Title: "foreground", M: fg, G: g},
			{Title: "mask", M: sep.Masks, G: gray},
		}, PreviewOptions{Names: seq.Names, LookPath: j.Load.LookPath})
		if err != nil {
			return err
		}
		defer func() {
			if pv != nil {
				pv.abort() // after an error; a no-op once written
			}
		}()
		ycols = newColumns(writeBlock, g.Rows())
	}
	if pv != nil {
		j.stage("writing %d PNGs into %s and %s", len(sets)*n, rep.Output, filepath.Base(pv.path))
	} else {
		j.stage("writing %d PNGs into %s", len(sets)*n, rep.Output)
	}
	if err := writeWindowFrames(ctx, seq.Y, sets, pv, ycols); err != nil {
		return err
	}
	if w.Index > 0 {
		j.stage("window %d done; loading the next frames", w.Index+1)
		return nil
	}
	// The montage shows the first window.
	mont, err := j.montage(seq, sep, rep, truthIdx)
	if err != nil {
		return err
	}
	if err := writePNG(filepath.Join(j.Dir, "montage.png"), mont); err != nil {
		return err
	}
	if pv != nil {
		err := pv.write()
		pv = nil
		if err != nil {
			return err
		}
	}
	if j.Window > 0 {
		j.stage("window 1 done; loading the next frames")
	}
	return nil
}

// addWindow adds window w's frames to the report.
func (rep *Report) addWindow(w Window) {
	seq := w.Seq
	if w.Index == 0 {
		rep.FirstFrame, rep.Width, rep.Height, rep.Channels = seq.Names[0], seq.Width, seq.Height, seq.Channels()
	}
	rep.Frames += len(seq.Names)
	rep.LastFrame = seq.Names[len(seq.Names)-1]
	rep.LoadSeconds += w.LoadSeconds
}

// writeWindowFrames writes the frames of the sets (background, foreground,
// mask), writeBlock frames at a time, and gives the preview pv (when not
// nil) the frames it shows, with the original frames of y gathered into
// ycols.
func writeWindowFrames(ctx context.Context, y Matrix, sets []*frameSet, pv *preview, ycols [][]float64) error {
	n := len(sets[0].names)
	shown := make([][]float64, 4)
	for j0 := 0; j0 < n; j0 += writeBlock {
		if err := ctx.Err(); err != nil {
			return err
		}
		nb := min(writeBlock, n-j0)
		// The gathers wait on memory, not on the cores: run them side by
		// side, then encode and write while the preview takes its frames.
		withPreview := pv != nil && pv.next() >= 0 && pv.next() < j0+nb
		var wg sync.WaitGroup
		for _, fs := range sets {
			wg.Go(func() { fs.gather(j0, nb) })
		}
		if withPreview {
			wg.Go(func() { gatherColumns(ycols[:nb], y, j0) })
		}
		wg.Wait()
		werr := make(chan error, 1)
		go func() { werr <- writeSets(j0, nb, sets...) }()
		if withPreview {
			for f := pv.next(); f >= 0 && f < j0+nb; f = pv.next() {
				k := f - j0
				shown[0], shown[1], shown[2], shown[3] = ycols[k], sets[0].cols[k], sets[1].cols[k], sets[2].cols[k]
				if err := pv.add(shown); err != nil {
					<-werr
					return err
				}
			}
		}
		if err := <-werr; err != nil {
			return err
		}
	}
	return nil
}

// score scores the truth frame's mask when it is in this window, and
// returns its index there (−1 when it is not).
func (j *Job) score(seq *frames.Sequence, sep *Separation, rep *Report) (int, error) {
	t := j.Truth
	if t == nil {
		return -1, nil
	}
	if t.W != seq.Width || t.H != seq.Height {
		return -1, fmt.Errorf("truth mask %s is %d×%d after scaling, but the frames are %d×%d", t.Path, t.W, t.H, seq.Width, seq.Height)
	}
	stem := func(s string) string { b := filepath.Base(s); return strings.TrimSuffix(b, filepath.Ext(b)) }
	for k, n := range seq.Names {
		if n != t.Frame && stem(n) != stem(t.Frame) {
			continue
		}
		pred := make([]bool, seq.Pixels())
		for i := range pred {
			pred[i] = sep.Masks.At(i, k) > 0
		}
		sc, err := metrics.Detect(pred, t.Mask)
		if err != nil {
			return -1, err
		}
		rep.Truth = &TruthScore{Mask: t.Path, Frame: n, Precision: sc.Precision, Recall: sc.Recall, F: sc.F}
		return k, nil
	}
	return -1, nil
}

// record adds a window's separation to the report: the first window's
// rank, parameters and decision at the top level, times and iterations
// summed, and one entry per window when there are windows.
func (j *Job) record(w Window, rep *Report) {
	sep := w.Sep
	res := sep.Result
	rep.Seconds += sep.Seconds
	rep.RankSeconds += sep.RankSeconds
	rep.RowFitSeconds += sep.RowFitSeconds
	rep.SketchRows = sep.SketchRows
	if sep.RowFit != nil {
		rep.RowFitUnsettled += sep.RowFit.Unsettled
	}
	if res != nil {
		rep.Iterations += res.Iterations
		if !res.Stop.Converged() {
			rep.Unconverged++
		}
		if v := res.Verification; v != nil && !v.Verified {
			rep.Unverified++
		}
		if w.Index == 0 {
			rep.Verification = res.Verification
		}
	}
	if j.Window > 0 {
		wi := WindowInfo{FirstFrame: w.Seq.Names[0], Frames: len(w.Seq.Names), Seconds: sep.Seconds, ForegroundRate: sep.MaskReport.Foreground}
		if res != nil {
			wi.Rank, wi.RankRule, wi.Iterations, wi.StopReason = res.U.RawMatrix().Cols, sep.RankRule, res.Iterations, string(res.Stop)
		}
		rep.Windows = append(rep.Windows, wi)
	}
	if w.Index > 0 {
		return
	}
	rep.DisplayScale, rep.DisplayFloor = sep.DisplayScale, sep.DisplayFloor
	r := sep.MaskReport
	rep.Mask = MaskSummary{
		Rule: r.Rule, Noise: r.Noise, PixelNoise: r.Options.PixelNoise,
		Smooth: r.Options.Smooth, Filter: r.Options.Filter, MinObject: r.Options.MinObject,
		Shadows: !r.Options.KeepShadows, ShadowPixels: r.Shadow, ForegroundRate: r.Foreground,
		Displacement: r.Options.Displacement, Displaced: r.Displaced,
	}
	if r.Rule == "fixed" {
		rep.Mask.Threshold = r.Options.Threshold
	} else {
		rep.Mask.NoiseFactor = r.Options.NoiseFactor
	}
	if res == nil { // the median
		rep.StopReason = "exact"
		rep.Alpha, rep.P = 0, 1
		return
	}
	rep.Method = res.Method
	rep.Rank = res.U.RawMatrix().Cols // the rank the method used (IALM finds its own)
	rep.RankRule, rep.RankReason = sep.RankRule, sep.RankReason
	if sep.RankRule == "given" && j.RankRule != "" {
		rep.RankRule, rep.RankReason = j.RankRule, j.RankReason
	}
	rep.Params = res.Params
	rep.StopReason = string(res.Stop)
	if x := res.Residual; !math.IsNaN(x) && !math.IsInf(x, 0) {
		rep.Residual = &x
	}
}

// montage lays out original | background | foreground | mask for evenly
// spaced frames (the truth frame among them when there is one), under
// column headers.
func (j *Job) montage(seq *frames.Sequence, sep *Separation, rep *Report, truthIdx int) (image.Image, error) {
	d2 := len(seq.Names)
	n := j.MontageFrames
	if n <= 0 {
		n = 4
	}
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
	gray := frames.Geometry{Width: g.Width, Height: g.Height}
	fg := Excess(sep.Foreground, sep.DisplayFloor, sep.DisplayScale)
	var rows [][]Panel
	for _, k := range idx {
		var imgs [4]image.Image
		for c, src := range []struct {
			m Matrix
			g frames.Geometry
		}{{seq.Y, g}, {sep.Background, g}, {fg, g}, {sep.Masks, gray}} {
			img, err := FrameImage(src.m, k, src.g)
			if err != nil {
				return nil, err
			}
			imgs[c] = img
		}
		label := ""
		if rep.Truth != nil && k == truthIdx {
			label = fmt.Sprintf("F=%.2f", rep.Truth.F)
		}
		rows = append(rows, []Panel{{Image: imgs[0], Label: seq.Names[k]}, {Image: imgs[1]}, {Image: imgs[2]}, {Image: imgs[3], Label: label}})
	}
	zoom := 1
	if g.Width < 200 {
		zoom = 2
	}
	m := Montage(rows, MontageOptions{Zoom: zoom, Headers: montageHeaders(rep)})
	if g.Color {
		return m, nil
	}
	// Gray frames, black labels on white: a gray PNG is a third the size.
	gm := image.NewGray(m.Bounds())
	draw.Draw(gm, gm.Bounds(), m, m.Bounds().Min, draw.Src)
	return gm, nil
}

// montageHeaders are the column headers of the montage.
func montageHeaders(rep *Report) []string {
	method := rep.Method
	if rep.Rank > 0 {
		method += fmt.Sprintf(" r=%d", rep.Rank)
	}
	if rep.Preset != "" {
		method += " (" + rep.Preset + ")"
	}
	fgLabel := "foreground |Y-M|"
	if rep.Foreground == "sparse" {
		fgLabel = "foreground |S|"
	}
	maskLabel := fmt.Sprintf("mask > %g x noise", rep.Mask.NoiseFactor)
	if rep.Mask.Rule == "fixed" {
		maskLabel = fmt.Sprintf("mask > %g", rep.Mask.Threshold)
	}
	return []string{"original", fmt.Sprintf("background: %s, %.2fs", method, rep.Seconds), fgLabel, maskLabel}
}

// String is the one-line summary of the report.
func (rep *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %d frames of %d×%d", rep.Method, rep.Frames, rep.Width, rep.Height)
	if rep.Channels == 3 {
		b.WriteString(" (color)")
	}
	if rep.Rank > 0 {
		fmt.Fprintf(&b, ", rank %d (%s)", rep.Rank, rep.RankRule)
	}
	switch {
	case rep.Stream != nil:
		fmt.Fprintf(&b, ", frame by frame (%d fits to the last %d frames", rep.Stream.Fits, rep.Stream.History)
		if rep.Stream.Track > 0 {
			b.WriteString(", tracked in between")
		}
		b.WriteString(")")
	case rep.Method != "median":
		fmt.Fprintf(&b, ", %d iterations (%s)", rep.Iterations, rep.StopReason)
	}
	fmt.Fprintf(&b, " in %.2fs", rep.Seconds)
	if t := rep.Truth; t != nil {
		fmt.Fprintf(&b, "; %s: precision %.3f, recall %.3f, F %.3f", t.Frame, t.Precision, t.Recall, t.F)
	}
	if t := rep.TruthDir; t != nil {
		fmt.Fprintf(&b, "; %d frames with ground truth: precision %.3f, recall %.3f, F %.3f", t.Frames, t.Precision, t.Recall, t.F)
	}
	fmt.Fprintf(&b, "; wrote %s", rep.Output)
	return b.String()
}

// RunDir is Run into the new directory out, created atomically (package
// outdir: force replaces a directory that rpca wrote, and out may neither
// be nor contain one of inputs), with the report written as
// summary.json. j.Dir is ignored. On an error, or when ctx is cancelled,
// out is not created.
func RunDir(ctx context.Context, j Job, out string, force bool, inputs ...string) (*Report, error) {
	d, err := outdir.New(out, force, inputs...)
	if err != nil {
		return nil, err
	}
	defer d.Abort()
	j.Dir, j.Create = d.Path(), d.Create
	rep, err := Run(ctx, j)
	if err != nil {
		return nil, err
	}
	if err := outdir.WriteJSON(d.Join("summary.json"), rep); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rep, d.Commit()
}
