package tsvd

import (
	"context"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// Factors returns the rank-k truncated SVD A ≈ L·Σ·Rᵀ of a dense A, to
// DefaultTol, as the balanced factors U = L·Σ^½ and V = R·Σ^½, with the
// relative residual ‖A − U·Vᵀ‖_F/‖A‖_F (0 for A = 0). Columns beyond
// the singular values found are zero.
func Factors(ctx context.Context, a blas64.General, k int, seed uint64, workers int) (u, v *mat.Dense, residual float64, err error) {
	workers = kernels.Workers(workers)
	sv, err := Compute(ctx, Dense{A: a, Workers: workers}, Options{Rank: k, Tol: DefaultTol, Seed: seed, Workers: workers})
	if err != nil {
		return nil, nil, 0, err
	}
	u, v = mat.NewDense(a.Rows, k, nil), mat.NewDense(a.Cols, k, nil)
	for c := range min(k, len(sv.S)) {
		sq := math.Sqrt(math.Max(sv.S[c], 0))
		for i := range a.Rows {
			u.Set(i, c, sv.U.Data[i*sv.U.Stride+c]*sq)
		}
		for j := range a.Cols {
			v.Set(j, c, sv.V.Data[j*sv.V.Stride+c]*sq)
		}
	}
	e := kernels.NewGeneral(a.Rows, a.Cols)
	ss := kernels.SubMulABt(e, a, u.RawMatrix(), v.RawMatrix(), workers)
	if ny := kernels.SumSq(a, workers); ny > 0 {
		residual = math.Sqrt(ss / ny)
	}
	return u, v, residual, nil
}
