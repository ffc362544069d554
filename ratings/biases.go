// Package ratings is rating completion around the paper's robust low-rank
// fit for partial observations (Algorithm 2): a held-out split, the id
// mapping, a baseline (the median, or the regularised bias model every
// recommender is compared with), the fit of what the baseline leaves, and
// prediction and evaluation with the fitted model.
package ratings

import (
	"errors"
	"fmt"
	"math"
)

// Biases is the model r̂_ij = Mean + Row[i] + Col[j]: a global mean plus a
// bias per row (user) and per column (item).
type Biases struct {
	Mean     float64
	Row, Col []float64
}

// Predict returns Mean + Row[i] + Col[j]; an index out of range (an
// unknown row or column) contributes no bias.
func (b *Biases) Predict(i, j int) float64 {
	p := b.Mean
	if i >= 0 && i < len(b.Row) {
		p += b.Row[i]
	}
	if j >= 0 && j < len(b.Col) {
		p += b.Col[j]
	}
	return p
}

// Default regularisation and sweeps of [FitBiases]: the values of the
// Surprise toolkit's BaselineOnly with ALS (reg_u = 15, reg_i = 10,
// 10 epochs), which its published MovieLens-100k table uses.
const (
	DefaultRegRow = 15
	DefaultRegCol = 10
	DefaultSweeps = 10
)

// FitBiases fits the regularised bias model to the ratings
// (rows[k], cols[k], vals[k]) of a d1×d2 matrix: Mean is the mean rating,
// and Row, Col minimise
//
//	Σ_k (vals[k] − Mean − Row[rows[k]] − Col[cols[k]])² + regRow·‖Row‖² + regCol·‖Col‖²
//
// by alternating exact minimisation over Col and Row (each a closed form
// per line), sweeps times, starting from zero biases. The objective is a
// convex quadratic, so the sweeps converge to its minimiser.
func FitBiases(d1, d2 int, rows, cols []int, vals []float64, regRow, regCol float64, sweeps int) (*Biases, error) {
	switch {
	case d1 <= 0 || d2 <= 0:
		return nil, fmt.Errorf("ratings: matrix size %d×%d must be positive", d1, d2)
	case len(rows) != len(vals) || len(cols) != len(vals):
		return nil, fmt.Errorf("ratings: %d rows, %d columns and %d values; want equal counts", len(rows), len(cols), len(vals))
	case len(vals) == 0:
		return nil, errors.New("ratings: no ratings")
	case !(regRow >= 0) || !(regCol >= 0) || math.IsInf(regRow, 1) || math.IsInf(regCol, 1):
		return nil, fmt.Errorf("ratings: regularisation %v, %v must be finite and non-negative", regRow, regCol)
	case sweeps < 1:
		return nil, fmt.Errorf("ratings: sweeps must be at least 1, got %d", sweeps)
	}
	b := &Biases{Row: make([]float64, d1), Col: make([]float64, d2)}
	for k, v := range vals {
		if rows[k] < 0 || rows[k] >= d1 || cols[k] < 0 || cols[k] >= d2 {
			return nil, fmt.Errorf("ratings: rating %d at (%d, %d) is outside %d×%d", k, rows[k], cols[k], d1, d2)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ratings: rating %d is %v", k, v)
		}
		b.Mean += v
	}
	b.Mean /= float64(len(vals))
	nRow, nCol := make([]float64, d1), make([]float64, d2)
	for k := range vals {
		nRow[rows[k]]++
		nCol[cols[k]]++
	}
	sum := make([]float64, max(d1, d2))
	for s := 0; s < sweeps; s++ {
		// Col[j] = Σ_{k in column j} (v − Mean − Row[i]) / (regCol + n_j).
		clear(sum[:d2])
		for k, v := range vals {
			sum[cols[k]] += v - b.Mean - b.Row[rows[k]]
		}
		for j := range b.Col {
			b.Col[j] = sum[j] / (regCol + nCol[j])
		}
		clear(sum[:d1])
		for k, v := range vals {
			sum[rows[k]] += v - b.Mean - b.Col[cols[k]]
		}
		for i := range b.Row {
			b.Row[i] = sum[i] / (regRow + nRow[i])
		}
	}
	return b, nil
}
