package rpca_test

import (
	"context"
	"math"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/synth"
)

// TestSparseSupportHonest: the reported sparse part holds the corruptions
// and not the rounding-level residuals that T_{γα} sets aside (before the
// rule of SparseNoiseFactor/SparseRelativeFloor, GD reported 126,042
// entries for 99,450 corruptions at d = 1000). Precision and recall must
// be at least 99.9%: a corruption is missed only if it is below the
// floor, 1e-5 of the rms of M (3e-8 here, against magnitudes uniform up
// to 5e-2: a fraction of about 1e-6).
func TestSparseSupportHonest(t *testing.T) {
	in := instance(t, synth.Config{D1: 600, D2: 500, Rank: 5, Alpha: 0.1, Seed: 4})
	truth := map[[2]int]bool{}
	for i := 0; i < in.S.Rows; i++ {
		for q := in.S.RowPtr[i]; q < in.S.RowPtr[i+1]; q++ {
			truth[[2]int{i, int(in.S.ColIdx[q])}] = true
		}
	}
	for _, m := range []rpca.Method{&gd.Method{}, &accaltproj.Method{}} {
		res, err := rpca.Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 5, Alpha: 0.1}, m)
		if err != nil {
			t.Fatal(err)
		}
		hit := 0
		for i := 0; i < res.S.Rows; i++ {
			for q := res.S.RowPtr[i]; q < res.S.RowPtr[i+1]; q++ {
				if truth[[2]int{i, int(res.S.ColIdx[q])}] {
					hit++
				}
			}
		}
		prec, rec := float64(hit)/float64(res.S.NNZ()), float64(hit)/float64(len(truth))
		t.Logf("%s: %d entries for %d corruptions, precision %.5f, recall %.5f", m.Name(), res.S.NNZ(), len(truth), prec, rec)
		if prec < 0.999 || rec < 0.999 {
			t.Errorf("%s: precision %.5f, recall %.5f", m.Name(), prec, rec)
		}
	}
}

// TestSparseWhere checks SparseWhere against the dense matrix it reads,
// with a stride wider than the rows.
func TestSparseWhere(t *testing.T) {
	const rows, cols, stride = 3, 4, 6
	data := []float64{
		0, 1, 0, -2, 9, 9,
		0, 0, 0, 0, 9, 9,
		3, 0, 0.5, 0, 9, 9,
	}
	sp := rpca.SparseWhere(rows, cols, data, stride, func(x float64) bool { return math.Abs(x) > 0.5 })
	if sp.NNZ() != 3 {
		t.Fatalf("%d entries, want 3", sp.NNZ())
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			want := data[i*stride+j]
			if math.Abs(want) <= 0.5 {
				want = 0
			}
			if got := sp.At(i, j); got != want {
				t.Errorf("(%d, %d) = %g, want %g", i, j, got, want)
			}
		}
	}
}
