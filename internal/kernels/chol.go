package kernels

import "math"

// CholeskySolve solves A·x = b for the symmetric positive definite k×k
// matrix A given by its lower triangle, row-major in a (A_ij = a[i·k+j]
// for j ≤ i; the rest of a is not read), by Cholesky factorisation
// A = L·Lᵀ in place (a's lower triangle becomes L) and two triangular
// solves. It reports false, leaving x alone, when a squared pivot is not
// above minPivot (A is not positive definite to that margin). It is meant
// for the many small systems of per-row least squares, where a call into
// LAPACK costs more than the arithmetic.
func CholeskySolve(a []float64, k int, b, x []float64, minPivot float64) bool {
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*k+j]
			for e := 0; e < j; e++ {
				s -= a[i*k+e] * a[j*k+e]
			}
			if j < i {
				a[i*k+j] = s / a[j*k+j]
				continue
			}
			if !(s > minPivot) {
				return false
			}
			a[i*k+i] = math.Sqrt(s)
		}
	}
	for i := 0; i < k; i++ {
		s := b[i]
		for e := 0; e < i; e++ {
			s -= a[i*k+e] * x[e]
		}
		x[i] = s / a[i*k+i]
	}
	for i := k - 1; i >= 0; i-- {
		s := x[i]
		for e := i + 1; e < k; e++ {
			s -= a[e*k+i] * x[e]
		}
		x[i] = s / a[i*k+i]
	}
	return true
}
