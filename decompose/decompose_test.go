package decompose

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/synth"
)

// instance saves a small synth instance and loads its Y as a file would
// be loaded.
func instance(t *testing.T) (dir string, in *load.Matrix) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "inst")
	if _, err := synth.Run(context.Background(), synth.Job{Config: synth.Config{D1: 60, D2: 50, Rank: 2, Alpha: 0.05, Seed: 7}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	in, err := load.File(filepath.Join(dir, synth.FileY), load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, in
}

// TestRunWritesWhatItSolved checks each file against the solver's result:
// lowrank against U·Vᵀ formed in full, sparse.mtx entry by entry, the
// factors in CSV, and the true error reported with Truth.
func TestRunWritesWhatItSolved(t *testing.T) {
	truth, in := instance(t)
	s := rpca.Settings{Rank: 2, Alpha: 0.1, Seed: 1}
	out := filepath.Join(t.TempDir(), "out")
	sum, err := Run(context.Background(), Job{Input: "Y.npy", Data: in, Method: &gd.Method{}, Settings: s, Truth: truth, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Result
	want := mat.NewDense(60, 50, nil)
	want.Mul(res.U, res.V.T())
	low, err := npy.ReadFile(filepath.Join(out, FileLowRank+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	// The rows are formed by the same products in another order: equal
	// to a few ulps of the largest entry.
	if !mat.EqualApprox(low, want, 1e-12) {
		t.Error("lowrank.npy differs from U·Vᵀ")
	}
	sp, err := mtx.ReadFile(filepath.Join(out, FileSparse))
	if err != nil {
		t.Fatal(err)
	}
	c := sp.Coord
	if len(c.Val) != res.S.NNZ() {
		t.Fatalf("sparse.mtx has %d entries, S %d", len(c.Val), res.S.NNZ())
	}
	for k, v := range c.Val {
		if got := res.S.At(c.Row[k], c.Col[k]); got != v {
			t.Errorf("sparse.mtx (%d, %d) = %g, S %g", c.Row[k], c.Col[k], v, got)
		}
	}
	if sum.RelError == nil || !(*sum.RelError < 1e-3) || sum.Observed != 3000 || sum.Partial {
		t.Errorf("summary %+v", sum)
	}
	if _, err := os.Stat(filepath.Join(out, FileSummary)); err != nil {
		t.Error(err)
	}

	out2 := filepath.Join(t.TempDir(), "factors")
	sum2, err := Run(context.Background(), Job{Data: in, Method: &gd.Method{}, Settings: s, Out: out2, Factors: true, Format: CSV})
	if err != nil {
		t.Fatal(err)
	}
	u, err := delim.ReadFile(filepath.Join(out2, FileU+".csv"), delim.Options{Delimiter: ","})
	if err != nil {
		t.Fatal(err)
	}
	// CSV holds the shortest decimal that reads back as the same float64.
	if !mat.Equal(u, sum2.Result.U) {
		t.Error("U.csv differs from U")
	}
}

// TestRunRefuses checks the errors that leave no output: a bad format,
// a truth of the wrong size, and a cancelled solve.
func TestRunRefuses(t *testing.T) {
	_, in := instance(t)
	s := rpca.Settings{Rank: 2, Alpha: 0.1}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), Job{Data: in, Method: &gd.Method{}, Settings: s, Out: out, Format: "xlsx"}); !errors.Is(err, ErrFormat) {
		t.Errorf("format xlsx: %v", err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if _, err := synth.Run(context.Background(), synth.Job{Config: synth.Config{D1: 40, D2: 50, Rank: 2, Alpha: 0.05, Seed: 7}, Out: other}); err != nil {
		t.Fatal(err)
	}
	var te *TruthError
	if _, err := Run(context.Background(), Job{Data: in, Method: &gd.Method{}, Settings: s, Out: out, Truth: other}); !errors.As(err, &te) || !errors.Is(err, synth.ErrTruthSize) {
		t.Errorf("truth of another size: %v", err)
	}
	if _, err := Run(context.Background(), Job{Data: in, Method: &gd.Method{}, Settings: s, Out: out, Truth: t.TempDir()}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("truth without A.npy: %v", err)
	}
	// A low-rank part that would not fit is refused before the solve;
	// the factors fit.
	saved := freeBytes
	t.Cleanup(func() { freeBytes = saved })
	d1, d2 := in.D1, in.D2
	freeBytes = func(string) (int64, bool) { return int64(8*d1*d2) - 1, true }
	var se *SpaceError
	if _, err := Run(context.Background(), Job{Data: in, Method: &gd.Method{}, Settings: s, Out: out}); !errors.As(err, &se) || se.Need != int64(8*d1*d2) || se.File != "lowrank.npy" {
		t.Errorf("no room for lowrank.npy: %v", err)
	}
	if _, err := Run(context.Background(), Job{Data: in, Method: &gd.Method{}, Settings: s, Out: filepath.Join(t.TempDir(), "f"), Factors: true}); err != nil {
		t.Errorf("the factors, with no room for lowrank.npy: %v", err)
	}
	freeBytes = saved
	for _, c := range []struct {
		j     Job
		name  string
		bytes int64
		large bool
	}{
		{Job{}, "lowrank.npy", 8 * 50000 * 50000, true},
		{Job{Format: CSV}, "lowrank.csv", 25 * 50000 * 50000, true},
		{Job{Factors: true}, "", 0, false},
	} {
		if name, n, large := c.j.LowRankSize(50000, 50000); name != c.name || n != c.bytes || large != c.large {
			t.Errorf("%+v: %s, %d, %v", c.j, name, n, large)
		}
	}
	if _, _, large := (&Job{}).LowRankSize(1000, 1000); large {
		t.Error("8 MB called large")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Job{Data: in, Method: &gd.Method{}, Settings: s, Out: out}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output after the errors: %v", err)
	}
}

// TestWriteLowRankBlocks: M = U·Vᵀ written by blocks of lowRankBlock rows
// (two whole blocks and a remainder) equals the product formed in full
// to the rounding of a sum of k products.
func TestWriteLowRankBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	d1, d2, k := 2*lowRankBlock+9, 41, 7
	u, v := mat.NewDense(d1, k, nil), mat.NewDense(d2, k, nil)
	for _, m := range []*mat.Dense{u, v} {
		for i, x := range m.RawMatrix().Data {
			m.RawMatrix().Data[i] = x + rng.NormFloat64()
		}
	}
	dir, err := outdir.New(filepath.Join(t.TempDir(), "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Abort()
	j := &Job{}
	name, err := j.writeLowRank(context.Background(), dir, u, v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := npy.ReadFile(dir.Join(name))
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Mul(u, v.T())
	if !mat.EqualApprox(got, &want, 1e-13) {
		t.Error("lowrank.npy by blocks differs from U·Vᵀ")
	}
}
