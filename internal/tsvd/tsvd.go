// Package tsvd computes truncated singular value decompositions of large
// matrices that are only available through products with tall-skinny
// blocks (randomized block Krylov iteration with thin QR).
package tsvd

import (
	"context"

	"gonum.org/v1/gonum/blas/blas64"
)

// Operator is a linear map A: ℝⁿ → ℝᵐ known through block products.
type Operator interface {
	// Dims returns m, n: A is m×n.
	Dims() (m, n int)
	// MulTo sets dst (m×k) = A·X for X of size n×k.
	MulTo(dst, x blas64.General)
	// MulTransTo sets dst (n×k) = Aᵀ·X for X of size m×k.
	MulTransTo(dst, x blas64.General)
}

// Options control Compute.
type Options struct {
	Rank       int            // number of singular triplets wanted (required, ≥ 1)
	Oversample int            // extra block columns; 0 means the default
	MaxIter    int            // cap on Krylov/power iterations; 0 means the default
	Tol        float64        // relative accuracy of the triplets; 0 means the default
	Seed       uint64         // seed of the random start block
	Start      blas64.General // optional warm start: n×k block whose span approximates the right singular subspace
	Workers    int            // goroutines for the dense operator; 0 means GOMAXPROCS
}

// Result is a truncated SVD A ≈ U·diag(S)·Vᵀ.
type Result struct {
	U          blas64.General // m×r, orthonormal columns
	S          []float64      // r singular values, non-increasing
	V          blas64.General // n×r, orthonormal columns
	Iterations int            // iterations run
	Products   int            // number of block products with A or Aᵀ
}

// Compute returns the top Rank singular triplets of op.
func Compute(ctx context.Context, op Operator, opt Options) (*Result, error) {
	panic("tsvd: not implemented yet")
}

// Dense is the Operator of a dense row-major matrix.
type Dense struct {
	A       blas64.General
	Workers int
}

// Dims returns the size of the matrix.
func (d Dense) Dims() (int, int) { return d.A.Rows, d.A.Cols }

// MulTo sets dst = A·X.
func (d Dense) MulTo(dst, x blas64.General) { panic("tsvd: not implemented yet") }

// MulTransTo sets dst = Aᵀ·X.
func (d Dense) MulTransTo(dst, x blas64.General) { panic("tsvd: not implemented yet") }
