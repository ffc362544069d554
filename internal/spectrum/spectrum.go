// Package spectrum estimates the leading singular values of a large matrix
// from an evenly spaced sample of its rows and columns, and reads a rank
// off them by the last clear gap. It is the rank rule shared by the video
// background (video.ChooseRank) and the automatic rank of decompositions
// (package autorank).
package spectrum

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// gramBlock is the number of columns of x whose Gram matrices gramOf
// forms at once: blocks fixed by the shape, so that the sum, taken in
// block order, does not depend on the number of cores.
const gramBlock = 4096

// gramOf returns x·xᵀ: gonum's SymOuterK (one core) on blocks of columns,
// in parallel, summed in order.
func gramOf(x *mat.Dense) *mat.SymDense {
	n, c := x.Dims()
	blocks := (c + gramBlock - 1) / gramBlock
	parts := make([]*mat.SymDense, blocks)
	kernels.ParallelFor(blocks, 0, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			var g mat.SymDense
			g.SymOuterK(1, x.Slice(0, n, b*gramBlock, min((b+1)*gramBlock, c)))
			parts[b] = &g
		}
	})
	gram := parts[0]
	for _, p := range parts[1:] {
		gram.AddSym(gram, p)
	}
	return gram
}

// Zero is the ratio to σ₁ below which a singular value counts as zero:
// the Gram route resolves singular values only down to about
// √ε·σ₁ ≈ 1.5e-8·σ₁, so smaller ones are rounding.
const Zero = 1e-6

// ErrNotFinite is a sample holding NaN or an infinity.
var ErrNotFinite = errors.New("spectrum: the matrix holds NaN or infinite values")

// Spread returns at most m indices evenly spaced over 0…n−1 (all of them
// when n ≤ m).
func Spread(n, m int) []int {
	if n <= m {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, m)
	for i := range idx {
		idx[i] = int(int64(i) * int64(n) / int64(m))
	}
	return idx
}

// Deflate is the ratio σ_j/σ_{j+1} beyond which [Values] deflates the
// leading j values and [LastGap] measures zero relative to σ_{j+1}: the
// Gram route resolves singular values only down to about √ε of the
// largest, so a matrix whose spectrum spans more (a large constant offset
// over a varying part) is computed in blocks.
const Deflate = 1e3

// Values returns the k+1 largest singular values of x, largest first
// (fewer when x has fewer rows), computed exactly from the eigenvalues of
// the Gram matrix x·xᵀ. x should be the wide orientation of the sample
// (rows ≤ columns): the cost is rows²·columns per block. When σ_j/σ_{j+1}
// exceeds Deflate, the leading j left singular vectors are projected out
// of x and the rest is computed again from the projected matrix, which
// resolves it to √ε of σ_{j+1} instead of σ₁ (at most three times).
//
// x is scaled in place by a power of two that brings its largest
// magnitude near 1 (the Gram matrix squares the entries: data at 1e±200
// would overflow or underflow), and the values are scaled back.
func Values(ctx context.Context, x *mat.Dense, k int) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	big := 0.0
	raw := x.RawMatrix()
	for i := range raw.Rows {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, ErrNotFinite
			}
			big = max(big, math.Abs(v))
		}
	}
	if big == 0 {
		return make([]float64, min(k+1, raw.Rows)), nil
	}
	_, e := math.Frexp(big)
	x.Scale(math.Ldexp(1, -e), x)
	vals, err := deflated(ctx, x, k)
	for i := range vals {
		vals[i] = math.Ldexp(vals[i], e)
	}
	return vals, err
}

// deflated is Values on x of unit scale.
func deflated(ctx context.Context, x *mat.Dense, k int) ([]float64, error) {
	var out []float64
	cur := x
	for round := 0; ; round++ {
		ev, vecs, err := gramEigen(ctx, cur)
		if err != nil {
			return nil, err
		}
		want := min(k+1-len(out), len(ev))
		j := 0 // the values before the first jump beyond Deflate
		if round < 3 {
			for i := 0; i+1 < want; i++ {
				if ev[i+1] > 0 && ev[i] > Deflate*Deflate*ev[i+1] {
					j = i + 1
					break
				}
			}
		}
		if j == 0 {
			for i := range want {
				out = append(out, math.Sqrt(max(ev[i], 0)))
			}
			return out, nil
		}
		for i := range j {
			out = append(out, math.Sqrt(ev[i]))
		}
		// cur − W·Wᵀ·cur, W the leading j eigenvectors (columns of vecs).
		n, _ := cur.Dims()
		w := vecs.Slice(0, n, 0, j)
		var wt, proj mat.Dense
		wt.Mul(w.T(), cur)
		proj.Mul(w, &wt)
		next := mat.NewDense(n, cur.RawMatrix().Cols, nil)
		next.Sub(cur, &proj)
		cur = next
	}
}

// gramEigen returns the eigenvalues of x·xᵀ, largest first, and the
// eigenvectors in the same order as columns.
func gramEigen(ctx context.Context, x *mat.Dense) ([]float64, *mat.Dense, error) {
	n, _ := x.Dims()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	gram := gramOf(x)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var eig mat.EigenSym
	if !eig.Factorize(gram, true) {
		return nil, nil, fmt.Errorf("spectrum: the eigendecomposition of the %d×%d Gram matrix failed", n, n)
	}
	ev := eig.Values(nil)
	for _, v := range ev {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, ErrNotFinite
		}
	}
	var raw mat.Dense
	eig.VectorsTo(&raw)
	// EigenSym gives ascending values: reverse both.
	idx := make([]int, len(ev))
	for i := range idx {
		idx[i] = len(ev) - 1 - i
	}
	vals := make([]float64, len(ev))
	vecs := mat.NewDense(n, n, nil)
	for c, i := range idx {
		vals[c] = ev[i]
		for r := range n {
			vecs.Set(r, c, raw.At(r, i))
		}
	}
	return vals, vecs, nil
}

// LastGap returns the largest k in 1…len(sigma)−1 with
// σ_k/σ_{k+1} ≥ minGap (sigma largest first, k 1-based), stopping at the
// first σ_{k+1} below Zero·σ₁ (ratio +Inf: an exactly rank-k matrix,
// after which ratios are meaningless), and that ratio. After a jump
// σ_j/σ_{j+1} beyond Deflate, zero is measured against σ_{j+1}, the
// precision [Values] computed the rest with. Without such a k
// it returns 1 and σ₁/σ₂. An all-zero or one-value spectrum gives 1 and
// ratio 1.
func LastGap(sigma []float64, minGap float64) (int, float64) {
	if len(sigma) < 2 || sigma[0] == 0 {
		return 1, 1
	}
	ref := sigma[0] // the top of the block σ_k was resolved in (Values)
	ratio := func(k int) float64 {
		if sigma[k] <= Zero*ref {
			return math.Inf(1)
		}
		return sigma[k-1] / sigma[k]
	}
	best, gap := 1, ratio(1)
	for k := 1; k < len(sigma); k++ {
		if sigma[k] > Zero*ref && sigma[k-1] > Deflate*sigma[k] {
			ref = sigma[k]
		}
		g := ratio(k)
		if g >= minGap {
			best, gap = k, g
		}
		if math.IsInf(g, 1) {
			break
		}
	}
	return best, gap
}

// Format writes the values with three significant digits, comma
// separated, for reports.
func Format(sigma []float64) string {
	var b []byte
	for i, s := range sigma {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%.3g", s)
	}
	return string(b)
}
