package rpcabeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

func TestMain(m *testing.M) {
	beam.Init()
	beamlog.SetupLogging("warn", "text") // not Prism's line per job
	os.Exit(m.Run())
}

// instance generates a partial instance and writes it as one Matrix
// Market file in dir.
func instance(t *testing.T, dir string, cfg synth.Config) (*synth.Instance, string) {
	t.Helper()
	in, err := synth.Observed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "Y.mtx")
	if err := mtx.WriteFile(name, in.Obs); err != nil {
		t.Fatal(err)
	}
	return in, name
}

// solveBoth runs Algorithm 2 on Prism through the store and on one
// machine through rpca.Solve, and returns both results.
func solveBoth(t *testing.T, in *synth.Instance, file string, o Options, s rpca.Settings) (dist, ref *rpca.Result, st *Store) {
	t.Helper()
	ctx := context.Background()
	st, err := Load(ctx, file, filepath.Join(t.TempDir(), "work"), o)
	if err != nil {
		t.Fatal(err)
	}
	if dist, err = (&gd.Method{}).SolveDistributed(ctx, st, s); err != nil {
		t.Fatal(err)
	}
	if ref, err = rpca.Solve(ctx, in.Problem(), s, &gd.Method{}); err != nil {
		t.Fatal(err)
	}
	return dist, ref, st
}

// TestSmall: a small instance on Prism agrees with rpca.Solve: the same
// iterations, and factors equal up to the order of floating-point sums
// (the data are continuous, so T's ties never occur). The instance is
// too small for a true error of 1e-4 (Solve reaches the same 9e-4).
func TestSmall(t *testing.T) {
	in, file := instance(t, t.TempDir(), synth.Config{D1: 200, D2: 150, Rank: 2, Alpha: 0.05, P: 0.4, Seed: 3})
	dist, ref, st := solveBoth(t, in, file, Options{Shards: 3}, rpca.Settings{Rank: 2, Alpha: 0.05, Seed: 1})
	gap := metrics.RelError(dist.U, dist.V, ref.U, ref.V)
	trueErr := metrics.RelError(dist.U, dist.V, in.A, in.B)
	t.Logf("%d iterations (Solve %d), %d pipelines, true error %.3g, gap %.3g", dist.Iterations, ref.Iterations, st.Pipelines(), trueErr, gap)
	if dist.Iterations != ref.Iterations || gap > 1e-8 || trueErr > 2e-3 {
		t.Errorf("iterations %d (Solve %d), gap %.3g, true error %.3g", dist.Iterations, ref.Iterations, gap, trueErr)
	}
}

// TestALS: alternating least squares on Prism agrees with als.Method's
// Solve on one machine: the same sweeps, factors within 1e-10. At d = 10⁴
// (without -short) it is the target; the small instance runs
// always.
func TestALS(t *testing.T) {
	cases := []synth.Config{{D1: 300, D2: 200, Rank: 3, Alpha: 0.05, P: 0.4, Seed: 5}}
	if !testing.Short() {
		cases = append(cases, synth.Config{D1: 10000, D2: 10000, Rank: 5, Alpha: 0.05, P: 0.02, Seed: 6})
	}
	for _, cfg := range cases {
		in, file := instance(t, t.TempDir(), cfg)
		ctx := context.Background()
		st, err := Load(ctx, file, filepath.Join(t.TempDir(), "work"), Options{Shards: 4})
		if err != nil {
			t.Fatal(err)
		}
		s := rpca.Settings{Rank: cfg.Rank, Alpha: cfg.Alpha, Seed: 1}
		m := als.Method{Ridge: 0.1, RidgeDecay: 0.5}
		dist, err := m.SolveDistributed(ctx, st, s)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := m.Solve(ctx, in.Problem(), s)
		if err != nil {
			t.Fatal(err)
		}
		gap := metrics.RelError(dist.U, dist.V, ref.U, ref.V)
		trueErr := metrics.RelError(dist.U, dist.V, in.A, in.B)
		t.Logf("d = %d: %d sweeps (Solve %d), %d pipelines, %v (Solve %v), true error %.3g, gap %.3g", cfg.D1, dist.Iterations, ref.Iterations, st.Pipelines(), dist.Elapsed, ref.Elapsed, trueErr, gap)
		if dist.Iterations != ref.Iterations || dist.Stop != ref.Stop || gap > 1e-10 {
			t.Errorf("d = %d: %d sweeps (%s), Solve %d (%s), gap %.3g", cfg.D1, dist.Iterations, dist.Stop, ref.Iterations, ref.Stop, gap)
		}
	}
}

// TestTarget is the target: a 3000×2000 instance of rank 5 with
// α = 0.05 observed at p = 0.1 is recovered on Prism at the defaults to a
// true error of at most 1e-4, and agrees with rpca.Solve.
func TestTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("about 1 minute")
	}
	in, file := instance(t, t.TempDir(), synth.Config{D1: 3000, D2: 2000, Rank: 5, Alpha: 0.05, P: 0.1, Seed: 7})
	dist, ref, st := solveBoth(t, in, file, Options{}, rpca.Settings{Rank: 5, Alpha: 0.05})
	gap := metrics.RelError(dist.U, dist.V, ref.U, ref.V)
	trueErr := metrics.RelError(dist.U, dist.V, in.A, in.B)
	t.Logf("%d iterations (Solve %d), %d pipelines, %v (Solve %v), true error %.3g, gap %.3g", dist.Iterations, ref.Iterations, st.Pipelines(), dist.Elapsed, ref.Elapsed, trueErr, gap)
	if trueErr > 1e-4 || gap > 1e-8 {
		t.Errorf("true error %.3g, gap to Solve %.3g", trueErr, gap)
	}
}

// TestShardedInput: the entries split over three Matrix Market files (a
// glob) give the same factors as one file; bad inputs are refused with
// ErrInput and cancellation is honoured.
func TestShardedInput(t *testing.T) {
	dir := t.TempDir()
	in, file := instance(t, dir, synth.Config{D1: 120, D2: 90, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 9})
	d1, d2 := in.Obs.Dims()
	parts := make([]*formats.Triplets, 3)
	for k := range parts {
		parts[k] = &formats.Triplets{D1: d1, D2: d2}
	}
	n := 0
	in.Obs.Do(func(i, j int, v float64) {
		p := parts[n%3]
		p.Row, p.Col, p.Val = append(p.Row, i), append(p.Col, j), append(p.Val, v)
		n++
	})
	for k, p := range parts {
		writeTriplets(t, filepath.Join(dir, "part", fmt.Sprintf("p%d.mtx", k)), p)
	}
	ctx := context.Background()
	s := rpca.Settings{Rank: 2, Alpha: 0.05, Seed: 1}
	var results []*rpca.Result
	for _, name := range []string{file, filepath.Join(dir, "part", "*.mtx")} {
		st, err := Load(ctx, name, filepath.Join(t.TempDir(), "w"), Options{Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, nnz := st.Dims(); nnz != in.Obs.NNZ() {
			t.Errorf("%s: %d entries, want %d", name, nnz, in.Obs.NNZ())
		}
		res, err := (&gd.Method{}).SolveDistributed(ctx, st, s)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if !mat.Equal(results[0].U, results[1].U) || !mat.Equal(results[0].V, results[1].V) {
		t.Error("one file and three files give different factors")
	}

	// A duplicate across files, a file of another size, an empty row, no file.
	dup := &formats.Triplets{D1: d1, D2: d2, Row: []int{parts[0].Row[0]}, Col: []int{parts[0].Col[0]}, Val: []float64{1}}
	writeTriplets(t, filepath.Join(dir, "dup", "a.mtx"), parts[0])
	writeTriplets(t, filepath.Join(dir, "dup", "b.mtx"), dup)
	writeTriplets(t, filepath.Join(dir, "size", "a.mtx"), parts[0])
	writeTriplets(t, filepath.Join(dir, "size", "b.mtx"), &formats.Triplets{D1: d1 + 1, D2: d2, Row: []int{0}, Col: []int{0}, Val: []float64{1}})
	writeTriplets(t, filepath.Join(dir, "empty.mtx"), &formats.Triplets{D1: 3, D2: 3, Row: []int{0, 1}, Col: []int{0, 1}, Val: []float64{1, 2}})
	for _, c := range []struct {
		in   string
		kind error // ErrPipeline: found by a worker
		want string
	}{
		{filepath.Join(dir, "dup", "*.mtx"), ErrPipeline, "duplicate entry at row"},
		{filepath.Join(dir, "size", "*.mtx"), ErrPipeline, "is 121×90"},
		{filepath.Join(dir, "empty.mtx"), ErrInput, "1 rows and 1 columns have no observed entry"},
		{filepath.Join(dir, "none-*.mtx"), ErrInput, "no file matches"},
		{testfile.Write(t, dir, "size2.mtx", "%%MatrixMarket matrix coordinate real general\n3 3\n1 1 1\n"), ErrInput, "size line"},
		{testfile.Write(t, dir, "size4.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1 7\n1 1 1\n"), ErrInput, "size line"},
		{testfile.Write(t, dir, "nosize.mtx", "%%MatrixMarket matrix coordinate real general\n% only comments\n"), ErrInput, "no size line"},
		{testfile.Write(t, dir, "badentry.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n9 1 1\n"), ErrPipeline, "badentry.mtx"},
	} {
		_, err := Load(ctx, c.in, filepath.Join(t.TempDir(), "w"), Options{Shards: 2})
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %.300v, want %v and %q", c.in, err, c.kind, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Load(cctx, file, filepath.Join(t.TempDir(), "w"), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func writeTriplets(t *testing.T, name string, p *formats.Triplets) {
	t.Helper()
	testfile.WriteWith(t, name, func(w io.Writer) error { return mtx.WriteTriplets(w, p) })
}

// TestIO: the runner's counters of bytes read and written per pass
// equal what each pass reads by construction, which is the model of
// docs/distributed.md ("Bytes moved per iteration"): every shard of a
// thresholds pass reads its own rows of its factor (U for a row shard)
// and the whole other one; of a gradient pass those and both threshold
// vectors; of a trial, on a row shard those of U, V, Ut, Vt and the
// thresholds, on a column shard those of Ut and Vt. Φ is
// read once per shard when the cache holds it, at every pass when it is
// off.
func TestIO(t *testing.T) {
	in, file := instance(t, t.TempDir(), synth.Config{D1: 200, D2: 150, Rank: 2, Alpha: 0.05, P: 0.4, Seed: 13})
	ctx := context.Background()
	const r, nr, nc = 2, 3, 3
	s := rpca.Settings{Rank: r, Alpha: 0.05, Seed: 1, Stop: rpca.Stop{MaxIter: 3}}
	mb := func(rows, cols int) int64 { return int64(len(matrixMagic) + 16 + 8*rows*cols) }
	d1, d2 := in.Obs.Dims()
	for _, cache := range []int64{0, -1} {
		st, err := Load(ctx, file, filepath.Join(t.TempDir(), "work"), Options{Shards: nr, CacheBytes: cache})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (&gd.Method{}).SolveDistributed(ctx, st, s); err != nil {
			t.Fatal(err)
		}
		io := st.IO()
		var rowSlices, colSlices int64 // a shard's own rows of its factor
		var rowTrials, colTrials int64 // the trial's outputs, which hold its thresholds of T
		for _, sh := range st.rows {
			rowSlices += mb(sh.lines, r)
			rowTrials += mb(sh.lines, 2)
		}
		for _, sh := range st.cols {
			colSlices += mb(sh.lines, r)
			colTrials += mb(sh.lines, 1)
		}
		// Each shard reads its slice of its own factor; the files every
		// shard of a side reads whole (the other factor, the thresholds)
		// are read once a pipeline by the one worker process.
		uv := rowSlices + colSlices + mb(d2, r) + mb(d1, r)
		thr := mb(d1, 1) + mb(d2, 1)
		per := map[string]int64{ // broadcast bytes per pipeline of a pass
			passThresholds: uv,
			passGradients:  uv + thr,
			// The trial, with the thresholds at (Ut, Vt) on the column
			// shards; then in the same pipeline the gradients there, from
			// the slices of (Ut, Vt) again, the whole factors already read
			// and the thresholds from the trial's outputs.
			passTrial: 2*(rowSlices+mb(d2, r)) + thr + colSlices + mb(d1, r) +
				rowSlices + colSlices + rowTrials + colTrials,
		}
		for pass, want := range per {
			got := io[pass]
			if got.Pipelines == 0 || got.Unmeasured > 0 || got.BroadcastBytes != int64(got.Pipelines)*want {
				t.Errorf("cache %d, pass %s: %+v; want %d broadcast bytes per pipeline", cache, pass, got, want)
			}
			if got.PeakConcurrency < 1 || got.PeakConcurrency > max(nr, nc) {
				t.Errorf("cache %d, pass %s: %d shards at once, want 1 to %d", cache, pass, got.PeakConcurrency, max(nr, nc))
			}
		}
		var shardFiles, phi int64
		for _, sh := range append(slices.Clone(st.rows), st.cols...) {
			shardFiles += shardHeaderSize + 8*int64(sh.lines+1) + 12*int64(sh.nnz)
		}
		pipelinesOverAll := 0 // passes over both shardings read Φ twice
		for pass, c := range io {
			phi += c.PhiBytes
			switch pass {
			case passTrial, passValues:
			default:
				pipelinesOverAll += c.Pipelines
			}
		}
		t.Logf("cache %d: %v; shard files %d bytes", cache, io, shardFiles)
		if cache == 0 && phi != shardFiles {
			t.Errorf("cached: Φ read %d bytes, want each shard once: %d", phi, shardFiles)
		}
		if cache < 0 && phi <= int64(pipelinesOverAll-1)*shardFiles/2 {
			t.Errorf("no cache: Φ read %d bytes over %d pipelines; want the shards at every pass", phi, pipelinesOverAll)
		}
	}
}

// TestShardCache: the cache keeps shards within its bound, dropping the
// least recently used; a shard larger than the bound is read every time.
func TestShardCache(t *testing.T) {
	_, file := instance(t, t.TempDir(), synth.Config{D1: 60, D2: 50, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 3})
	ctx := context.Background()
	st, err := Load(ctx, file, filepath.Join(t.TempDir(), "w"), Options{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, b := st.rows[0].path, st.rows[1].path
	sa, err := readShard(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := readShard(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	bound := max(shardBytes(sa), shardBytes(sb)) // room for one
	c := &lruCache{}
	for k, step := range []struct {
		path string
		miss bool
	}{{a, true}, {a, false}, {b, true}, {a, true}, {a, false}} {
		_, n, err := c.get(ctx, step.path, bound)
		if err != nil || (n > 0) != step.miss || c.bytes > bound {
			t.Fatalf("step %d: read %d bytes (miss %v), cache %d of %d bytes, %v", k, n, step.miss, c.bytes, bound, err)
		}
	}
	small := &lruCache{}
	for range 2 {
		if _, n, err := small.get(ctx, a, shardBytes(sa)-1); err != nil || n == 0 || small.bytes != 0 {
			t.Fatalf("a shard above the bound: read %d bytes, cache %d bytes, %v", n, small.bytes, err)
		}
	}
}

// TestCheckpointFiles: the newest checkpoint that decodes is taken, a
// damaged newer one is passed over, older ones are removed when a new
// one is written, and a work directory holding only damaged ones is an
// error; Open refuses a damaged manifest and a directory without one.
func TestCheckpointFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if c, err := LatestCheckpoint(ctx, dir); c != nil || err != nil {
		t.Fatalf("empty directory: %v, %v", c, err)
	}
	for it := range 3 {
		if err := SaveCheckpoint(ctx, dir, &gd.Checkpoint{Iteration: it, U: mat.NewDense(2, 1, []float64{1, 2}), V: mat.NewDense(2, 1, []float64{3, 4})}); err != nil {
			t.Fatal(err)
		}
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.gob")); len(names) != 1 {
		t.Errorf("after three saves: %v", names)
	}
	damaged := filepath.Join(dir, "checkpoint-000003.gob")
	if err := os.WriteFile(damaged, []byte("not a gob"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := LatestCheckpoint(ctx, dir); err != nil || c == nil || c.Iteration != 2 || c.U.At(1, 0) != 2 {
		t.Errorf("with a damaged newest: %+v, %v", c, err)
	}
	os.Remove(filepath.Join(dir, "checkpoint-000002.gob"))
	if c, err := LatestCheckpoint(ctx, dir); c != nil || !errors.Is(err, errCorrupt) {
		t.Errorf("only a damaged one: %v, %v", c, err)
	}
	if _, err := Open(ctx, "", dir, Options{}); !errors.Is(err, ErrNoStore) {
		t.Errorf("no manifest: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifestName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, "", dir, Options{}); !errors.Is(err, errCorrupt) {
		t.Errorf("damaged manifest: %v", err)
	}
}

// TestSetFrame: a frame that is not a finite location and a positive,
// finite scale is refused and leaves the store as it was; NormY in a
// frame is the norm of (y − c)/scale over the observed entries, formed
// here from the file's values, at an offset of 1e6 (where the shards'
// headers keep it free of cancellation, to the rounding of their means);
// SetFrame(0, 1) restores Y.
func TestSetFrame(t *testing.T) {
	ctx := context.Background()
	in, file := instance(t, t.TempDir(), synth.Config{D1: 40, D2: 30, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 17})
	const c = 1e6
	shifted := make([]float64, 0, in.Obs.Len())
	in.Obs.Do(func(_, _ int, v float64) { shifted = append(shifted, v+c) })
	obs, err := in.Obs.WithValues(shifted)
	if err != nil {
		t.Fatal(err)
	}
	if err := mtx.WriteFile(file, obs); err != nil {
		t.Fatal(err)
	}
	st, err := Load(ctx, file, filepath.Join(t.TempDir(), "work"), Options{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	norm := func(loc, scale float64) float64 {
		ss := 0.0
		obs.Do(func(_, _ int, v float64) { ss += ((v - loc) / scale) * ((v - loc) / scale) })
		return math.Sqrt(ss)
	}
	// The shards' means carry the rounding of values near 1e6 (δ ≈ 1e-10),
	// and the framed norm leaves out the deviations' cross term with the
	// offset, 2n·δ·(mean − c): a few 1e-11 of the norm here.
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	if got, want := st.NormY(), norm(0, 1); !near(got, want) {
		t.Fatalf("NormY %.17g, want %.17g", got, want)
	}
	for _, bad := range [][2]float64{{math.NaN(), 1}, {math.Inf(1), 1}, {0, 0}, {0, -2}, {0, math.Inf(1)}, {0, math.NaN()}} {
		if err := st.SetFrame(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("SetFrame(%v, %v) accepted", bad[0], bad[1])
		}
		if got, want := st.NormY(), norm(0, 1); !near(got, want) {
			t.Errorf("after SetFrame(%v, %v) was refused, NormY %.17g, want Y's %.17g", bad[0], bad[1], got, want)
		}
	}
	if err := st.SetFrame(ctx, c, 0.25); err != nil {
		t.Fatal(err)
	}
	if got, want := st.NormY(), norm(c, 0.25); !near(got, want) {
		t.Errorf("framed NormY %.17g, want %.17g", got, want)
	}
	if err := st.SetFrame(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := st.NormY(), norm(0, 1); !near(got, want) {
		t.Errorf("restored NormY %.17g, want %.17g", got, want)
	}
}
