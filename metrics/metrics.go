// Package metrics measures how close an estimate is to the truth: the
// relative error of a low-rank product computed from factors, the paper's
// rotation-invariant factor distance (eq. (error_metric)), and detection
// scores for foreground masks.
//
// The matrix functions take factors and never form a d1×d2 product, so they
// cost O((d1+d2)·k²) and work for d in the millions. Mismatched dimensions
// are programmer errors and panic, as in gonum's mat package.
package metrics

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// pairDims returns the sizes of two factor pairs U (d1×k), V (d2×k) and
// A (d1×r), B (d2×r), and panics, naming fn, if they do not fit.
func pairDims(fn string, u, v, a, b *mat.Dense) (d1, d2, k, r int) {
	d1, k = u.Dims()
	d2, kv := v.Dims()
	ar, r := a.Dims()
	br, rb := b.Dims()
	if kv != k || rb != r || ar != d1 || br != d2 {
		panic(fmt.Sprintf("metrics: %s dimension mismatch: %d×%d and %d×%d against %d×%d and %d×%d", fn, d1, k, d2, kv, ar, r, br, rb))
	}
	return d1, d2, k, r
}

// RelError returns ‖U·Vᵀ − A·Bᵀ‖_F / ‖A·Bᵀ‖_F, the relative estimation error
// of the paper's experiments, without forming either product. U is d1×k and
// V is d2×k; A is d1×r and B is d2×r, where k may differ from r.
//
// It writes U·Vᵀ − A·Bᵀ = [U, −A]·[V, B]ᵀ, takes thin QR factorizations
// [U, −A] = Q₁R₁ and [V, B] = Q₂R₂ (Householder, by row blocks), and returns
// ‖R₁R₂ᵀ‖_F over ‖R₁ₐR₂ᵦᵀ‖_F, where R₁ₐ and R₂ᵦ are the last r columns of
// R₁ and R₂ (so that A = −Q₁R₁ₐ and B = Q₂R₂ᵦ). Unlike a Gram-matrix
// formula, whose rounding error is of order √ε_mach relative, the absolute
// error is of order ε_mach·‖U‖‖V‖, so relative errors down to about 1e-13
// are resolved. The cost is O((d1+d2)·(k+r)²) on GOMAXPROCS goroutines and
// the result does not depend on the number of goroutines.
//
// When A·Bᵀ = 0 it returns 0 if U·Vᵀ = 0 too and +Inf otherwise.
func RelError(u, v, a, b *mat.Dense) float64 {
	d1, d2, k, _ := pairDims("RelError", u, v, a, b)
	r1 := rFactor(d1, []block{{u.RawMatrix(), 1}, {a.RawMatrix(), -1}})
	r2 := rFactor(d2, []block{{v.RawMatrix(), 1}, {b.RawMatrix(), 1}})
	diff := frobABt(r1, r2, 0)
	ref := frobABt(r1, r2, k)
	switch {
	case ref > 0:
		return diff / ref
	case diff == 0:
		return 0
	}
	return math.Inf(1)
}

// CentredRelError returns ‖U·Vᵀ − A·Bᵀ‖_F / ‖A·Bᵀ − m̄·11ᵀ‖_F, where m̄ is
// the mean of the entries of A·Bᵀ: the error relative to the part of the
// truth that is not a constant, so that an offset in the data cannot hide
// an error by inflating the denominator. Like [RelError] it works on the
// factors (k and r may differ) and returns 0 or +Inf when the truth is
// constant.
func CentredRelError(u, v, a, b *mat.Dense) float64 {
	d1, d2, _, _ := pairDims("CentredRelError", u, v, a, b)
	r1 := rFactor(d1, []block{{u.RawMatrix(), 1}, {a.RawMatrix(), -1}})
	r2 := rFactor(d2, []block{{v.RawMatrix(), 1}, {b.RawMatrix(), 1}})
	diff := frobABt(r1, r2, 0)
	ref, floor := centredNorm(a, b)
	switch {
	case ref > 0:
		return diff / ref
	case diff <= floor:
		return 0
	}
	return math.Inf(1)
}

// CentredNorm returns ‖A·Bᵀ − m̄·11ᵀ‖_F, the Frobenius norm of the product
// A·Bᵀ (d1×d2, from d1×r and d2×r factors) less the mean m̄ of its
// entries, without forming it: A·Bᵀ − m̄·11ᵀ = [A, 1]·[B, −m̄·1]ᵀ, and the
// norm is that of the product of the two triangular factors, as in
// [RelError]. Its absolute error is of order ε_mach·‖[A, 1]‖·‖[B, m̄1]‖, so
// an offset m̄ costs ε_mach·|m̄| of accuracy, not the square root of it; a
// norm below 1e-13·|m̄|·√(d1·d2), which rounding alone can produce from a
// constant product, is returned as 0.
func CentredNorm(a, b *mat.Dense) float64 {
	n, _ := centredNorm(a, b)
	return n
}

// centredNorm returns CentredNorm(a, b) and the rounding floor below which
// it returns 0.
func centredNorm(a, b *mat.Dense) (norm, floor float64) {
	d1, r := a.Dims()
	d2, rb := b.Dims()
	if rb != r {
		panic(fmt.Sprintf("metrics: CentredNorm dimension mismatch: %d×%d and %d×%d", d1, r, d2, rb))
	}
	if d1 == 0 || d2 == 0 {
		return 0, 0
	}
	ar, br := a.RawMatrix(), b.RawMatrix()
	mean := 0.0
	for k := range r {
		sa, sb := 0.0, 0.0
		for i := range d1 {
			sa += ar.Data[i*ar.Stride+k]
		}
		for j := range d2 {
			sb += br.Data[j*br.Stride+k]
		}
		mean += sa * sb
	}
	mean /= float64(d1) * float64(d2)
	ones := func(n int) blas64.General {
		o := blas64.General{Rows: n, Cols: 1, Stride: 1, Data: make([]float64, n)}
		for i := range o.Data {
			o.Data[i] = 1
		}
		return o
	}
	r1 := rFactor(d1, []block{{ar, 1}, {ones(d1), 1}})
	r2 := rFactor(d2, []block{{br, 1}, {ones(d2), -mean}})
	n := frobABt(r1, r2, 0)
	floor = 1e-13 * math.Abs(mean) * math.Sqrt(float64(d1)*float64(d2))
	if n <= floor {
		return 0, floor
	}
	return n, floor
}

// block is one group of columns of a matrix [X₁, X₂, …] given by blocks,
// multiplied by scale.
type block struct {
	m     blas64.General
	scale float64
}

// qrChunk is the number of rows factorized at a time by rFactor. A chunk of
// (k+r) ≤ 64 columns stays within a few MB, and the result of rFactor
// depends only on this constant, not on the number of goroutines.
const qrChunk = 4096

// rFactor returns the triangular factor R (at most n×n, row-major) of a
// thin QR factorization of the d×n matrix formed by the blocks, computed as
// a two-level tall-skinny QR: each chunk of qrChunk rows is factorized
// separately (in parallel), and the stacked chunk factors are factorized
// once more. Only the singular values and Gram structure of R matter to the
// callers, and RᵀR equals the Gram matrix of the input up to rounding.
func rFactor(d int, blocks []block) blas64.General {
	n := 0
	for _, b := range blocks {
		n += b.m.Cols
	}
	nChunks := (d + qrChunk - 1) / qrChunk
	// Stacked chunk factors: chunk c contributes min(rows, n) rows at
	// offset c·n (unused rows stay zero, which does not change R).
	stack := blas64.General{Rows: nChunks * n, Cols: n, Stride: n, Data: make([]float64, nChunks*n*n)}
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), nChunks)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float64, qrChunk*n)
			for {
				c := int(next.Add(1) - 1)
				if c >= nChunks {
					return
				}
				lo, hi := c*qrChunk, min((c+1)*qrChunk, d)
				chunk := blas64.General{Rows: hi - lo, Cols: n, Stride: n, Data: buf[:(hi-lo)*n]}
				for i := lo; i < hi; i++ {
					dst := chunk.Data[(i-lo)*n : (i-lo+1)*n]
					off := 0
					for _, b := range blocks {
						src := b.m.Data[i*b.m.Stride : i*b.m.Stride+b.m.Cols]
						for j, x := range src {
							dst[off+j] = b.scale * x
						}
						off += b.m.Cols
					}
				}
				rc := upperR(chunk)
				copy(stack.Data[c*n*n:], rc.Data)
			}
		}()
	}
	wg.Wait()
	if nChunks == 1 {
		return trimR(stack, min(d, n))
	}
	return upperR(stack)
}

// upperR factorizes m (overwritten) and returns its min(rows, n)×n upper
// triangular (trapezoidal) factor R as a new matrix.
func upperR(m blas64.General) blas64.General {
	k := min(m.Rows, m.Cols)
	tau := make([]float64, k)
	work := make([]float64, 1)
	lapack64.Geqrf(m, tau, work, -1)
	work = make([]float64, max(int(work[0]), m.Cols))
	lapack64.Geqrf(m, tau, work, len(work))
	return trimR(m, k)
}

// trimR copies the upper triangle of the first k rows of m.
func trimR(m blas64.General, k int) blas64.General {
	n := m.Cols
	r := blas64.General{Rows: k, Cols: n, Stride: n, Data: make([]float64, k*n)}
	for i := 0; i < k; i++ {
		copy(r.Data[i*n+i:(i+1)*n], m.Data[i*m.Stride+i:i*m.Stride+n])
	}
	return r
}

// frobABt returns ‖X·Yᵀ‖_F where X and Y are the columns from col0 on of x
// and y (which have the same number of columns).
func frobABt(x, y blas64.General, col0 int) float64 {
	p := mat.NewDense(max(x.Rows, 1), max(y.Rows, 1), nil)
	for i := 0; i < x.Rows; i++ {
		xi := x.Data[i*x.Stride+col0 : i*x.Stride+x.Cols]
		for j := 0; j < y.Rows; j++ {
			yj := y.Data[j*y.Stride+col0 : j*y.Stride+y.Cols]
			s := 0.0
			for l, v := range xi {
				s += v * yj[l]
			}
			p.Set(i, j, s)
		}
	}
	return mat.Norm(p, 2)
}
