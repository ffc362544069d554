// Package testmat holds the random matrices and dense reference metrics
// that tests across the module share. It depends on gonum only, so that
// any package's tests can use it without an import cycle.
package testmat

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Normal returns an r×c matrix of independent N(0, 1) entries drawn from
// rng in row-major order.
func Normal(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	raw := m.RawMatrix().Data
	for k := range raw {
		raw[k] = rng.NormFloat64()
	}
	return m
}

// NormalGeneral is Normal as a blas64.General with stride c.
func NormalGeneral(rng *rand.Rand, r, c int) blas64.General {
	return Normal(rng, r, c).RawMatrix()
}

// RelErr is ‖UVᵀ − ABᵀ‖_F/‖ABᵀ‖_F computed by forming both products with
// gonum: the obvious reference for metrics.RelError and for the solvers'
// error tracking.
func RelErr(u, v, a, b *mat.Dense) float64 {
	var x, y mat.Dense
	x.Mul(u, v.T())
	y.Mul(a, b.T())
	n := mat.Norm(&y, 2)
	x.Sub(&x, &y)
	return mat.Norm(&x, 2) / n
}
