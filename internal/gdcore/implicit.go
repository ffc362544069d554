package gdcore

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
)

// implicitCG is the number of conjugate-gradient steps of each Y step of
// GD.Implicit. Each sweep starts them again from the new factors, so a
// few suffice.
const implicitCG = 5

// implicitFactors holds GD.Implicit's state: SVD++'s implicit factors Y
// (d2×r, row l is y_l) and Z (d1 × U's width, zero beyond column r), row i
// being z_i = |Φ_i|^(−½) Σ_{l ∈ Φ_i} y_l over the columns l observed in
// row i (Koren, KDD 2008). The low-rank part is M = U·Vᵀ with
// U = P + Z: the factors the solver iterates are the effective ones,
// P = U − Z is implicit, and the ridge λ of the row fits falls on P (see
// solveLines' shift).
type implicitFactors struct {
	m       *observed.Matrix
	r       int
	cg      int     // conjugate-gradient steps per Y step (implicitCG)
	lambda  float64 // λ_y
	workers int
	norm    []float64 // |Φ_i|^(−½), 0 for an empty row
	y, z    blas64.General
	a       []float64 // per row: Σ v₀ⱼv₀ⱼᵀ over its entries outside Ω_t (r×r, lower triangle)
	g       blas64.General
	s       blas64.General // per row: Σ_{l ∈ Φ_i} d_l (d1×r)
	as      blas64.General // per row: norm_i² A_i s_i (d1×r)
	// Conjugate-gradient vectors, d2×r: the step D, the residual, the
	// direction and H·direction.
	d, res, dir, hd blas64.General
}

func newImplicitFactors(m *observed.Matrix, r, width int, lambda float64, workers int) *implicitFactors {
	im := &implicitFactors{m: m, r: r, cg: implicitCG, lambda: lambda, workers: workers, norm: make([]float64, m.Rows),
		y: kernels.NewGeneral(m.Cols, r), z: kernels.NewGeneral(m.Rows, width),
		a: make([]float64, m.Rows*r*r), g: kernels.NewGeneral(m.Rows, r), s: kernels.NewGeneral(m.Rows, r), as: kernels.NewGeneral(m.Rows, r),
		d: kernels.NewGeneral(m.Cols, r), res: kernels.NewGeneral(m.Cols, r), dir: kernels.NewGeneral(m.Cols, r),
		hd: kernels.NewGeneral(m.Cols, r)}
	for i := range m.Rows {
		if n := m.RowPtr[i+1] - m.RowPtr[i]; n > 0 {
			im.norm[i] = 1 / math.Sqrt(float64(n))
		}
	}
	return im
}

// step is the Y step, run between the row fits and the column fits of
// an UpdateALS sweep: with V and P = U − Z fixed it moves Y toward the
// minimiser of
//
//	Σ_{(i,j) ∈ Φ∖Ω_t} (y_ij − u_i·v_j)² + λ_y‖Y‖²,  u_i = p_i + z_i(Y),
//
// a linear least-squares problem in Y, by im.cg conjugate-gradient
// steps from the current Y, and updates Z and the rows of u to match.
// With D = Y_new − Y and s_i = Σ_{l ∈ Φ_i} d_l, row i contributes
// norm_i²·s_iᵀA_is_i − 2·norm_i·s_iᵀg_i (A_i = Σ v₀v₀ᵀ, g_i = Σ e_ij v₀ⱼ
// over its entries outside Ω_t, e the current residuals, v₀ⱼ the first r
// entries of v_j), so the normal equations are
// H·D = Nᵀ(norm_i g_i) − λ_y Y with H·D = Nᵀ(norm_i² A_i (N·D)_i) + λ_y D,
// N the pattern of Φ.
//
// With GD.Huber (tau > 0) every entry counts, weighted by
// w = min(1, τ/|e|) at its residual e at the current U (after the row
// fits): the weighted least-squares problem that majorises the Huber loss
// there, as the row and column fits do; A_i and g_i then sum w·v₀v₀ᵀ and
// w·e·v₀.
func (im *implicitFactors) step(u, v blas64.General, keep []bool, tau float64) {
	m, r := im.m, im.r
	kernels.ParallelFor(m.Rows, im.workers, 64, func(lo, hi int) {
		var sv []float64 // √w·v₀ⱼ
		if tau > 0 {
			sv = make([]float64, r)
		}
		for i := lo; i < hi; i++ {
			ai := im.a[i*r*r : (i+1)*r*r]
			gi := im.g.Data[i*r : (i+1)*r]
			clear(ai)
			clear(gi)
			ui := u.Data[i*u.Stride : i*u.Stride+u.Cols]
			for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
				if keep != nil && keep[k] {
					continue
				}
				vj := v.Data[int(m.ColIdx[k])*v.Stride : int(m.ColIdx[k])*v.Stride+v.Cols]
				e := [1]float64{m.Val[k] - kernels.Dot(ui, vj)}
				if x := math.Abs(e[0]); tau > 0 && x > tau {
					s := math.Sqrt(tau / x)
					for c := range sv {
						sv[c] = s * vj[c]
					}
					e[0] *= s
					kernels.AddOuter4(ai, gi, sv, e[:])
					continue
				}
				kernels.AddOuter4(ai, gi, vj[:r], e[:]) // A_i's lower triangle
			}
			for a := range gi {
				gi[a] *= im.norm[i]
			}
		}
	})
	// res = Nᵀg − λ_y Y − H·0, dir = res.
	im.gatherColumns(im.res, im.g)
	for k, y := range im.y.Data {
		im.res.Data[k] -= im.lambda * y
	}
	copy(im.dir.Data, im.res.Data)
	clear(im.d.Data)
	rr := kernels.Dot(im.res.Data, im.res.Data)
	for range im.cg {
		if rr == 0 {
			break
		}
		im.applyH(im.hd, im.dir)
		alpha := rr / kernels.Dot(im.dir.Data, im.hd.Data)
		for k := range im.d.Data {
			im.d.Data[k] += alpha * im.dir.Data[k]
			im.res.Data[k] -= alpha * im.hd.Data[k]
		}
		next := kernels.Dot(im.res.Data, im.res.Data)
		for k := range im.dir.Data {
			im.dir.Data[k] = im.res.Data[k] + next/rr*im.dir.Data[k]
		}
		rr = next
	}
	// Y += D; z_i and u_i move by norm_i·Σ_{l ∈ Φ_i} d_l.
	for k, d := range im.d.Data {
		im.y.Data[k] += d
	}
	im.rowSums(im.s, im.d)
	kernels.ParallelFor(m.Rows, im.workers, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			si := im.s.Data[i*r : (i+1)*r]
			zi := im.z.Data[i*im.z.Stride : i*im.z.Stride+r]
			ui := u.Data[i*u.Stride : i*u.Stride+r]
			for a, sa := range si {
				dz := im.norm[i] * sa
				zi[a] += dz
				ui[a] += dz
			}
		}
	})
}

// applyH sets out = H·d (see step).
func (im *implicitFactors) applyH(out, d blas64.General) {
	m, r := im.m, im.r
	im.rowSums(im.s, d)
	kernels.ParallelFor(m.Rows, im.workers, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a := blas64.Symmetric{Uplo: blas.Lower, N: r, Stride: r, Data: im.a[i*r*r : (i+1)*r*r]}
			x := blas64.Vector{N: r, Inc: 1, Data: im.s.Data[i*r : (i+1)*r]}
			y := blas64.Vector{N: r, Inc: 1, Data: im.as.Data[i*r : (i+1)*r]}
			blas64.Symv(im.norm[i]*im.norm[i], a, x, 0, y) // norm_i² A_i s_i
		}
	})
	im.gatherColumns(out, im.as)
	for k, x := range d.Data {
		out.Data[k] += im.lambda * x
	}
}

// rowSums sets row i of dst to Σ_{l ∈ Φ_i} (row l of d).
func (im *implicitFactors) rowSums(dst, d blas64.General) {
	im.sumLines(dst, d, im.m.RowPtr, im.m.ColIdx)
}

// gatherColumns sets row l of dst to Σ_{i : l ∈ Φ_i} (row i of w), one
// column of Φ at a time (no two workers write the same row).
func (im *implicitFactors) gatherColumns(dst, w blas64.General) {
	im.sumLines(dst, w, im.m.ColPtr, im.m.RowIdx)
}

// sumLines sets row l of dst (r wide) to the sum of the rows of src named
// by line l of the pattern (ptr, idx), in parallel over the lines.
func (im *implicitFactors) sumLines(dst, src blas64.General, ptr []int, idx []int32) {
	r := im.r
	kernels.ParallelFor(len(ptr)-1, im.workers, 256, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			dl := dst.Data[l*r : (l+1)*r]
			clear(dl)
			for _, i := range idx[ptr[l]:ptr[l+1]] {
				for a, x := range src.Data[int(i)*r : int(i)*r+r] {
					dl[a] += x
				}
			}
		}
	})
}
