package rpcabeam

import (
	"context"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/robust"
)

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&passFn{})
	register.Emitter1[string]()
	register.Function1x0(ignorePath)
	register.DoFn3x0[int, func(*string) bool, func(string)](&releaseFn{})
	register.Iter1[string]()
}

// ignorePath reads the path a pass emits for a shard it finished, and
// drops it.
func ignorePath(string) {}

// The passes over Φ, each run in a pipeline whose elements are shard
// files (one pass a pipeline, but the trial and the gradients at its
// factors, Store.passThen); a worker reads its shard (cached for the life of the process),
// the broadcast files it needs (factors, thresholds, an operand) and
// writes one output file per shard, named pass-SHARD.
const (
	passInitThresholds = "thr0"  // per line: LineThreshold of |y − c|
	passThresholds     = "thr"   // per line: LineThreshold of |y − U_i·V_j|
	passMulInit        = "mul"   // row shards: X·x; column shards: Xᵀ·x
	passGradients      = "grad"  // row shards: E·V and ‖E‖² per row; column shards: Eᵀ·U
	passTrialGradients = "gradt" // passGradients at the trial's factors, with the thresholds of T it found
	passTrial          = "trial" // row shards: Σ (y − Ut_i·Vt_j)² outside S, per row; with Fused, and the thresholds at (Ut, Vt) on both shardings
	passValues         = "val"   // row shards: the values at requested positions
	passALS            = "als"   // per line: the ridge least-squares fit outside S against fileALS's rows
)

// The broadcast files of a work directory.
const (
	fileU, fileV           = "U.mat", "V.mat"   // factors of Evaluate
	fileUt, fileVt         = "Ut.mat", "Vt.mat" // factors of Trial
	fileRowThr, fileColThr = "trow.mat", "tcol.mat"
	fileRowThr0            = "trow0.mat"
	fileColThr0            = "tcol0.mat"
	fileOperand            = "x.mat"
	fileALS                = "xals.mat" // the other factor of an ALS half-sweep
)

// passFn runs one pass on one shard. Its fields are the pass's scalars.
type passFn struct {
	Dir        string
	Pass       string
	D1, D2     int
	KRow, KCol int     // counts of T (thresholds passes)
	Frame      frame   // how every value is seen (Store.SetFrame)
	C          float64 // location c of T in the initialization, in the frame
	Ridge      float64 // λ of an ALS half-sweep
	CacheBytes int64   // the bound of the worker's shard cache (0: none kept)
	Fused      bool    // a trial that also gives the thresholds of T at (Ut, Vt)
	// Pipeline names the pipeline, unique to the run: the key of the
	// worker's broadcastCache.
	Pipeline string
	// TrialShards describes, for passTrialGradients, every shard whose
	// trial output holds thresholds of T ("R first lines path" for a row
	// shard, "C …" for a column shard).
	TrialShards []string

	read  int64  // broadcast bytes read by the element in progress
	shard string // its shard's path
}

// sliceName is the file of factor file name's rows (columns of Y for a
// column shard) that the lines of shard s own, e.g. U-rows-ID-00001.mat.
func sliceName(dir, name, s string) string {
	return dir + "/" + strings.TrimSuffix(name, ".mat") + "-" + path.Base(s) + ".mat"
}

// outName is the output file of pass on shard s.
func outName(dir, pass, s string) string { return dir + "/" + pass + "-" + path.Base(s) + ".mat" }

// The counters of the passes, in bytes: the shard files read (0 when a
// worker's cache has the shard), the broadcast files read (factors,
// thresholds, operands, requests) and the outputs written. Store sums
// them per pass from each pipeline's metrics ([Store.IO]).
var (
	phiBytes       = beam.NewCounter(counterNamespace, counterPhi)
	broadcastBytes = beam.NewCounter(counterNamespace, counterBroadcast)
	outputBytes    = beam.NewCounter(counterNamespace, counterOutput)
)

// concurrency records, as each shard's work starts, how many shards this
// process is working on (that one included): its maximum is the pass's
// concurrency when the workers are one process (in-process Prism), and
// each process's own when they are several.
var (
	concurrency = beam.NewDistribution(counterNamespace, counterConcurrency)
	active      atomic.Int64
)

const (
	counterNamespace   = "rpcabeam"
	counterPhi         = "phi_bytes"
	counterBroadcast   = "broadcast_bytes"
	counterOutput      = "output_bytes"
	counterConcurrency = "concurrent_shards"
)

// matrixBytes is the size of m's file (writeMatrix).
func matrixBytes(m *mat.Dense) int64 {
	r, c := m.Dims()
	return int64(len(matrixMagic) + 16 + 8*r*c)
}

// load reads a broadcast matrix (readMatrix) and counts its bytes.
func (f *passFn) load(ctx context.Context, name string, rows, cols int) (*mat.Dense, error) {
	m, err := readMatrix(ctx, f.Dir+"/"+name, rows, cols)
	if err == nil {
		f.read += matrixBytes(m)
	}
	return m, err
}

// loadShared reads a broadcast matrix that every shard of a side reads
// whole, through the worker's broadcastCache (sharedBuilt).
func (f *passFn) loadShared(ctx context.Context, name string, rows, cols int) (*mat.Dense, error) {
	m, err := f.sharedBuilt(ctx, name, func() (*mat.Dense, int64, error) {
		m, err := readMatrix(ctx, f.Dir+"/"+name, rows, cols)
		if err != nil {
			return nil, 0, err
		}
		return m, matrixBytes(m), nil
	})
	if err != nil {
		return nil, err
	}
	if r, c := m.Dims(); (rows >= 0 && r != rows) || (cols >= 0 && c != cols) {
		return nil, fmt.Errorf("%w %s/%s: %d×%d (want %d×%d)", errCorrupt, f.Dir, name, r, c, rows, cols)
	}
	return m, nil
}

// sharedBuilt returns the matrix that build forms (from one file or
// several, with the bytes it read) under the key name, through the
// worker's broadcastCache, and counts those bytes when this shard built
// it rather than shared another's.
func (f *passFn) sharedBuilt(ctx context.Context, name string, build func() (*mat.Dense, int64, error)) (*mat.Dense, error) {
	var n int64
	m, read, err := broadcastCache.get(ctx, f.Pipeline, f.Dir+"/"+name, func() (*mat.Dense, error) {
		m, bytes, err := build()
		n = bytes
		return m, err
	})
	if err != nil {
		return nil, err
	}
	if read {
		f.read += n
	}
	return m, nil
}

// loadVector reads a broadcast vector of n entries (shared, loadShared).
func (f *passFn) loadVector(ctx context.Context, name string, n int) ([]float64, error) {
	m, err := f.loadShared(ctx, name, n, 1)
	if err != nil {
		return nil, err
	}
	return m.RawMatrix().Data, nil
}

// ProcessElement runs the pass on the shard at shardPath and emits that
// path when the shard's output is written (see Store.pass for why).
func (f *passFn) ProcessElement(ctx context.Context, shardPath string, done func(string)) error {
	concurrency.Update(ctx, active.Add(1))
	defer active.Add(-1)
	s, miss, err := shardCache.get(ctx, shardPath, f.CacheBytes)
	if err != nil {
		return err
	}
	f.read, f.shard = 0, shardPath
	out, err := f.run(ctx, s, shardPath)
	if err != nil {
		return fmt.Errorf("pass %s on %s: %w", f.Pass, shardPath, err)
	}
	phiBytes.Inc(ctx, miss)
	broadcastBytes.Inc(ctx, f.read)
	if out != nil {
		outputBytes.Inc(ctx, matrixBytes(out))
	} else {
		outputBytes.Inc(ctx, matrixBytes(&mat.Dense{}))
	}
	if err := writeMatrix(ctx, outName(f.Dir, f.Pass, shardPath), out); err != nil {
		return err
	}
	done(shardPath)
	return nil
}

// loadOther reads the whole matrix of file name that has a row per line
// of the other side of s: d2 rows for a row shard, whose entries index
// columns, and d1 for a column shard.
func (f *passFn) loadOther(ctx context.Context, s *shard, name string) (*mat.Dense, error) {
	n := f.D2
	if s.Col {
		n = f.D1
	}
	return f.loadShared(ctx, name, n, -1)
}

// factors reads the factors of files fu (d1×r) and fv (d2×r) that the
// shard needs: the rows its lines own (own, row l for local line l, from
// the slice file of the shard), and the whole other factor (other, row j
// for line index j).
func (f *passFn) factors(ctx context.Context, s *shard, fu, fv string) (own, other *mat.Dense, err error) {
	ownName, otherName := fu, fv
	if s.Col {
		ownName, otherName = fv, fu
	}
	if own, err = f.load(ctx, path.Base(sliceName(f.Dir, ownName, f.shard)), s.Lines, -1); err != nil {
		return nil, nil, err
	}
	if other, err = f.loadOther(ctx, s, otherName); err != nil {
		return nil, nil, err
	}
	return own, other, nil
}

// thresholds reads the row and column thresholds of files fr, fc, in the
// order (own, other).
func (f *passFn) thresholds(ctx context.Context, s *shard, fr, fc string) (own, other []float64, err error) {
	tr, err := f.loadVector(ctx, fr, f.D1)
	if err != nil {
		return nil, nil, err
	}
	tc, err := f.loadVector(ctx, fc, f.D2)
	if err != nil {
		return nil, nil, err
	}
	if s.Col {
		return tc, tr, nil
	}
	return tr, tc, nil
}

// frame is how the passes see a value y of Y: (y − Loc)/Scale, formed as
// rpca.Solve's frame forms it, so that nothing overflows; the zero frame
// and {0, 1} see y itself.
type frame struct{ Loc, Scale float64 }

func (fr frame) value(y float64) float64 {
	if fr.identity() {
		return y
	}
	return robust.FrameValue(y, fr.Loc, fr.Scale)
}

func (fr frame) identity() bool { return fr.Loc == 0 && (fr.Scale == 1 || fr.Scale == 0) }

// residual sets res to y − own_l·other_j over local line l, y in the
// frame fr (own holds the shard's rows).
func residual(res []float64, s *shard, l int, fr frame, own, other *mat.Dense) []float64 {
	idx, val := s.line(l)
	res = res[:0]
	ol := own.RawRowView(l)
	o := other.RawMatrix()
	// The rows of other that the line reads are scattered over it: asking
	// for them all first lets their cache misses overlap.
	kernels.PrefetchRows(o.Data, idx, o.Stride, o.Cols)
	for k, j := range idx {
		res = append(res, fr.value(val[k])-kernels.DotPairs(ol, o.Data[int(j)*o.Stride:]))
	}
	return res
}

func (f *passFn) run(ctx context.Context, s *shard, shardPath string) (*mat.Dense, error) {
	k := f.KRow
	if s.Col {
		k = f.KCol
	}
	switch f.Pass {
	case passInitThresholds:
		out := make([]float64, s.Lines)
		err := forLines(ctx, s.Lines, func() func(int) error {
			var mags []float64
			return func(l int) error {
				_, val := s.line(l)
				mags = mags[:0]
				for _, y := range val {
					mags = append(mags, math.Abs(f.Frame.value(y)-f.C))
				}
				out[l] = gd.LineThreshold(mags, k)
				return nil
			}
		})
		return vectorMatrix(out), err
	case passThresholds:
		own, other, err := f.factors(ctx, s, fileU, fileV)
		if err != nil {
			return nil, err
		}
		return lineThresholds(ctx, s, k, f.Frame, own, other)
	case passMulInit:
		return f.mulInit(ctx, s)
	case passGradients:
		ev, err := f.lastEvaluation(ctx, s)
		if err != nil {
			return nil, err
		}
		return f.gradients(ctx, s, ev)
	case passTrialGradients:
		ev, err := f.trialEvaluation(ctx, s)
		if err != nil {
			return nil, err
		}
		return f.gradients(ctx, s, ev)
	case passTrial:
		return f.trial(ctx, s, k)
	case passValues:
		return f.values(ctx, s, shardPath)
	case passALS:
		return f.als(ctx, s)
	}
	return nil, fmt.Errorf("unknown pass %q", f.Pass)
}

// mulInit is X·x on a row shard (Xᵀ·x on a column shard), with X =
// Π_Φ(Y) and c in place of the entries of S_init.
func (f *passFn) mulInit(ctx context.Context, s *shard) (*mat.Dense, error) {
	x, err := f.loadOther(ctx, s, fileOperand)
	if err != nil {
		return nil, err
	}
	tOwn, tOther, err := f.thresholds(ctx, s, fileRowThr0, fileColThr0)
	if err != nil {
		return nil, err
	}
	_, kx := x.Dims()
	out := mat.NewDense(s.Lines, kx, nil)
	err = forLines(ctx, s.Lines, func() func(int) error {
		return func(l int) error {
			idx, val := s.line(l)
			ol := out.RawRowView(l)
			for q, j := range idx {
				y := f.Frame.value(val[q])
				if gd.InSparse(math.Abs(y-f.C), tOwn[s.First+l], tOther[j]) {
					y = f.C
				}
				for c, xv := range x.RawRowView(int(j)) {
					ol[c] += y * xv
				}
			}
			return nil
		}
	})
	return out, err
}

// evaluation is what the passes after an Evaluate read of it: the
// shard's rows of its factor and the other factor whole (U, V), and the
// thresholds of T, with which line sets the residuals R = y − U·Vᵀ of a
// line and S's support among them.
type evaluation struct {
	fr           frame
	own, other   *mat.Dense
	tOwn, tOther []float64
	res          []float64 // the residuals of the last line
	inS          []bool    // whether each is in S's support
}

// lastEvaluation reads the factors and thresholds of the last Evaluate.
func (f *passFn) lastEvaluation(ctx context.Context, s *shard) (*evaluation, error) {
	e := evaluation{fr: f.Frame}
	var err error
	if e.own, e.other, err = f.factors(ctx, s, fileU, fileV); err != nil {
		return nil, err
	}
	if e.tOwn, e.tOther, err = f.thresholds(ctx, s, fileRowThr, fileColThr); err != nil {
		return nil, err
	}
	return &e, nil
}

// trialEvaluation is lastEvaluation at the trial's factors (Ut, Vt),
// whose thresholds of T the trial pass of the same pipeline wrote into
// its outputs (the second column of a row shard's, the only one of a
// column shard's): the next evaluation when the step is accepted.
func (f *passFn) trialEvaluation(ctx context.Context, s *shard) (*evaluation, error) {
	e := evaluation{fr: f.Frame}
	var err error
	if e.own, e.other, err = f.factors(ctx, s, fileUt, fileVt); err != nil {
		return nil, err
	}
	var thr [2][]float64 // rows, columns
	for side, name := range []string{"trial-thresholds-rows", "trial-thresholds-cols"} {
		n := f.D1
		if side == 1 {
			n = f.D2
		}
		m, err := f.sharedBuilt(ctx, name, func() (*mat.Dense, int64, error) { return f.trialThresholds(ctx, side == 1, n) })
		if err != nil {
			return nil, err
		}
		thr[side] = m.RawMatrix().Data
	}
	e.tOwn, e.tOther = thr[0], thr[1]
	if s.Col {
		e.tOwn, e.tOther = thr[1], thr[0]
	}
	return &e, nil
}

// trialThresholds assembles the thresholds of T on one side (columns
// with col) from the trial outputs of the shards of f.TrialShards, and
// returns them with the bytes read.
func (f *passFn) trialThresholds(ctx context.Context, col bool, n int) (*mat.Dense, int64, error) {
	out := make([]float64, n)
	var read int64
	for _, desc := range f.TrialShards {
		f4 := strings.SplitN(desc, " ", 4) // the path may hold spaces
		if len(f4) != 4 || (f4[0] != "R" && f4[0] != "C") {
			return nil, 0, fmt.Errorf("rpcabeam: bad trial shard %q", desc)
		}
		side, shardPath := f4[0], f4[3]
		first, err1 := strconv.Atoi(f4[1])
		lines, err2 := strconv.Atoi(f4[2])
		if err1 != nil || err2 != nil {
			return nil, 0, fmt.Errorf("rpcabeam: bad trial shard %q", desc)
		}
		if (side == "C") != col {
			continue
		}
		if first < 0 || lines < 0 || first+lines > n {
			return nil, 0, fmt.Errorf("rpcabeam: trial shard %q outside %d lines", desc, n)
		}
		cols, c := 2, 1 // a row shard's output: the loss, then the threshold
		if col {
			cols, c = 1, 0
		}
		m, err := readMatrix(ctx, outName(f.Dir, passTrial, shardPath), lines, cols)
		if err != nil {
			return nil, 0, err
		}
		read += matrixBytes(m)
		mat.Col(out[first:first+lines], c, m)
	}
	return vectorMatrix(out), read, nil
}

// scratch returns a copy of e that shares its factors and thresholds and
// has its own res and inS, for one goroutine of [forLines].
func (e *evaluation) scratch() *evaluation {
	c := *e
	c.res, c.inS = nil, nil
	return &c
}

// line sets e.res and e.inS for local line l of s.
func (e *evaluation) line(s *shard, l int) {
	e.res = residual(e.res, s, l, e.fr, e.own, e.other)
	idx, _ := s.line(l)
	e.inS = e.inS[:0]
	for q, r := range e.res {
		e.inS = append(e.inS, gd.InSparse(math.Abs(r), e.tOwn[s.First+l], e.tOther[idx[q]]))
	}
}

// gradients is E·V (row shard) or Eᵀ·U (column shard) with E = R − T(R),
// R = Π_Φ(Y − UVᵀ); a row shard adds ‖E‖² of each row as a last column.
func (f *passFn) gradients(ctx context.Context, s *shard, ev *evaluation) (*mat.Dense, error) {
	_, r := ev.own.Dims()
	cols := r
	if !s.Col {
		cols++
	}
	out := mat.NewDense(s.Lines, cols, nil)
	err := forLines(ctx, s.Lines, func() func(int) error {
		ev := ev.scratch()
		return func(l int) error {
			ev.line(s, l)
			idx, _ := s.line(l)
			ol := out.RawRowView(l)
			ss := 0.0
			for q, e := range ev.res {
				if ev.inS[q] {
					continue
				}
				j := idx[q]
				ss += e * e
				for c, ov := range ev.other.RawRowView(int(j)) {
					ol[c] += e * ov
				}
			}
			if !s.Col {
				ol[r] = ss
			}
			return nil
		}
	})
	return out, err
}

// lineThresholds is, per line of s, the threshold of T (gd.LineThreshold
// with count k) on the residual at the factors own (the shard's rows) and
// other.
func lineThresholds(ctx context.Context, s *shard, k int, fr frame, own, other *mat.Dense) (*mat.Dense, error) {
	out := make([]float64, s.Lines)
	err := forLines(ctx, s.Lines, func() func(int) error {
		var res []float64
		return func(l int) error {
			res = residual(res, s, l, fr, own, other)
			out[l] = lineThreshold(res, k)
			return nil
		}
	})
	return vectorMatrix(out), err
}

// trial is, per row, the sum of (y − Ut_i·Vt_j)² over the entries outside
// the support of the last Evaluate's S (from U, V and its thresholds).
//
// With Fused, the pass also gives what the thresholds pass of the next
// evaluation at (Ut, Vt) would (the thresholds of T on the residual at
// Ut, Vt: a second column on a row shard, the only one on a column
// shard), so that an accepted step does not run that pass.
func (f *passFn) trial(ctx context.Context, s *shard, k int) (*mat.Dense, error) {
	ut, vt, err := f.factors(ctx, s, fileUt, fileVt)
	if err != nil {
		return nil, err
	}
	if s.Col { // Fused only
		return lineThresholds(ctx, s, k, f.Frame, ut, vt)
	}
	ev, err := f.lastEvaluation(ctx, s)
	if err != nil {
		return nil, err
	}
	cols := 1
	if f.Fused {
		cols = 2
	}
	out := mat.NewDense(s.Lines, cols, nil)
	err = forLines(ctx, s.Lines, func() func(int) error {
		ev := ev.scratch()
		var rt []float64
		return func(l int) error {
			ev.line(s, l)
			rt = residual(rt, s, l, f.Frame, ut, vt)
			sum := 0.0
			for q, in := range ev.inS {
				if !in {
					sum += rt[q] * rt[q]
				}
			}
			out.Set(l, 0, sum)
			if f.Fused {
				out.Set(l, 1, lineThreshold(rt, k))
			}
			return nil
		}
	})
	return out, err
}

// lineThreshold is gd.LineThreshold of the magnitudes of res (which it
// overwrites).
func lineThreshold(res []float64, k int) float64 {
	for q, x := range res {
		res[q] = math.Abs(x)
	}
	return gd.LineThreshold(res, k)
}

// als fits every line of the shard to the rows of fileALS by ridge least
// squares, over its entries outside the support of the last Evaluate's S
// (from U, V and its thresholds), with the line solver of one machine.
func (f *passFn) als(ctx context.Context, s *shard) (*mat.Dense, error) {
	ev, err := f.lastEvaluation(ctx, s)
	if err != nil {
		return nil, err
	}
	x, err := f.loadOther(ctx, s, fileALS)
	if err != nil {
		return nil, err
	}
	_, r := x.Dims()
	out := mat.NewDense(s.Lines, r, nil)
	err = forLines(ctx, s.Lines, func() func(int) error {
		ev := ev.scratch()
		ls := als.NewLineSolver(r)
		var shifted []float64
		return func(l int) error {
			ev.line(s, l)
			idx, val := s.line(l)
			if !f.Frame.identity() {
				shifted = shifted[:0]
				for _, y := range val {
					shifted = append(shifted, f.Frame.value(y))
				}
				val = shifted
			}
			if !ls.Solve(out.RawRowView(l), x.RawMatrix(), idx, val, ev.inS, f.Ridge) {
				return fmt.Errorf("the least-squares system of line %d is not positive definite", s.First+l)
			}
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// values returns the shard's values at the local positions of its request
// file.
func (f *passFn) values(ctx context.Context, s *shard, shardPath string) (*mat.Dense, error) {
	pos, err := f.load(ctx, path.Base(outName(f.Dir, "pos", shardPath)), -1, 1)
	if err != nil {
		return nil, err
	}
	p := pos.RawMatrix().Data
	out := make([]float64, len(p))
	for k, q := range p {
		if q < 0 || int(q) >= s.nnz() {
			return nil, fmt.Errorf("position %v outside the shard's %d entries", q, s.nnz())
		}
		out[k] = f.Frame.value(s.Val[int(q)])
	}
	return vectorMatrix(out), nil
}
