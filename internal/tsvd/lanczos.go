package tsvd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// lanczos runs thick-restarted block Golub–Kahan–Lanczos bidiagonalization
// with full reorthogonalization.
//
// Invariants at the top of each iteration, with p the basis size:
//   - columns [0, p) of vb are an orthonormal basis V (n×p) and columns
//     [0, p) of ub an orthonormal basis U (m×p) with A·V = U·B,
//     B = bmat[:p, :p];
//   - columns [p, p+b) of vb are the next block X, orthonormal and ⊥ V,
//     with Aᵀ·U ∈ span(V, X).
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
	orth := &orthonormalizer{basisOps: basisOps{workers: s.workers}, rng: rng}
	vb := blas64.General{Rows: n, Cols: pmax + b, Stride: pmax + b, Data: make([]float64, n*(pmax+b))}
	ub := blas64.General{Rows: m, Cols: pmax, Stride: pmax, Data: make([]float64, m*pmax)}
	bmat := make([]float64, pmax*pmax)
	var inBuf, outBuf, tmpBuf []float64
	coefT := make([]float64, (pmax+b)*b)

	if err := startBlock(colRange(vb, 0, b), opt.Start, s.maxStart, rng); err != nil {
		return nil, err
	}
	orth.block(vb, 0, b, blas64.General{Rows: b, Cols: b, Stride: b, Data: make([]float64, b*b)})

	res := &Result{}
	p := 0
	var svd mat.SVD
	var pm, qm mat.Dense
	resid := make([]float64, s.rank)
	sinceCheck := 0
	for iter := 1; ; iter++ {
		// A side: U_new·R = A·X − U·C.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := product(op.MulTo, colRange(vb, p, p+b), colRange(ub, p, p+b), &inBuf, &outBuf); err != nil {
			return nil, err
		}
		res.Products++
		res.Columns += b
		orth.block(ub, p, b, blas64.General{Rows: p + b, Cols: b, Stride: pmax, Data: bmat[p:]})
		p += b

		// Aᵀ side: next X·L = Aᵀ·U_new − V·D.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := product(op.MulTransTo, colRange(ub, p-b, p), colRange(vb, p, p+b), &inBuf, &outBuf); err != nil {
			return nil, err
		}
		res.Products++
		res.Columns += b
		clear(coefT)
		orth.block(vb, p, b, blas64.General{Rows: p + b, Cols: b, Stride: b, Data: coefT})
		res.Iterations = iter

		// Rayleigh–Ritz when due: at every restart and the last
		// iteration, otherwise every checkEvery(p) iterations.
		full := p+b > pmax
		if sinceCheck++; p < s.rank || !full && iter < s.maxIter && sinceCheck < s.checkEvery(p) {
			continue
		}
		sinceCheck = 0
		// SVD of the projected matrix B.
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
			res.U = ritzVectors(orth, colRange(ub, 0, p), &pm, s.rank)
			res.V = ritzVectors(orth, colRange(vb, 0, p), &qm, s.rank)
			return res, nil
		}
		if full {
			// Thick restart: V ← V·Q_keep, U ← U·P_keep, B ← Σ_keep,
			// then move the next block X behind the kept vectors.
			k := s.keep
			restart(orth, colRange(ub, 0, p), &pm, k, &tmpBuf)
			restart(orth, colRange(vb, 0, p), &qm, k, &tmpBuf)
			for i := range n {
				row := vb.Data[i*vb.Stride : (i+1)*vb.Stride]
				copy(row[k:k+b], row[p:p+b])
			}
			clear(bmat)
			for i := range k {
				bmat[i*pmax+i] = sigma[i]
			}
			p = k
		}
	}
}

// checkEvery returns the number of iterations between Rayleigh–Ritz
// steps at basis size p. The SVD of the p×p matrix B costs about
// 2.5·p³ ns with gonum, the orthogonalization of an iteration about
// 0.6·(m+n)·p·b ns (measured at d = 5000); checking every
// ⌈4p²/((m+n)·b)⌉ iterations keeps the SVDs within the cost of the
// orthogonalization, itself small against the products for dense
// operators. It is 1 for small ranks (e.g. up to p ≈ 150 at m = n = 5000,
// b = 12).
func (s settings) checkEvery(p int) int {
	return max(1, (4*p*p+(s.m+s.n)*s.b-1)/((s.m+s.n)*s.b))
}

// product sets dst = f(src) through compact copies (the Operator contract)
// and checks that the result is finite.
func product(f func(dst, x blas64.General), src, dst blas64.General, inBuf, outBuf *[]float64) error {
	b := src.Cols
	x := compact(inBuf, src.Rows, b)
	for i := range src.Rows {
		copy(x.Data[i*b:(i+1)*b], src.Data[i*src.Stride:i*src.Stride+b])
	}
	y := compact(outBuf, dst.Rows, b)
	f(y, x)
	for i := range dst.Rows {
		yi := y.Data[i*b : (i+1)*b]
		for _, v := range yi {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return ErrNonFinite
			}
		}
		copy(dst.Data[i*dst.Stride:i*dst.Stride+b], yi)
	}
	return nil
}

// startBlock fills the n×b start block x: the first columns of start (at
// most maxStart), then standard Gaussian vectors.
func startBlock(x, start blas64.General, maxStart int, rng *rand.Rand) error {
	k := 0
	if start.Data != nil {
		k = min(start.Cols, maxStart, x.Cols)
	}
	for i := range x.Rows {
		for j := range k {
			v := start.Data[i*start.Stride+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("tsvd: warm start has a non-finite entry at (%d, %d)", i, j)
			}
			x.Data[i*x.Stride+j] = v
		}
	}
	// Fill column by column so that the random part does not depend on
	// the layout.
	for j := k; j < x.Cols; j++ {
		for i := range x.Rows {
			x.Data[i*x.Stride+j] = rng.NormFloat64()
		}
	}
	return nil
}

// firstColsOf returns the first k columns of c as a view.
func firstColsOf(c *mat.Dense, k int) blas64.General {
	raw := c.RawMatrix()
	return colRange(raw, 0, k)
}

// restart replaces the first k columns of the basis w (dim×p) by W·C_k,
// where C_k is the first k columns of c.
func restart(o *orthonormalizer, w blas64.General, c *mat.Dense, k int, tmpBuf *[]float64) {
	t := compact(tmpBuf, w.Rows, k)
	o.combine(t, w, firstColsOf(c, k))
	for i := range w.Rows {
		copy(w.Data[i*w.Stride:i*w.Stride+k], t.Data[i*k:(i+1)*k])
	}
}

// ritzVectors returns the dim×k matrix W·C_k (the Ritz vectors).
func ritzVectors(o *orthonormalizer, w blas64.General, c *mat.Dense, k int) blas64.General {
	g := blas64.General{Rows: w.Rows, Cols: k, Stride: k, Data: make([]float64, w.Rows*k)}
	o.combine(g, w, firstColsOf(c, k))
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
