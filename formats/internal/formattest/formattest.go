// Package formattest holds the test helpers shared by the format packages.
package formattest

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// CheckMatrix fails t unless got equals want entry by entry (NaN equal to
// NaN).
func CheckMatrix(t *testing.T, what string, got *mat.Dense, want [][]float64) {
	t.Helper()
	r, c := got.Dims()
	if r != len(want) || c != len(want[0]) {
		t.Fatalf("%s: got %d×%d, want %d×%d", what, r, c, len(want), len(want[0]))
	}
	for i := range want {
		for j := range want[i] {
			g, w := got.At(i, j), want[i][j]
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Fatalf("%s: (%d,%d) = %v, want %v", what, i, j, g, w)
			}
		}
	}
}
