package tsvd

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
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
	if mn <= gramMax && max(w.Rows, w.Cols) >= gramAspect*mn {
		if res, ok := gramTop(w, k, tol, workers); ok {
			return res, nil
		}
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

// The Gram path of [Top] for very rectangular matrices (a video of 76,800
// pixels × 200 frames): the SVD of an m×n matrix with n ≤ gramMax and
// m ≥ gramAspect·n comes from the eigendecomposition of the n×n Gram
// matrix WᵀW (one pass over W with the parallel kernels, an n×n symmetric
// eigenproblem, one more pass for U = W·V·Σ⁻¹), instead of a Krylov
// method whose basis must grow with k. Squaring W squares its
// condition number: the eigenvalues carry absolute errors of about ε·σ₁²,
// so σ_i and the residual ‖Wᵀu_i − σ_i v_i‖ come out with errors of about
// ε·σ₁²/σ_i, and the columns of U lose orthogonality by about ε·(σ₁/σ_i)².
// The path is taken only when every wanted σ_i is at least 4ε/tol·σ₁, so
// that the residual stays within tol·σ₁/4 as [Options].Tol asks, and at
// least 1e-6·σ₁ (orthogonality to about 2e-4 at worst); otherwise Top
// falls back to the Krylov method.
const (
	gramMax    = 1024
	gramAspect = 8
)

// gramTop computes the top k triplets of w from its Gram matrix, or
// reports false when a wanted singular value is too small for the
// accuracy tol (see gramMax).
func gramTop(w blas64.General, k int, tol float64, workers int) (*Result, bool) {
	// The Gram matrix WᵀW (n×n) and the long factor's product W·X; for a
	// wide W, W·Wᵀ and Wᵀ·X.
	gram, long := kernels.MulAtX, kernels.MulAX
	wide := w.Rows < w.Cols
	if wide {
		gram, long = kernels.MulABt, kernels.MulAtX
	}
	n := min(w.Rows, w.Cols)
	g := kernels.NewGeneral(n, n)
	gram(g, w, w, workers)
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(g.Data[i*n+j]+g.Data[j*n+i]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, false
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	s := make([]float64, k)
	small := kernels.NewGeneral(n, k)
	for c := 0; c < k; c++ {
		src := n - 1 - c
		s[c] = math.Sqrt(math.Max(vals[src], 0))
		for i := 0; i < n; i++ {
			small.Data[i*k+c] = vecs.At(i, src)
		}
	}
	floor := max(4*0x1p-52/max(tol, 1e-15), 1e-6)
	if !(s[0] > 0) || s[k-1] < floor*s[0] {
		return nil, false
	}
	// The long factor: W·V·Σ⁻¹ (or Wᵀ·U·Σ⁻¹ when W is wide).
	m := max(w.Rows, w.Cols)
	big := kernels.NewGeneral(m, k)
	long(big, w, small, workers)
	for i := 0; i < m; i++ {
		row := big.Data[i*k : (i+1)*k]
		for c := range row {
			row[c] /= s[c]
		}
	}
	res := &Result{S: s, Converged: true}
	if wide {
		res.U, res.V = small, big
	} else {
		res.U, res.V = big, small
	}
	return res, true
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
