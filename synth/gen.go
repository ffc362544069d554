package synth

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/sample"
)

// truth draws the factors A (d1×r, entries N(0, 1/d1)) and B (d2×r,
// entries N(0, 1/d2)).
func truth(c *Config) (a, b *mat.Dense) {
	a = gaussian(c.D1, c.Rank, 1/math.Sqrt(float64(c.D1)), streamKey(c.Seed, streamA), c.Workers)
	b = gaussian(c.D2, c.Rank, 1/math.Sqrt(float64(c.D2)), streamKey(c.Seed, streamB), c.Workers)
	if c.Kappa >= 1 {
		s := kappaSpectrum(c.Rank, c.Kappa)
		a, b = orthoScaled(a, s), orthoScaled(b, s)
	}
	return a, b
}

// kappaSpectrum returns r values evenly spaced from 1 down to 1/κ, scaled
// to a Euclidean norm of √r (Config.Kappa).
func kappaSpectrum(r int, kappa float64) []float64 {
	s := make([]float64, r)
	ss := 0.0
	for k := range s {
		t := 0.0
		if r > 1 {
			t = float64(k) / float64(r-1)
		}
		s[k] = 1 + t*(1/kappa-1)
		ss += s[k] * s[k]
	}
	f := math.Sqrt(float64(r) / ss)
	for k := range s {
		s[k] *= f
	}
	return s
}

// orthoScaled returns Q·diag(√s) for an orthonormal basis Q of the columns
// of g (modified Gram–Schmidt, applied twice for orthogonality to machine
// precision), without forming anything larger than g.
func orthoScaled(g *mat.Dense, s []float64) *mat.Dense {
	n, r := g.Dims()
	cols := make([][]float64, r)
	for k := range cols {
		cols[k] = mat.Col(nil, k, g)
	}
	for pass := 0; pass < 2; pass++ {
		for k := range cols {
			for l := 0; l < k; l++ {
				d := floats.Dot(cols[l], cols[k])
				floats.AddScaled(cols[k], -d, cols[l])
			}
			floats.Scale(1/floats.Norm(cols[k], 2), cols[k])
		}
	}
	out := mat.NewDense(n, r, nil)
	for k, c := range cols {
		f := math.Sqrt(s[k])
		for i, x := range c {
			out.Set(i, k, x*f)
		}
	}
	return out
}

// sparseParts collects the corruptions of a range of rows; rows of
// different blocks are disjoint, so blocks fill them concurrently.
type sparseParts struct {
	rowPtr []int // counts per row at rowPtr[i+1] until assemble
	cols   [][]int32
	vals   [][]float64
}

func newSparseParts(d1, nBlocks int) *sparseParts {
	return &sparseParts{rowPtr: make([]int, d1+1), cols: make([][]int32, nBlocks), vals: make([][]float64, nBlocks)}
}

// assemble concatenates the blocks (in block order, that is row order).
func (p *sparseParts) assemble(d1, d2 int) *rpca.Sparse {
	for i := 0; i < d1; i++ {
		p.rowPtr[i+1] += p.rowPtr[i]
	}
	n := p.rowPtr[d1]
	s := &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: p.rowPtr, ColIdx: make([]int32, 0, n), Val: make([]float64, 0, n)}
	for b := range p.cols {
		s.ColIdx = append(s.ColIdx, p.cols[b]...)
		s.Val = append(s.Val, p.vals[b]...)
		p.cols[b], p.vals[b] = nil, nil
	}
	return s
}

// denseRows is the number of rows of Y generated per block.
const denseRows = 16

// Dense generates the fully observed problem Y = A·Bᵀ + S* (the paper's
// Section 5.1). It costs O(d1·d2·r) time on cfg.Workers goroutines and
// 8·d1·d2 bytes for Y, plus 12 bytes per corruption for S.
func Dense(cfg Config) (*Instance, error) {
	if err := cfg.validate(false); err != nil {
		return nil, err
	}
	d1, d2 := cfg.D1, cfg.D2
	a, b := truth(&cfg)
	cr := newCorruptor(&cfg)
	y := mat.NewDense(d1, d2, nil)
	ya, ar, br := y.RawMatrix(), a.RawMatrix(), b.RawMatrix()
	nb := (d1 + denseRows - 1) / denseRows
	parts := newSparseParts(d1, nb)
	est := int(float64(denseRows)*float64(d2)*cfg.Alpha*1.1) + 16
	kernels.ForEach(nb, cfg.Workers, func(blk int) {
		cols := make([]int32, 0, est)
		vals := make([]float64, 0, est)
		for i := blk * denseRows; i < min((blk+1)*denseRows, d1); i++ {
			before := len(vals)
			cols, vals = evalRow(ar, br, cr.row(i), i, nil, ya.Data[i*ya.Stride:i*ya.Stride+d2], cols, vals)
			parts.rowPtr[i+1] = len(vals) - before
		}
		parts.cols[blk], parts.vals[blk] = cols, vals
	})
	return &Instance{Config: cfg, A: a, B: b, Y: y, S: parts.assemble(d1, d2)}, nil
}

// evalRow writes row i of A·Bᵀ + S* into out, at the columns js, or at
// every column when js is nil, and appends the row's corruptions at those
// columns to cols and vals.
func evalRow(ar, br blas64.General, rc rowCorr, i int, js []int32, out []float64, cols []int32, vals []float64) ([]int32, []float64) {
	ai := ar.Data[i*ar.Stride : i*ar.Stride+ar.Cols]
	for q := range out {
		j := q
		if js != nil {
			j = int(js[q])
		}
		v := kernels.Dot(ai, br.Data[j*br.Stride:j*br.Stride+br.Cols])
		if s, ok := rc.at(j); ok {
			v += s
			cols = append(cols, int32(j))
			vals = append(vals, s)
		}
		out[q] = v
	}
	return cols, vals
}

// observedRows is the number of rows of Φ generated per block.
const observedRows = 256

// Observed generates the partially observed problem of eq. (Y): Φ contains
// each entry independently with probability cfg.P, and the values
// (A·Bᵀ + S*)_ij are evaluated on Φ only, so time and memory are
// O(|Φ|·r) and O(|Φ|) (about 20 bytes per entry in the observed storage,
// plus 12 per corruption), never O(d1·d2). A, B and S* are the same as
// those of [Dense] with the same Config, and so are the observed values.
//
// The positions are those of the project's one sampler (rpca.Sampling)
// for p and the seed: drawn row by row, by skipping geometric gaps, in
// O(1) per observed entry.
func Observed(cfg Config) (*Instance, error) {
	if err := cfg.validate(true); err != nil {
		return nil, err
	}
	d1, d2, p := cfg.D1, cfg.D2, cfg.P
	a, b := truth(&cfg)
	cr := newCorruptor(&cfg)
	nb := (d1 + observedRows - 1) / observedRows

	// Pass 1: the positions (the sampler's, keyed by the seed's Φ stream).
	rowPtr, colIdx := sample.Bernoulli{P: p, Seed: cfg.Seed}.Positions(d1, d2, cfg.Workers)
	n := len(colIdx)
	if n > observed.MaxEntries {
		return nil, fmt.Errorf("synth: %d observed entries exceed the supported %d; lower p", n, observed.MaxEntries)
	}

	// Pass 2: evaluate Y on Φ.
	val := make([]float64, n)
	ar, br := a.RawMatrix(), b.RawMatrix()
	parts := newSparseParts(d1, nb)
	kernels.ForEach(nb, cfg.Workers, func(blk int) {
		lo, hi := blk*observedRows, min((blk+1)*observedRows, d1)
		m := float64(rowPtr[hi]-rowPtr[lo])*cfg.Alpha*1.1 + 16
		cols := make([]int32, 0, int(m))
		vals := make([]float64, 0, int(m))
		for i := lo; i < hi; i++ {
			before := len(vals)
			cols, vals = evalRow(ar, br, cr.row(i), i, colIdx[rowPtr[i]:rowPtr[i+1]], val[rowPtr[i]:rowPtr[i+1]], cols, vals)
			parts.rowPtr[i+1] = len(vals) - before
		}
		parts.cols[blk], parts.vals[blk] = cols, vals
	})
	m, err := rpca.NewObservedCSR(d1, d2, rowPtr, colIdx, val)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	return &Instance{Config: cfg, A: a, B: b, Obs: m, S: parts.assemble(d1, d2)}, nil
}
