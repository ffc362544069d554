// Package kernels holds the parallel dense kernels on the hot paths of the
// solvers: products of a large d1×d2 matrix with tall-skinny d×k blocks and
// the rank-k product U·Vᵀ, fused where that saves a pass over the large
// matrix. All matrices are row-major blas64.General values.
package kernels

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
)

// Workers returns w, or runtime.GOMAXPROCS(0) when w ≤ 0.
func Workers(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// ParallelFor calls fn on contiguous sub-ranges [lo, hi) covering [0, n),
// using at most workers goroutines (GOMAXPROCS when workers ≤ 0), and
// returns when all calls have returned. Ranges have at least grain
// elements (except possibly the last) so that tiny work stays serial.
func ParallelFor(n, workers, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	w := Workers(workers)
	if grain < 1 {
		grain = 1
	}
	if max := (n + grain - 1) / grain; w > max {
		w = max
	}
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, hi)
	}
	wg.Wait()
}

// row returns row i of m.
func row(m blas64.General, i int) []float64 { return m.Data[i*m.Stride : i*m.Stride+m.Cols] }

// MulABt sets dst = A·Bᵀ, with A d1×k, B d2×k and dst d1×d2.
func MulABt(dst, a, b blas64.General, workers int) {
	checkABt(dst, a, b)
	ParallelFor(a.Rows, workers, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ai, di := row(a, i), row(dst, i)
			for j := range di {
				bj := row(b, j)
				s := 0.0
				for k, x := range ai {
					s += x * bj[k]
				}
				di[j] = s
			}
		}
	})
}

// SubMulABt sets dst = Y − A·Bᵀ and returns ‖dst‖²_F. dst may alias y.
func SubMulABt(dst, y, a, b blas64.General, workers int) float64 {
	checkABt(dst, a, b)
	if y.Rows != dst.Rows || y.Cols != dst.Cols {
		panic("kernels: SubMulABt dimension mismatch")
	}
	w := Workers(workers)
	parts := make([]float64, a.Rows)
	ParallelFor(a.Rows, w, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ai, di, yi := row(a, i), row(dst, i), row(y, i)
			ss := 0.0
			for j := range di {
				bj := row(b, j)
				s := 0.0
				for k, x := range ai {
					s += x * bj[k]
				}
				r := yi[j] - s
				di[j] = r
				ss += r * r
			}
			parts[i] = ss
		}
	})
	total := 0.0
	for _, v := range parts {
		total += v
	}
	return total
}

// MulAX sets dst = A·X, with A m×n, X n×k and dst m×k.
func MulAX(dst, a, x blas64.General, workers int) {
	if x.Rows != a.Cols || dst.Rows != a.Rows || dst.Cols != x.Cols {
		panic("kernels: MulAX dimension mismatch")
	}
	ParallelFor(a.Rows, workers, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ai, di := row(a, i), row(dst, i)
			clear(di)
			for j, aij := range ai {
				xj := row(x, j)
				for k := range di {
					di[k] += aij * xj[k]
				}
			}
		}
	})
}

// MulAtX sets dst = Aᵀ·X, with A m×n, X m×k and dst n×k.
func MulAtX(dst, a, x blas64.General, workers int) {
	if x.Rows != a.Rows || dst.Rows != a.Cols || dst.Cols != x.Cols {
		panic("kernels: MulAtX dimension mismatch")
	}
	mulAtXAcc(dst, a, x, workers)
}

// MulAXAtY sets ax = A·X and aty = Aᵀ·Y in a single pass over A, with A
// m×n, X n×k, Y m×l, ax m×k and aty n×l.
func MulAXAtY(ax, aty, a, x, y blas64.General, workers int) {
	MulAX(ax, a, x, workers)
	MulAtX(aty, a, y, workers)
}

// mulAtXAcc computes dst = Aᵀ·X with per-worker accumulators.
func mulAtXAcc(dst, a, x blas64.General, workers int) {
	w := Workers(workers)
	n, k := a.Cols, x.Cols
	var mu sync.Mutex
	for i := 0; i < dst.Rows; i++ {
		clear(row(dst, i))
	}
	ParallelFor(a.Rows, w, 8, func(lo, hi int) {
		acc := make([]float64, n*k)
		for i := lo; i < hi; i++ {
			ai, xi := row(a, i), row(x, i)
			for j, aij := range ai {
				aj := acc[j*k : j*k+k]
				for c, xv := range xi {
					aj[c] += aij * xv
				}
			}
		}
		mu.Lock()
		for j := 0; j < n; j++ {
			dj := row(dst, j)
			for c := range dj {
				dj[c] += acc[j*k+c]
			}
		}
		mu.Unlock()
	})
}

func checkABt(dst, a, b blas64.General) {
	if a.Cols != b.Cols || dst.Rows != a.Rows || dst.Cols != b.Rows {
		panic("kernels: A·Bᵀ dimension mismatch")
	}
}
