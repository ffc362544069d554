package video

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/parallel"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/video/frames"
)

// Defaults of the foreground decision ([MaskOptions]); docs/video.md
// has the measurements behind them.
const (
	// DefaultNoiseFactor is k of the noise-based threshold: a pixel is a
	// foreground candidate when its residual exceeds k times the noise
	// level of its frame in some channel.
	DefaultNoiseFactor = 6
	// DefaultMaskSmooth is the default radius of the box mean of the
	// normalised residual before thresholding (MaskOptions.Smooth).
	DefaultMaskSmooth = 2
	// SmoothGate is the fraction of the threshold a pixel's own
	// normalised residual must exceed when the mask is smoothed: noise is
	// below it nearly always (at the default noise factor, 3 noise
	// levels), so smoothing does not spread objects onto the background.
	SmoothGate = 0.5
	// DefaultMaskFilter is the radius of the majority filter on the
	// thresholded mask (1: 3×3; a 5×5 filter erodes objects of 4×4
	// pixels).
	DefaultMaskFilter = 1
	// DefaultMinObject is the smallest foreground region kept, in pixels.
	DefaultMinObject = 8
	// DefaultDisplacement is the radius of the displacement test
	// (MaskOptions.Displacement): shifts of up to two pixels in each
	// direction.
	DefaultDisplacement = 2
	// MaxDisplacement is the largest radius of the displacement test
	// (its 49 shifts are the bits of a word).
	MaxDisplacement = 3
	// MinNoise is the smallest noise level assumed, in intensity units:
	// half a step of 8-bit quantisation. It keeps a clip without noise
	// (or without motion) from turning rounding errors into foreground.
	MinNoise = 0.5 / 255
)

// Shadow suppression ([MaskOptions.KeepShadows]): a candidate pixel is a cast
// shadow when every channel is darker than the background by a ratio in
// [ShadowMinRatio, ShadowMaxRatio] and, for colour frames, the channels'
// ratios differ by at most ShadowChromaTol (a shadow dims the light but
// keeps the surface's colour) on a background that has a colour: its
// channels' spread is at least ShadowMinChroma of their mean (on a gray
// surface a gray object darker than it keeps its chromaticity too, and
// the test removed car pixels on a gray road). For gray frames the ratio
// must vary by at most ShadowChromaTol over the 3×3 neighbourhood (a
// shadow keeps the texture under it).
const (
	ShadowMinRatio  = 0.4
	ShadowMaxRatio  = 0.9
	ShadowChromaTol = 0.08
	ShadowMinChroma = 0.1
)

// MaskOptions configure the foreground decision of [Masks]. The zero value
// is the default decision.
type MaskOptions struct {
	// Threshold, when positive, is a fixed threshold on the foreground
	// magnitude (intensities in [0, 1]) and replaces the noise-based one.
	Threshold float64

	// NoiseFactor is k of the noise-based threshold (0: DefaultNoiseFactor).
	// The residual of every channel of a frame is divided by its noise
	// level σ, the robust scale 1.4826 · median |R| over the frame's
	// pixels (at least MinNoise).
	NoiseFactor float64

	// PixelNoise also divides by a per-pixel noise level, estimated from
	// the lower quartile of the pixel's |R| over time, where that is the
	// larger: it raises the threshold where the background itself moves
	// (foliage, water) at the price of missing objects there. Off by
	// default: on the hall clip it lowered F from 0.72 to 0.61. A
	// [Subtractor] takes the level over its history at each fit (none
	// before the first).
	PixelNoise bool

	// Smooth is the radius of a box mean of the normalised magnitude
	// (0: DefaultMaskSmooth; < 0: none): a pixel is also a candidate when
	// the mean over its (2r+1)² window exceeds the threshold and its own
	// magnitude exceeds SmoothGate times it. The mean fills the holes of
	// objects of low contrast (the misses on real footage are holes
	// inside cars); the gate keeps it from spreading an object onto the
	// background around it; a pixel above the threshold on its own is a
	// candidate whatever its window holds, so small objects keep their
	// corners.
	Smooth int

	// Filter is the radius of the hysteresis filter of [cleanMask]
	// (0: DefaultMaskFilter; < 0: none).
	Filter int

	// MinObject drops connected foreground regions of fewer pixels
	// (0: DefaultMinObject; < 0: none).
	MinObject int

	// KeepShadows turns the shadow suppression off: by default candidate
	// pixels that look like cast shadows (see ShadowMinRatio) are not
	// foreground.
	KeepShadows bool

	// Displacement is the radius r ≤ MaxDisplacement of the displacement
	// test (0: DefaultDisplacement; < 0: none), after the filter and the
	// minimum size: a foreground region (4-connected) is dropped when one
	// shift (dx, dy) of the background, |dx|, |dy| ≤ r, explains at least
	// half of its pixels above the threshold: each of them is within the
	// threshold, in every channel, of the background at (x+dx, y+dy). It
	// removes what a small motion of the background itself produces (a
	// camera that shakes, swaying leaves, the edges of structures) and
	// keeps objects, whose pixels do not match the background shifted.
	// This is the component displacement of Elgammal, Harwood and Davis,
	// "Non-parametric model for background subtraction" (ECCV 2000,
	// section 3.3), with the threshold in place of a density and half the
	// region in place of a product of probabilities; one shift for the
	// whole region, rather than a shift for each pixel, keeps chance
	// matches on a textured background from dropping objects.
	Displacement int
}

func (o MaskOptions) withDefaults() MaskOptions {
	def := func(v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	def(&o.Smooth, DefaultMaskSmooth)
	def(&o.Filter, DefaultMaskFilter)
	def(&o.MinObject, DefaultMinObject)
	def(&o.Displacement, DefaultDisplacement)
	o.NoiseFactor = cmp.Or(o.NoiseFactor, DefaultNoiseFactor)
	return o
}

// Validate reports options that cannot be used.
func (o MaskOptions) Validate() error {
	switch {
	case math.IsNaN(o.Threshold) || o.Threshold < 0 || math.IsInf(o.Threshold, 0):
		return fmt.Errorf("video: mask threshold must be a non-negative number, got %v", o.Threshold)
	case math.IsNaN(o.NoiseFactor) || o.NoiseFactor < 0 || math.IsInf(o.NoiseFactor, 0):
		return fmt.Errorf("video: noise factor must be a non-negative number, got %v", o.NoiseFactor)
	case o.Smooth > 50 || o.Filter > 50:
		return fmt.Errorf("video: smoothing and filter radii must be at most 50, got %d and %d", o.Smooth, o.Filter)
	case o.Displacement > MaxDisplacement:
		return fmt.Errorf("video: the displacement radius must be at most %d, got %d", MaxDisplacement, o.Displacement)
	}
	return nil
}

// MaskReport describes a decision made by [Masks].
type MaskReport struct {
	// Rule is "noise" (k·σ) or "fixed" (MaskOptions.Threshold).
	Rule string
	// Noise is the median over frames of the per-frame noise level σ
	// (the largest over the channels), in intensity units, whatever the
	// rule; for the "noise" rule the effective threshold on a pixel of
	// typical noise is NoiseFactor·max(Noise, MinNoise).
	Noise float64
	// Options are the options used, defaults filled in.
	Options MaskOptions
	// Shadow is the number of candidate pixels (over all frames) set
	// aside as shadows.
	Shadow int
	// Displaced is the number of mask pixels (over all frames) in the
	// regions that the displacement test dropped.
	Displaced int
	// Foreground is the fraction of pixels (over all frames) in the
	// final masks.
	Foreground float64
}

// Masks decides, for every pixel of every frame, whether it is foreground:
// the residual fg (Y − M, or the sparse part S) is compared with the
// data's own noise level or a fixed threshold, smoothed, filtered and
// cleaned as o says (see [MaskOptions]). y and bg are the frames and the
// background, needed for the shadow and displacement tests (both may be
// nil with KeepShadows and a negative Displacement). It returns the masks
// as a pixels×frames 0/1 matrix.
func Masks(ctx context.Context, fg, y, bg Matrix, g frames.Geometry, o MaskOptions) (*MaskSet, MaskReport, error) {
	if err := o.Validate(); err != nil {
		return nil, MaskReport{}, err
	}
	o = o.withDefaults()
	rep := MaskReport{Rule: "noise", Options: o}
	if o.Threshold > 0 {
		rep.Rule = "fixed"
	}
	rows, frames := fg.Dims()
	if rows != g.Rows() {
		return nil, rep, fmt.Errorf("video: a foreground of %d rows does not fit %d×%d×%d frames", rows, g.Width, g.Height, g.Channels())
	}
	needFrames := !o.KeepShadows || o.Displacement > 0
	if needFrames && (isNil(y) || isNil(bg)) {
		return nil, rep, fmt.Errorf("video: shadow suppression and the displacement test need the frames and the background")
	}

	// Per-pixel noise scales (over time), one per channel and pixel.
	var pixNoise []float64
	if rep.Rule == "noise" && o.PixelNoise {
		var err error
		if pixNoise, err = pixelNoiseScales(ctx, fg); err != nil {
			return nil, rep, err
		}
	}

	// Frames are decided in blocks: the columns of a block are gathered
	// in one pass over the rows (a column of a row-major matrix touches a
	// cache line per entry), then decided in parallel.
	p := g.Pixels()
	out := newMaskSet(p, frames)
	frameNoise := make([]float64, frames)
	shadow, displaced := make([]int, frames), make([]int, frames)
	workers := max(1, min(runtime.GOMAXPROCS(0), maskBlock, frames))
	work := make([]*frameWork, workers)
	for k := range work {
		work[k] = newFrameWork(g)
	}
	block := min(maskBlock, frames) // one frame at a time for a stream
	cols := newColumns(block, rows)
	var ycols, bcols [][]float64
	if needFrames {
		ycols, bcols = newColumns(block, rows), newColumns(block, rows)
	}
	masks := make([][]bool, block)
	for j0 := 0; j0 < frames; j0 += block {
		if err := ctx.Err(); err != nil {
			return nil, rep, err
		}
		nb := min(block, frames-j0)
		if needFrames {
			gatherColumns(ycols[:nb], y, j0)
			gatherColumns(bcols[:nb], bg, j0)
		}
		if r, ok := fg.(residual); ok && needFrames && r.of(y, bg) {
			// The residual Y − M from the columns just gathered.
			for k := 0; k < nb; k++ {
				floats.SubTo(cols[k], ycols[k], bcols[k])
			}
		} else {
			gatherColumns(cols[:nb], fg, j0)
		}
		parallel.Strided(nb, workers, func(w, k int) {
			var yc, bc []float64
			if needFrames {
				yc, bc = ycols[k], bcols[k]
			}
			d := o.decideFrame(work[w], cols[k], yc, bc, g, pixNoise, rep.Rule == "fixed")
			masks[k], frameNoise[j0+k], shadow[j0+k], displaced[j0+k] = d.mask, d.noise, d.shadow, d.displaced
		})
		rep.Foreground += setMasks(out, masks[:nb], j0)
	}
	for k, n := range shadow {
		rep.Shadow += n
		rep.Displaced += displaced[k]
	}
	rep.Foreground /= float64(p * max(frames, 1))
	if frames > 0 {
		rep.Noise = selection.Select(frameNoise, (frames+1)/2)
	}
	return out, rep, nil
}

// decideOne decides a single frame y against its background bg as
// [Masks] does (o with its defaults applied), with the scratch space w
// and res (of len(y), for the residual y − bg) given, so that a stream
// does not allocate them for every frame. pixNoise is the per-pixel noise
// level over time (o.PixelNoise; nil: none yet), which a single frame
// cannot give: a stream takes it from its history ([historyNoise]).
func (o MaskOptions) decideOne(w *frameWork, res, y, bg, pixNoise []float64, g frames.Geometry) frameDecision {
	floats.SubTo(res, y, bg)
	var yc, bc []float64
	if !o.KeepShadows || o.Displacement > 0 {
		yc, bc = y, bg
	}
	fixed := o.Threshold > 0
	if fixed || !o.PixelNoise {
		pixNoise = nil
	}
	return o.decideFrame(w, res, yc, bc, g, pixNoise, fixed)
}

// pixelNoiseScales returns the noise scale of each row of fg over time
// (lowScale of its absolute values).
func pixelNoiseScales(ctx context.Context, fg Matrix) ([]float64, error) {
	rows, frames := fg.Dims()
	workers := runtime.GOMAXPROCS(0)
	bufs := newColumns(workers, frames)
	return rowNoise(ctx, rows, frames, workers, func(w, i int) []float64 { return matrixRow(bufs[w], fg, i) })
}

// rowNoise returns, for each of rows rows of a residual of n columns,
// lowScale of its absolute values, on workers goroutines; residual(w, i)
// gives row i (a view or worker w's buffer; it is not changed).
func rowNoise(ctx context.Context, rows, n, workers int, residual func(w, i int) []float64) ([]float64, error) {
	const block = 4096
	out := make([]float64, rows)
	abs := newColumns(workers, n)
	parallel.Strided((rows+block-1)/block, workers, func(w, b int) {
		if ctx.Err() != nil {
			return
		}
		for i := b * block; i < min(rows, (b+1)*block); i++ {
			for j, v := range residual(w, i) {
				abs[w][j] = math.Abs(v)
			}
			out[i] = lowScale(abs[w])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// matrixRow returns row i of m: a view of a *mat.Dense, or dst filled.
func matrixRow(dst []float64, m Matrix, i int) []float64 {
	switch m := m.(type) {
	case *mat.Dense:
		return m.RawRowView(i)
	case LowRank:
		u, q := m.U.RawRowView(i), m.Q.RawMatrix()
		for j := range dst {
			dst[j] = floats.Dot(u, q.Data[j*q.Stride:j*q.Stride+len(u)])
		}
		return dst
	}
	for j := range dst {
		dst[j] = m.At(i, j)
	}
	return dst
}

// setMasks writes masks as frames j0, j0+1, … of out (1 for foreground)
// and returns the number of foreground pixels.
func setMasks(out *MaskSet, masks [][]bool, j0 int) float64 {
	n := 0
	for k, m := range masks {
		f := out.Frame(j0 + k)
		for i, v := range m {
			if v {
				f[i] = 1
				n++
			}
		}
	}
	return float64(n)
}

// isNil reports whether m is nil or a nil *mat.Dense.
func isNil(m Matrix) bool {
	d, ok := m.(*mat.Dense)
	return m == nil || ok && d == nil
}

// lowRankColumns writes (or, with sub, subtracts from dst) columns j0,
// j0+1, … of the low-rank matrix l.
func lowRankColumns(dst [][]float64, l LowRank, j0 int, sub bool) {
	r, k := l.U.Dims()
	q, u := l.Q.RawMatrix(), l.U.RawMatrix()
	qs := q.Data[j0*q.Stride:]
	// By tiles of rows, as transposeBlock: a tile of U stays in cache
	// while each column's part is written in order.
	for i0 := 0; i0 < r; i0 += transposeRows {
		i1 := min(i0+transposeRows, r)
		ut := u.Data[i0*u.Stride:]
		for b, col := range dst {
			qj := qs[b*q.Stride : b*q.Stride+k]
			out := col[i0:i1]
			if k == 1 { // the usual rank of a background
				q0 := qj[0]
				for t := range out {
					if sub {
						out[t] -= ut[t*u.Stride] * q0
					} else {
						out[t] = ut[t*u.Stride] * q0
					}
				}
				continue
			}
			for t := range out {
				row := ut[t*u.Stride : t*u.Stride+k]
				var s float64
				for c, uc := range row {
					s += uc * qj[c]
				}
				if sub {
					out[t] -= s
				} else {
					out[t] = s
				}
			}
		}
	}
}

// transposeBlock copies columns j0 … j0+len(dst)−1 of raw into dst (with
// sub, subtracts them from dst), by tiles of transposeRows rows: a tile's
// lines of raw stay in the first level cache while each column's part of
// it is written in order. (Row by row, scattering each row's values over
// the columns, was 3.3 times slower: BenchmarkGatherColumns.)
func transposeBlock(dst [][]float64, raw blas64.General, j0 int, sub bool) {
	for i0 := 0; i0 < raw.Rows; i0 += transposeRows {
		i1 := min(i0+transposeRows, raw.Rows)
		for k, col := range dst {
			src := raw.Data[i0*raw.Stride+j0+k:]
			out := col[i0:i1]
			if sub {
				for t := range out {
					out[t] -= src[t*raw.Stride]
				}
				continue
			}
			for t := range out {
				out[t] = src[t*raw.Stride]
			}
		}
	}
}

// transposeRows is the tile height of transposeBlock: 64 rows of a block
// of 16 frames are 128 cache lines, 8 KiB.
const transposeRows = 64

// maskBlock is the number of frames [Masks] gathers and decides at once.
const maskBlock = 16

// newColumns allocates n column buffers of the given length.
func newColumns(n, rows int) [][]float64 {
	c := make([][]float64, n)
	for k := range c {
		c[k] = make([]float64, rows)
	}
	return c
}

// gatherColumns copies columns j0, j0+1, … of m into dst, in one pass
// over the rows of a *mat.Dense or of the factor U of a [LowRank].
func gatherColumns(dst [][]float64, m Matrix, j0 int) {
	switch m := m.(type) {
	case LowRank:
		lowRankColumns(dst, m, j0, false)
		return
	case *projected:
		for k, col := range dst {
			m.column(col, j0+k)
		}
		return
	case residual:
		gatherColumns(dst, m.y, j0)
		switch bg := m.m.(type) {
		case LowRank:
			lowRankColumns(dst, bg, j0, true)
		case *projected:
			b := make([]float64, len(dst[0]))
			for k, col := range dst {
				bg.column(b, j0+k)
				floats.Sub(col, b)
			}
		case *mat.Dense:
			transposeBlock(dst, bg.RawMatrix(), j0, true)
		default:
			for k, col := range dst {
				for i := range col {
					col[i] -= bg.At(i, j0+k)
				}
			}
		}
		return
	}
	if ms, ok := m.(*MaskSet); ok {
		for k, col := range dst {
			for i, v := range ms.Frame(j0 + k) {
				col[i] = float64(v)
			}
		}
		return
	}
	if d, ok := m.(*mat.Dense); ok {
		transposeBlock(dst, d.RawMatrix(), j0, false)
		return
	}
	if v, ok := m.(view); ok {
		gatherColumns(dst, v.m, j0)
		for _, col := range dst {
			for i, x := range col {
				col[i] = v.fn(x)
			}
		}
		return
	}
	for k, col := range dst {
		for i := range col {
			col[i] = m.At(i, j0+k)
		}
	}
}

// frameWork holds one worker's buffers for deciding a frame.
type frameWork struct {
	z, zs, buf []float64
	cand       []bool
	my, mb     []float64
	sat        []float64   // summed-area table of boxMean
	ratios     [][]float64 // of the 3×3 means, for the gray texture test
	scale      []float64   // each channel's threshold, for the displacement test
	offsets    []uint64    // the displacement test's matching shifts, a bit each
}

// frameDecision is what decideFrame made of one frame: the cleaned mask,
// the frame's noise level (the largest over the channels), the number of
// candidates set aside as shadows and the number of mask pixels dropped
// by the displacement test.
type frameDecision struct {
	mask              []bool
	noise             float64
	shadow, displaced int
}

func newFrameWork(g frames.Geometry) *frameWork {
	p := g.Pixels()
	return &frameWork{
		z: make([]float64, p), zs: make([]float64, p), buf: make([]float64, p),
		cand: make([]bool, p), my: make([]float64, p), mb: make([]float64, p),
		sat:    make([]float64, (g.Width+1)*(g.Height+1)),
		ratios: newColumns(g.Channels(), p),
		scale:  make([]float64, g.Channels()), offsets: make([]uint64, p),
	}
}

// decideFrame decides one frame from its residual column col (and, for
// the shadow and displacement tests, its frame and background columns yc
// and bc; nil skips both).
func (o MaskOptions) decideFrame(w *frameWork, col, yc, bc []float64, g frames.Geometry, pixNoise []float64, fixed bool) frameDecision {
	nc, p := g.Channels(), g.Pixels()
	z := w.z
	clear(z)
	worst := 0.0
	for c := 0; c < nc; c++ {
		ch := col[c*p : (c+1)*p]
		for i, v := range ch {
			w.buf[i] = math.Abs(v)
		}
		sf := robustScale(w.buf)
		worst = max(worst, sf)
		w.scale[c] = o.NoiseFactor * max(sf, MinNoise)
		if fixed {
			w.scale[c] = o.Threshold
		}
		for i, v := range ch {
			z[i] = max(z[i], math.Abs(v)/threshold(w.scale[c], pixNoise, o.NoiseFactor, c*p+i))
		}
	}
	boxMean(w.zs, z, w.sat, g.Width, g.Height, o.Smooth)
	gate := 0.0
	if o.Smooth > 0 {
		gate = SmoothGate
	}
	for i := range w.cand {
		w.cand[i] = z[i] > 1 || (w.zs[i] > 1 && z[i] > gate)
	}
	d := frameDecision{noise: worst}
	if yc != nil && !o.KeepShadows {
		d.shadow = suppressShadows(w, yc, bc, g)
	}
	d.mask = cleanMask(w.cand, g.Width, g.Height, o.Filter, o.MinObject)
	if yc != nil && o.Displacement > 0 {
		d.displaced = dropDisplaced(w, d.mask, yc, bc, g, pixNoise, o.NoiseFactor, o.Displacement)
	}
	return d
}

// threshold is the foreground threshold of entry k (channel c, pixel i:
// k = c·pixels + i) of a frame whose channel c has the threshold channel:
// raised to noiseFactor times the pixel's own noise level where that is
// larger (MaskOptions.PixelNoise; pixNoise nil, as under a fixed
// threshold: none).
func threshold(channel float64, pixNoise []float64, noiseFactor float64, k int) float64 {
	if pixNoise == nil {
		return channel
	}
	return max(channel, noiseFactor*pixNoise[k])
}

// dropDisplaced clears the regions of mask that the displacement test of
// [MaskOptions.Displacement] explains by one shift of the background by
// at most r ≤ MaxDisplacement pixels, given the frame's and the
// background's columns and each channel's threshold in w.scale (per
// pixel as [threshold] gives it), and returns the number of pixels it cleared. Each pixel
// above the threshold gets a bit for every shift at which it matches;
// a region is dropped when one shift holds at least half of them.
func dropDisplaced(w *frameWork, mask []bool, yc, bc []float64, g frames.Geometry, pixNoise []float64, noiseFactor float64, r int) int {
	nc, p, wd, ht := g.Channels(), g.Pixels(), g.Width, g.Height
	offs := w.offsets
	side := 2*r + 1
	found := false
	for i, m := range mask {
		offs[i] = 0
		if !m || w.z[i] <= 1 {
			continue
		}
		found = true
		x, y := i%wd, i/wd
		for ny := max(0, y-r); ny <= min(ht-1, y+r); ny++ {
			for nx := max(0, x-r); nx <= min(wd-1, x+r); nx++ {
				j := ny*wd + nx
				match := true
				for c := 0; c < nc && match; c++ {
					match = math.Abs(yc[c*p+i]-bc[c*p+j]) <= threshold(w.scale[c], pixNoise, noiseFactor, c*p+i)
				}
				if match {
					offs[i] |= 1 << ((ny-y+r)*side + nx - x + r)
				}
			}
		}
	}
	if !found {
		return 0
	}
	cleared := 0
	var counts [64]int
	eachRegion(mask, wd, ht, func(region []int) {
		clear(counts[:])
		strong := 0
		for _, q := range region {
			if w.z[q] <= 1 {
				continue
			}
			strong++
			for b := offs[q]; b != 0; b &= b - 1 {
				counts[bits.TrailingZeros64(b)]++
			}
		}
		if strong > 0 && 2*slices.Max(counts[:]) >= strong {
			for _, q := range region {
				mask[q] = false
			}
			cleared += len(region)
		}
	})
	return cleared
}

// medianRatio returns the median of y/b over the pixels of the 3×3
// neighbourhood of pixel i of a w×h channel (clipped at the border) whose
// background is bright enough to tell a shadow (b ≥ 0.05), and NaN when
// none is: the upper median for an even count, by insertion sort of at
// most nine values.
func medianRatio(y, b []float64, i, w, h int) float64 {
	var v [9]float64
	x, row := i%w, i/w
	n := 0
	for ny := max(0, row-1); ny <= min(h-1, row+1); ny++ {
		for nx := max(0, x-1); nx <= min(w-1, x+1); nx++ {
			j := ny*w + nx
			if b[j] < 0.05 {
				continue
			}
			r := y[j] / b[j]
			k := n
			for ; k > 0 && v[k-1] > r; k-- {
				v[k] = v[k-1]
			}
			v[k] = r
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return v[n/2]
}

// robustScale is 1.4826 · median(x), the standard deviation of Gaussian
// noise estimated from absolute values x (reordered in place).
func robustScale(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return 1.4826 * selection.Select(x, (len(x)+1)/2)
}

// lowScale estimates the standard deviation of Gaussian noise from the
// lower quartile of absolute values x (reordered in place): a pixel that
// a moving object covers in up to three quarters of the frames still
// shows its noise there. The lower quartile of |N(0, σ²)| is 0.3186·σ.
func lowScale(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return selection.SelectSmallest(x, (len(x)+3)/4) / 0.3186
}

// boxMean writes into dst the mean of src over the (2r+1)² window around
// each pixel of a w×h frame, clipped at the border (dst = src for r = 0).
// sat is scratch space of (w+1)·(h+1) values.
func boxMean(dst, src, sat []float64, w, h, r int) {
	if r <= 0 {
		copy(dst, src)
		return
	}
	// summedArea and windowSum written out for float64 slices (their
	// generic forms call a closure and a function per pixel): the same
	// sums in the same order.
	sw := w + 1
	clear(sat[:sw])
	for y := 0; y < h; y++ {
		row, up := sat[(y+1)*sw:(y+2)*sw], sat[y*sw:(y+1)*sw]
		row[0] = 0
		var run float64
		for x, v := range src[y*w : (y+1)*w] {
			run += v
			row[x+1] = up[x+1] + run
		}
	}
	for y := 0; y < h; y++ {
		y0, y1 := max(0, y-r), min(h, y+r+1)
		top, bottom := sat[y0*sw:(y0+1)*sw], sat[y1*sw:(y1+1)*sw]
		out := dst[y*w : (y+1)*w]
		for x := range out {
			x0, x1 := max(0, x-r), min(w, x+r+1)
			s := bottom[x1] - top[x1] - bottom[x0] + top[x0]
			out[x] = s / float64((y1-y0)*(x1-x0))
		}
	}
}

// summedArea fills sat, of (w+1)·(h+1) entries, with the summed-area
// table of the w×h frame whose pixel i is at(i): sat[(y+1)(w+1)+x+1] is
// the sum over the rectangle [0, x] × [0, y].
func summedArea[T int32 | float64](sat []T, w, h int, at func(i int) T) {
	clear(sat[:w+1])
	for y := 0; y < h; y++ {
		sat[(y+1)*(w+1)] = 0
		var run T
		for x := 0; x < w; x++ {
			run += at(y*w + x)
			sat[(y+1)*(w+1)+x+1] = sat[y*(w+1)+x+1] + run
		}
	}
}

// windowSum returns the sum over the (2r+1)² window around (x, y),
// clipped at the border of the w×h frame, and the window's area, from a
// table of [summedArea].
func windowSum[T int32 | float64](sat []T, w, h, r, x, y int) (T, int) {
	y0, y1 := max(0, y-r), min(h, y+r+1)
	x0, x1 := max(0, x-r), min(w, x+r+1)
	return sat[y1*(w+1)+x1] - sat[y0*(w+1)+x1] - sat[y1*(w+1)+x0] + sat[y0*(w+1)+x0], (y1 - y0) * (x1 - x0)
}

// suppressShadows clears the candidates w.cand of a frame that look like
// cast shadows (see ShadowMinRatio), given the frame's and the
// background's columns, and returns how many it cleared. A candidate's
// ratio in a channel is the median of the per-pixel ratios over its 3×3
// neighbourhood, which divides the noise of a ratio by about 2.4 (the
// mean of nine would by 3) and, unlike a ratio of 3×3 means, is not moved
// when up to four of the nine pixels belong to the object that casts
// the shadow; a pixel whose background is darker than 0.05 in some
// channel is not a shadow (too dark to tell). The texture test of gray
// frames compares the ratios of 3×3 means over the neighbourhood, the
// only use of those means.
func suppressShadows(fw *frameWork, yc, bc []float64, g frames.Geometry) int {
	nc, p, w, h := g.Channels(), g.Pixels(), g.Width, g.Height
	cand := fw.cand
	if !slices.Contains(cand, true) {
		return 0
	}
	ratios := fw.ratios
	if nc == 1 { // the texture test's ratios of 3×3 means
		boxMean(fw.my, yc, fw.sat, w, h, 1)
		boxMean(fw.mb, bc, fw.sat, w, h, 1)
		r := ratios[0]
		for i := range r {
			if fw.mb[i] < 0.05 {
				r[i] = math.NaN() // too dark to tell a shadow
			} else {
				r[i] = fw.my[i] / fw.mb[i]
			}
		}
	}
	inRange := func(r float64) bool { return r >= ShadowMinRatio && r <= ShadowMaxRatio }
	// spread returns the range of the ratios of channel c over the 3×3
	// neighbourhood of pixel i, +Inf when one is out of range.
	spread := func(c, i int) float64 {
		x, y := i%w, i/w
		lo, hi := math.Inf(1), math.Inf(-1)
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				if x+dx < 0 || x+dx >= w || y+dy < 0 || y+dy >= h {
					continue
				}
				r := ratios[c][(y+dy)*w+x+dx]
				if !inRange(r) {
					return math.Inf(1)
				}
				lo, hi = min(lo, r), max(hi, r)
			}
		}
		return hi - lo
	}
	// coloured reports whether the background at pixel i has a colour.
	coloured := func(i int) bool {
		lo, hi, sum := math.Inf(1), 0.0, 0.0
		for c := range nc {
			v := bc[c*p+i]
			lo, hi, sum = min(lo, v), max(hi, v), sum+v
		}
		return sum > 0 && (hi-lo)/(sum/float64(nc)) >= ShadowMinChroma
	}
	isShadow := func(i int) bool {
		lo, hi := math.Inf(1), math.Inf(-1)
		for c := 0; c < nc; c++ {
			if bc[c*p+i] < 0.05 {
				return false // too dark to tell a shadow
			}
			r := medianRatio(yc[c*p:(c+1)*p], bc[c*p:(c+1)*p], i, w, h)
			if !inRange(r) {
				return false
			}
			lo, hi = min(lo, r), max(hi, r)
		}
		if nc > 1 {
			return hi-lo <= ShadowChromaTol && coloured(i)
		}
		return spread(0, i) <= ShadowChromaTol
	}
	cleared := 0
	for i, c := range cand {
		if c && isShadow(i) {
			cand[i] = false
			cleared++
		}
	}
	return cleared
}
