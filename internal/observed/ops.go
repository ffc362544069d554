package observed

import (
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
)

// grain is the smallest number of rows or columns handed to one goroutine.
const grain = 64

func row(m blas64.General, i int) []float64 { return m.Data[i*m.Stride : i*m.Stride+m.Cols] }

// Residual sets e[q] = Val[q] − u_iᵀv_j for every observed entry q = (i, j)
// (the residual Π_Φ(Y − UVᵀ) of Algorithm 2, in O(r·|Φ|)) and returns Σ e[q]².
// u is d1×r, v is d2×r. e may alias m.Val only if the caller owns m.
func (m *Matrix) Residual(e []float64, u, v blas64.General, workers int) float64 {
	if len(e) != len(m.Val) || u.Rows != m.Rows || v.Rows != m.Cols || u.Cols != v.Cols {
		panic("observed: Residual dimension mismatch")
	}
	parts := make([]float64, m.Rows)
	kernels.ParallelFor(m.Rows, workers, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ui := row(u, i)
			ss := 0.0
			for q := m.RowPtr[i]; q < m.RowPtr[i+1]; q++ {
				vj := row(v, int(m.ColIdx[q]))
				s := 0.0
				for k, x := range ui {
					s += x * vj[k]
				}
				r := m.Val[q] - s
				e[q] = r
				ss += r * r
			}
			parts[i] = ss
		}
	})
	total := 0.0
	for _, x := range parts {
		total += x
	}
	return total
}

// MulVals sets dst (d1×k) = E·X, where E is the d1×d2 matrix with values
// e on Φ (CSR order) and zeros elsewhere, and X is d2×k.
func (m *Matrix) MulVals(dst blas64.General, e []float64, x blas64.General, workers int) {
	if len(e) != len(m.Val) || dst.Rows != m.Rows || x.Rows != m.Cols || dst.Cols != x.Cols {
		panic("observed: MulVals dimension mismatch")
	}
	kernels.ParallelFor(m.Rows, workers, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			di := row(dst, i)
			clear(di)
			for q := m.RowPtr[i]; q < m.RowPtr[i+1]; q++ {
				eq := e[q]
				if eq == 0 {
					continue
				}
				xj := row(x, int(m.ColIdx[q]))
				for k := range di {
					di[k] += eq * xj[k]
				}
			}
		}
	})
}

// MulTransVals sets dst (d2×k) = Eᵀ·X, with E as in MulVals and X d1×k.
// It walks Φ column by column, so every output row is owned by one goroutine.
func (m *Matrix) MulTransVals(dst blas64.General, e []float64, x blas64.General, workers int) {
	if len(e) != len(m.Val) || dst.Rows != m.Cols || x.Rows != m.Rows || dst.Cols != x.Cols {
		panic("observed: MulTransVals dimension mismatch")
	}
	kernels.ParallelFor(m.Cols, workers, grain, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			dj := row(dst, j)
			clear(dj)
			for q := m.ColPtr[j]; q < m.ColPtr[j+1]; q++ {
				eq := e[m.Perm[q]]
				if eq == 0 {
					continue
				}
				xi := row(x, int(m.RowIdx[q]))
				for k := range dj {
					dj[k] += eq * xi[k]
				}
			}
		}
	})
}

// Operator is the linear operator Scale·E of the sparse matrix E with
// values Vals on Φ, for the truncated SVD of Algorithm 2's initialization,
// SVD_r[(1/p)(Y − S_init)].
type Operator struct {
	M       *Matrix
	Vals    []float64
	Scale   float64
	Workers int
}

// Dims returns the matrix size.
func (o Operator) Dims() (int, int) { return o.M.Rows, o.M.Cols }

// MulTo sets dst = Scale·E·X.
func (o Operator) MulTo(dst, x blas64.General) {
	o.M.MulVals(dst, o.Vals, x, o.Workers)
	scale(dst, o.Scale)
}

// MulTransTo sets dst = Scale·Eᵀ·X.
func (o Operator) MulTransTo(dst, x blas64.General) {
	o.M.MulTransVals(dst, o.Vals, x, o.Workers)
	scale(dst, o.Scale)
}

func scale(m blas64.General, s float64) {
	if s == 1 {
		return
	}
	for i := 0; i < m.Rows; i++ {
		r := row(m, i)
		for k := range r {
			r[k] *= s
		}
	}
}
