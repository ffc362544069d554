// Package rpcabeam runs Algorithm 2 of Yi, Park, Chen and Caramanis (robust
// PCA from partial observations by gradient descent) on Apache Beam.
//
// The observed entries Φ are loaded once, by two pipelines, into shard
// files in a work directory: by blocks of complete rows and by blocks of
// complete columns (one shuffle, through part files). After that Φ never
// moves: every pass of the algorithm runs on the shard files as the
// elements of a pipeline (a trial and the gradients after it share
// one), and the worker that processes a shard reads only the broadcast
// files (the d×r factors, the per-line thresholds of T, an operand of the
// initial SVD) and writes one small output per shard. [Store] is the
// [distributed.Store] those passes make up, so that the driver,
// gd.Method.SolveDistributed, runs the same parameters, initial SVD, update
// and step rule, and stopping rules as the single-machine solver.
// docs/distributed.md has the design and its costs.
package rpcabeam

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local work directories
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/distributed"
)

// Runner runs a pipeline to its end and returns its result, whose
// metrics give the passes' counters (nil when the runner has none).
type Runner func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error)

// Prism runs a pipeline on Beam's in-process Prism runner. A pipeline
// there is not cut short when ctx is cancelled (see uninterrupted).
func Prism(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
	return uninterrupted(ctx, p, prism.Execute)
}

// Named runs pipelines on the registered Beam runner name (prism, flink,
// spark, dataflow, …), configured by Beam's own flags. On prism a
// pipeline is not cut short when ctx is cancelled (see uninterrupted);
// on the others it is cancelled with ctx.
func Named(name string) Runner {
	run := func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
		return beam.Run(ctx, name, p)
	}
	if name == "prism" {
		return func(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
			return uninterrupted(ctx, p, run)
		}
	}
	return run
}

// uninterrupted runs a pipeline to its end even when ctx is cancelled
// while it runs, and then returns ctx's error, so that the caller starts
// no other. Prism (v2.77) can panic when a job is cancelled as it starts
// its workers, which ends the whole process with exit status 2 and a
// stack trace instead of the command's own message; a pipeline is one
// pass over the shards or one step of the load, so letting it finish
// delays the stop by that much. (rpca-beam stops at once on a second
// interrupt.)
func uninterrupted(ctx context.Context, p *beam.Pipeline, run Runner) (beam.PipelineResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := run(context.WithoutCancel(ctx), p)
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	return res, err
}

// Options configure Load.
type Options struct {
	// Shards is the number of row blocks and of column blocks Φ is cut
	// into (0: 8): the units of work of every pass, of which the runner
	// runs as many at once as it chooses (in-process Prism: one); a
	// shard's lines are split over the cores of the worker process.
	Shards int
	// Runner runs the pipelines (nil: Prism).
	Runner Runner
	// CacheBytes bounds the shards a worker process keeps in memory
	// between passes (0: DefaultCacheBytes; negative: none kept, every
	// pass reads its shards again).
	CacheBytes int64
}

// Store is Φ in shard files of a work directory, and the passes of
// Algorithm 2 over them: an [distributed.Store].
type Store struct {
	dir         string
	id          string // names this load's shards (rows-ID-NNNNN), so that no cache outlives it
	run         Runner
	d1, d2, nnz int
	rows, cols  []shardInfo
	fr          frame   // how every pass sees the values (SetFrame)
	c           float64 // location of SetInit
	pipelines   int
	nonce       uint64              // random, so that pipelines of two runs have different names
	cacheBytes  int64               // bound of a worker's shard cache
	io          map[string]*IOStats // the passes' counters, by pass
	// kRow, kCol are the counts of T of the last Evaluate (0 before
	// one); trialU, trialV the factors of the last Trial when it ran
	// after an Evaluate and succeeded (nil otherwise), and trialThr the
	// row and column thresholds of T it found there: an Evaluate at the
	// same factors takes them, and the gradients that Trial formed there
	// (passTrialGradients), instead of passes of its own.
	kRow, kCol     int
	evaluated      bool
	trialU, trialV *mat.Dense
	trialThr       [2]*mat.Dense
}

// shardInfo is what the driver knows of a shard: its header.
type shardInfo struct {
	path         string
	first, lines int
	nnz          int // entries
	mean, devMax float64
	devSS        float64
	offset       int // row shards: position of its first entry in Φ's row-major order
}

var (
	_ distributed.ALSStore = (*Store)(nil)
	_ distributed.Framer   = (*Store)(nil)
)

// Load reads the Matrix Market coordinate file, or the files matching the
// glob in (each a coordinate file of the same size holding some of the
// entries), and writes Φ into dir (created when local) as row and column
// shards, with one pipeline, and a manifest of the load for Open.
func Load(ctx context.Context, in, dir string, o Options) (*Store, error) {
	st := newStore(dir, o)
	st.id = strconv.FormatInt(time.Now().UnixNano(), 36)
	shards := cmp.Or(o.Shards, 8)
	if shards < 1 {
		return nil, fmt.Errorf("%w: %d shards", ErrInput, shards)
	}
	sized, err := inputs(ctx, in)
	if err != nil {
		return nil, err
	}
	files := make([]string, len(sized))
	for k, f := range sized {
		files[k] = f.Name
	}
	if st.d1, st.d2, _, err = readSize(ctx, files[0]); err != nil {
		return nil, err
	}
	if !strings.Contains(st.dir, "://") {
		if err := os.MkdirAll(st.dir, 0o755); err != nil {
			return nil, err
		}
	}
	rowsPer, colsPer := ceilDiv(st.d1, shards), ceilDiv(st.d2, shards)
	// Reshuffle breaks the fusion of each list with its work, so that the
	// files are read, and the blocks written, in parallel (one bundle
	// otherwise).
	elems := make([]string, len(files))
	for k, f := range files {
		elems[k] = fmt.Sprintf("%d %s", k, f)
	}
	p, s := beam.NewPipelineWithRoot()
	beam.ParDo0(s, &readFn{Dir: st.dir, ID: st.id, D1: st.d1, D2: st.d2, RowsPer: rowsPer, ColsPer: colsPer}, beam.Reshuffle(s, beam.CreateList(s, elems)))
	if err := st.runPipeline(ctx, p); err != nil {
		return nil, err
	}
	var blocks []string
	for b := range ceilDiv(st.d1, rowsPer) {
		blocks = append(blocks, fmt.Sprintf("rows %d", b))
	}
	for b := range ceilDiv(st.d2, colsPer) {
		blocks = append(blocks, fmt.Sprintf("cols %d", b))
	}
	p, s = beam.NewPipelineWithRoot()
	beam.ParDo0(s, &writeShardFn{Dir: st.dir, ID: st.id, D1: st.d1, D2: st.d2, RowsPer: rowsPer, ColsPer: colsPer}, beam.Reshuffle(s, beam.CreateList(s, blocks)))
	if err := st.runPipeline(ctx, p); err != nil {
		return nil, err
	}
	if err := st.readShards(ctx); err != nil {
		return nil, err
	}
	return st, st.writeManifest(ctx, in, sized, shards)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// newStore is a store on dir with o's runner and cache bound.
func newStore(dir string, o Options) *Store {
	st := &Store{dir: strings.TrimSuffix(dir, "/"), run: o.Runner, cacheBytes: o.CacheBytes, io: map[string]*IOStats{}, nonce: rand.Uint64()}
	if st.run == nil {
		st.run = Prism
	}
	switch {
	case st.cacheBytes == 0:
		st.cacheBytes = DefaultCacheBytes
	case st.cacheBytes < 0:
		st.cacheBytes = 0
	}
	return st
}

// readShards reads the headers of the shards Load wrote and checks that
// every row and column has an entry.
func (st *Store) readShards(ctx context.Context) error {
	var emptyRows, emptyCols, nnzCols int
	for _, col := range []bool{false, true} {
		n := st.d1
		if col {
			n = st.d2
		}
		covered := 0
		names, err := list(ctx, shardName(st.dir, st.id, col, -1))
		if err != nil {
			return err
		}
		slices.Sort(names) // by block, which is by first line
		for _, name := range names {
			h, nnz, err := readShardHeader(ctx, name)
			if err != nil {
				return err
			}
			info := shardInfo{path: name, first: h.First, lines: h.Lines, nnz: nnz, mean: h.Mean, devMax: h.DevMax, devSS: h.DevSS}
			covered += h.Lines - h.Empty
			if col {
				st.cols = append(st.cols, info)
				nnzCols += nnz
			} else {
				info.offset = st.nnz
				st.rows = append(st.rows, info)
				st.nnz += nnz
			}
		}
		if col {
			emptyCols = n - covered
		} else {
			emptyRows = n - covered
		}
	}
	switch {
	case st.nnz == 0:
		return fmt.Errorf("%w: no observed entry", ErrInput)
	case nnzCols != st.nnz:
		return fmt.Errorf("%w: the row shards hold %d entries, the column shards %d", errCorrupt, st.nnz, nnzCols)
	case emptyRows > 0 || emptyCols > 0:
		return fmt.Errorf("%w: %d rows and %d columns have no observed entry; the low-rank part is not identifiable there (drop them or observe more entries)", ErrInput, emptyRows, emptyCols)
	}
	return nil
}

func (st *Store) runPipeline(ctx context.Context, p *beam.Pipeline) error {
	_, err := st.runResult(ctx, p)
	return err
}

func (st *Store) runResult(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
	st.pipelines++
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := st.run(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", ErrPipeline, err)
	}
	return res, nil
}

// runPass runs the pipeline of one pass and adds its counters to the
// pass's IOStats.
func (st *Store) runPass(ctx context.Context, p *beam.Pipeline, pass string) error {
	res, err := st.runResult(ctx, p)
	if err != nil {
		return err
	}
	io := st.io[pass]
	if io == nil {
		io = &IOStats{}
		st.io[pass] = io
	}
	io.Pipelines++
	if res == nil {
		io.Unmeasured++
		return nil
	}
	for _, d := range res.Metrics().AllMetrics().Distributions() {
		if d.Namespace() == counterNamespace && d.Name() == counterConcurrency {
			io.PeakConcurrency = max(io.PeakConcurrency, d.Result().Max)
		}
	}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Namespace() != counterNamespace {
			continue
		}
		switch c.Name() {
		case counterPhi:
			io.PhiBytes += c.Result()
		case counterBroadcast:
			io.BroadcastBytes += c.Result()
		case counterOutput:
			io.OutputBytes += c.Result()
		}
	}
	return nil
}

// IOStats are the bytes the workers of a pass read and wrote, summed over
// its pipelines, from the runner's metrics.
type IOStats struct {
	Pipelines      int   `json:"pipelines"`
	Unmeasured     int   `json:"unmeasured,omitempty"` // pipelines whose runner gave no metrics
	PhiBytes       int64 `json:"phi_bytes"`            // shard files read (not from a worker's cache)
	BroadcastBytes int64 `json:"broadcast_bytes"`      // factors, thresholds, operands and requests read
	OutputBytes    int64 `json:"output_bytes"`         // one output per shard
	// PeakConcurrency is the most shards one worker process worked on at
	// once in any of the pass's pipelines: the pass's concurrency on
	// in-process Prism, a lower bound on it with separate workers.
	PeakConcurrency int64 `json:"peak_concurrency"`
}

// IO returns the counters of every pass run so far, by pass name.
func (st *Store) IO() map[string]IOStats {
	out := make(map[string]IOStats, len(st.io))
	for k, v := range st.io {
		out[k] = *v
	}
	return out
}

// ErrPipeline is wrapped by the errors of a pipeline that failed. The
// error of a worker (a bad input file, a duplicate entry) reaches the
// driver as text within the runner's error.
var ErrPipeline = errors.New("rpcabeam: pipeline failed")

// Pipelines returns the number of pipelines run so far.
func (st *Store) Pipelines() int { return st.pipelines }

// Dims returns d1, d2 and |Φ|.
func (st *Store) Dims() (int, int, int) { return st.d1, st.d2, st.nnz }

// NormY returns ‖Π_Φ(Y − c)/σ‖_F for the frame (c, σ) of SetFrame
// (Y itself before one), from the shards' means and deviations.
func (st *Store) NormY() float64 {
	scale := cmp.Or(st.fr.Scale, 1)
	ss := 0.0
	for _, s := range st.rows {
		dev, off := s.devMax/scale, st.fr.value(s.mean)
		ss += dev*dev*s.devSS + float64(s.nnz)*off*off
	}
	return math.Sqrt(ss)
}

// SetFrame makes every later pass, Values and NormY see the values as
// (y − c)/scale ([distributed.Framer]); SetFrame(0, 1) restores Y.
func (st *Store) SetFrame(_ context.Context, c, scale float64) error {
	if math.IsNaN(c) || math.IsInf(c, 0) || !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("rpcabeam: frame with location %v and scale %v", c, scale)
	}
	st.fr = frame{Loc: c, Scale: scale}
	st.trialU, st.trialV, st.evaluated = nil, nil, false
	return nil
}

// prepare sets the fields of fn that every pass of the store's next
// pipeline shares.
func (st *Store) prepare(fn *passFn) {
	fn.Dir, fn.D1, fn.D2, fn.CacheBytes, fn.Frame = st.dir, st.d1, st.d2, st.cacheBytes, st.fr
	fn.Pipeline = fmt.Sprintf("%s-%d-%d", st.dir, st.nonce, st.pipelines)
}

func shardPaths(shards []shardInfo) []string {
	paths := make([]string, len(shards))
	for k, s := range shards {
		paths[k] = s.path
	}
	return paths
}

// pass runs fn on the shards, one pipeline.
func (st *Store) pass(ctx context.Context, fn passFn, shards []shardInfo) error {
	st.prepare(&fn)
	p, s := beam.NewPipelineWithRoot()
	ignore(s, runOn(s, &fn, beam.CreateList(s, shardPaths(shards))))
	return st.runPass(ctx, p, fn.Pass)
}

// passThen runs first on its shards and then, when first is over on
// every shard, then on its own, in one pipeline.
func (st *Store) passThen(ctx context.Context, first passFn, firstShards []shardInfo, then passFn, thenShards []shardInfo) error {
	st.prepare(&first)
	st.prepare(&then)
	p, s := beam.NewPipelineWithRoot()
	done := runOn(s, &first, beam.CreateList(s, shardPaths(firstShards)))
	// The barrier: the group of every path the first pass emits exists
	// only once the first pass is over everywhere; it releases the
	// second pass's shards.
	all := beam.GroupByKey(s, beam.AddFixedKey(s, done))
	next := beam.ParDo(s, &releaseFn{Paths: shardPaths(thenShards)}, all)
	ignore(s, runOn(s, &then, next))
	return st.runPass(ctx, p, first.Pass)
}

// runOn applies the pass fn to the shard paths. Reshuffle breaks the
// fusion of the paths with the pass, so that the runner spreads the
// shards over its workers; fused, they run one after another in one
// bundle.
func runOn(s beam.Scope, fn *passFn, paths beam.PCollection) beam.PCollection {
	return beam.ParDo(s, fn, beam.Reshuffle(s, paths))
}

// ignore sends the paths a pass emits to a stage of their own (Prism
// elides a reshuffle, or a collection, that nothing reads), so that the
// pass's stage has an output: in-process Prism's loop spins while a
// stage without one runs, and takes a core from the shards' work.
func ignore(s beam.Scope, done beam.PCollection) {
	beam.ParDo0(s, ignorePath, beam.Reshuffle(s, done))
}

// releaseFn emits its paths once, when it is given the group of every
// path a first pass emitted (Store.passThen).
type releaseFn struct {
	Paths []string
}

func (f *releaseFn) ProcessElement(_ int, _ func(*string) bool, emit func(string)) {
	for _, p := range f.Paths {
		emit(p)
	}
}

// trialShards describes every shard for passTrialGradients ("R first
// lines path", "C …").
func (st *Store) trialShards() []string {
	var out []string
	for _, side := range []struct {
		tag    string
		shards []shardInfo
	}{{"R", st.rows}, {"C", st.cols}} {
		for _, sh := range side.shards {
			out = append(out, fmt.Sprintf("%s %d %d %s", side.tag, sh.first, sh.lines, sh.path))
		}
	}
	return out
}

// gather stacks the outputs of pass on the shards into dst (lines ×
// cols, rows of dst by line); dst nil allocates n × cols.
func (st *Store) gather(ctx context.Context, pass string, shards []shardInfo, dst *mat.Dense, n, cols int) (*mat.Dense, error) {
	if dst == nil {
		dst = mat.NewDense(n, cols, nil)
	}
	for _, s := range shards {
		out, err := readMatrix(ctx, outName(st.dir, pass, s.path), s.lines, cols)
		if err != nil {
			return nil, err
		}
		dst.Slice(s.first, s.first+s.lines, 0, cols).(*mat.Dense).Copy(out)
	}
	return dst, nil
}

// Values returns the values at positions of Φ in row-major order.
func (st *Store) Values(ctx context.Context, positions []int) ([]float64, error) {
	var used []shardInfo
	var counts []int
	at := 0
	for _, s := range st.rows {
		var local []float64
		for at < len(positions) && positions[at] < s.offset+s.nnz {
			if positions[at] < s.offset || (at > 0 && positions[at] < positions[at-1]) {
				return nil, fmt.Errorf("rpcabeam: positions not increasing or out of range at %d", positions[at])
			}
			local = append(local, float64(positions[at]-s.offset))
			at++
		}
		if len(local) == 0 {
			continue
		}
		if err := writeMatrix(ctx, outName(st.dir, "pos", s.path), vectorMatrix(local)); err != nil {
			return nil, err
		}
		used, counts = append(used, s), append(counts, len(local))
	}
	if at < len(positions) {
		return nil, fmt.Errorf("rpcabeam: position %d out of range (|Φ| = %d)", positions[at], st.nnz)
	}
	if err := st.pass(ctx, passFn{Pass: passValues}, used); err != nil {
		return nil, err
	}
	out := make([]float64, 0, len(positions))
	for k, s := range used {
		v, err := readVector(ctx, outName(st.dir, passValues, s.path), counts[k])
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}

// thresholds runs a thresholds pass on all shards and writes the row and
// column thresholds into the files fr and fc.
func (st *Store) thresholds(ctx context.Context, fn passFn, fr, fc string) error {
	if err := st.pass(ctx, fn, append(slices.Clone(st.rows), st.cols...)); err != nil {
		return err
	}
	tr, err := st.gather(ctx, fn.Pass, st.rows, nil, st.d1, 1)
	if err != nil {
		return err
	}
	tc, err := st.gather(ctx, fn.Pass, st.cols, nil, st.d2, 1)
	if err != nil {
		return err
	}
	if err := writeMatrix(ctx, st.file(fr), tr); err != nil {
		return err
	}
	return writeMatrix(ctx, st.file(fc), tc)
}

func (st *Store) file(name string) string { return st.dir + "/" + name }

// SetInit computes the thresholds of T on Π_Φ(Y − c) (one pass over both
// shardings) for the products MulInit and MulInitTrans.
func (st *Store) SetInit(ctx context.Context, c float64, kRow, kCol int) error {
	st.c = c
	return st.thresholds(ctx, passFn{Pass: passInitThresholds, C: c, KRow: kRow, KCol: kCol}, fileRowThr0, fileColThr0)
}

// MulInit sets dst = X·x, one pass over the row shards.
func (st *Store) MulInit(ctx context.Context, dst, x *mat.Dense) error {
	return st.mulInit(ctx, dst, x, st.rows, st.d1)
}

// MulInitTrans sets dst = Xᵀ·x, one pass over the column shards.
func (st *Store) MulInitTrans(ctx context.Context, dst, x *mat.Dense) error {
	return st.mulInit(ctx, dst, x, st.cols, st.d2)
}

func (st *Store) mulInit(ctx context.Context, dst, x *mat.Dense, shards []shardInfo, n int) error {
	if err := writeMatrix(ctx, st.file(fileOperand), x); err != nil {
		return err
	}
	if err := st.pass(ctx, passFn{Pass: passMulInit, C: st.c}, shards); err != nil {
		return err
	}
	_, k := x.Dims()
	_, err := st.gather(ctx, passMulInit, shards, dst, n, k)
	return err
}

// Evaluate is two pipelines: the thresholds of T on R = Π_Φ(Y − UVᵀ) over
// both shardings, then E·V with ‖E‖² on the row shards and Eᵀ·U on the
// column shards.
func (st *Store) Evaluate(ctx context.Context, u, v, gu, gv *mat.Dense, kRow, kCol int) (float64, error) {
	if err := st.writeFactors(ctx, fileU, fileV, u, v); err != nil {
		return 0, err
	}
	grad := passGradients
	if st.trialU != nil && st.evaluated && kRow == st.kRow && kCol == st.kCol && mat.Equal(u, st.trialU) && mat.Equal(v, st.trialV) {
		// The accepted trial's thresholds and gradients (see Trial);
		// the thresholds go to their files for the next trial's passes.
		if err := writeMatrix(ctx, st.file(fileRowThr), st.trialThr[0]); err != nil {
			return 0, err
		}
		if err := writeMatrix(ctx, st.file(fileColThr), st.trialThr[1]); err != nil {
			return 0, err
		}
		grad = passTrialGradients
	} else if err := st.thresholds(ctx, passFn{Pass: passThresholds, KRow: kRow, KCol: kCol}, fileRowThr, fileColThr); err != nil {
		return 0, err
	}
	st.kRow, st.kCol, st.evaluated, st.trialU, st.trialV = kRow, kCol, true, nil, nil
	if grad == passGradients {
		shards := append(slices.Clone(st.rows), st.cols...)
		if gu == nil { // the residual only: the row shards' last column
			shards = st.rows
		}
		if err := st.pass(ctx, passFn{Pass: passGradients}, shards); err != nil {
			return 0, err
		}
	}
	_, r := u.Dims()
	g, err := st.gather(ctx, grad, st.rows, nil, st.d1, r+1)
	if err != nil {
		return 0, err
	}
	ss := mat.Sum(g.ColView(r))
	if gu == nil {
		return ss, nil
	}
	gu.Copy(g.Slice(0, st.d1, 0, r))
	_, err = st.gather(ctx, grad, st.cols, gv, st.d2, r)
	return ss, err
}

// SolveLines is one pipeline over the row shards (the column shards with
// cols), each fitting its lines to the rows of x
// ([distributed.ALSStore]).
func (st *Store) SolveLines(ctx context.Context, dst, x *mat.Dense, cols bool, ridge float64) error {
	if err := writeMatrix(ctx, st.file(fileALS), x); err != nil {
		return err
	}
	shards, n := st.rows, st.d1
	if cols {
		shards, n = st.cols, st.d2
	}
	if err := st.pass(ctx, passFn{Pass: passALS, Ridge: ridge}, shards); err != nil {
		return err
	}
	_, r := x.Dims()
	_, err := st.gather(ctx, passALS, shards, dst, n, r)
	return err
}

// writeFactors writes u and v whole into the files fu and fv, and each
// shard's own rows of them into its slice file (sliceName): a shard reads
// its slice of its own factor and the whole other one.
func (st *Store) writeFactors(ctx context.Context, fu, fv string, u, v *mat.Dense) error {
	for _, side := range []struct {
		name   string
		m      *mat.Dense
		shards []shardInfo
	}{{fu, u, st.rows}, {fv, v, st.cols}} {
		if err := writeMatrix(ctx, st.file(side.name), side.m); err != nil {
			return err
		}
		_, r := side.m.Dims()
		for _, sh := range side.shards {
			rows := side.m.Slice(sh.first, sh.first+sh.lines, 0, r).(*mat.Dense)
			if err := writeMatrix(ctx, sliceName(st.dir, side.name, sh.path), rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// Trial is one pass over both shardings that also finds the thresholds
// of T at (u, v), with the last Evaluate's counts: when the step is
// accepted, the next Evaluate is at (u, v) and takes them instead of a
// thresholds pass (two pipelines an iteration instead of three).
func (st *Store) Trial(ctx context.Context, u, v *mat.Dense) (float64, error) {
	if err := st.writeFactors(ctx, fileUt, fileVt, u, v); err != nil {
		return 0, err
	}
	fused := st.evaluated
	trial := passFn{Pass: passTrial, KRow: st.kRow, KCol: st.kCol, Fused: fused}
	st.trialU, st.trialV = nil, nil // this trial's outputs replace the last one's
	if fused {
		// The gradients at (u, v) too, which the next Evaluate takes
		// when the step is accepted: one pipeline an iteration.
		all := append(slices.Clone(st.rows), st.cols...)
		grad := passFn{Pass: passTrialGradients, KRow: st.kRow, KCol: st.kCol, TrialShards: st.trialShards()}
		if err := st.passThen(ctx, trial, all, grad, all); err != nil {
			return 0, err
		}
	} else if err := st.pass(ctx, trial, st.rows); err != nil {
		return 0, err
	}
	cols := 1
	if fused {
		cols = 2
	}
	t, err := st.gather(ctx, passTrial, st.rows, nil, st.d1, cols)
	if err != nil {
		return 0, err
	}
	sum := mat.Sum(t.ColView(0))
	if fused {
		tc, err := st.gather(ctx, passTrial, st.cols, nil, st.d2, 1)
		if err != nil {
			return 0, err
		}
		st.trialThr = [2]*mat.Dense{mat.DenseCopyOf(t.ColView(1)), tc}
		st.trialU, st.trialV = mat.DenseCopyOf(u), mat.DenseCopyOf(v)
	}
	return sum, nil
}
