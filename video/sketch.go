package video

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/sample"
	"github.com/rpca-gd/rpca/internal/selection"
)

// DefaultSketchRows is the number of rows of Y (pixel channels) that the
// solver sees by default ([SeparateOptions.SketchRows]). The background
// of a clip has rank at most [DefaultMaxRank] and 20–2000 frames, so its
// row space (one vector of frame weights per component) is fixed by far
// fewer rows than a frame has pixels: 10000 rows of a 200-frame clip are
// fifty times more equations than unknowns per component.
const DefaultSketchRows = 10000

// MaxRowFitSteps bounds the concentration steps of one row's trimmed fit
// ([FitRows]); a row that has not settled by then keeps its last fit.
const MaxRowFitSteps = 30

// RowFit describes a [FitRows] run.
type RowFit struct {
	// Rows is the number of rows fitted; Trim is how many values of each
	// row were set aside (⌊α·frames⌋).
	Rows, Trim int
	// Rank is the dimension of the row space the rows were fitted in.
	Rank int
	// Steps is the total number of concentration steps over all rows;
	// Unsettled counts the rows stopped by MaxRowFitSteps.
	Steps, Unsettled int
}

// ErrNoRowSpace: the solver's factors span nothing (a zero background).
var ErrNoRowSpace = errors.New("video: the background's factors are zero")

// sketchRows returns n distinct row indices of [0, d1), drawn uniformly
// with seed and sorted, or nil when n ≤ 0 or n ≥ d1 (all rows).
func sketchRows(d1, n int, seed uint64) []int {
	if n <= 0 || n >= d1 {
		return nil
	}
	idx := make([]int, 0, n)
	for i, in := range sample.Subset(rand.New(rand.NewPCG(seed, 0x736b65746368)), d1, n) {
		if in {
			idx = append(idx, i)
		}
	}
	return idx
}

// gatherRows returns the rows idx of y as a new matrix.
func gatherRows(y rowSource, idx []int) *mat.Dense {
	_, d2 := y.Dims()
	out := mat.NewDense(len(idx), d2, nil)
	for a, i := range idx {
		dst := out.RawRowView(a)
		copy(dst, y.row(dst, i))
	}
	return out
}

// rowSpace returns an orthonormal basis (d2×k) of the span of the columns
// of v (d2×r): the row space of a background M = U·Vᵀ. Directions whose
// singular value is at most 1e-10 of the largest are dropped, so k ≤ r.
func rowSpace(v mat.Matrix) (*mat.Dense, error) {
	var svd mat.SVD
	if !svd.Factorize(v, mat.SVDThin) {
		return nil, errors.New("video: the SVD of the background's factor failed")
	}
	sv := svd.Values(nil)
	k := 0
	for k < len(sv) && sv[k] > 1e-10*sv[0] {
		k++
	}
	if k == 0 {
		return nil, ErrNoRowSpace
	}
	var q mat.Dense
	svd.UTo(&q)
	return mat.DenseCopyOf(q.Slice(0, q.RawMatrix().Rows, 0, k)), nil
}

// FitRows returns the background M = U·qᵀ whose row i is the trimmed
// least-squares fit of row i of y in the row space q (d2×k, orthonormal
// columns, from [rowSpace]): the coefficients u_i (row i of U) minimise ‖y_i − q·u‖²
// over the d2 − trim entries left after setting aside the trim largest
// residuals. This is the row part of the paper's sparse estimator T_α
// (eq. 3, each row keeps at most an α fraction of its entries as
// corruptions) with the low-rank part's row space held fixed, and it is
// solved by concentration steps (Rousseeuw and Van Driessen's C-steps for
// least trimmed squares): fit on the kept entries, keep the d2 − trim
// entries with the smallest residuals, and repeat until the kept set no
// longer changes. Each step lowers the trimmed sum of squares, so the
// loop ends at a local minimum; the first fit uses every entry.
//
// Solving the robust problem on a sample of the rows and fitting the rest
// to its row space is the divide-and-conquer scheme of Mackey, Talwalkar
// and Jordan (DFC) with rows in place of columns. workers ≤ 0 means all
// cores.
func FitRows(ctx context.Context, y *mat.Dense, q *mat.Dense, trim, workers int) (LowRank, RowFit, error) {
	return fitRows(ctx, denseRows{y}, q, trim, workers)
}

// fitRows is FitRows on a rowSource.
func fitRows(ctx context.Context, y rowSource, q *mat.Dense, trim, workers int) (LowRank, RowFit, error) {
	d1, d2 := y.Dims()
	qr, k := q.Dims()
	if qr != d2 || k == 0 || k > d2 {
		panic(fmt.Sprintf("video: FitRows: a %d×%d basis for %d frames", qr, k, d2))
	}
	if trim < 0 || trim > d2-k {
		return LowRank{}, RowFit{}, fmt.Errorf("video: cannot set aside %d of %d frames and fit %d components", trim, d2, k)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	u := mat.NewDense(d1, k, nil)
	const chunk = 256
	var (
		mu    sync.Mutex
		stats = RowFit{Rows: d1, Trim: trim, Rank: k}
		next  int
		wg    sync.WaitGroup
	)
	take := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		i0 := next
		next = min(d1, next+chunk)
		return i0, next
	}
	for range min(workers, (d1+chunk-1)/chunk) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := newRowFitter(q, trim)
			m, row := make([]float64, d2), make([]float64, d2)
			var steps, unsettled int
			for i0, i1 := take(); i0 < i1; i0, i1 = take() {
				if ctx.Err() != nil {
					break
				}
				for i := i0; i < i1; i++ {
					// Each block of rows starts cold, so that the result
					// does not depend on which worker takes which block.
					s, ok := f.fit(y.row(row, i), m, i > i0)
					copy(u.RawRowView(i), f.u)
					steps += s
					if !ok {
						unsettled++
					}
				}
			}
			mu.Lock()
			stats.Steps += steps
			stats.Unsettled += unsettled
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return LowRank{}, RowFit{}, err
	}
	return LowRank{U: u, Q: q}, stats, nil
}

// rowFitter holds one worker's scratch space for [FitRows].
type rowFitter struct {
	q       [][]float64 // the k columns of the basis, each of length d2
	qr      []float64   // the basis row-major (d2×k), for the set-aside rows
	k, trim int
	u, b0   []float64 // k
	b       []float64 // k
	g       []float64 // k×k
	res     []float64 // d2
	abs     []float64 // d2
	kept    []float64 // d2: 1 for a kept entry, 0 for one set aside
	outIdx  []int     // the set-aside entries
}

func newRowFitter(q *mat.Dense, trim int) *rowFitter {
	n, k := q.Dims()
	f := &rowFitter{
		qr: mat.DenseCopyOf(q).RawMatrix().Data, k: k, trim: trim,
		u: make([]float64, k), b0: make([]float64, k), b: make([]float64, k),
		g: make([]float64, k*k), res: make([]float64, n), abs: make([]float64, n),
		kept: make([]float64, n), outIdx: make([]int, 0, n),
	}
	for c := range k {
		f.q = append(f.q, mat.Col(nil, c, q))
	}
	return f
}

// fit writes the trimmed fit of y into m and returns the number of
// concentration steps and whether the kept set settled. With warm, the
// steps start from the set the previous row (the pixel to the left, for
// rows in pixel order) settled on: an object covers neighbouring pixels
// in the same frames, so that set is usually this row's too, or close
// to it. Without warm, or where that set leaves the fit undetermined,
// they start from the fit on every entry.
func (f *rowFitter) fit(y, m []float64, warm bool) (int, bool) {
	// b0 = qᵀy; the fit on every entry is u = b0 (orthonormal columns).
	for c, qc := range f.q {
		f.b0[c] = floats.Dot(qc, y)
	}
	warm = warm && len(f.outIdx) > 0 && f.solve(y)
	if !warm {
		copy(f.u, f.b0)
		f.outIdx = f.outIdx[:0]
	}
	steps, settled := 0, f.trim == 0
	for ; ; steps++ {
		f.evaluate(y, m)
		if settled || steps == MaxRowFitSteps {
			break
		}
		if !f.choose() && (steps > 0 || warm) {
			settled = true
			break
		}
		if !f.solve(y) {
			break // the last fit stands; the row counts as unsettled
		}
	}
	return steps, settled
}

// evaluate sets m = q·u and res = y − m.
func (f *rowFitter) evaluate(y, m []float64) {
	floats.ScaleTo(m, f.u[0], f.q[0])
	for c := 1; c < f.k; c++ {
		floats.AddScaled(m, f.u[c], f.q[c])
	}
	floats.SubTo(f.res, y, m)
}

// choose marks the trim largest |res| as set aside (ties broken by
// position) and reports whether the set changed. When the set aside
// values are still all at least as large as the kept ones, the set stands
// without a selection.
func (f *rowFitter) choose() bool {
	lo, hi := math.Inf(1), 0.0
	if len(f.outIdx) > 0 {
		for _, j := range f.outIdx {
			if a := math.Abs(f.res[j]); a < lo {
				lo = a
			}
		}
		for j, r := range f.res {
			if a := math.Abs(r) * f.kept[j]; a > hi {
				hi = a
			}
		}
		if !(lo < hi) {
			return false
		}
	}
	// The new threshold t, the trim-th largest |res|, by selection on as
	// few entries as the old set allows. With lo < hi, every entry above
	// hi was set aside (hi is the kept entries' largest) and they number
	// fewer than trim; at least trim + 1 entries are lo or more (the set
	// aside ones and the kept one at hi). So t lies in [lo, hi], and it
	// is the (trim − above)-th largest of the entries there.
	band, rank := f.abs, f.trim
	if len(f.outIdx) > 0 {
		n, above := 0, 0
		for _, r := range f.res {
			a := math.Abs(r)
			f.abs[n] = a
			n += b2i(a >= lo) & b2i(a <= hi)
			above += b2i(a > hi)
		}
		band, rank = f.abs[:n], f.trim-above
	} else {
		for j, r := range f.res {
			f.abs[j] = math.Abs(r)
		}
	}
	t := selection.Select(band, rank)
	// Branch-free: about half of the entries are set aside at the default
	// trim, so a branch on each would be mispredicted half of the time.
	out := f.outIdx[:len(f.res)]
	n := 0
	for j, r := range f.res {
		o := b2i(math.Abs(r) > t)
		f.kept[j] = float64(1 - o)
		out[n] = j
		n += o
	}
	for j, r := range f.res {
		if n == f.trim {
			break
		}
		if math.Abs(r) == t {
			f.kept[j] = 0
			out[n] = j
			n++
		}
	}
	f.outIdx = out[:n]
	return true
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// minPivot bounds the squared Cholesky pivots [rowFitter.solve] accepts:
// the kept frames must leave each direction of the row space more than
// this much of its unit weight, else the fit is undetermined.
const minPivot = 1e-8

// solve sets u to the least-squares fit on the kept entries: with q_o the
// rows of q set aside, (I − q_oᵀq_o)·u = b0 − q_oᵀy_o, by Cholesky. It
// reports false, leaving u alone, when a direction of q lives (almost)
// only on the set-aside frames, so that the kept ones do not determine it.
func (f *rowFitter) solve(y []float64) bool {
	k, q, g, b := f.k, f.qr, f.g, f.b
	clear(g)
	for c := 0; c < k; c++ {
		g[c*k+c] = 1
	}
	copy(b, f.b0)
	for _, j := range f.outIdx {
		qj := q[j*k : j*k+k]
		for a, qa := range qj {
			b[a] -= qa * y[j]
			row := g[a*k : a*k+a+1]
			for c := range row {
				row[c] -= qa * qj[c]
			}
		}
	}
	return kernels.CholeskySolve(g, k, b, f.u, minPivot)
}

// LowRank is a background held as its factors, M = U·Qᵀ, with U (d1×k)
// the coefficients of each row and Q (d2×k) the row space ([FitRows]).
// It is read a column at a time, so the d1×d2 matrix is never formed.
type LowRank struct {
	U, Q *mat.Dense
}

// Dims returns the dimensions of M.
func (l LowRank) Dims() (int, int) {
	r, _ := l.U.Dims()
	c, _ := l.Q.Dims()
	return r, c
}

// At returns M_ij = u_i·q_j.
func (l LowRank) At(i, j int) float64 {
	return floats.Dot(l.U.RawRowView(i), l.Q.RawRowView(j))
}

// residual is Y − M for a background held as its factors (LowRank) or as
// a matrix, formed entry by entry (or a block of columns at a time) when
// read: the foreground without a third d1×d2 matrix.
type residual struct {
	y *mat.Dense
	m Matrix // LowRank or *mat.Dense
}

func (r residual) Dims() (int, int)    { return r.y.Dims() }
func (r residual) At(i, j int) float64 { return r.y.At(i, j) - r.m.At(i, j) }

// of reports whether r is y − bg.
func (r residual) of(y, bg Matrix) bool {
	d, ok := y.(*mat.Dense)
	return ok && d == r.y && bg == r.m
}

// Dense forms M as a d1×d2 matrix.
func (l LowRank) Dense() *mat.Dense {
	var m mat.Dense
	m.Mul(l.U, l.Q.T())
	return &m
}
