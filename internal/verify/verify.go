// Package verify is the engine of rpca.Verify: Answer runs the checks
// on an answer in Solve's frame, with the residual of the answer and its
// products with the factors' spaces in one pass over the data, the row
// sketch that looks for structure in the residual, and the search for a
// rank-one block of M small enough to be corruptions; NoiseScale and
// PruneBelow are Solve's rule for the entries of S. The root package
// documents and exports the checks and their tolerances.
package verify

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/factor"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/selection"
)

// CSR is a sparse part in compressed rows: the entries of row i are
// ColIdx[RowPtr[i]:RowPtr[i+1]] with values Val[RowPtr[i]:RowPtr[i+1]].
type CSR struct {
	RowPtr []int
	ColIdx []int32
	Val    []float64
}

// Localized looks for a rank-one block that the answer could as well have
// put in S: a vector of M's column space supported on at most maxRows
// rows and one of its row space on at most maxCols columns, where maxRows
// and maxCols are the corruptions α allows in a column and in a row.
// When both exist, M − x·yᵀ (and S + x·yᵀ) is another decomposition of Y
// that no check can tell from this one, the mark of a rank set above the
// data's. Each search (sparseVector) alternates between the subspace and
// the vectors of the allowed support, from the rows of highest leverage.
func Localized(qu blas64.General, ru *mat.Dense, qv blas64.General, rv *mat.Dense, alpha float64, colsPerRow, rowsPerCol, lines int) (c, rows, cols int, ok bool) {
	k := qu.Cols
	if k == 0 || qu.Rows <= k || qv.Rows <= k {
		return 0, 0, 0, false
	}
	// The spaces M actually spans: the singular vectors of its nonzero
	// singular values (a factor of deficient rank has columns that span
	// nothing of M, and its QR completes them arbitrarily).
	var core mat.Dense
	core.Mul(ru, rv.T())
	var svd mat.SVD
	if !svd.Factorize(&core, mat.SVDFull) {
		return 0, 0, 0, false
	}
	sig := svd.Values(nil)
	ke := 0
	for _, x := range sig {
		if x > 1e-12*sig[0] {
			ke++
		}
	}
	if ke == 0 {
		return 0, 0, 0, false
	}
	var w, z mat.Dense
	svd.UTo(&w)
	svd.VTo(&z)
	span := func(q blas64.General, rot *mat.Dense) blas64.General {
		out := kernels.NewGeneral(q.Rows, ke)
		kernels.Dense(out).Mul(kernels.Dense(q), rot.Slice(0, k, 0, ke))
		return out
	}
	maxRows := int(SparseAllowed(alpha, rowsPerCol, lines))
	maxCols := int(SparseAllowed(alpha, colsPerRow, lines))
	rows, okr := sparseVector(span(qu, &w), maxRows)
	if !okr {
		return 0, 0, 0, false
	}
	cols, okc := sparseVector(span(qv, &z), maxCols)
	if !okc {
		return 0, 0, 0, false
	}
	return ke - 1, rows, cols, true
}

// sparseVector reports whether the span of the orthonormal columns of q
// holds a vector supported on at most s of its rows (to 1e-3 of its norm),
// and the size of the support it found. It alternates x ← the s largest
// entries of Q·c, c ← Qᵀx / ‖Qᵀx‖ (projections between the subspace and
// the s-sparse vectors) from c = Qᵀe_i for the five rows i of highest
// leverage, where a planted sparse vector shows itself.
func sparseVector(q blas64.General, s int) (int, bool) {
	d, k := q.Rows, q.Cols
	if s < 1 || s >= d-k {
		return 0, false
	}
	lev := make([]float64, d)
	order := make([]int, d)
	for i := range d {
		row := q.Data[i*q.Stride : i*q.Stride+k]
		for _, x := range row {
			lev[i] += x * x
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(lev[b], lev[a]) })
	x := make([]float64, d)
	mag, work := make([]float64, d), make([]float64, d)
	c := make([]float64, k)
	for _, start := range order[:min(5, d)] {
		copy(c, q.Data[start*q.Stride:start*q.Stride+k])
		for it := 0; it < 30; it++ {
			for i := range d {
				x[i] = kernels.Dot(q.Data[i*q.Stride:i*q.Stride+k], c)
				mag[i] = math.Abs(x[i])
			}
			// Keep the s largest entries: a threshold by selection.
			copy(work, mag)
			th := selection.SelectSmallest(work, d-s)
			off := 0.0
			for i := range d {
				if mag[i] <= th {
					off += x[i] * x[i]
					x[i] = 0
				}
			}
			total := 0.0
			for _, v := range c {
				total += v * v
			}
			if off <= 1e-6*total {
				mx := 0.0
				for _, v := range x {
					mx = max(mx, math.Abs(v))
				}
				n := 0
				for _, v := range x {
					if math.Abs(v) > 1e-3*mx {
						n++
					}
				}
				return n, true
			}
			clear(c)
			for i, xi := range x {
				if xi != 0 {
					row := q.Data[i*q.Stride : i*q.Stride+k]
					for l, v := range row {
						c[l] += xi * v
					}
				}
			}
			nc := math.Sqrt(kernels.Dot(c, c))
			if nc == 0 {
				break
			}
			for l := range c {
				c[l] /= nc
			}
		}
	}
	return 0, false
}

// Finite reports whether every value of x is finite.
func Finite(x []float64) bool { return kernels.AllFinite(x) }

// Coherence returns max(d1/k·max_i‖Q_U,i‖², d2/k·max_j‖Q_V,j‖²).
func Coherence(qu, qv blas64.General, k int) float64 {
	if k == 0 {
		return 0
	}
	mu := 0.0
	for _, q := range []blas64.General{qu, qv} {
		for i := range q.Rows {
			n := 0.0
			for _, x := range q.Data[i*q.Stride : i*q.Stride+q.Cols] {
				n += x * x
			}
			mu = max(mu, n*float64(q.Rows)/float64(k))
		}
	}
	return mu
}

// WithSketch returns [q Ω], q (d×k) with orthonormal columns, and Ω
// (d×m) a random orthonormal basis of m directions orthogonal to q: the
// thin QR factor of q's complement of a Gaussian d×m matrix drawn from
// rng. For a residual E of white noise whose rows are orthogonal to q (a
// least-squares fit's), the rows of E·Ω are then isotropic, as
// SketchStructure's reference assumes. A Gaussian Ω is not: its columns'
// Gram matrix has a condition number of about ((1+√(m/d))/(1−√(m/d)))²,
// 5.4 at d = 100 and m = 16, which the check read as structure in the
// residual of exact least-squares fits with few columns.
func WithSketch(q blas64.General, m int, rng *rand.Rand) blas64.General {
	k := q.Cols
	g := mat.NewDense(q.Rows, k+m, nil)
	for i := range q.Rows {
		row := g.RawRowView(i)
		copy(row, q.Data[i*q.Stride:i*q.Stride+k])
		for c := k; c < k+m; c++ {
			row[c] = rng.NormFloat64()
		}
	}
	// The Householder QR of [q G] keeps q's span in its first k columns
	// (up to signs, so q itself is put back there); the next m are G's
	// part orthogonal to it, orthonormalized.
	out, _ := factor.ThinQ(g)
	for i := range q.Rows {
		copy(out.Data[i*out.Stride:i*out.Stride+k], q.Data[i*q.Stride:i*q.Stride+k])
	}
	return out
}

// ResidualProducts forms E = Π_Φ(Y − U·Vᵀ − S), returns the sum of
// squares of E on S's support, and with that support zeroed (E_off) sets
// ex = E_off·X and etz = E_offᵀ·Z and returns the sums of squares of
// E_off's rows. With X and Z of no columns it takes the sums only.
func ResidualProducts(y blas64.General, o *observed.Matrix, u, v blas64.General, sp CSR, x, z, ex, etz blas64.General, workers int) (onSS float64, rowSS []float64) {
	d1, d2 := u.Rows, v.Rows
	rowSS = make([]float64, d1)
	if o == nil {
		// By blocks of rows, so that E is never held whole: each block is
		// formed in a buffer of about 8 MB, its sums taken, and its share
		// of the two products added. (Each block's kernels pack V and X
		// again; blocks of 1 MB took 1.4× the time at d = 3000.)
		ur := u
		block := max(64, min(d1, (1<<20)/max(d2, 1)))
		buf := kernels.NewGeneral(min(block, d1), d2)
		part := kernels.NewGeneral(d2, etz.Cols)
		zero(etz)
		var groupOn [groups]float64
		products := x.Cols > 0 || z.Cols > 0
		for lo := 0; lo < d1; lo += block {
			hi := min(lo+block, d1)
			n := hi - lo
			e := blas64.General{Rows: n, Cols: d2, Stride: buf.Stride, Data: buf.Data}
			rowsOf := func(m blas64.General) blas64.General {
				return blas64.General{Rows: n, Cols: m.Cols, Stride: m.Stride, Data: m.Data[lo*m.Stride:]}
			}
			kernels.SubMulABt(e, rowsOf(y), rowsOf(ur), v, workers)
			// S's entries out, and the sums of squares: in groups
			// fixed groups of rows, added in order, so that nothing
			// depends on the worker count.
			kernels.ForEach(groups, workers, func(g int) {
				a, b := lo+g*n/groups, lo+(g+1)*n/groups
				on := 0.0
				for i := a; i < b; i++ {
					row := e.Data[(i-lo)*e.Stride : (i-lo)*e.Stride+d2]
					for q := sp.RowPtr[i]; q < sp.RowPtr[i+1]; q++ {
						j := sp.ColIdx[q]
						r := row[j] - sp.Val[q]
						on += r * r
						row[j] = 0
					}
					rowSS[i] = kernels.VecSumSq(row)
				}
				groupOn[g] = on
			})
			for g := range groups {
				onSS += groupOn[g]
			}
			if !products {
				continue
			}
			kernels.MulAXAtY(rowsOf(ex), part, e, x, rowsOf(z), workers)
			for i := range d2 {
				dst := etz.Data[i*etz.Stride : i*etz.Stride+etz.Cols]
				for c, w := range part.Data[i*part.Stride : i*part.Stride+part.Cols] {
					dst[c] += w
				}
			}
		}
		return onSS, rowSS
	}
	plan := observed.NewPlan(o)
	e, onSS := offResidual(plan, o, u, v, sp, workers)
	for i := range d1 {
		t := 0.0
		for q := o.RowPtr[i]; q < o.RowPtr[i+1]; q++ {
			t += e[q] * e[q]
		}
		rowSS[i] = t
	}
	if x.Cols > 0 || z.Cols > 0 {
		plan.MulVals(ex, e, x, workers)
		plan.MulTransVals(etz, e, z, workers)
	}
	return onSS, rowSS
}

// offResidual returns E = Π_Φ(Y − U·Vᵀ) on o's entries (CSR order) with
// the entries of S's support set to 0 (E_off), and the sum of squares of
// E − S there.
func offResidual(plan *observed.Plan, o *observed.Matrix, u, v blas64.General, sp CSR, workers int) (e []float64, onSS float64) {
	e = make([]float64, o.NNZ())
	plan.Residual(e, u, v, workers)
	for i := range o.Rows {
		q, end := o.RowPtr[i], o.RowPtr[i+1]
		for s := sp.RowPtr[i]; s < sp.RowPtr[i+1]; s++ {
			j := sp.ColIdx[s]
			for q < end && o.ColIdx[q] < j {
				q++
			}
			if q < end && o.ColIdx[q] == j {
				r := e[q] - sp.Val[s]
				onSS += r * r
				e[q] = 0
			}
		}
	}
	return e, onSS
}

// zero sets every element of a to 0.
func zero(a blas64.General) {
	for i := range a.Rows {
		clear(a.Data[i*a.Stride : i*a.Stride+a.Cols])
	}
}

// SumSqCols returns the sum of squares of columns [c0, c1) of a.
func SumSqCols(a blas64.General, c0, c1 int) float64 {
	t := 0.0
	for i := range a.Rows {
		for _, x := range a.Data[i*a.Stride+c0 : i*a.Stride+c1] {
			t += x * x
		}
	}
	return t
}

// SketchStructure returns how far the sketch in columns [k, k+m) of s,
// each row scaled by the root of lineSS (rows with no residual left out),
// is from what white noise gives, as the larger of two ratios to their
// values for n rows of isotropic Gaussian noise: its concentration,
// m·λ₁/tr(G) of the Gram matrix G, against (1 + √(m/n))², which a
// structure of low rank s raises to about m/s; and its condition number
// λ₁/λ_m against ((1 + √(m/n))/(1 − √(m/n)))², which a residual of rank
// below m, as the error of a wrong answer on exact data is, makes
// infinite.
func SketchStructure(s blas64.General, k int, lineSS []float64) float64 {
	m := s.Cols - k
	g := mat.NewSymDense(m, nil)
	n := 0
	row := make([]float64, m)
	vec := mat.NewVecDense(m, row)
	for i := range s.Rows {
		if !(lineSS[i] > 0) {
			continue
		}
		f := 1 / math.Sqrt(lineSS[i])
		for c := range m {
			row[c] = f * s.Data[i*s.Stride+k+c]
		}
		g.SymRankOne(g, 1, vec)
		n++
	}
	if n == 0 {
		return 0
	}
	if n <= m {
		return math.Inf(1)
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, false) {
		return math.Inf(1)
	}
	vals := eig.Values(nil)
	tr, top, bottom := 0.0, 0.0, math.Inf(1)
	for _, x := range vals {
		tr += x
		top = max(top, x)
		bottom = min(bottom, x)
	}
	if tr == 0 {
		return 0
	}
	q := math.Sqrt(float64(m) / float64(n))
	conc := float64(m) * top / tr / ((1 + q) * (1 + q))
	cond := math.Inf(1)
	if bottom > 0 && q < 1 {
		cond = top / bottom / (((1 + q) / (1 - q)) * ((1 + q) / (1 - q)))
	}
	return max(conc, cond)
}

// groups is the number of groups of rows of a block whose sums the
// verification takes in parallel.
const groups = 4

// SparseAllowed is the largest number of S's entries a line of n observed
// entries may hold under α, among lines lines: α·n plus z standard
// deviations of a binomial count, plus one, with z = √(2·ln(2·lines)) + ½.
// Corruptions drawn at random at rate α (the paper's experiments) exceed
// α·n on about half of the lines, and the largest of L Gaussian counts is
// about √(2 ln L) deviations above the mean; the half and the one cover
// the small counts where the binomial is skewed.
func SparseAllowed(alpha float64, n, lines int) float64 {
	if alpha == 0 {
		return 0
	}
	fn := float64(n)
	z := math.Sqrt(2*math.Log(2*float64(max(lines, 1)))) + 0.5
	return alpha*fn + z*math.Sqrt(alpha*(1-alpha)*fn) + 1
}

// Entry is one entry (Row, Col, Val) of a sparse matrix.
type Entry struct {
	Row, Col int
	Val      float64
}

// Dropped returns the statistic of the stationarity check,
// ‖E'·Q_V‖² + ‖E'ᵀ·Q_U‖², and ‖E'‖², for E' = E − D: the residual E of
// the reported S (whose products with Q_V and Q_U are the first k columns
// of ex and etz, and whose sum of squares is ss) less the entries D that
// were taken out of the method's S as noise. On D's support E equals D,
// so ‖E'‖² = ss − ‖D‖².
func Dropped(ex, etz blas64.General, k int, qu, qv blas64.General, d []Entry, ss float64) (proj, ssFit float64) {
	if len(d) == 0 {
		return SumSqCols(ex, 0, k) + SumSqCols(etz, 0, k), ss
	}
	// ex[:, :k] − D·Q_V and etz − Dᵀ·Q_U, on copies of the first k
	// columns.
	a := make([]float64, ex.Rows*k)
	for i := range ex.Rows {
		copy(a[i*k:(i+1)*k], ex.Data[i*ex.Stride:i*ex.Stride+k])
	}
	b := make([]float64, etz.Rows*k)
	for j := range etz.Rows {
		copy(b[j*k:(j+1)*k], etz.Data[j*etz.Stride:j*etz.Stride+k])
	}
	ssFit = ss
	for _, e := range d {
		ai, bj := a[e.Row*k:(e.Row+1)*k], b[e.Col*k:(e.Col+1)*k]
		qvj, qui := qv.Data[e.Col*qv.Stride:e.Col*qv.Stride+k], qu.Data[e.Row*qu.Stride:e.Row*qu.Stride+k]
		for c := range k {
			ai[c] -= e.Val * qvj[c]
			bj[c] -= e.Val * qui[c]
		}
		ssFit -= e.Val * e.Val
	}
	for _, x := range a {
		proj += x * x
	}
	for _, x := range b {
		proj += x * x
	}
	return proj, max(ssFit, 0)
}

// MaxSeparableRank is the largest rank r whose r(d1+d2−r) degrees of
// freedom are at most half of the (1−α)·d1·d2 entries of a d1×d2 matrix
// left clean by corruptions at a fraction alpha (rpca.MaxSeparableRank);
// min(d1, d2) for alpha = 0.
func MaxSeparableRank(d1, d2 int, alpha float64) int {
	m := min(d1, d2)
	if alpha == 0 {
		return m
	}
	clean := (1 - alpha) * float64(d1) * float64(d2)
	r := 0
	for r < m {
		next := float64(r + 1)
		if clean < 2*next*(float64(d1)+float64(d2)-next) {
			break
		}
		r++
	}
	return r
}
