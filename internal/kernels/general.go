package kernels

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// NewGeneral returns a zero r×c matrix with stride c.
func NewGeneral(r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
}

// Dense wraps a as a *mat.Dense that shares its storage.
func Dense(a blas64.General) *mat.Dense {
	var m mat.Dense
	m.SetRawMatrix(a)
	return &m
}

// Copy copies src into dst, which must have at least src's shape.
func Copy(dst, src blas64.General) {
	for i := 0; i < src.Rows; i++ {
		copy(dst.Data[i*dst.Stride:i*dst.Stride+src.Cols], src.Data[i*src.Stride:i*src.Stride+src.Cols])
	}
}
