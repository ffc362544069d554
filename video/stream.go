package video

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/parallel"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/video/frames"
)

// Defaults of [StreamOptions].
const (
	// DefaultHistory is the number of past frames the background is
	// fitted to.
	DefaultHistory = 100
	// DefaultRefit is the number of frames between two fits.
	DefaultRefit = 20
	// DefaultTrack is StreamOptions.Track's default: the whole step,
	// which takes each frame's background into the model.
	DefaultTrack = 1
	// DefaultWarmup is the number of frames before the first fit; until
	// then the background is the per-pixel median of the frames so far.
	DefaultWarmup = 20
	// StreamHold is the warm-up of a stream's job ([Job] with Stream and
	// no StreamOptions.Warmup), which separates with [Subtractor.Push]:
	// the first StreamHold frames (at most the history) are held back and
	// decided together against the first fit, which is made to them.
	StreamHold = 50
	// StreamWindow is the number of frames a stream's job gathers before
	// it writes their outputs, when Job.Window is 0 (the first window
	// holds at least the warm-up): the job then holds a window of frames
	// and the Subtractor's history, however long the input, and its
	// outputs appear as it goes.
	StreamWindow = MinWindow
)

// The robust projection of a frame on the background's column space
// ([Subtractor.Apply]): projectRounds rounds of least squares on the
// frame with its residual clipped at projectClip robust spreads
// (iteratively winsorised least squares, a Huber fit), the spread taken
// over at most projectSample residuals.
const (
	projectRounds = 5
	projectClip   = 3
	projectSample = 20000
)

// StreamOptions configure a [Subtractor]. The zero value is the default.
type StreamOptions struct {
	// History is the number of past frames the background is fitted to
	// (0: DefaultHistory). The Subtractor keeps them as 16-bit levels
	// (2 bytes a value) while every value is an 8- or 16-bit sample as
	// the decoders of package frames give them (c/255, l/65535), and as
	// float64 (8 bytes) from the first frame that holds another value.
	History int
	// Refit is the number of frames between two fits of the background
	// (0: DefaultRefit).
	Refit int
	// Warmup is the number of frames before the first fit (0:
	// DefaultWarmup; at least 2 and at most History).
	Warmup int
	// Track turns the background model toward each frame after its
	// decision, between two fits: a geodesic step on the Grassmannian, as
	// GRASTA (He, Balzano and Szlam 2012, Algorithm 2) takes after each
	// frame, driven by the residual of the frame's robust fit on the
	// pixels decided background ([Subtractor.trackStep]). Track is the
	// fraction, in (0, 1], of the rotation that brings that residual into
	// the model; 0 means DefaultTrack, and a negative value turns tracking
	// off (the model stays as the last fit made it). The median's model
	// (a nil Fit.Method), the baseline without a low-rank model, is not
	// tracked.
	Track float64
	// Fit is how the background is fitted to the history: the method,
	// the rank rule, the sketch and the foreground decision of
	// [Separate] (nil: [DefaultOptions]). A nil Fit.Method makes the
	// background the per-pixel temporal median of the history.
	Fit *SeparateOptions
}

// Subtractor separates a video frame by frame, as the background
// subtractors of OpenCV do: each frame passed to Apply gets its
// background and foreground mask at once, from a background model
// learnt from the frames before it. Every Refit frames the background's
// low-rank column space is fitted again to the last History frames by the
// batch method (the paper's robust PCA through [Separate]'s solver and
// rank rule); each frame is projected on that space robustly (a Huber
// fit, so that its own moving objects do not pull the background), and
// the foreground is decided by [Masks] with the fit's options, frame by
// frame as in the batch command; then, until the next fit, the model's
// directions turn toward the frame's background (StreamOptions.Track).
// The first Warmup frames are compared with the per-pixel median of the
// frames so far. A Subtractor is not safe for concurrent use.
type Subtractor struct {
	g       frames.Geometry
	history int
	refit   int
	warmup  int
	track   float64
	fit     SeparateOptions

	hist   *history   // Rows × history, a ring of the last frames
	seen   int        // frames applied
	basisT *mat.Dense // rank × Rows, orthonormal rows; nil before the first fit
	// pixNoise is each row's noise level over the history at the last
	// fit (MaskOptions.PixelNoise; nil before the first fit).
	pixNoise []float64
	buf      projectBuf // project's buffers, reused
	since    int        // frames since the last fit
	// shared says that a decided frame holds basisT (Frame.basisT), so
	// that a tracking step must change a copy; steps counts the tracking
	// steps since the basis was last made orthonormal.
	shared bool
	steps  int

	// Rank is the rank of the current background model's fit (0 before
	// the first fit; the model also has one constant per channel); Fits
	// counts the fits and FitSeconds their time.
	Rank       int
	Fits       int
	FitSeconds float64
}

// ErrFrameSize is returned by [Subtractor.Apply] for a frame whose length
// is not the geometry's.
var ErrFrameSize = errors.New("video: frame of the wrong size")

// NewSubtractor returns a Subtractor for frames of geometry g.
func NewSubtractor(g frames.Geometry, o StreamOptions) (*Subtractor, error) {
	if g.Width <= 0 || g.Height <= 0 {
		return nil, fmt.Errorf("video: frame size %d×%d must be positive", g.Width, g.Height)
	}
	s := &Subtractor{g: g, history: o.History, refit: o.Refit, warmup: o.Warmup, track: o.Track}
	if s.history == 0 {
		s.history = DefaultHistory
	}
	if s.refit == 0 {
		s.refit = DefaultRefit
	}
	if s.track == 0 {
		s.track = DefaultTrack
	}
	s.track = max(s.track, 0) // negative: off; NaN stays, and is refused below
	if s.warmup == 0 {
		s.warmup = min(DefaultWarmup, s.history)
	}
	switch {
	case s.history < 2 || s.refit < 1:
		return nil, fmt.Errorf("video: a stream needs a history of at least 2 frames and a refit interval of at least 1, got %d and %d", s.history, s.refit)
	case s.warmup < 2 || s.warmup > s.history:
		return nil, fmt.Errorf("video: the warm-up must be between 2 frames and the history (%d), got %d", s.history, s.warmup)
	case !(s.track >= 0 && s.track <= 1):
		return nil, fmt.Errorf("video: the tracking step must be between 0 and 1 (0: the default, negative: off), got %g", o.Track)
	}
	if o.Fit != nil {
		s.fit = *o.Fit
	} else {
		s.fit = DefaultOptions()
	}
	if s.fit.SparseForeground {
		return nil, errors.New("video: a stream decides on the residual Y − M; the sparse foreground needs the batch command")
	}
	if err := s.fit.Mask.Validate(); err != nil {
		return nil, err
	}
	if s.fit.Method == nil {
		s.track = 0
	}
	s.hist = newHistory(g.Rows(), s.history)
	return s, nil
}

// Frame is what [Subtractor.Apply] returns for one frame.
type Frame struct {
	// Background has the frame's layout (Geometry.Rows values in
	// [0, 1]); Mask has one 0/1 value per pixel.
	Background, Mask []float64
	// Noise is the frame's noise level (see MaskReport.Noise), Shadow
	// the number of its candidate pixels set aside as shadows and
	// Displaced the number of mask pixels the displacement test dropped
	// (MaskOptions.Displacement).
	Noise             float64
	Shadow, Displaced int

	// basisT and coef: Background is basisTᵀ·coef, summed as project
	// sums it (nil before the first fit, when it is the median).
	basisT *mat.Dense
	coef   []float64
}

// Apply separates one frame: Geometry.Rows values in [0, 1] (the pixels
// row by row, then the next channel, as a column of Sequence.Y). It may
// fit the background first (see [Subtractor]), which takes a batch
// solve; the other frames take a projection and the decision.
func (s *Subtractor) Apply(ctx context.Context, frame []float64) (*Frame, error) {
	if err := s.store(ctx, frame); err != nil {
		return nil, err
	}
	if err := s.maybeRefit(ctx); err != nil {
		return nil, err
	}
	return s.decide(ctx, frame)
}

// Push separates a frame as Apply does, except at the start: it holds
// the warm-up frames back instead of comparing them with the median of
// the frames so far. The first Warmup − 1 calls return no frame; the call
// that completes the warm-up fits the background to the warm-up frames
// and returns all of them, in order, each decided against that fit;
// every later call returns its own frame. The warm-up's masks then come
// from a background fitted to those very frames, as the batch command's
// do, at the price of a delay of Warmup frames at the start. Do not mix
// Push and Apply on one Subtractor.
func (s *Subtractor) Push(ctx context.Context, frame []float64) ([]*Frame, error) {
	var out []*Frame
	err := s.push(ctx, frame, func(f *Frame) error { out = append(out, f); return nil })
	return out, err
}

// push is Push handing each decided frame to emit as soon as it is
// decided.
func (s *Subtractor) push(ctx context.Context, frame []float64, emit func(*Frame) error) error {
	if err := s.store(ctx, frame); err != nil {
		return err
	}
	switch {
	case s.seen < s.warmup:
		return nil
	case s.seen > s.warmup:
		if err := s.maybeRefit(ctx); err != nil {
			return err
		}
		f, err := s.decide(ctx, frame)
		if err != nil {
			return err
		}
		return emit(f)
	}
	return s.decideHeld(ctx, true, emit)
}

// Flush decides the frames Push has held back, for an input that ends
// before the warm-up does: it fits the background to them (with fewer
// than two, compares them with their median) and returns them in order.
// Later calls of Push then behave as after the warm-up.
func (s *Subtractor) Flush(ctx context.Context) ([]*Frame, error) {
	var out []*Frame
	err := s.flush(ctx, func(f *Frame) error { out = append(out, f); return nil })
	return out, err
}

// flush is Flush handing each frame to emit as soon as it is decided.
func (s *Subtractor) flush(ctx context.Context, emit func(*Frame) error) error {
	if s.seen == 0 || s.seen >= s.warmup {
		return nil
	}
	s.warmup = s.seen
	return s.decideHeld(ctx, s.seen >= 2, emit)
}

// decideHeld fits the background to the frames so far (with fit) and
// decides each of them, in order, handing it to emit: the frames Push
// held back, which the ring still holds in its first columns (the
// warm-up is at most the history).
func (s *Subtractor) decideHeld(ctx context.Context, fit bool, emit func(*Frame) error) error {
	if fit {
		if err := s.fitOrWait(ctx); err != nil {
			return err
		}
	}
	if s.basisT != nil { // all against the fit: at once
		held := make([]int, s.seen)
		for k := range held {
			held[k] = k
		}
		return s.decideAtOnce(ctx, func(dst []float64, j int) { s.hist.col(dst, j) }, held, emit)
	}
	col := make([]float64, s.g.Rows())
	for k := range s.seen {
		s.hist.col(col, k)
		f, err := s.decide(ctx, col)
		if err == nil {
			err = emit(f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// store checks a frame and writes it into the history.
func (s *Subtractor) store(ctx context.Context, frame []float64) error {
	if len(frame) != s.g.Rows() {
		return fmt.Errorf("%w: %d values for %d×%d×%d", ErrFrameSize, len(frame), s.g.Width, s.g.Height, s.g.Channels())
	}
	for _, v := range frame {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("video: a frame value is not finite")
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.hist.set(s.seen%s.history, frame)
	s.seen++
	s.since++
	return nil
}

// maybeRefit fits the background when the warm-up is over and it has
// not been fitted yet, or Refit frames have passed since the last fit.
func (s *Subtractor) maybeRefit(ctx context.Context) error {
	if s.seen >= s.warmup && (s.basisT == nil || s.since >= s.refit) {
		return s.fitOrWait(ctx)
	}
	return nil
}

// fitOrWait fits the background (refitBackground), except that before the
// first fit a history too short for the model (rpca.ErrBadInput: fewer
// frames than the rank needs) leaves the frames compared with their
// median, as in the warm-up, until a fit succeeds.
func (s *Subtractor) fitOrWait(ctx context.Context) error {
	err := s.refitBackground(ctx)
	if err != nil && s.basisT == nil && errors.Is(err, rpca.ErrBadInput) {
		return nil
	}
	return err
}

// decide separates frame against the current background model: its
// projection on the fitted background, or before the first fit the
// median of the frames so far.
//
// With tracking (StreamOptions.Track) the model then takes its step
// toward the frame, and the frame keeps its background as a column
// instead of the basis, which the step changes; a frame that the last fit
// saw (the one that made it take place) takes no step.
func (s *Subtractor) decide(ctx context.Context, frame []float64) (*Frame, error) {
	f, err := s.decideWith(ctx, frame, &s.buf, s.fit.Settings.Workers)
	if err != nil || f.basisT == nil {
		return f, err
	}
	if s.track == 0 || s.since == 0 {
		s.shared = true
		return f, nil
	}
	s.trackStep(frame, f.Background, f.coef, f.Mask)
	f.basisT, f.coef = nil, nil
	return f, nil
}

// decideWith is decide with project's buffers buf, its passes on up to
// workers goroutines: frames decided at once against one fit each have
// their own buffers.
func (s *Subtractor) decideWith(ctx context.Context, frame []float64, buf *projectBuf, workers int) (*Frame, error) {
	var bg, coef []float64
	if s.basisT == nil {
		bg = s.median()
	} else {
		bg, coef = s.project(frame, buf, workers)
	}
	if buf.work == nil {
		buf.work, buf.res = newFrameWork(s.g), make([]float64, len(frame))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := s.fit.Mask.withDefaults().decideOne(buf.work, buf.res, frame, bg, s.pixNoise, s.g)
	mask := make([]float64, len(d.mask))
	for i, v := range d.mask {
		if v {
			mask[i] = 1
		}
	}
	f := &Frame{Background: bg, Mask: mask, Noise: d.noise, Shadow: d.shadow, Displaced: d.displaced}
	if coef != nil {
		f.basisT, f.coef = s.basisT, coef
	}
	return f, nil
}

// decideAtOnce decides the frames cols (column(dst, j) writes frame j
// into dst) against the current fit, as
// many at a time as there are cores, and hands them to emit in order:
// what decide would give one after the other, each frame's work being its
// own. Only one frame per core is held before it is handed on.
func (s *Subtractor) decideAtOnce(ctx context.Context, column func(dst []float64, j int), cols []int, emit func(*Frame) error) error {
	if len(cols) == 0 {
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(cols))
	inner := max(1, kernels.Workers(s.fit.Settings.Workers)/workers) // each frame's goroutines
	s.shared = s.basisT != nil
	bufs := make([]*projectBuf, workers)
	frames := make([][]float64, workers)
	for w := range workers {
		bufs[w], frames[w] = new(projectBuf), make([]float64, s.g.Rows())
	}
	bufs[0] = &s.buf
	out := make([]*Frame, workers)
	errs := make([]error, workers)
	for k0 := 0; k0 < len(cols); k0 += workers {
		batch := cols[k0:min(k0+workers, len(cols))]
		var wg sync.WaitGroup
		for w, j := range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				column(frames[w], j)
				out[w], errs[w] = s.decideWith(ctx, frames[w], bufs[w], inner)
			}()
		}
		wg.Wait()
		for w := range batch {
			if errs[w] != nil {
				return errs[w]
			}
			if err := emit(out[w]); err != nil {
				return err
			}
			out[w] = nil
		}
	}
	return nil
}

// frames returns the frames of the history, without a copy: the whole
// ring once it is full (its columns are then the last History frames in
// a rotated order, which no fit depends on: robust PCA, the rank rule and
// the row fits treat the frames as a set), and until then its first
// columns.
func (s *Subtractor) frames() historyView {
	return s.hist.first(min(s.seen, s.history))
}

// median is the per-pixel median of the history (the warm-up's
// background).
func (s *Subtractor) median() []float64 {
	n := min(s.seen, s.history)
	out := make([]float64, s.g.Rows())
	buf := make([]float64, n)
	for i := range out {
		copy(buf, s.hist.row(buf, i))
		out[i] = medianOf(buf)
	}
	return out
}

// medianOf returns the median of x (the mean of the middle two for an
// even length), reordering x.
func medianOf(x []float64) float64 {
	n := len(x)
	lo := selection.SelectSmallest(x, (n+1)/2)
	if n%2 == 1 {
		return lo
	}
	return (lo + floats.Min(x[n/2:])) / 2
}

// refitBackground fits the background to the history and keeps an
// orthonormal basis of its column space.
func (s *Subtractor) refitBackground(ctx context.Context) error {
	t0 := time.Now()
	y := s.frames()
	var cols *mat.Dense // columns spanning the background
	var bgRow func(dst []float64, i int) []float64
	if s.fit.Method == nil {
		med, err := medianRows(ctx, y)
		if err != nil {
			return err
		}
		cols = mat.NewDense(med.Len(), 1, med.RawVector().Data)
		bgRow = func(dst []float64, i int) []float64 {
			for j := range dst {
				dst[j] = med.AtVec(i)
			}
			return dst
		}
	} else {
		o := s.fit
		o.Stage = nil
		sep := &Separation{}
		if err := sep.solve(ctx, y, o, func(string, ...any) {}); err != nil {
			return err
		}
		switch bg := sep.Background.(type) {
		case LowRank:
			cols = bg.U
		case *mat.Dense: // U·Vᵀ of the solver's factors: U spans its columns
			cols = sep.Result.U
		default:
			return fmt.Errorf("video: background of type %T", sep.Background)
		}
		bgRow = func(dst []float64, i int) []float64 { return matrixRow(dst, sep.Background, i) }
	}
	if s.fit.Mask.PixelNoise && s.fit.Mask.Threshold == 0 {
		noise, err := historyNoise(ctx, y, bgRow, s.fit.Settings.Workers)
		if err != nil {
			return err
		}
		s.pixNoise = noise
	}
	basis := orthonormal(withConstants(cols, s.g, s.track > 0))
	if basis == nil {
		return errors.New("video: the fitted background is zero")
	}
	_, k := basis.Dims()
	s.Rank = max(k-s.g.Channels(), 0) // the constants are not the fit's
	s.basisT, s.since, s.shared, s.steps = mat.DenseCopyOf(basis.T()), 0, false, 0
	s.Fits++
	s.FitSeconds += time.Since(t0).Seconds()
	return nil
}

// historyNoise returns each row's noise level over the frames y
// ([rowNoise] of Y − M, as [Masks] estimates it over a batch's frames
// with PixelNoise); bgRow(dst, i) gives row i of the background M.
func historyNoise(ctx context.Context, y rowSource, bgRow func(dst []float64, i int) []float64, workers int) ([]float64, error) {
	rows, n := y.Dims()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ys, ms := newColumns(workers, n), newColumns(workers, n)
	return rowNoise(ctx, rows, n, workers, func(w, i int) []float64 {
		floats.SubTo(ms[w], y.row(ys[w], i), bgRow(ms[w], i))
		return ms[w]
	})
}

// orthonormal returns an orthonormal basis of the columns of a (modified
// Gram–Schmidt, twice), leaving out columns that are dependent on the
// ones before to 1e-10; nil when none is left.
func orthonormal(a *mat.Dense) *mat.Dense {
	rows, k := a.Dims()
	var kept [][]float64
	for j := range k {
		v := mat.Col(nil, j, a)
		norm0 := floats.Norm(v, 2)
		for range 2 {
			for _, q := range kept {
				floats.AddScaled(v, -floats.Dot(q, v), q)
			}
		}
		if n := floats.Norm(v, 2); n > 1e-10*norm0 && n > 0 {
			floats.Scale(1/n, v)
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	out := mat.NewDense(rows, len(kept), nil)
	for j, q := range kept {
		out.SetCol(j, q)
	}
	return out
}

// project returns the background of frame y: B·w with w the Huber fit of
// y on the basis B, by rounds of least squares on y with its residual
// clipped at projectClip robust spreads. B being orthonormal, a round's
// w is Bᵀ·y_c with y_c = y − e, e the part of the residual r = y − B·w
// beyond the clip: Bᵀ·y less Bᵀ·e, over the clipped entries alone. So
// a round is one pass over B and y, a block of entries at a time (the
// block's fit, summed as combine sums it, then its residual), on up to
// workers goroutines (GOMAXPROCS when workers ≤ 0). The entries are cut
// into chunks of projectChunk whatever the workers, each chunk's sums
// added in chunk order, so the answer does not depend on them. The clip
// is taken from the entries of clipLimit's sample, whose rows of B the
// first pass copies aside.
func (s *Subtractor) project(y []float64, buf *projectBuf, workers int) (fit, w []float64) {
	k, rows := s.basisT.Dims()
	b := s.basisT.RawMatrix()
	fit = make([]float64, rows) // returned: the frame's background
	w = make([]float64, k)
	step := max(1, rows/projectSample)
	ns := (rows + step - 1) / step
	nc := (rows + projectChunk - 1) / projectChunk
	workers = min(kernels.Workers(workers), nc)
	buf.size(k, nc, workers)
	if len(buf.ys) != ns || len(buf.bs) != k*ns {
		buf.ys, buf.bs = make([]float64, ns), make([]float64, k*ns)
	}
	parts := buf.parts // chunk t's sums at parts[t*k:]

	// Bᵀ·y by chunks, and the sampled rows of B and entries of y.
	byChunks(rows, workers, func(_, t, lo, hi int) {
		dotsRange(parts[t*k:(t+1)*k], b, y, lo, hi)
		for i := (lo + step - 1) / step * step; i < hi; i += step {
			buf.ys[i/step] = y[i]
			for c := range k {
				buf.bs[c*ns+i/step] = b.Data[c*b.Stride+i]
			}
		}
	})
	wy := buf.wy
	sumParts(wy, parts, k)
	copy(w, wy)
	for range projectRounds {
		lim := buf.sampledClip(w, ns)
		byChunks(rows, workers, func(wk, t, lo, hi int) {
			part := parts[t*k : (t+1)*k]
			clear(part)
			for b0 := lo; b0 < hi; b0 += projectBlock {
				b1 := min(hi, b0+projectBlock)
				f := buf.blocks[wk][:b1-b0]
				combineRange(f, b, 0, w, b0)
				for i, v := range y[b0:b1] {
					e := v - f[i]
					switch {
					case e > lim:
						e -= lim
					case e < -lim:
						e += lim
					default:
						continue
					}
					for c := range part {
						part[c] += e * b.Data[c*b.Stride+b0+i]
					}
				}
			}
		})
		sumParts(w, parts, k)
		for c := range w {
			w[c] = wy[c] - w[c]
		}
	}
	byChunks(rows, workers, func(_, _, lo, hi int) { combineRange(fit[lo:hi], b, 0, w, lo) })
	return fit, w
}

// byChunks calls fn(wk, t, lo, hi) for the chunks t of projectChunk
// entries, [lo, hi), of [0, rows), on up to workers goroutines (wk the
// goroutine's index).
func byChunks(rows, workers int, fn func(wk, t, lo, hi int)) {
	parallel.Strided((rows+projectChunk-1)/projectChunk, workers, func(wk, t int) {
		fn(wk, t, t*projectChunk, min(rows, (t+1)*projectChunk))
	})
}

// dotsRange sets dst[c] to row c of b times v, both over [lo, hi).
func dotsRange(dst []float64, b blas64.General, v []float64, lo, hi int) {
	for c := range dst {
		dst[c] = floats.Dot(b.Data[c*b.Stride+lo:c*b.Stride+hi], v[lo:hi])
	}
}

// combineRange sets dst to Σ_c w[c]·(row first+c of b) over the entries
// [lo, lo+len(dst)), summed as combine sums it.
func combineRange(dst []float64, b blas64.General, first int, w []float64, lo int) {
	clear(dst)
	for c, wc := range w {
		at := (first+c)*b.Stride + lo
		floats.AddScaled(dst, wc, b.Data[at:at+len(dst)])
	}
}

// The work of [Subtractor.project]: a round takes its entries by chunks
// of projectChunk, each in blocks of projectBlock, whose fit and part of
// each basis vector stay in the cache between the fit and the residual.
const (
	projectChunk = 16 * projectBlock
	projectBlock = 1024
)

// sumParts sets dst[c] to the sum over chunks t, in order, of
// parts[t·k+c].
func sumParts(dst, parts []float64, k int) {
	clear(dst)
	for t := 0; t < len(parts); t += k {
		for c := range k {
			dst[c] += parts[t+c]
		}
	}
}

// size readies buf's sums for k basis vectors, nc chunks and workers
// goroutines.
func (buf *projectBuf) size(k, nc, workers int) {
	if len(buf.wy) != k {
		buf.wy = make([]float64, k)
	}
	if len(buf.parts) != nc*k {
		buf.parts = make([]float64, nc*k)
	}
	for len(buf.blocks) < workers {
		buf.blocks = append(buf.blocks, make([]float64, projectBlock))
	}
}

// sampledClip is clipLimit for the fit B·w, formed at the ns sampled
// entries (buf.ys, and B's rows there in buf.bs), each summed as combine
// sums it.
func (buf *projectBuf) sampledClip(w []float64, ns int) float64 {
	abs := buf.abs[:0]
	for i, v := range buf.ys {
		f := 0.0
		for c, wc := range w {
			f += wc * buf.bs[c*ns+i]
		}
		abs = append(abs, math.Abs(v-f))
	}
	buf.abs = abs
	return spreadLimit(abs)
}

// clipLimit returns where the Huber fit clips the residual y − fit:
// projectClip robust spreads (1.4826 times the median absolute residual,
// taken over at most projectSample residuals at an even stride, and at
// least MinNoise). It keeps the sample in buf.abs.
func clipLimit(y, fit []float64, buf *projectBuf) float64 {
	abs, step := buf.abs[:0], max(1, len(y)/projectSample)
	for i := 0; i < len(y); i += step {
		abs = append(abs, math.Abs(y[i]-fit[i]))
	}
	buf.abs = abs
	return spreadLimit(abs)
}

// spreadLimit returns the clip for the absolute residuals abs (reordered).
func spreadLimit(abs []float64) float64 {
	return projectClip * max(1.4826*medianOf(abs), MinNoise)
}

// projectBuf holds the buffers of a frame's decision, reused from frame
// to frame: [Subtractor.project]'s sums and samples, and the mask
// decision's scratch space and residual.
type projectBuf struct {
	abs    []float64
	wy     []float64   // project's Bᵀ·y; trackStep's Bᵀ·p
	p      []float64   // trackStep's residual
	ys, bs []float64   // the entries of clipLimit's sample, of y and of B
	parts  []float64   // a round's sums by chunk
	blocks [][]float64 // a block's fit, per goroutine
	work   *frameWork
	res    []float64
}

// combine sets dst = basisTᵀ·w, a basis vector at a time: the order of
// the sums that [Subtractor.project] and [projected] share, so that a
// background formed again from its coefficients is the same to the bit.
func combine(dst []float64, basisT *mat.Dense, w []float64) {
	combineRange(dst, basisT.RawMatrix(), 0, w, 0)
}

// projected holds a stream window's backgrounds as the stream decided
// them, each frame's as the basis it was projected on (shared with the
// Subtractor's fit of the moment) and its coefficients, or as its column
// in float32 when it was compared with the median or taken a tracking
// step (StreamOptions.Track) after its decision, which changes the basis:
// the window's writers form the columns as they gather them, so the
// window does not hold a rows × frames matrix of backgrounds in float64.
// A column in float32 is the decided background to 6e-8 of its value,
// far below the 8-bit levels the writers round it to.
type projected struct {
	rows   int
	basisT []*mat.Dense // per frame; nil: full holds the column
	coef   [][]float64
	full   [][]float32
}

func (p *projected) Dims() (int, int) { return p.rows, len(p.coef) }

// At returns entry i of frame j's background, summed as combine sums it.
func (p *projected) At(i, j int) float64 {
	b := p.basisT[j]
	if b == nil {
		return float64(p.full[j][i])
	}
	var s float64
	for c, w := range p.coef[j] {
		s += w * b.At(c, i)
	}
	return s
}

// column sets dst to frame j's background.
func (p *projected) column(dst []float64, j int) {
	if b := p.basisT[j]; b != nil {
		combine(dst, b, p.coef[j])
		return
	}
	for i, v := range p.full[j] {
		dst[i] = float64(v)
	}
}

// add appends frame f's background.
func (p *projected) add(f *Frame) {
	p.basisT = append(p.basisT, f.basisT)
	p.coef = append(p.coef, f.coef)
	var full []float32
	if f.basisT == nil {
		full = make([]float32, len(f.Background))
		for i, v := range f.Background {
			full[i] = float32(v)
		}
	}
	p.full = append(p.full, full)
}

// withConstants returns the columns of a followed by one constant column
// per channel (ones on that channel's rows): a frame's background may
// then also shift by a constant per channel, as under a change of the
// light that the history has not shown.
// With first, the constants come first, so that an orthonormal basis of
// the result ([orthonormal]) holds them unchanged in its first columns and
// the fit's directions, orthogonal to them, after: the directions that
// tracking turns ([Subtractor.trackStep]).
func withConstants(a *mat.Dense, g frames.Geometry, first bool) *mat.Dense {
	rows, k := a.Dims()
	ch := g.Channels()
	out := mat.NewDense(rows, k+ch, nil)
	c0, k0 := k, 0
	if first {
		c0, k0 = 0, ch
	}
	out.Slice(0, rows, k0, k0+k).(*mat.Dense).Copy(a)
	p := g.Pixels()
	for c := range ch {
		for i := c * p; i < (c+1)*p; i++ {
			out.Set(i, c0+c, 1)
		}
	}
	return out
}

// trackStep turns the fitted directions of the model toward frame y, whose
// robust fit on the basis is fit = Bᵀ·w (B = basisT, [Subtractor.project])
// and whose foreground is mask (one value per pixel, nil: none): GRASTA's
// geodesic step (He, Balzano and Szlam 2012, Algorithm 2, lines 4–7) with
// the frame's residual γ in place of the augmented Lagrangian's dual. γ is
// the Huber fit's clipped residual on the pixels decided background and 0
// on the foreground's: where GRASTA's ℓ1 fit bounds an outlier's pull on
// the model, the decision removes it. With Q the fitted directions
// (orthonormal, orthogonal to the constants, which stay), w_Q their
// coefficients and p = (I − BBᵀ)γ the part of γ outside the model, the
// step along the geodesic turns the direction Q·ŵ (ŵ = w_Q/‖w_Q‖) toward
// p̂ = p/‖p‖ by θ = Track·arctan(‖p‖/‖w_Q‖), where Track = 1 is the angle
// that brings Q·w_Q + p into the model (GROUSE's step that fits the frame,
// Balzano, Nowak and Recht 2010): Q ← Q + ((cos θ − 1)·Q·ŵ + sin θ·p̂)·ŵᵀ,
// which keeps Q orthonormal. The basis is made orthonormal again every
// reorthonormalize steps against rounding.
func (s *Subtractor) trackStep(y, fit, w, mask []float64) {
	k, rows := s.basisT.Dims()
	nc := s.g.Channels()
	if k <= nc {
		return // no fitted direction to turn
	}
	wq := w[nc:]
	wn := floats.Norm(wq, 2)
	if !(wn > 0) {
		return
	}
	buf := &s.buf
	lim := clipLimit(y, fit, buf)
	if len(buf.p) != rows {
		buf.p = make([]float64, rows)
	}
	p := buf.p
	chunks := (rows + projectChunk - 1) / projectChunk
	workers := min(kernels.Workers(s.fit.Settings.Workers), chunks)
	buf.size(k, chunks, workers)
	// Each pass takes the entries by chunks (whatever the workers, so the
	// answer does not depend on them), a chunk's sums added in order.
	b := s.basisT.RawMatrix()
	byChunks(rows, workers, func(_, _, lo, hi int) {
		for i := lo; i < hi; i++ {
			p[i] = min(max(y[i]-fit[i], -lim), lim)
		}
		for i := lo; mask != nil && i < hi; { // the frame's foreground does not move the model
			j := i % len(mask) // in each channel's plane
			for q, m := range mask[j:min(len(mask), j+hi-i)] {
				if m != 0 {
					p[i+q] = 0
				}
			}
			i += len(mask) - j
		}
	})
	// p = (I − BBᵀ)γ, twice against rounding (classical Gram–Schmidt
	// twice: a pass for Bᵀp, a pass to subtract B·(Bᵀp)); the last pass
	// also sums each chunk's squares, for ‖p‖.
	h, sq := buf.wy, make([]float64, chunks)
	for range 2 {
		byChunks(rows, workers, func(_, t, lo, hi int) { dotsRange(buf.parts[t*k:(t+1)*k], b, p, lo, hi) })
		sumParts(h, buf.parts, k)
		byChunks(rows, workers, func(_, t, lo, hi int) {
			for c, hc := range h {
				floats.AddScaled(p[lo:hi], -hc, b.Data[c*b.Stride+lo:c*b.Stride+hi])
			}
			sq[t] = floats.Dot(p[lo:hi], p[lo:hi])
		})
	}
	pn := math.Sqrt(floats.Sum(sq))
	if !(pn > 0) {
		return
	}
	theta := s.track * math.Atan2(pn, wn)
	if s.shared {
		s.basisT, s.shared = mat.DenseCopyOf(s.basisT), false
		b = s.basisT.RawMatrix()
	}
	// Q ← Q + x·ŵᵀ with x = (cos θ − 1)·Q·ŵ + sin θ·p̂, a block of x at a
	// time, formed from Q's block before it changes.
	what := make([]float64, len(wq))
	for c, wc := range wq {
		what[c] = wc / wn
	}
	cos, sin := math.Cos(theta)-1, math.Sin(theta)/pn
	byChunks(rows, workers, func(wk, _, lo, hi int) {
		for b0 := lo; b0 < hi; b0 += projectBlock {
			b1 := min(hi, b0+projectBlock)
			x := buf.blocks[wk][:b1-b0]
			combineRange(x, b, nc, what, b0)
			for i := range x {
				x[i] = cos*x[i] + sin*p[b0+i]
			}
			for c, hc := range what {
				floats.AddScaled(b.Data[(nc+c)*b.Stride+b0:(nc+c)*b.Stride+b1], hc, x)
			}
		}
	})
	s.steps++
	if s.steps%reorthonormalize == 0 {
		s.basisT = mat.DenseCopyOf(orthonormal(mat.DenseCopyOf(s.basisT.T())).T())
	}
}

// reorthonormalize is how many tracking steps pass between two
// Gram–Schmidt passes over the basis.
const reorthonormalize = 100

// separate feeds the frames of seq to the Subtractor in order and returns
// them as a Separation (the background and the masks of every frame, the
// rank of the model after the last frame), for the batch command's
// writers.
func (s *Subtractor) separate(ctx context.Context, seq *frames.Sequence, stage func(string)) (*Separation, error) {
	if seq.Geometry != s.g {
		return nil, fmt.Errorf("video: frames of %d×%d×%d in a stream of %d×%d×%d", seq.Width, seq.Height, seq.Channels(), s.g.Width, s.g.Height, s.g.Channels())
	}
	rows, n := seq.Y.Dims()
	if s.seen == 0 && n < 2 { // the first window holds the warm-up, or all the input
		return nil, fmt.Errorf("%w, got %d", ErrTooFewFrames, n)
	}
	if stage != nil {
		tracked := ""
		if s.track > 0 {
			tracked = ", tracked in between"
		}
		stage(fmt.Sprintf("separating %d frames one by one (background refitted every %d frames to the last %d%s)", n, s.refit, s.history, tracked))
	}
	t0, fits0 := time.Now(), s.FitSeconds
	bg := &projected{rows: rows}
	masks := newMaskSet(s.g.Pixels(), n)
	noise := make([]float64, n)
	sep := &Separation{Background: bg, Masks: masks}
	col := make([]float64, rows)
	next := 0 // the window's frames are decided in order
	keep := func(f *Frame) error {
		if next == n {
			return fmt.Errorf("video: more frames decided than the window's %d", n)
		}
		bg.add(f)
		for i, v := range f.Mask {
			masks.Frame(next)[i] = uint8(v)
		}
		noise[next] = f.Noise
		sep.MaskReport.Shadow += f.Shadow
		sep.MaskReport.Displaced += f.Displaced
		next++
		return nil
	}
	var pending []int // frames stored, to be decided against the current fit
	decidePending := func() error {
		err := s.decideAtOnce(ctx, func(dst []float64, j int) { mat.Col(dst, j, seq.Y) }, pending, keep)
		pending = pending[:0]
		return err
	}
	for j := range n {
		mat.Col(col, j, seq.Y)
		if s.seen < s.warmup || s.basisT == nil { // the warm-up, or no fit yet: one at a time
			if err := decidePending(); err != nil {
				return nil, err
			}
			if err := s.push(ctx, col, keep); err != nil {
				return nil, err
			}
			continue
		}
		// push's steps, with the decision deferred: every frame between
		// two fits is decided against the same fit, so those frames can
		// be decided at once. The ones before a fit are decided first.
		if err := s.store(ctx, col); err != nil {
			return nil, err
		}
		if s.since >= s.refit {
			if err := decidePending(); err != nil {
				return nil, err
			}
			if err := s.fitOrWait(ctx); err != nil {
				return nil, err
			}
		}
		if s.track > 0 { // each frame's decision waits for the step before
			f, err := s.decide(ctx, col)
			if err == nil {
				err = keep(f)
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		pending = append(pending, j)
	}
	if err := decidePending(); err != nil {
		return nil, err
	}
	if next < n { // the input ends inside the warm-up
		if err := s.flush(ctx, keep); err != nil {
			return nil, err
		}
	}
	if next != n {
		return nil, fmt.Errorf("video: %d frames decided for a window of %d", next, n)
	}
	sep.Foreground = residual{seq.Y, bg}
	sep.MaskReport.Rule, sep.MaskReport.Options = "noise", s.fit.Mask.withDefaults()
	if s.fit.Mask.Threshold > 0 {
		sep.MaskReport.Rule = "fixed"
	}
	sep.MaskReport.Noise = medianOf(noise)
	sep.MaskReport.Foreground = float64(masks.Foreground()) / float64(s.g.Pixels()*n)
	sep.DisplayFloor = 3 * max(sep.MaskReport.Noise, MinNoise)
	sep.DisplayScale = DisplayScale(sep.Foreground, 0, minDisplayScale)
	sep.Rank, sep.RankRule = s.Rank, "stream"
	sep.RankReason = fmt.Sprintf("the rank of the last fit of the stream's background (%d fits so far)", s.Fits)
	sep.Seconds = time.Since(t0).Seconds()
	sep.RankSeconds = s.FitSeconds - fits0
	return sep, nil
}
