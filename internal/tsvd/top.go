package tsvd

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// fullSVDMax is the largest min(d1, d2) for which [Top] may use gonum's
// full dense SVD (O(d1·d2·min(d1, d2)) flops, no cancellation); it does so
// only when the wanted rank is at least a quarter of min(d1, d2), where the
// truncated solver has no advantage left.
const fullSVDMax = 300

// Top returns the top k singular triplets of the dense matrix w, the
// repeated SVD step of the AltProj and IALM baselines. start (possibly
// empty, any number of columns) warm-starts the truncated solver from a
// previous right singular subspace; tol, seed and workers are those of
// [Options]. Small matrices with k ≥ min(d1, d2)/4 use gonum's full SVD
// (then only U, S and V of the result are set). k outside [1, min(d1, d2)]
// is a programming error and panics.
func Top(ctx context.Context, w blas64.General, k int, start blas64.General, tol float64, seed uint64, workers int) (*Result, error) {
	mn := min(w.Rows, w.Cols)
	if k < 1 || k > mn {
		panic(fmt.Sprintf("tsvd: Top rank %d out of range for %d×%d", k, w.Rows, w.Cols))
	}
	if mn <= fullSVDMax && 4*k >= mn {
		return denseTop(w, k)
	}
	opt := Options{Rank: k, Tol: tol, Seed: seed, Workers: workers}
	if start.Rows == w.Cols && start.Cols > 0 {
		opt.Start = start
	}
	res, err := Compute(ctx, Dense{A: w, Workers: workers}, opt)
	if err != nil {
		return nil, err
	}
	res.S = res.S[:k]
	return res, nil
}

// denseTop computes the top k triplets of w with gonum's dense SVD.
func denseTop(w blas64.General, k int) (*Result, error) {
	a := mat.NewDense(w.Rows, w.Cols, nil)
	a.SetRawMatrix(w)
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, fmt.Errorf("tsvd: dense SVD of a %d×%d matrix did not converge", w.Rows, w.Cols)
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	return &Result{
		U:         leadingCols(u.RawMatrix(), k),
		S:         svd.Values(nil)[:k],
		V:         leadingCols(v.RawMatrix(), k),
		Converged: true,
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

// ScaledFactor returns the d×k matrix m·diag(√s) (negative s taken as 0)
// as a new *mat.Dense, k = len(s): a factor of the rank-k matrix
// U·diag(s)·Vᵀ when m is U or V.
func ScaledFactor(m blas64.General, s []float64) *mat.Dense {
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
