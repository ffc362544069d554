package rpca

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rpca-gd/rpca/internal/verify"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
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
	// slack of the largest of d1 + d2 binomial counts, nor
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
	// met its own convergence rule, not its iteration cap; a stop at the
	// noise floor (StopNoiseFloor) counts when every other check found
	// the residual to be noise.
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
	return verifyAnswer(pf, u, res.V, sp, nil, s.Alpha, s.Seed, s.Workers, s.Alpha == 0 && p.Dense != nil), nil
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

// verifyAnswer is Verify on a problem of unit scale (Solve's frame). With pca
// (α = 0 on a fully observed Y) the answer asked for is the truncated SVD
// of Y, whatever the rest of Y holds, so only finiteness, the empty S and
// stationarity are checked.
func verifyAnswer(p *Problem, u, v *mat.Dense, sp *Sparse, dropped []verify.Entry, alpha float64, seed uint64, workers int, pca bool) *Verification {
	d1, d2 := p.Dims()
	_, k := u.Dims()
	ver := &Verification{Stationary: math.NaN(), Structure: math.NaN()}
	fail := func(c Check, format string, a ...any) *Verification {
		ver.Failed, ver.Reason = c, fmt.Sprintf(format, a...)
		return ver
	}
	if !finite(u) || !finite(v) || !verify.Finite(sp.Val) {
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
	qu, ru := verify.ThinQ(u)
	qv, rv := verify.ThinQ(v)
	ver.Coherence = verify.Coherence(qu, qv, k)
	// CheckIdentifiable.
	if alpha > 0 {
		if _, rows, cols, ok := verify.Localized(qu, ru, qv, rv, alpha, nObs/max(d1, 1), nObs/max(d2, 1), d1+d2); ok {
			return fail(CheckIdentifiable, "the low-rank part holds a rank-one block on %d rows and %d columns, small enough to be corruptions within α, so the split of Y into M and S is not unique; the rank may be set above the data's (try a lower rank)", rows, cols)
		}
	}
	// The residual pass: E, its sums of squares per row and column, and
	// E_off·X, E_offᵀ·Z for X = [Q_V Ω₂], Z = [Q_U Ω₁].
	m := max(VerifySketch, 2*k+8)
	rng := rand.New(rand.NewPCG(seed, 0x7e51f7))
	x, z := verify.WithGaussian(qv, m, rng), qu
	ex, etz := kernels.NewGeneral(d1, k+m), kernels.NewGeneral(d2, k)
	y, o := p.storage()
	onSS, rowSS := verify.ResidualProducts(y, o, u.RawMatrix(), v.RawMatrix(), verify.CSR{RowPtr: sp.RowPtr, ColIdx: sp.ColIdx, Val: sp.Val}, x, z, ex, etz, workers)
	ss := 0.0
	for _, x := range rowSS {
		ss += x
	}
	nOff, nOn := nObs-sp.NNZ(), sp.NNZ()
	rmsE, rmsM := residualScales(u, v, ru, rv, ss, nOff)
	ver.Residual = residualRatio(ss, rmsE, rmsM)
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
	// Against the method's own S: the entries Solve took out of it as
	// noise (dropped) are part of E here but were not part of the
	// method's fit.
	proj, ssFit := verify.Dropped(ex, etz, k, qu, qv, dropped, ss)
	ver.Stationary = 0
	if ssFit > 0 {
		ver.Stationary = proj / (ssFit * (float64(k)/float64(d2) + float64(k)/float64(d1)))
	}
	if ver.Stationary > VerifyStationary {
		return fail(CheckStationary, "%.3g of the residual (rms %.3g of the low-rank part's) lies in the low-rank part's own spaces, %.2g times white noise's share: the method stopped before it converged; raise the iteration cap or lower the tolerances", proj/ssFit, ver.Residual, ver.Stationary)
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
	ver.Structure = verify.SketchStructure(ex, k, rowSS)
	if ver.Structure > VerifyStructure {
		return fail(CheckStructure, "the residual (rms %.3g of the low-rank part's) has a low-rank structure, %.2g times what noise shows: a part of Y that a rank-%d model with these corruptions does not explain; raise the rank, or another method may find it", ver.Residual, ver.Structure, k)
	}
	ver.Verified = true
	return ver
}

// residualScales returns the rms of the residual over the nOff observed
// entries outside S (ss its sum of squares) and the rms of M's varying
// part, M = U·Vᵀ = Q_U·R_U·(Q_V·R_V)ᵀ. The varying part is the scale of
// the residual, but not below 1e-9 of M itself: data stored in float64
// carry rounding of 1e-16 of their magnitude, and a fit is not asked to
// be better than 1e-9 of it (a constant M has no varying part at all).
func residualScales(u, v, ru, rv *mat.Dense, ss float64, nOff int) (rmsE, rmsM float64) {
	d1, _ := u.Dims()
	d2, _ := v.Dims()
	var full mat.Dense
	full.Mul(ru, rv.T())
	mNorm := max(metrics.CentredNorm(u, v), 1e-9*mat.Norm(&full, 2))
	return math.Sqrt(ss / float64(max(nOff, 1))), mNorm / math.Sqrt(float64(d1)*float64(d2))
}

// residualRatio is Verification.Residual, rmsE/rmsM: 0 for a residual
// that is exactly 0, +Inf for one against an M without variation.
func residualRatio(ss, rmsE, rmsM float64) float64 {
	switch {
	case ss == 0:
		return 0
	case rmsM == 0:
		return math.Inf(1)
	}
	return rmsE / rmsM
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
		if worst == "" && float64(c) > verify.SparseAllowed(alpha, rowN[i], lines) {
			worst = fmt.Sprintf("row %d has %d of its %d entries in S (α = %g allows %.0f)", i, c, rowN[i], alpha, math.Floor(verify.SparseAllowed(alpha, rowN[i], lines)))
		}
	}
	for j, c := range colS {
		ver.SparseCol = max(ver.SparseCol, frac(c, colN[j]))
		if worst == "" && float64(c) > verify.SparseAllowed(alpha, colN[j], lines) {
			worst = fmt.Sprintf("column %d has %d of its %d entries in S (α = %g allows %.0f)", j, c, colN[j], alpha, math.Floor(verify.SparseAllowed(alpha, colN[j], lines)))
		}
	}
	if len(rowN) > 0 {
		ver.SparseAllowed = verify.SparseAllowed(alpha, nObs/len(rowN), lines) / math.Max(float64(nObs/len(rowN)), 1)
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
