package tsvd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// lanczos runs thick-restarted block Golub–Kahan–Lanczos bidiagonalization
// with full reorthogonalization.
//
// Invariants at the top of each iteration, with p the basis size:
//   - rows [0, p) of vt are an orthonormal basis V (n×p) and rows [0, p)
//     of ut an orthonormal basis U (m×p) with A·V = U·B, B = bmat[:p, :p];
//   - rows [p, p+b) of vt are the next block X, orthonormal and ⊥ V, with
//     Aᵀ·U ∈ span(V, X).
//
// An iteration appends X to V and orth(A·X) to U (extending B), computes
// Aᵀ·U_new and orthonormalizes it against V into the next X:
// Aᵀ·U_new = V·D + X·L. The Ritz triplets (σᵢ, uᵢ = U·Pᵢ, vᵢ = V·Qᵢ)
// from B = P·Σ·Qᵀ then satisfy A·vᵢ = σᵢuᵢ and Aᵀuᵢ − σᵢvᵢ = X·L·P[last
// block, i], so the residuals cost nothing. A restart keeps the top keep
// Ritz pairs (B becomes diagonal) and the next block X.
func lanczos(ctx context.Context, op Operator, s settings, opt Options) (*Result, error) {
	m, n, b, pmax := s.m, s.n, s.b, s.maxBasis
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed5eed5eed5eed))
	orth := &orthonormalizer{workers: s.workers, rng: rng}
	big := max(m, n)
	vt := make([]float64, (pmax+b)*n)
	ut := make([]float64, pmax*m)
	bmat := make([]float64, pmax*pmax)
	in := make([]float64, big*b)
	out := make([]float64, big*b)
	coefT := make([]float64, (pmax+b)*b)

	if err := startBlock(vt[:b*n], n, b, opt.Start, rng); err != nil {
		return nil, err
	}
	orth.block(vt, n, 0, b, blas64.General{Rows: b, Cols: b, Stride: b, Data: make([]float64, b*b)})

	res := &Result{}
	p := 0
	var svd mat.SVD
	var pm, qm mat.Dense
	resid := make([]float64, s.rank)
	for iter := 1; ; iter++ {
		// A side: U_new·R = A·X − U·C.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := product(op.MulTo, vt[p*n:(p+b)*n], n, ut[p*m:(p+b)*m], m, b, in, out); err != nil {
			return nil, err
		}
		res.Products++
		res.Columns += b
		orth.block(ut, m, p, b, blas64.General{Rows: p + b, Cols: b, Stride: pmax, Data: bmat[p:]})
		p += b

		// Aᵀ side: next X·L = Aᵀ·U_new − V·D.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := product(op.MulTransTo, ut[(p-b)*m:p*m], m, vt[p*n:(p+b)*n], n, b, in, out); err != nil {
			return nil, err
		}
		res.Products++
		res.Columns += b
		clear(coefT)
		orth.block(vt, n, p, b, blas64.General{Rows: p + b, Cols: b, Stride: b, Data: coefT})
		res.Iterations = iter

		// Rayleigh–Ritz: SVD of the projected matrix B.
		bd := mat.NewDense(p, p, nil)
		for i := range p {
			copy(bd.RawRowView(i), bmat[i*pmax:i*pmax+p])
		}
		if !svd.Factorize(bd, mat.SVDThin) {
			return nil, errors.New("tsvd: SVD of the projected matrix did not converge")
		}
		sigma := svd.Values(nil)
		pm.Reset()
		qm.Reset()
		svd.UTo(&pm)
		svd.VTo(&qm)
		converged := true
		for i := range s.rank {
			// ‖L·P[p−b:p, i]‖ with L the last b rows of coefT.
			ss := 0.0
			for k := range b {
				t := 0.0
				for j := k; j < b; j++ { // L is upper triangular
					t += coefT[(p+k)*b+j] * pm.At(p-b+j, i)
				}
				ss += t * t
			}
			resid[i] = math.Sqrt(ss)
			if !(resid[i] <= s.tol*sigma[0]) {
				converged = false
			}
		}
		if converged || iter >= s.maxIter {
			res.Converged = converged
			res.S = sigma[:s.rank:s.rank]
			res.Residuals = resid
			res.U = ritzVectors(ut, m, p, &pm, s.rank, s.workers)
			res.V = ritzVectors(vt, n, p, &qm, s.rank, s.workers)
			return res, nil
		}
		if p+b > pmax {
			// Thick restart: V ← V·Q_keep, U ← U·P_keep, B ← Σ_keep,
			// then move the next block X behind the kept vectors.
			k := s.keep
			combineInPlace(ut, m, p, &pm, k, s.workers)
			combineInPlace(vt, n, p, &qm, k, s.workers)
			copy(vt[k*n:(k+b)*n], vt[p*n:(p+b)*n])
			clear(bmat)
			for i := range k {
				bmat[i*pmax+i] = sigma[i]
			}
			p = k
		}
	}
}

// product computes the block product dst = f(src) where src is b vectors
// of length srcDim stored as rows and dst receives b rows of length
// dstDim, going through compact row-major buffers in and out.
func product(f func(dst, x blas64.General), src []float64, srcDim int, dst []float64, dstDim, b int, in, out []float64) error {
	x := blas64.General{Rows: srcDim, Cols: b, Stride: b, Data: in[:srcDim*b]}
	for j := range b {
		row := src[j*srcDim : (j+1)*srcDim]
		for i, v := range row {
			x.Data[i*b+j] = v
		}
	}
	y := blas64.General{Rows: dstDim, Cols: b, Stride: b, Data: out[:dstDim*b]}
	f(y, x)
	for i := range dstDim {
		for j, v := range y.Data[i*b : (i+1)*b] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return ErrNonFinite
			}
			dst[j*dstDim+i] = v
		}
	}
	return nil
}

// startBlock fills the b×n start block: the first columns of start (at
// most b), then standard Gaussian vectors.
func startBlock(x []float64, n, b int, start blas64.General, rng *rand.Rand) error {
	k := 0
	if start.Data != nil {
		k = min(start.Cols, b)
	}
	for j := range k {
		for i := range n {
			v := start.Data[i*start.Stride+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("tsvd: warm start has a non-finite entry at (%d, %d)", i, j)
			}
			x[j*n+i] = v
		}
	}
	for i := range x[k*n:] {
		x[k*n+i] = rng.NormFloat64()
	}
	return nil
}

// combine returns the k×dim matrix Cᵀ·W, where W is rows [0, p) of the
// basis data and C the first k columns of c (p×≥k).
func combine(data []float64, dim, p int, c *mat.Dense, k, workers int) []float64 {
	raw := c.RawMatrix()
	ck := blas64.General{Rows: p, Cols: k, Stride: raw.Stride, Data: raw.Data}
	w := rowsView(data, 0, p, dim)
	dst := make([]float64, k*dim)
	d := blas64.General{Rows: k, Cols: dim, Stride: dim, Data: dst}
	nc := (dim + chunk - 1) / chunk
	kernels.ParallelFor(nc, workers, 1, func(lo, hi int) {
		a, e := lo*chunk, min(hi*chunk, dim)
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, ck, colRange(w, a, e), 0, colRange(d, a, e))
	})
	return dst
}

// combineInPlace replaces rows [0, k) of the basis by Cᵀ·W (see combine).
func combineInPlace(data []float64, dim, p int, c *mat.Dense, k, workers int) {
	copy(data, combine(data, dim, p, c, k, workers))
}

// ritzVectors returns the dim×k matrix W·C (the Ritz vectors) in
// row-major order.
func ritzVectors(data []float64, dim, p int, c *mat.Dense, k, workers int) blas64.General {
	t := combine(data, dim, p, c, k, workers)
	g := blas64.General{Rows: dim, Cols: k, Stride: k, Data: make([]float64, dim*k)}
	for j := range k {
		for i, v := range t[j*dim : (j+1)*dim] {
			g.Data[i*k+j] = v
		}
	}
	return g
}

// denseSVD forms the operator explicitly by applying it to the identity of
// the smaller dimension and factorizes it with gonum's SVD.
func denseSVD(ctx context.Context, op Operator, s settings) (*Result, error) {
	m, n, r := s.m, s.n, s.rank
	k := min(m, n)
	id := blas64.General{Rows: k, Cols: k, Stride: k, Data: make([]float64, k*k)}
	for i := range k {
		id.Data[i*k+i] = 1
	}
	big := max(m, n)
	e := blas64.General{Rows: big, Cols: k, Stride: k, Data: make([]float64, big*k)}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	trans := m < n // then e = Aᵀ
	if trans {
		op.MulTransTo(e, id)
	} else {
		op.MulTo(e, id)
	}
	for _, v := range e.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, ErrNonFinite
		}
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(big, k, e.Data), mat.SVDThin) {
		return nil, errors.New("tsvd: dense SVD did not converge")
	}
	var l, rt mat.Dense
	svd.UTo(&l)
	svd.VTo(&rt)
	uu, vv := &l, &rt
	if trans {
		uu, vv = vv, uu
	}
	return &Result{
		U:         firstCols(uu, r),
		S:         svd.Values(nil)[:r:r],
		V:         firstCols(vv, r),
		Products:  1,
		Columns:   k,
		Residuals: make([]float64, r),
		Converged: true,
	}, nil
}

// firstCols copies the first r columns of a into a compact matrix.
func firstCols(a *mat.Dense, r int) blas64.General {
	rows, _ := a.Dims()
	g := blas64.General{Rows: rows, Cols: r, Stride: r, Data: make([]float64, rows*r)}
	for i := range rows {
		copy(g.Data[i*r:(i+1)*r], a.RawRowView(i)[:r])
	}
	return g
}
