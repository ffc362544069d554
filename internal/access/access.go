// Package access lets the method packages reach what the packages of
// the contract keep unexported: the storage of an Observed (set by
// package sparse), and the scaling Solve applies and the residual's
// conversion (set by the root package), each when its package is
// initialised. The values taken and returned are *rpca.Observed and
// *rpca.Problem (package access cannot name them without an import
// cycle).
package access

import "github.com/rpca-gd/rpca/internal/observed"

var (
	// ObservedMatrix returns the storage of an *rpca.Observed.
	ObservedMatrix func(o any) *observed.Matrix
	// Scaled returns an *rpca.Problem divided by a power of two near its
	// robust spread when its scale is far from 1 (1 otherwise), and the
	// power of two.
	Scaled func(p any) (q any, scale float64)
	// ResFactor returns the factor that converts the residual of a
	// method run on an *rpca.Problem into the one Solve reports (0 when
	// Solve did not frame it).
	ResFactor func(p any) float64
)
