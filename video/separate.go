package video

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/video/frames"
)

// Preset is a named set of solver settings for video. Zero fields leave
// the library's (or the caller's) value alone.
type Preset struct {
	Name string
	// Rank of the background; 0 chooses it from the data.
	Rank int
	// Alpha is α of the gradient methods.
	Alpha float64
	// Mu is the incoherence parameter of the gradient methods.
	Mu float64
	// Gamma is γ of the gradient methods' sparse estimator.
	Gamma float64
	// StepConst is the gradient methods' step constant (η = StepConst/σ̂₁).
	StepConst float64
	// FactorTol is the gradient methods' stop on the relative factor
	// change.
	FactorTol float64
	// ResidualTol is the residual stop of AltProj and IALM.
	ResidualTol float64
	// MaxIter caps the gradient methods' iterations.
	MaxIter int
}

// Fill returns s with the preset's values in place of its zero fields,
// for a run of method: the gradient settings (Gamma, StepConst,
// FactorTol, MaxIter) for gd and scaledgd only, ResidualTol for the other
// methods only. Rank and Alpha, for which 0 is a value of its own (choose
// the rank from the data; no corruption), are filled only when not given.
func (p Preset) Fill(s Preset, method string, rankGiven, alphaGiven bool) Preset {
	or := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	if !rankGiven && p.Rank != 0 {
		s.Rank = p.Rank
	}
	if !alphaGiven && p.Alpha != 0 {
		s.Alpha = p.Alpha
	}
	s.Mu = or(s.Mu, p.Mu)
	if method == "gd" || method == "scaledgd" {
		s.Gamma, s.StepConst, s.FactorTol = or(s.Gamma, p.Gamma), or(s.StepConst, p.StepConst), or(s.FactorTol, p.FactorTol)
		s.MaxIter = int(or(float64(s.MaxIter), float64(p.MaxIter)))
	} else {
		s.ResidualTol = or(s.ResidualTol, p.ResidualTol)
	}
	return s
}

// Presets are the video settings, shared by the command line and the
// experiments: "" holds the defaults measured on real footage
// (docs/video.md) and "paper" the paper's Appendix B settings (r = 10,
// α = 0.2, μ = 10, γ = 1, η = 1/(2σ̂₁), factor change ≤ 4e-4; residual
// 1e-3 for AltProj and IALM).
var Presets = map[string]Preset{
	"": {
		Alpha: 0.2,
		// γ = 1, the paper's video value: the library's defaults (2 on
		// all entries, 3 with p < 1) keep 40% (60%) of every pixel's
		// values out of the fit, which ruins the background at p < 1.
		Gamma: 1,
		// A relative step of about 3e-4: real convergence, unlike the
		// paper's 4e-4 on the squared change, which stops real footage
		// after 2 iterations.
		FactorTol: 1e-7,
		MaxIter:   500,
	},
	"paper": {
		Name: "paper", Rank: 10, Alpha: 0.2, Mu: 10, Gamma: 1, StepConst: 0.5,
		FactorTol: 4e-4, ResidualTol: 1e-3,
	},
}

// DefaultOptions are the settings of `rpca video` at its defaults: the
// gradient method with scaled steps (ScaledGD) and the "" preset (α = 0.2,
// γ = 1, factor change ≤ 1e-7, at most 500 iterations), the rank from the
// data, and the default foreground decision.
func DefaultOptions() SeparateOptions {
	p := Presets[""]
	return SeparateOptions{
		Method: &gd.Method{Scaled: true, Gamma: p.Gamma},
		Settings: rpca.Settings{
			Alpha: p.Alpha,
			Stop:  rpca.Stop{FactorTol: p.FactorTol, MaxIter: p.MaxIter},
		},
	}
}

// SeparateOptions configure [Separate].
type SeparateOptions struct {
	// Method solves the robust PCA problem Y = M + S on the frames; nil
	// means the per-pixel temporal median ([MedianBackground]), the
	// baseline without a low-rank model.
	Method rpca.Method

	// Settings of the solver. Settings.Rank 0 chooses the rank from the
	// data (see [Separate]).
	Settings rpca.Settings

	// MaxRank and MinGap are the automatic rank rule's bounds
	// ([ChooseRank]; 0: the defaults).
	MaxRank int
	MinGap  float64

	// SparseForeground takes the method's sparse part S as the
	// foreground instead of the residual Y − M. It needs S on every row,
	// so it solves on all rows (no sketch).
	SparseForeground bool

	// SampleRate p ∈ (0, 1) solves on a random fraction p of the
	// entries (the paper's subsampling, Section 4.2), drawn with
	// rpca.Sampling.Cover so that no pixel (row) or frame (column) is left
	// without one; the method must accept partial observations. 0 or 1
	// solves on all of them.
	SampleRate float64

	// SketchRows is the number of rows of Y (pixel channels, drawn at
	// random with Settings.Seed) the method solves on; the other rows are
	// fitted to the background's row space found there ([FitRows]).
	// 0 means [DefaultSketchRows]; a negative value, or at least the
	// number of rows, solves on all rows.
	SketchRows int

	// Mask configures the foreground decision ([Masks]).
	Mask MaskOptions

	// Stage, if not nil, is told what is being done before each stage
	// (for progress reports).
	Stage func(msg string)
}

// Separation is the outcome of [Separate].
type Separation struct {
	// Background is M (rows × frames): a *mat.Dense, or a [LowRank] held
	// as its factors when the rows were fitted to a sketch's row space.
	// Foreground is Y − M or S (Y − M read entry by entry for a LowRank
	// background).
	Background Matrix
	Foreground Matrix
	// Masks is the foreground decision, a pixels × frames 0/1 matrix.
	Masks      *MaskSet
	MaskReport MaskReport
	// DisplayFloor and DisplayScale are the foreground magnitudes shown
	// as black and as white ([Excess]).
	DisplayFloor, DisplayScale float64

	// Result is the solver's result (nil for the median).
	Result *rpca.Result
	// residual is Y − M when the rank check formed it for the final fit.
	residual *mat.Dense
	// SketchRows is the number of rows the method solved on (0: all), and
	// RowFit describes the fit of all rows to the row space found there
	// (nil without a sketch).
	SketchRows int
	RowFit     *RowFit
	// Rank is the rank used (0 for the median); RankRule says where it
	// came from ("auto", "robust", "given", "stream", or "method" for a
	// method that sets its own, such as IALM) and RankReason why.
	Rank       int
	RankRule   string
	RankReason string
	// Seconds is the solver's time (all solves), RankSeconds the time of
	// the rank rule's spectra, RowFitSeconds that of [FitRows].
	Seconds, RankSeconds, RowFitSeconds float64
}

// minDisplayScale is the smallest foreground magnitude shown as white:
// a tenth of the intensity range.
const minDisplayScale = 0.1

// ErrRankTooLarge reports a rank that the frames cannot carry.
var ErrRankTooLarge = errors.New("video: rank too large for the number of frames")

// ErrTooFewFrames is returned for a clip of fewer than two frames: with
// one frame there is no background to tell from it (its median, or any
// fit to it, is the frame itself, so every pixel would come out as
// background).
var ErrTooFewFrames = errors.New("video: a background needs at least 2 frames")

// Separate splits the frames of seq into a background and a foreground
// and decides the foreground masks. With a method and Settings.Rank 0,
// the rank is chosen twice from the data:
//
//  1. [ChooseRank] on Y, which finds the background components that stand
//     out of the spectrum (usually only the mean frame: r = 1);
//  2. after the fit at that rank, [ChooseRank] again on the fit plus its
//     residual clipped at three times each frame's noise level. Clipping
//     takes the moving objects' energy out of the spectrum but leaves
//     changes of the background that cover many pixels in many frames
//     (a light switched on, swaying foliage); when this finds a larger
//     rank, the fit is redone at it.
func Separate(ctx context.Context, seq *frames.Sequence, o SeparateOptions) (*Separation, error) {
	if seq == nil || seq.Y == nil {
		return nil, errors.New("video: no frames")
	}
	if _, n := seq.Y.Dims(); n < 2 {
		return nil, fmt.Errorf("%w, got %d", ErrTooFewFrames, n)
	}
	if err := o.Mask.Validate(); err != nil {
		return nil, err
	}
	if o.Method == nil && o.SparseForeground {
		return nil, errors.New("video: the temporal median has no sparse part; use the residual foreground")
	}
	stage := func(format string, a ...any) {
		if o.Stage != nil {
			o.Stage(fmt.Sprintf(format, a...))
		}
	}
	y := seq.Y
	d1, d2 := y.Dims()
	sep := &Separation{}
	if o.Method == nil {
		stage("per-pixel temporal median of %d frames", d2)
		t0 := time.Now()
		med, err := MedianBackground(ctx, y)
		if err != nil {
			return nil, err
		}
		bg := mat.NewDense(d1, d2, nil)
		for j := 0; j < d2; j++ {
			bg.SetCol(j, med.RawVector().Data)
		}
		sep.Background = bg
		sep.Seconds = time.Since(t0).Seconds()
	} else if err := sep.solve(ctx, denseRows{y}, o, stage); err != nil {
		return nil, err
	}
	switch {
	case o.SparseForeground:
		sep.Foreground = sep.Result.S
	case sep.residual != nil: // Y − M of the rank check
		sep.Foreground, sep.residual = sep.residual, nil
	default:
		switch bg := sep.Background.(type) {
		case LowRank:
			sep.Foreground = residual{y, bg}
		case *mat.Dense:
			var r mat.Dense
			r.Sub(y, bg)
			sep.Foreground = &r
		}
	}
	stage("deciding the foreground of %d frames", d2)
	var err error
	sep.Masks, sep.MaskReport, err = Masks(ctx, sep.Foreground, y, sep.Background, seq.Geometry, o.Mask)
	if err != nil {
		return nil, err
	}
	// The display: black up to three times the noise level, white from the
	// robust maximum of the foreground (at least minDisplayScale), so
	// that a clip without motion shows a black foreground instead of
	// its rounding noise stretched to white.
	sep.DisplayFloor = 3 * max(sep.MaskReport.Noise, MinNoise)
	sep.DisplayScale = DisplayScale(sep.Foreground, 0, minDisplayScale)
	return sep, nil
}

// solve fits the low-rank background, choosing the rank when asked. With
// a sketch, the method solves on the sampled rows and [FitRows] fits
// every row to the row space of that solution, once the rank is settled.
func (sep *Separation) solve(ctx context.Context, y rowSource, o SeparateOptions, stage func(string, ...any)) error {
	d1, d2 := y.Dims()
	s := o.Settings
	sep.Rank, sep.RankRule, sep.RankReason = s.Rank, "given", "the rank was given"
	auto := s.Rank == 0
	if auto {
		stage("choosing the rank from the spectrum of %d×%d", d1, d2)
		t0 := time.Now()
		c, err := ChooseRank(ctx, y, o.MaxRank, o.MinGap)
		if err != nil {
			return err
		}
		sep.RankSeconds += time.Since(t0).Seconds()
		sep.Rank, sep.RankRule, sep.RankReason = c.Rank, "auto", c.Reason()
	}
	var ys *mat.Dense // the rows solved on
	if rows := sketchRows(d1, o.sketchRows(), s.Seed); rows != nil {
		ys = gatherRows(y, rows)
		sep.SketchRows = len(rows)
	} else {
		ys = toDense(y)
	}
	n1, _ := ys.Dims()
	var fitted *mat.Dense // the low-rank part on the rows of ys
	fit := func() error {
		if m := min(d1, d2); sep.Rank >= m {
			return fmt.Errorf("%w: rank %d must be smaller than min(pixels, frames) = min(%d, %d) = %d", ErrRankTooLarge, sep.Rank, d1, d2, m)
		}
		s.Rank = sep.Rank
		stage("solving %d×%d at rank %d with %s", n1, d2, sep.Rank, o.Method.Name())
		prob, err := subsampled(ys, s.Seed, o.SampleRate)
		method := o.Method
		if err != nil {
			return err
		}
		res, err := rpca.Solve(ctx, prob, s, method)
		if err != nil {
			return err
		}
		sep.Result = res
		sep.Seconds += res.Elapsed.Seconds()
		fitted = res.LowRank()
		return nil
	}
	if err := fit(); err != nil {
		return err
	}
	if !o.Method.Capabilities().FixedRank {
		// The method sets its own rank (IALM): the rule's choice was
		// only its hint, and checking it again has no use.
		hint, rule := sep.Rank, sep.RankRule
		sep.Rank = sep.Result.U.RawMatrix().Cols
		sep.RankRule = "method"
		sep.RankReason = fmt.Sprintf("%s sets its own rank: %d (the %s rank, %d, was only its hint)", o.Method.Name(), sep.Rank, rule, hint)
	} else if auto {
		stage("checking the rank on the fit with the outliers clipped")
		t0 := time.Now()
		var r mat.Dense
		r.Sub(ys, fitted)
		c, err := ChooseRank(ctx, clipResidual(&r, fitted), o.MaxRank, o.MinGap)
		if err != nil {
			return err
		}
		sep.RankSeconds += time.Since(t0).Seconds()
		if c.Rank > sep.Rank {
			sep.Rank, sep.RankRule = c.Rank, "robust"
			sep.RankReason = "with the outliers of the first fit clipped to 3 noise levels: " + c.Reason()
			if err := fit(); err != nil {
				return err
			}
		} else {
			sep.RankReason += fmt.Sprintf("; with the outliers clipped, rank %d", c.Rank)
			if sep.SketchRows == 0 {
				sep.residual = &r // the foreground, unless S is asked for
			}
		}
	}
	if sep.SketchRows == 0 {
		sep.Background = fitted
		return nil
	}
	q, err := rowSpace(sep.Result.V)
	if err != nil {
		return err
	}
	_, k := q.Dims()
	trim := rowTrim(s.Alpha, d2, k)
	stage("fitting %d rows to the background's %d components (setting aside %d of %d frames each)", d1, k, trim, d2)
	t0 := time.Now()
	m, stats, err := fitRows(ctx, y, q, trim, s.Workers)
	if err != nil {
		return err
	}
	sep.RowFitSeconds = time.Since(t0).Seconds()
	sep.Background, sep.RowFit = m, &stats
	return nil
}

// rowTrim is the number of frames each row's fit ([FitRows]) sets aside:
// with α > 0, d2 − h for h = ⌊(d2 + k + 1)/2⌋, the coverage of least
// trimmed squares with the highest breakdown point (Rousseeuw 1984), so
// that an object may cover a pixel in up to about half of the frames
// without pulling that pixel's background toward it (a busy lane, an
// object that stops); with α = 0, none. α bounds the corruptions the
// solver allows in a row of the sketch, which fixes the background's row
// space; a pixel's own fit to that space may set aside more.
func rowTrim(alpha float64, d2, k int) int {
	if alpha == 0 {
		return 0
	}
	return d2 - (d2+k+1)/2
}

// sketchRows is the number of rows to solve on (≤ 0: all).
func (o SeparateOptions) sketchRows() int {
	switch {
	case o.SparseForeground || o.SketchRows < 0:
		return 0
	case o.SketchRows == 0:
		return DefaultSketchRows
	}
	return o.SketchRows
}

// clipResidual returns M + clip(R, ±3σ_j) for the residual R = Y − M,
// with σ_j the robust noise level of frame j's residual (at least
// MinNoise). R is left unchanged.
func clipResidual(r, m *mat.Dense) *mat.Dense {
	d1, d2 := r.Dims()
	// The frames' noise levels, from blocks of gathered columns.
	lim := make([]float64, d2)
	cols := newColumns(maskBlock, d1)
	for j0 := 0; j0 < d2; j0 += maskBlock {
		nb := min(maskBlock, d2-j0)
		gatherColumns(cols[:nb], r, j0)
		for k := 0; k < nb; k++ {
			for i, v := range cols[k] {
				cols[k][i] = math.Abs(v)
			}
			lim[j0+k] = 3 * max(robustScale(cols[k]), MinNoise)
		}
	}
	out := mat.NewDense(d1, d2, nil)
	for i := 0; i < d1; i++ {
		orow, rrow, mrow := out.RawRowView(i), r.RawRowView(i), m.RawRowView(i)
		for j, v := range rrow {
			orow[j] = mrow[j] + min(max(v, -lim[j]), lim[j])
		}
	}
	return out
}

// subsampled returns the problem on the frames y: all of them, or with
// p ∈ (0, 1) a subsample drawn with Sampling.Cover so that no pixel (row)
// or frame (column) is left without an entry.
func subsampled(y *mat.Dense, seed uint64, p float64) (*rpca.Problem, error) {
	if p <= 0 || p >= 1 {
		return &rpca.Problem{Dense: y}, nil
	}
	obs, err := rpca.Sampling{P: p, Seed: seed, Cover: true}.Dense(y)
	if err != nil {
		return nil, err
	}
	return &rpca.Problem{Observed: obs}, nil
}
