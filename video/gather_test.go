package video

import (
	"math"
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

// TestTo8: to8 is min(max(round(255·v), 0), 255) with math.Round, for
// every value at and around the half-way points and the ends, NaN and
// infinities.
func TestTo8(t *testing.T) {
	want := func(v float64) uint8 {
		switch {
		case !(v > 0):
			return 0
		case v >= 1:
			return 255
		}
		return uint8(math.Round(v * 255))
	}
	vals := []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, 1, 2, 1e-300}
	for k := 0; k <= 255; k++ {
		for _, x := range []float64{float64(k), float64(k) + 0.5} {
			v := x / 255
			for _, w := range []float64{v, math.Nextafter(v, 0), math.Nextafter(v, 2)} {
				vals = append(vals, w, math.Nextafter(w, 0), math.Nextafter(w, 2))
			}
		}
	}
	rng := rand.New(rand.NewPCG(8, 8))
	for range 100000 {
		vals = append(vals, rng.Float64())
	}
	for _, v := range vals {
		if got := to8(v); got != want(v) {
			t.Fatalf("to8(%v) = %d, want %d", v, got, want(v))
		}
	}
}
