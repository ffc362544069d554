package altproj

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/tsvd"
)

// fullSVDMax is the largest min(d1, d2) for which topSVD may use gonum's
// full dense SVD (O(d1·d2·min(d1, d2)) flops, no cancellation); it does so
// only when the wanted rank is at least a quarter of min(d1, d2), where the
// truncated solver has no advantage left.
const fullSVDMax = 300

// triplets is a truncated SVD U·diag(S)·Vᵀ with row-major U (d1×k), V (d2×k).
type triplets struct {
	U blas64.General
	S []float64
	V blas64.General
}

// topSVD returns the top k singular triplets of the dense matrix w.
// start (possibly empty, any number of columns) warm-starts the truncated
// solver from a previous right singular subspace.
func topSVD(ctx context.Context, w blas64.General, k int, start blas64.General, tol float64, seed uint64, workers int) (triplets, error) {
	mn := min(w.Rows, w.Cols)
	if k < 1 || k > mn {
		panic(fmt.Sprintf("altproj: topSVD rank %d out of range for %d×%d", k, w.Rows, w.Cols))
	}
	if mn <= fullSVDMax && 4*k >= mn {
		return fullSVD(w, k)
	}
	opt := tsvd.Options{Rank: k, Tol: tol, Seed: seed, Workers: workers}
	if start.Rows == w.Cols && start.Cols > 0 {
		opt.Start = start
	}
	res, err := tsvd.Compute(ctx, tsvd.Dense{A: w, Workers: workers}, opt)
	if err != nil {
		return triplets{}, err
	}
	return triplets{U: res.U, S: res.S[:k], V: res.V}, nil
}

// fullSVD computes the top k triplets of w with gonum's dense SVD.
func fullSVD(w blas64.General, k int) (triplets, error) {
	a := mat.NewDense(w.Rows, w.Cols, nil)
	a.SetRawMatrix(w)
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return triplets{}, fmt.Errorf("altproj: dense SVD of a %d×%d matrix did not converge", w.Rows, w.Cols)
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	vals := svd.Values(nil)
	return triplets{
		U: leadingCols(u.RawMatrix(), k),
		S: vals[:k],
		V: leadingCols(v.RawMatrix(), k),
	}, nil
}

// leadingCols copies the first k columns of m into a new contiguous matrix.
func leadingCols(m blas64.General, k int) blas64.General {
	out := blas64.General{Rows: m.Rows, Cols: k, Stride: k, Data: make([]float64, m.Rows*k)}
	for i := 0; i < m.Rows; i++ {
		copy(out.Data[i*k:(i+1)*k], m.Data[i*m.Stride:i*m.Stride+k])
	}
	return out
}

// scaledFactor returns the d×k matrix m·diag(√s) as a new *mat.Dense.
func scaledFactor(m blas64.General, s []float64) *mat.Dense {
	k := len(s)
	root := make([]float64, k)
	for j, x := range s {
		root[j] = math.Sqrt(max(x, 0))
	}
	out := mat.NewDense(m.Rows, k, nil)
	raw := out.RawMatrix()
	for i := 0; i < m.Rows; i++ {
		src := m.Data[i*m.Stride : i*m.Stride+k]
		dst := raw.Data[i*raw.Stride : i*raw.Stride+k]
		for j, x := range src {
			dst[j] = x * root[j]
		}
	}
	return out
}
