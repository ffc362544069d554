package video

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/spectrum"
)

// Defaults of the rank rule ([ChooseRank]).
const (
	// DefaultMaxRank caps the rank chosen from the data: the paper's
	// video setting r = 10 (Appendix B) is the largest rank considered.
	DefaultMaxRank = 10

	// DefaultMinGap is the smallest ratio σ_k/σ_{k+1} that [ChooseRank]
	// takes as the end of the background's spectrum.
	DefaultMinGap = 2

	// DefaultRankFrames is the largest number of frames (evenly spaced)
	// whose Gram matrix is formed to estimate the spectrum.
	DefaultRankFrames = 400

	// DefaultRankPixels is the largest number of rows (pixels, evenly
	// spaced) used to estimate the spectrum.
	DefaultRankPixels = 40000
)

// RankChoice is the outcome of [ChooseRank].
type RankChoice struct {
	// Rank is the chosen rank r.
	Rank int
	// Sigma holds the leading singular values (largest first) of the
	// sampled frame matrix, up to MaxRank+1 of them.
	Sigma []float64
	// Gap is σ_r/σ_{r+1} (+Inf when σ_{r+1} is zero).
	Gap float64
	// MinGap is the gap threshold the choice used.
	MinGap float64
	// Frames and Pixels are the sizes of the sample the spectrum was
	// computed from.
	Frames, Pixels int
}

// Reason describes the choice in one line, for reports.
func (c RankChoice) Reason() string {
	k := len(c.Sigma)
	if k == 0 {
		return "no spectrum"
	}
	sb := spectrum.Format(c.Sigma)
	if c.Gap < c.MinGap {
		return fmt.Sprintf("no gap σk/σk+1 ≥ %g among the first %d singular values (%s) of %d frames × %d pixels; rank 1 (the mean frame)",
			c.MinGap, k, sb, c.Frames, c.Pixels)
	}
	return fmt.Sprintf("last gap σk/σk+1 ≥ %g is σ%d/σ%d = %.3g among the first %d singular values (%s) of %d frames × %d pixels",
		c.MinGap, c.Rank, c.Rank+1, c.Gap, k, sb, c.Frames, c.Pixels)
}

// ChooseRank picks the rank of the background from the spectrum of the
// frame matrix y (pixels × frames): with σ_1 ≥ σ_2 ≥ … its singular
// values and K = min(maxRank, min(d1, d2) − 1), it returns the largest
// k ≤ K whose gap σ_k/σ_{k+1} is at least minGap, or 1 when there is
// none. A static background gives one dominant singular value (the mean
// frame) and ratios near 1 after it (moving objects and noise spread
// over many small values), so r = 1; global changes of illumination add
// a few values that stand clearly above that level, and the rule keeps
// them. A zero σ_{k+1} (an exactly rank-k clip; below 1e-6·σ_1) ends the
// search at k.
// maxRank ≤ 0 means [DefaultMaxRank]; minGap ≤ 1 means [DefaultMinGap].
//
// The singular values are those of a sample of y: at most
// [DefaultRankFrames] evenly spaced frames and [DefaultRankPixels] evenly
// spaced pixels, computed exactly from the eigenvalues of the Gram matrix
// of the sampled frames (cost pixels·frames²; docs/video.md has the
// times). Subsampling keeps a low-rank structure low-rank
// with a similar spectrum shape, which is all the rule uses.
func ChooseRank(ctx context.Context, y mat.Matrix, maxRank int, minGap float64) (RankChoice, error) {
	d1, d2 := y.Dims()
	if maxRank <= 0 {
		maxRank = DefaultMaxRank
	}
	if !(minGap > 1) {
		minGap = DefaultMinGap
	}
	k := min(maxRank, min(d1, d2)-1)
	if k < 1 {
		return RankChoice{}, fmt.Errorf("video: a %d×%d frame matrix is too small for a rank choice (needs at least 2 frames and 2 pixels)", d1, d2)
	}
	cols := spectrum.Spread(d2, DefaultRankFrames)
	rows := spectrum.Spread(d1, DefaultRankPixels)
	// x holds the sampled frames as rows, so that x·xᵀ is their Gram matrix.
	x := mat.NewDense(len(cols), len(rows), nil)
	switch y := y.(type) {
	case *mat.Dense:
		sampleTiled(x, y.RawMatrix(), rows, cols)
	case denseRows:
		sampleTiled(x, y.RawMatrix(), rows, cols)
	case rowSource:
		buf := make([]float64, d2)
		for b, i := range rows {
			r := y.row(buf, i)
			for a, j := range cols {
				x.Set(a, b, r[j])
			}
		}
	default:
		for a, j := range cols {
			row := x.RawRowView(a)
			for b, i := range rows {
				row[b] = y.At(i, j)
			}
		}
	}
	sigma, err := spectrum.Values(ctx, x, k)
	if errors.Is(err, spectrum.ErrNotFinite) {
		return RankChoice{}, fmt.Errorf("video: the frames contain NaN or infinite values")
	}
	if err != nil {
		return RankChoice{}, err
	}
	c := RankChoice{Sigma: sigma, Frames: len(cols), Pixels: len(rows), MinGap: minGap}
	c.Rank, c.Gap = spectrum.LastGap(sigma, minGap)
	return c, nil
}

// sampleTiled sets x[a][b] = y[rows[b]][cols[a]] by tiles of
// transposeRows sampled pixels, whose rows of y stay in cache while every
// frame's part of x is written (At, entry by entry, was 1% of the video
// command's time, on its critical path).
func sampleTiled(x *mat.Dense, y blas64.General, rows, cols []int) {
	for b0 := 0; b0 < len(rows); b0 += transposeRows {
		tile := rows[b0:min(b0+transposeRows, len(rows))]
		for a, j := range cols {
			out := x.RawRowView(a)[b0 : b0+len(tile)]
			for t, i := range tile {
				out[t] = y.Data[i*y.Stride+j]
			}
		}
	}
}

// MedianBackground returns the per-pixel temporal median of the frames
// (the columns of y) as a column vector of y's height: the usual baseline
// background for a static camera. For an even number of frames it is the
// mean of the two middle values.
func MedianBackground(ctx context.Context, y *mat.Dense) (*mat.VecDense, error) {
	return medianRows(ctx, denseRows{y})
}

// medianRows is MedianBackground of a rowSource.
func medianRows(ctx context.Context, y rowSource) (*mat.VecDense, error) {
	d1, d2 := y.Dims()
	out := mat.NewVecDense(d1, nil)
	buf := make([]float64, d2)
	for i := 0; i < d1; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		copy(buf, y.row(buf, i))
		slices.Sort(buf)
		m := buf[d2/2]
		if d2%2 == 0 {
			m = (buf[d2/2-1] + m) / 2
		}
		out.SetVec(i, m)
	}
	return out, nil
}
