package verify

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/factor"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// SpectralMax bounds SpectralRatio on partial data (CheckStructure).
// For noise whose entries are independent the ratio is about 1 (the
// Bai–Yin edge σ√p(√d1 + √d2) is the sum of the rms row and column
// norms); measured on white and heavy-tailed noise over the shapes of
// TestSpectralRatio it stayed below 1.15. A low-rank part that the
// answer left in the residual has a singular value of about p times its
// own, far above it when the part is as large as the noise.
const SpectralMax = 1.5

// spectralIters is the number of block power iterations of
// SpectralRatio: the estimate of the largest singular value only grows
// with them, so stopping early can miss structure but never invents it.
const spectralIters = 30

// SpectralRatio returns the largest singular value of E_off, the
// residual Π_Φ(Y − U·Vᵀ − S) of observed data with S's support zeroed
// (as a d1×d2 matrix, zero where not observed), against the edge that
// noise with E_off's row and column energies has: the larger of the sum
// of the rms row and column norms and the largest row or column norm.
//
// On partial data the sketch of CheckStructure loses most of its power:
// a low-rank part seen through a fraction p of its entries splits into
// p times itself and a part of the same size that is white, and a
// random projection keeps only m/d2 of the former. The spectral norm
// keeps it whole.
func SpectralRatio(o *observed.Matrix, u, v blas64.General, sp CSR, seed uint64, workers int) float64 {
	d1, d2 := o.Rows, o.Cols
	plan := observed.NewPlan(o)
	e, _ := offResidual(plan, o, u, v, sp, workers)
	rowSS, colSS := make([]float64, d1), make([]float64, d2)
	for i := range d1 {
		for q := o.RowPtr[i]; q < o.RowPtr[i+1]; q++ {
			rowSS[i] += e[q] * e[q]
			colSS[o.ColIdx[q]] += e[q] * e[q]
		}
	}
	edge := math.Sqrt(mean(rowSS)) + math.Sqrt(mean(colSS))
	for _, x := range rowSS {
		edge = math.Max(edge, math.Sqrt(x))
	}
	for _, x := range colSS {
		edge = math.Max(edge, math.Sqrt(x))
	}
	if !(edge > 0) {
		return 0
	}
	// Block power iteration from 2 random directions: x ← orth(Eᵀ·E·x).
	const b = 2
	rng := rand.New(rand.NewPCG(seed, 0x5bec7))
	x := mat.NewDense(d2, b, nil)
	for i := range d2 {
		for c := range b {
			x.Set(i, c, rng.NormFloat64())
		}
	}
	ex := kernels.NewGeneral(d1, b)
	etex := kernels.NewGeneral(d2, b)
	sigma := 0.0
	for range spectralIters {
		q, _ := factor.ThinQ(x)
		plan.MulVals(ex, e, q, workers)
		// The largest singular value of E·Q, a lower bound of ‖E‖: the
		// larger eigenvalue of the 2×2 Gram matrix (E·Q)ᵀ(E·Q).
		var g00, g01, g11 float64
		for i := range d1 {
			a, c := ex.Data[i*ex.Stride], ex.Data[i*ex.Stride+1]
			g00, g01, g11 = g00+a*a, g01+a*c, g11+c*c
		}
		h := (g00 + g11) / 2
		lambda := h + math.Sqrt(math.Max(0, (g00-g11)*(g00-g11)/4+g01*g01))
		sigma = math.Max(sigma, math.Sqrt(lambda))
		plan.MulTransVals(etex, e, ex, workers)
		copy(x.RawMatrix().Data, etex.Data) // both d2×b, contiguous
	}
	return sigma / edge
}

// mean returns the mean of x.
func mean(x []float64) float64 {
	t := 0.0
	for _, v := range x {
		t += v
	}
	return t / float64(max(len(x), 1))
}
