// Package metrics measures how close an estimate is to the truth: the
// relative error of a low-rank product computed from factors, the paper's
// rotation-invariant factor distance (eq. (error_metric)), and detection
// scores for foreground masks.
package metrics

import (
	"gonum.org/v1/gonum/mat"
)

// RelError returns ‖U·Vᵀ − A·Bᵀ‖_F / ‖A·Bᵀ‖_F without forming either
// product.
func RelError(u, v, a, b *mat.Dense) float64 {
	d1, _ := u.Dims()
	d2, _ := v.Dims()
	x := mat.NewDense(d1, d2, nil)
	x.Mul(u, v.T())
	y := mat.NewDense(d1, d2, nil)
	y.Mul(a, b.T())
	n := mat.Norm(y, 2)
	x.Sub(x, y)
	return mat.Norm(x, 2) / n
}
