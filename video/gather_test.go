package video

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestGatherColumns: the tiled gather of frame columns equals At, entry
// for entry, for a dense Y (with a row count that is not a multiple of
// the tile, a view with a row stride wider than its columns, and blocks
// of 16 and fewer frames), for a LowRank M of rank three and one, and for
// the residual Y − M of a dense M and of those.
func TestGatherColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	fill := func(r, c int) *mat.Dense {
		m := mat.NewDense(r, c, nil)
		for i := range r {
			for j := range c {
				m.Set(i, j, rng.NormFloat64())
			}
		}
		return m
	}
	const rows, frames = 3*transposeRows + 37, 40
	y := fill(rows, frames)
	wide := fill(rows, frames+9).Slice(0, rows, 3, 3+frames).(*mat.Dense)
	low := LowRank{U: fill(rows, 3), Q: fill(frames, 3)}
	low1 := LowRank{U: fill(rows, 1), Q: fill(frames, 1)}
	cases := []struct {
		name string
		m    Matrix
	}{
		{"dense", y},
		{"view", wide},
		{"residual of a dense M", residual{y: y, m: wide}},
		{"residual of a LowRank M", residual{y: wide, m: low}},
		{"LowRank M", low},
		{"rank-one M", low1},
		{"residual of a rank-one M", residual{y: y, m: low1}},
	}
	for _, c := range cases {
		for _, blk := range [][2]int{{0, 16}, {16, 16}, {32, 8}, {39, 1}} {
			j0, nb := blk[0], blk[1]
			dst := newColumns(nb, rows)
			for _, col := range dst {
				for i := range col {
					col[i] = 1e300 // every entry must be written
				}
			}
			gatherColumns(dst, c.m, j0)
			for k, col := range dst {
				for i, got := range col {
					if want := c.m.At(i, j0+k); got != want && !(c.name != "dense" && c.name != "view" && closeTo(got, want)) {
						t.Fatalf("%s, frames %d+%d: entry (%d, %d) is %v, want %v", c.name, j0, nb, i, j0+k, got, want)
					}
				}
			}
		}
	}
}

// closeTo: the low-rank product is summed in another order by At than by
// the gather; both are within a few roundings of the exact value.
func closeTo(a, b float64) bool {
	d := a - b
	return d < 1e-12 && d > -1e-12
}
