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
	if !CholeskyFactor(a, k, k, minPivot) {
		return false
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

// CholeskyFactor factors the symmetric k×k matrix A given by its lower
// triangle, row-major in a with row stride lda (A_ij = a[i·lda+j] for
// j ≤ i), as A = L·Lᵀ in place: a's lower triangle becomes L. It reports
// false, with a partly overwritten, when a squared pivot is not above
// minPivot; with minPivot = 0 that is LAPACK's dpotrf test of positive
// definiteness, without its condition estimate.
func CholeskyFactor(a []float64, k, lda int, minPivot float64) bool {
	for i := 0; i < k; i++ {
		ai := a[i*lda : i*lda+i+1]
		for j := 0; j <= i; j++ {
			aj := a[j*lda : j*lda+j+1]
			s := ai[j]
			for e := 0; e < j; e++ {
				s -= ai[e] * aj[e]
			}
			if j < i {
				ai[j] = s / aj[j]
				continue
			}
			if !(s > minPivot) {
				return false
			}
			ai[i] = math.Sqrt(s)
		}
	}
	return true
}
