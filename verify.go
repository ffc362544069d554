package rpca

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/internal/selection"
	"github.com/rpca-gd/rpca/metrics"
)

// Check names one test of the verification of an answer ([Verification]).
type Check string

// The checks of [Verify], in the order they are made. The first that fails
// is reported in Verification.Failed.
const (
	// CheckFinite: U, V and S hold only finite values.
	CheckFinite Check = "finite"
	// CheckSparse: S respects α. No row or column holds more corrupted
	// entries than a fraction α of its observed entries allows, with the
	// slack of the largest of d1 + d2 binomial counts (sparseAllowed), nor
	// S more than α·|Φ| + 3√(α|Φ|) + 1 in all; with α = 0, S is empty.
	CheckSparse Check = "sparse"
	// CheckSparseFit: on the entries of S, the residual E = Π_Φ(Y − M − S)
	// is no larger than VerifyBias times its rms on the other entries: S
	// takes up all that M leaves of Y there, as an estimate of
	// corruptions must. A shrunk S (IALM's soft threshold stopped early)
	// leaves a residual on its support that biases M.
	CheckSparseFit Check = "sparse-fit"
	// CheckFit: the residual E = Π_Φ(Y − M − S) off S's support is smaller than the
	// varying part of M: rms(E) ≤ rms(M − mean(M)). An answer whose
	// residual is as large as the signal explains nothing.
	CheckFit Check = "fit"
	// CheckStationary: M is a least-squares fit of Y − S, to within the
	// noise. The residual's projections on M's column and row spaces,
	// ‖E·Q_V‖² + ‖Eᵀ·Q_U‖², are at most VerifyStationary times what a
	// residual of white noise of the same size would have,
	// ‖E‖²·(k/d2 + k/d1). A method that stopped before converging leaves
	// its remaining error in those spaces.
	CheckStationary Check = "stationary"
	// CheckStructure: the residual is noise, not a missed low-rank part.
	// A sketch E·Ω (Ω Gaussian with m = max(VerifySketch, k + 8)
	// columns), each row scaled to unit mean square, is as close to
	// isotropic as white noise makes it: both its concentration in its top
	// direction and its condition number are at most VerifyStructure
	// times their values for white noise (sketchStructure); the same for
	// the columns. A rank or a method that leaves a low-rank part of Y in
	// E fails it.
	CheckStructure Check = "structure"
	// CheckIdentifiable: no component of M is localized: its singular
	// vectors are not supported on so few rows and columns that a block of
	// that size fits in the corruptions α allows. Such a component could
	// as well be part of S, and the split is not unique; it is the mark
	// of a rank set above the data's.
	CheckIdentifiable Check = "identifiable"
	// CheckSampled: the data determine the answer. With partial
	// observations every row and column has more observed entries outside
	// S than the rank; a residual above rounding is accepted as noise only
	// where it can be told from an error: partial data with at least
	// VerifyRedundancy times as many observed entries outside S as M has
	// degrees of freedom, k(d1 + d2 − k), and 2k + 2 in every line, and
	// matrices at least twice the sketch's width on each side.
	CheckSampled Check = "sampled"
	// CheckConverged: an answer above rounding comes from a method that
	// met its own convergence rule, not its iteration cap.
	CheckConverged Check = "converged"
	// CheckOffset: the location Solve removed before the method ran
	// could be added back without raising the rank: the (r+1)-th singular
	// value of M + c'·11ᵀ is within the noise. When it is not, the
	// constant c' was not in M's row or column space, and Solve solves the
	// data again without removing it.
	CheckOffset Check = "offset"
)

// Tolerances of the verification. Each is justified at its check, and the
// measurements behind them are in docs/verification.md.
const (
	// VerifyExact: a residual whose rms is at most this fraction of the
	// rms of M's varying part is a fit to rounding and convergence. An
	// error Δ in M shows in the residual of the clean entries outside S,
	// which for an incoherent Δ (CheckCoherent) have the same mean square
	// as all entries, so an exact answer's error is about its residual:
	// within 1e-6 of a model that explains Y, with a factor two to spare.
	VerifyExact = 5e-7
	// VerifyStationary bounds the residual's energy in M's spaces
	// relative to white noise (CheckStationary). At a least-squares fit
	// it is near 0; a white residual that M did not fit gives 1.
	VerifyStationary = 0.5
	// VerifyStructure bounds the sketch's concentration relative to
	// white noise (CheckStructure).
	VerifyStructure = 2
	// VerifySketch is the number of columns of the sketch of the
	// residual.
	VerifySketch = 16
	// VerifyBias bounds the residual on S's support relative to the rest
	// (CheckSparseFit).
	VerifyBias = 3
	// VerifyRedundancy is the number of observed entries outside S, in
	// multiples of M's degrees of freedom, that partial data need before
	// a residual above rounding can be accepted as noise (CheckSampled).
	VerifyRedundancy = 10
)

// ErrNotVerified is wrapped by the error of a [Verification] that failed.
var ErrNotVerified = errors.New("rpca: answer not verified")

// Verification is the check of an answer against the data by [Verify]
// (which [Solve] runs on every result), independent of the method that
// found it and of that method's stopping rule.
//
// An answer is verified exactly when M + S reproduces the observed Y to
// rounding (VerifyExact) with S respecting α; under noise, when the
// residual is no larger than the signal, M is a least-squares fit of
// Y − S, and the residual shows no low-rank structure. Either way M has
// the rank the settings ask for.
type Verification struct {
	// Verified is true when every check passed.
	Verified bool `json:"verified"`
	// Exact is true when the residual is at the level of rounding.
	Exact bool `json:"exact"`
	// Failed is the first check that failed ("" when verified), and
	// Reason says why, with the figures, in one line.
	Failed Check  `json:"failed,omitempty"`
	Reason string `json:"reason,omitempty"`

	// Residual is rms(E)/rms(M − mean(M)): E = Π_Φ(Y − M − S) over the
	// observed entries, against the varying part of M.
	Residual float64 `json:"residual"`
	// SparseRow and SparseCol are the largest fractions of a row's and a
	// column's observed entries in S; SparseAllowed is the fraction α
	// allows for a line of average length, with its slack.
	SparseRow     float64 `json:"sparse_row"`
	SparseCol     float64 `json:"sparse_col"`
	SparseAllowed float64 `json:"sparse_allowed"`
	// Stationary is the statistic of CheckStationary (NaN when exact).
	Stationary float64 `json:"stationary"`
	// Structure is the statistic of CheckStructure, the larger of rows
	// and columns, in multiples of white noise's (NaN when exact).
	Structure float64 `json:"structure"`
	// Coherence is μ(M) = max(d1/k·max‖Q_U row‖², d2/k·max‖Q_V row‖²),
	// the incoherence of M's spaces (1 is perfectly spread; the paper's
	// guarantees need α·μ·r small).
	Coherence float64 `json:"coherence"`
	// OffsetGap is σ_{r+1}/σ_1 of M + c'·11ᵀ before it was truncated to
	// rank r, when Solve removed a location c' (0 otherwise).
	OffsetGap float64 `json:"offset_gap,omitempty"`
}

// MarshalJSON encodes v with the figures that were not computed (NaN)
// or are infinite as null, which JSON has no numbers for.
func (v *Verification) MarshalJSON() ([]byte, error) {
	type plain Verification
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		*plain
		Residual   *float64 `json:"residual"`
		Stationary *float64 `json:"stationary"`
		Structure  *float64 `json:"structure"`
	}{(*plain)(v), num(v.Residual), num(v.Stationary), num(v.Structure)})
}

// Status is one word for reports: "verified" or "not verified".
func (v *Verification) Status() string {
	if v != nil && v.Verified {
		return "verified"
	}
	return "not verified"
}

// String says in one line whether the answer was verified, how, and if
// not, which check failed and why.
func (v *Verification) String() string {
	switch {
	case v == nil:
		return "not verified: no verification was made"
	case v.Verified && v.Exact:
		return fmt.Sprintf("verified: M + S reproduce the data to %.2g of M's variation", v.Residual)
	case v.Verified:
		return fmt.Sprintf("verified up to noise: the residual, %.3g of M's variation, is unstructured, so M is accurate to about that", v.Residual)
	}
	return fmt.Sprintf("not verified (%s check): %s", v.Failed, v.Reason)
}

// Err returns nil for a verified answer and otherwise an error wrapping
// ErrNotVerified that names the failed check.
func (v *Verification) Err() error {
	if v == nil {
		return fmt.Errorf("%w: no verification was made", ErrNotVerified)
	}
	if v.Verified {
		return nil
	}
	return &NotVerifiedError{Check: v.Failed, Reason: v.Reason}
}

// NotVerifiedError is the error of a failed verification.
type NotVerifiedError struct {
	Check  Check
	Reason string
}

func (e *NotVerifiedError) Error() string {
	return fmt.Sprintf("rpca: answer not verified (%s check): %s", e.Check, e.Reason)
}

// Unwrap returns ErrNotVerified.
func (e *NotVerifiedError) Unwrap() error { return ErrNotVerified }

// Verify checks res, an answer for p under settings s from any method,
// against the data (see [Verification] and the Check constants). It does
// not change res. Solve verifies every result itself and stores the
// outcome in Result.Verification; Verify is for results obtained
// otherwise, or changed since.
func Verify(p *Problem, res *Result, s Settings) (*Verification, error) {
	if err := p.Validate(); err != nil {
		return nil, badInput(err)
	}
	if res == nil || res.U == nil || res.V == nil || res.S == nil {
		return nil, badInput(errors.New("rpca: Verify needs a result with U, V and S"))
	}
	d1, d2 := p.Dims()
	if r, _ := res.U.Dims(); r != d1 {
		return nil, badInput(fmt.Errorf("rpca: U has %d rows, Y %d", r, d1))
	}
	if r, _ := res.V.Dims(); r != d2 {
		return nil, badInput(fmt.Errorf("rpca: V has %d rows, Y %d", r, d2))
	}
	if res.S.Rows != d1 || res.S.Cols != d2 || len(res.S.RowPtr) != d1+1 {
		return nil, badInput(fmt.Errorf("rpca: S is %d×%d, Y %d×%d", res.S.Rows, res.S.Cols, d1, d2))
	}
	if math.IsNaN(s.Alpha) || s.Alpha < 0 || s.Alpha >= 1 {
		return nil, badInput(fmt.Errorf("rpca: alpha must be in [0, 1), got %v", s.Alpha))
	}
	// Work on data of unit scale, as Solve does, so that no sum of
	// squares overflows or underflows; the verdict does not depend on the
	// scale.
	fr := analyze(p, false)
	pf, err := fr.problem(p)
	if err != nil {
		return nil, err
	}
	u := mat.DenseCopyOf(res.U)
	u.Scale(1/fr.scale, u)
	sp := res.S.scaledCopy(1 / fr.scale)
	return verify(pf, u, res.V, sp, s.Alpha, s.Seed, s.Workers, s.Alpha == 0 && p.Dense != nil), nil
}

// scaledCopy returns a copy of s with its values multiplied by c.
func (s *Sparse) scaledCopy(c float64) *Sparse {
	out := &Sparse{Rows: s.Rows, Cols: s.Cols, RowPtr: append([]int(nil), s.RowPtr...),
		ColIdx: append([]int32(nil), s.ColIdx...), Val: make([]float64, len(s.Val))}
	for k, v := range s.Val {
		out.Val[k] = c * v
	}
	return out
}

// verify is Verify on a problem of unit scale (Solve's frame). With pca
// (α = 0 on a fully observed Y) the answer asked for is the truncated SVD
// of Y, whatever the rest of Y holds, so only finiteness, the empty S and
// stationarity are checked.
func verify(p *Problem, u, v *mat.Dense, sp *Sparse, alpha float64, seed uint64, workers int, pca bool) *Verification {
	d1, d2 := p.Dims()
	_, k := u.Dims()
	ver := &Verification{Stationary: math.NaN(), Structure: math.NaN()}
	fail := func(c Check, format string, a ...any) *Verification {
		ver.Failed, ver.Reason = c, fmt.Sprintf(format, a...)
		return ver
	}
	if !finite(u) || !finite(v) || !finiteSlice(sp.Val) {
		return fail(CheckFinite, "the answer holds a value that is not finite")
	}
	// CheckSparse.
	rowN, colN := observedCounts(p)
	if msg := sparseCounts(sp, rowN, colN, alpha, ver); msg != "" {
		return fail(CheckSparse, "%s", msg)
	}
	nObs := 0
	for _, n := range rowN {
		nObs += n
	}
	qu, ru := thinQ(u)
	qv, rv := thinQ(v)
	ver.Coherence = coherence(qu, qv, k)
	// CheckIdentifiable.
	if alpha > 0 {
		if _, rows, cols, ok := localized(qu, ru, qv, rv, alpha, nObs/max(d1, 1), nObs/max(d2, 1), d1+d2); ok {
			return fail(CheckIdentifiable, "the low-rank part holds a rank-one block on %d rows and %d columns, small enough to be corruptions within α, so the split of Y into M and S is not unique; the rank may be set above the data's (try a lower rank)", rows, cols)
		}
	}
	// The residual pass: E, its sums of squares per row and column, and
	// E_off·X, E_offᵀ·Z for X = [Q_V Ω₂], Z = [Q_U Ω₁].
	m := max(VerifySketch, 2*k+8)
	rng := rand.New(rand.NewPCG(seed, 0x7e51f7))
	x, z := withGaussian(qv, m, rng), qu
	ex, etz := kernels.NewGeneral(d1, k+m), kernels.NewGeneral(d2, k)
	onSS, rowSS := residualProducts(p, u, v, sp, x, z, ex, etz, workers)
	ss := 0.0
	for _, x := range rowSS {
		ss += x
	}
	nOff, nOn := nObs-sp.NNZ(), sp.NNZ()
	// The varying part of M is the scale of the residual, but not below
	// 1e-9 of M itself: data stored in float64 carry rounding of 1e-16 of
	// their magnitude, and a fit is not asked to be better than 1e-9 of
	// it (a constant M has no varying part at all).
	var full mat.Dense
	full.Mul(ru, rv.T())
	mNorm := max(metrics.CentredNorm(u, v), 1e-9*mat.Norm(&full, 2))
	rmsE := math.Sqrt(ss / float64(max(nOff, 1)))
	rmsM := mNorm / math.Sqrt(float64(d1)*float64(d2))
	switch {
	case ss == 0:
		ver.Residual = 0
	case rmsM == 0:
		ver.Residual = math.Inf(1)
	default:
		ver.Residual = rmsE / rmsM
	}
	// CheckSampled: every line has more observed entries outside S than
	// M has parameters for it, or its factor is free.
	minRow, minCol := linesOutside(sp, rowN, colN)
	if p.Observed != nil && min(minRow, minCol) <= k {
		return fail(CheckSampled, "a row or column has only %d observed entries outside S, no more than the rank %d: its part of M is not determined by the data", min(minRow, minCol), k)
	}
	// CheckSparseFit: on its support S takes up what M leaves of Y.
	if nOn > 0 {
		rmsOn := math.Sqrt(onSS / float64(nOn))
		if rmsOn > math.Max(VerifyBias*rmsE, VerifyExact*rmsM) {
			return fail(CheckSparseFit, "the residual on the entries of S has an rms %.3g times that on the other entries: S holds less than what the low-rank part leaves there (a shrunk S, as an ℓ1 penalty gives), so M is biased toward the corruptions", rmsOn/math.Max(rmsE, math.SmallestNonzeroFloat64))
		}
	}
	if ver.Residual <= VerifyExact {
		ver.Verified, ver.Exact = true, true
		return ver
	}
	if !(ver.Residual <= 1) && !pca {
		return fail(CheckFit, "the residual's rms is %.3g times that of the low-rank part's variation: the rank-%d model explains less of the data than it leaves; raise the rank, or the data are mostly noise", ver.Residual, k)
	}
	// CheckStationary.
	proj := sumSqCols(ex, 0, k) + sumSqCols(etz, 0, k)
	ver.Stationary = proj / (ss * (float64(k)/float64(d2) + float64(k)/float64(d1)))
	if ver.Stationary > VerifyStationary {
		return fail(CheckStationary, "%.3g of the residual (rms %.3g of the low-rank part's) lies in the low-rank part's own spaces, %.2g times white noise's share: the method stopped before it converged; raise the iteration cap or lower the tolerances", proj/ss, ver.Residual, ver.Stationary)
	}
	if pca {
		ver.Verified = true
		return ver
	}
	// Noise is told from an error only where the data leave room to see it.
	dof := float64(k) * float64(d1+d2-k)
	if p.Observed != nil && (float64(nOff) < VerifyRedundancy*dof || min(minRow, minCol) < 2*k+2) {
		return fail(CheckSampled, "the residual is %.3g of the low-rank part's variation, and with %d observed entries outside S for %.0f degrees of freedom (the sparsest line has %d) it cannot be told from an error of M; only an exact fit is verified on data this sparse", ver.Residual, nOff, dof, min(minRow, minCol))
	}
	if min(d1, d2) < 2*m {
		return fail(CheckSampled, "the residual is %.3g of the low-rank part's variation, and a %d×%d matrix is too small to tell noise from a missed low-rank part at rank %d; only an exact fit is verified at this size", ver.Residual, d1, d2, k)
	}
	// CheckStructure.
	ver.Structure = sketchStructure(ex, k, rowSS)
	if ver.Structure > VerifyStructure {
		return fail(CheckStructure, "the residual (rms %.3g of the low-rank part's) has a low-rank structure, %.2g times what noise shows: a part of Y that a rank-%d model with these corruptions does not explain; raise the rank, or another method may find it", ver.Residual, ver.Structure, k)
	}
	ver.Verified = true
	return ver
}

// linesOutside returns the smallest numbers of observed entries outside
// S's support in a row and in a column.
func linesOutside(sp *Sparse, rowN, colN []int) (minRow, minCol int) {
	colS := make([]int, len(colN))
	for _, j := range sp.ColIdx {
		colS[j]++
	}
	minRow, minCol = math.MaxInt, math.MaxInt
	for i, n := range rowN {
		minRow = min(minRow, n-(sp.RowPtr[i+1]-sp.RowPtr[i]))
	}
	for j, n := range colN {
		minCol = min(minCol, n-colS[j])
	}
	return minRow, minCol
}

// localized looks for a rank-one block that the answer could as well have
// put in S: a vector of M's column space supported on at most maxRows
// rows and one of its row space on at most maxCols columns, where maxRows
// and maxCols are the corruptions α allows in a column and in a row.
// When both exist, M − x·yᵀ (and S + x·yᵀ) is another decomposition of Y
// that no check can tell from this one, the mark of a rank set above the
// data's. Each search (sparseVector) alternates between the subspace and
// the vectors of the allowed support, from the rows of highest leverage.
func localized(qu blas64.General, ru *mat.Dense, qv blas64.General, rv *mat.Dense, alpha float64, colsPerRow, rowsPerCol, lines int) (c, rows, cols int, ok bool) {
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
	maxRows := int(sparseAllowed(alpha, rowsPerCol, lines))
	maxCols := int(sparseAllowed(alpha, colsPerRow, lines))
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

// finiteSlice reports whether every value of x is finite.
func finiteSlice(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// observedCounts returns the number of observed entries of every row and
// column of p.
func observedCounts(p *Problem) (rowN, colN []int) {
	d1, d2 := p.Dims()
	rowN, colN = make([]int, d1), make([]int, d2)
	if p.Dense != nil {
		for i := range rowN {
			rowN[i] = d2
		}
		for j := range colN {
			colN[j] = d1
		}
		return rowN, colN
	}
	o := p.Observed.m
	for i := range d1 {
		rowN[i] = o.RowPtr[i+1] - o.RowPtr[i]
	}
	for _, j := range o.ColIdx {
		colN[j]++
	}
	return rowN, colN
}

// sparseAllowed is the largest number of S's entries a line of n observed
// entries may hold under α, among lines lines: α·n plus z standard
// deviations of a binomial count, plus one, with z = √(2·ln(2·lines)) + ½.
// Corruptions drawn at random at rate α (the paper's experiments) exceed
// α·n on about half of the lines, and the largest of L Gaussian counts is
// about √(2 ln L) deviations above the mean; the half and the one cover
// the small counts where the binomial is skewed.
func sparseAllowed(alpha float64, n, lines int) float64 {
	if alpha == 0 {
		return 0
	}
	fn := float64(n)
	z := math.Sqrt(2*math.Log(2*float64(max(lines, 1)))) + 0.5
	return alpha*fn + z*math.Sqrt(alpha*(1-alpha)*fn) + 1
}

// sparseCounts fills ver's sparse figures and returns the reason S breaks
// α, or "".
func sparseCounts(sp *Sparse, rowN, colN []int, alpha float64, ver *Verification) string {
	colS := make([]int, sp.Cols)
	for _, j := range sp.ColIdx {
		colS[j]++
	}
	total, nObs := sp.NNZ(), 0
	lines := sp.Rows + sp.Cols
	worst := ""
	frac := func(c, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(c) / float64(n)
	}
	for i := range sp.Rows {
		c := sp.RowPtr[i+1] - sp.RowPtr[i]
		nObs += rowN[i]
		ver.SparseRow = max(ver.SparseRow, frac(c, rowN[i]))
		if worst == "" && float64(c) > sparseAllowed(alpha, rowN[i], lines) {
			worst = fmt.Sprintf("row %d has %d of its %d entries in S (α = %g allows %.0f)", i, c, rowN[i], alpha, math.Floor(sparseAllowed(alpha, rowN[i], lines)))
		}
	}
	for j, c := range colS {
		ver.SparseCol = max(ver.SparseCol, frac(c, colN[j]))
		if worst == "" && float64(c) > sparseAllowed(alpha, colN[j], lines) {
			worst = fmt.Sprintf("column %d has %d of its %d entries in S (α = %g allows %.0f)", j, c, colN[j], alpha, math.Floor(sparseAllowed(alpha, colN[j], lines)))
		}
	}
	if len(rowN) > 0 {
		ver.SparseAllowed = sparseAllowed(alpha, nObs/len(rowN), lines) / math.Max(float64(nObs/len(rowN)), 1)
	}
	if allowed := alpha*float64(nObs) + 3*math.Sqrt(alpha*float64(nObs)) + 1; alpha > 0 && float64(total) > allowed && worst == "" {
		worst = fmt.Sprintf("S holds %d entries, %.3g%% of the observed ones (α = %g allows %.0f)", total, 100*frac(total, nObs), alpha, math.Floor(allowed))
	}
	if worst == "" {
		return ""
	}
	if alpha == 0 {
		return fmt.Sprintf("α = 0 allows no corruptions, but S holds %d entries", total)
	}
	return worst + ": the answer explains the data by more corruptions than α allows; if the data hold more, raise alpha, otherwise the low-rank part is wrong where S is dense"
}

// thinQ returns the orthonormal factor Q (d×k) and the triangular R (k×k)
// of a thin Householder QR of a (d ≥ k), which it does not change.
func thinQ(a *mat.Dense) (q blas64.General, r *mat.Dense) {
	d, k := a.Dims()
	q = kernels.NewGeneral(d, k)
	kernels.Copy(q, a.RawMatrix())
	r = mat.NewDense(max(k, 1), max(k, 1), nil)
	if k == 0 || d == 0 {
		return q, r
	}
	kk := min(d, k)
	tau := make([]float64, kk)
	work := make([]float64, 1)
	lapack64.Geqrf(q, tau, work, -1)
	lw := int(work[0])
	if d >= k {
		lapack64.Orgqr(q, tau, work, -1)
		lw = max(lw, int(work[0]))
	}
	work = make([]float64, max(lw, 1))
	lapack64.Geqrf(q, tau, work, len(work))
	for i := range kk {
		for j := i; j < k; j++ {
			r.Set(i, j, q.Data[i*q.Stride+j])
		}
	}
	if d < k { // the columns span all of ℝ^d: Q = [I 0]
		clear(q.Data)
		for i := range d {
			q.Data[i*q.Stride+i] = 1
		}
		return q, r
	}
	lapack64.Orgqr(q, tau, work, len(work))
	return q, r
}

// coherence returns max(d1/k·max_i‖Q_U,i‖², d2/k·max_j‖Q_V,j‖²).
func coherence(qu, qv blas64.General, k int) float64 {
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

// withGaussian returns [q G] with G a d×m matrix of standard normal
// draws from rng.
func withGaussian(q blas64.General, m int, rng *rand.Rand) blas64.General {
	out := kernels.NewGeneral(q.Rows, q.Cols+m)
	for i := range q.Rows {
		row := out.Data[i*out.Stride : i*out.Stride+out.Cols]
		copy(row, q.Data[i*q.Stride:i*q.Stride+q.Cols])
		for c := q.Cols; c < out.Cols; c++ {
			row[c] = rng.NormFloat64()
		}
	}
	return out
}

// residualProducts forms E = Π_Φ(Y − U·Vᵀ − S), returns the sum of
// squares of E on S's support, and with that support zeroed (E_off) sets
// ex = E_off·X and etz = E_offᵀ·Z and returns the sums of squares of
// E_off's rows.
func residualProducts(p *Problem, u, v *mat.Dense, sp *Sparse, x, z, ex, etz blas64.General, workers int) (onSS float64, rowSS []float64) {
	d1, d2 := p.Dims()
	rowSS = make([]float64, d1)
	if p.Dense != nil {
		// By blocks of rows, so that E is never held whole: each block is
		// formed in a buffer that stays in cache, its sums taken, and its
		// share of the two products added.
		y := p.Dense.RawMatrix()
		ur := u.RawMatrix()
		block := max(64, min(d1, (1<<19)/max(d2, 1)))
		buf := kernels.NewGeneral(min(block, d1), d2)
		part := kernels.NewGeneral(d2, etz.Cols)
		zero(etz)
		var groupOn [verifyGroups]float64
		for lo := 0; lo < d1; lo += block {
			hi := min(lo+block, d1)
			n := hi - lo
			e := blas64.General{Rows: n, Cols: d2, Stride: buf.Stride, Data: buf.Data}
			rowsOf := func(m blas64.General) blas64.General {
				return blas64.General{Rows: n, Cols: m.Cols, Stride: m.Stride, Data: m.Data[lo*m.Stride:]}
			}
			kernels.SubMulABt(e, rowsOf(y), rowsOf(ur), v.RawMatrix(), workers)
			// S's entries out, and the sums of squares: in verifyGroups
			// fixed groups of rows, added in order, so that nothing
			// depends on the worker count.
			kernels.ForEach(verifyGroups, workers, func(g int) {
				a, b := lo+g*n/verifyGroups, lo+(g+1)*n/verifyGroups
				on := 0.0
				for i := a; i < b; i++ {
					row := e.Data[(i-lo)*e.Stride : (i-lo)*e.Stride+d2]
					for q := sp.RowPtr[i]; q < sp.RowPtr[i+1]; q++ {
						j := sp.ColIdx[q]
						r := row[j] - sp.Val[q]
						on += r * r
						row[j] = 0
					}
					t := 0.0
					for _, x := range row {
						t += x * x
					}
					rowSS[i] = t
				}
				groupOn[g] = on
			})
			for g := range verifyGroups {
				onSS += groupOn[g]
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
	o := p.Observed.m
	plan := observed.NewPlan(o)
	e := make([]float64, o.NNZ())
	plan.Residual(e, u.RawMatrix(), v.RawMatrix(), workers)
	for i := range d1 {
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
		t := 0.0
		for q := o.RowPtr[i]; q < end; q++ {
			t += e[q] * e[q]
		}
		rowSS[i] = t
	}
	plan.MulVals(ex, e, x, workers)
	plan.MulTransVals(etz, e, z, workers)
	return onSS, rowSS
}

// verifyGroups is the number of groups of rows of a block whose sums the
// verification takes in parallel.
const verifyGroups = 4

// zero sets every element of a to 0.
func zero(a blas64.General) {
	for i := range a.Rows {
		clear(a.Data[i*a.Stride : i*a.Stride+a.Cols])
	}
}

// sumSqCols returns the sum of squares of columns [c0, c1) of a.
func sumSqCols(a blas64.General, c0, c1 int) float64 {
	t := 0.0
	for i := range a.Rows {
		for _, x := range a.Data[i*a.Stride+c0 : i*a.Stride+c1] {
			t += x * x
		}
	}
	return t
}

// sketchStructure returns how far the sketch in columns [k, k+m) of s,
// each row scaled by the root of lineSS (rows with no residual left out),
// is from what white noise gives, as the larger of two ratios to their
// values for n rows of isotropic Gaussian noise: its concentration,
// m·λ₁/tr(G) of the Gram matrix G, against (1 + √(m/n))², which a
// structure of low rank s raises to about m/s; and its condition number
// λ₁/λ_m against ((1 + √(m/n))/(1 − √(m/n)))², which a residual of rank
// below m, as the error of a wrong answer on exact data is, makes
// infinite.
func sketchStructure(s blas64.General, k int, lineSS []float64) float64 {
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
