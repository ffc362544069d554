package rpca

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/errs"
	"github.com/rpca-gd/rpca/internal/verify"
)

// Check names one test of the verification of an answer ([Verification]).
type Check string

// The checks of [Verify], in the order they are made. The first that fails
// is reported in Verification.Failed.
const (
	// CheckFinite: U, V and S hold only finite values.
	CheckFinite Check = verify.CheckFinite
	// CheckSparse: S respects α. No row or column holds more corrupted
	// entries than a fraction α of its observed entries allows, with the
	// slack of the largest of d1 + d2 binomial counts, nor
	// S more than α·|Φ| + 3√(α|Φ|) + 1 in all; with α = 0, S is empty.
	CheckSparse Check = verify.CheckSparse
	// CheckSparseFit: on the entries of S, the residual E = Π_Φ(Y − M − S)
	// is no larger than VerifyBias times its rms on the other entries: S
	// takes up all that M leaves of Y there, as an estimate of
	// corruptions must. A shrunk S (IALM's soft threshold stopped early)
	// leaves a residual on its support that biases M.
	CheckSparseFit Check = verify.CheckSparseFit
	// CheckFit: the residual E = Π_Φ(Y − M − S) off S's support is smaller than the
	// varying part of M: rms(E) ≤ rms(M − mean(M)). An answer whose
	// residual is as large as the signal explains nothing.
	CheckFit Check = verify.CheckFit
	// CheckStationary: M is a least-squares fit of Y − S, to within the
	// noise. The residual's projections on M's column and row spaces,
	// ‖E·Q_V‖² + ‖Eᵀ·Q_U‖², are at most VerifyStationary times what a
	// residual of white noise of the same size would have,
	// ‖E‖²·(k/d2 + k/d1). A method that stopped before converging leaves
	// its remaining error in those spaces.
	CheckStationary Check = verify.CheckStationary
	// CheckStructure: the residual is noise, not a missed low-rank part
	// or corruptions left out of S. At most a share VerifyGrossShare of
	// its entries outside S lie beyond 20 robust spreads of the fit's
	// noise, and a sketch E·Ω (Ω an orthonormal basis of m = max(
	// VerifySketch, 2k + 8) random directions orthogonal to M's row
	// space), each row scaled to unit mean square, is as close to
	// isotropic as white noise makes it: its concentration in its top
	// direction and its condition number are at most VerifyStructure
	// times their values for white noise. A rank or a method that leaves
	// a low-rank part of Y in E fails it.
	CheckStructure Check = verify.CheckStructure
	// CheckIdentifiable: no component of M is localized: its singular
	// vectors are not supported on so few rows and columns that a block of
	// that size fits in the corruptions α allows. Such a component could
	// as well be part of S, and the split is not unique; it is the mark
	// of a rank set above the data's.
	CheckIdentifiable Check = verify.CheckIdentifiable
	// CheckSampled: the data determine the answer. With partial
	// observations every row and column has more observed entries outside
	// S than the rank; a residual above rounding is accepted as noise only
	// where it can be told from an error: partial data with at least
	// VerifyRedundancy times as many observed entries outside S as M has
	// degrees of freedom, k(d1 + d2 − k), and 2k + 2 in every line, and
	// matrices at least twice the sketch's width on each side.
	CheckSampled Check = verify.CheckSampled
	// CheckConverged: an answer above rounding comes from a method that
	// met its own convergence rule, not its iteration cap; a stop at the
	// noise floor (StopNoiseFloor) counts when every other check found
	// the residual to be noise.
	CheckConverged Check = verify.CheckConverged
	// CheckOffset: the location Solve removed before the method ran
	// could be added back without raising the rank: the (r+1)-th singular
	// value of M + c'·11ᵀ is within the noise. When it is not, the
	// constant c' was not in M's row or column space, and Solve solves the
	// data again without removing it.
	CheckOffset Check = verify.CheckOffset
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
	VerifyExact = verify.Exact
	// VerifyStationary bounds the residual's energy in M's spaces
	// relative to white noise (CheckStationary). At a least-squares fit
	// it is near 0; a white residual that M did not fit gives 1.
	VerifyStationary = verify.Stationary
	// VerifyStructure bounds the sketch's concentration relative to
	// white noise (CheckStructure).
	VerifyStructure = verify.Structure
	// VerifySketch is the number of columns of the sketch of the
	// residual.
	VerifySketch = verify.Sketch
	// VerifyGrossShare bounds the share of the residual's entries
	// outside S that are gross (CheckStructure).
	VerifyGrossShare = verify.GrossShareMax
	// VerifyBias bounds the residual on S's support relative to the rest
	// (CheckSparseFit).
	VerifyBias = verify.Bias
	// VerifyRedundancy is the number of observed entries outside S, in
	// multiples of M's degrees of freedom, that partial data need before
	// a residual above rounding can be accepted as noise (CheckSampled).
	VerifyRedundancy = verify.Redundancy
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
// against the data (see [Verification] and the Check constants), as
// Solve checks its own: the entries of S at the noise level of the fit
// count as residual, not as corruptions (SparseNoiseFactor), and an
// answer whose Result.Stop (when set) is not a convergence rule's is
// verified only when it is exact. It does not change res. Solve verifies
// every result itself and stores the outcome in Result.Verification;
// Verify is for results obtained otherwise (a distributed run), or
// changed since.
func Verify(p *Problem, res *Result, s Settings) (*Verification, error) {
	if err := p.Validate(); err != nil {
		return nil, errs.Input(err)
	}
	if res == nil || res.U == nil || res.V == nil || res.S == nil {
		return nil, errs.Input(errors.New("rpca: Verify needs a result with U, V and S"))
	}
	d1, d2 := p.Dims()
	if r, _ := res.U.Dims(); r != d1 {
		return nil, errs.Input(fmt.Errorf("rpca: U has %d rows, Y %d", r, d1))
	}
	if r, _ := res.V.Dims(); r != d2 {
		return nil, errs.Input(fmt.Errorf("rpca: V has %d rows, Y %d", r, d2))
	}
	if res.S.Rows != d1 || res.S.Cols != d2 || len(res.S.RowPtr) != d1+1 {
		return nil, errs.Input(fmt.Errorf("rpca: S is %d×%d, Y %d×%d", res.S.Rows, res.S.Cols, d1, d2))
	}
	if math.IsNaN(s.Alpha) || s.Alpha < 0 || s.Alpha >= 1 {
		return nil, errs.Input(fmt.Errorf("rpca: alpha must be in [0, 1), got %v", s.Alpha))
	}
	// Work on data of unit scale, as Solve does, so that no sum of
	// squares overflows or underflows; the verdict does not depend on the
	// scale.
	fr := analyze(p, false)
	pf, err := framedProblem(&fr, p)
	if err != nil {
		return nil, err
	}
	u := mat.DenseCopyOf(res.U)
	u.Scale(1/fr.Scale, u)
	framed := &Result{U: u, V: res.V, S: scaledCopy(res.S, 1/fr.Scale), Residual: res.Residual}
	dropped := framed.pruneSparse(pf)
	ver := verifyAnswer(pf, u, res.V, framed.S, dropped, s.Alpha, s.Seed, s.Workers, s.Alpha == 0 && p.Dense != nil, framed.Residual <= VerifyExact)
	ver.requireConverged(res.Stop)
	return ver, nil
}

// requireConverged fails a verified answer that is not exact when the
// method stopped (stop, when known) before its convergence rule fired:
// its residual above rounding may be the distance still to go.
func (v *Verification) requireConverged(stop StopReason) {
	if v.Verified && !v.Exact && stop != "" && !stop.Converged() && stop != StopNoiseFloor {
		v.fail(CheckConverged, fmt.Sprintf("the method stopped (%s) before meeting its convergence rule, and its residual, %.3g of the low-rank part's variation, is above rounding", stop, v.Residual))
	}
}

// scaledCopy returns a copy of s with its values multiplied by c.
func scaledCopy(s *Sparse, c float64) *Sparse {
	out := &Sparse{Rows: s.Rows, Cols: s.Cols, RowPtr: append([]int(nil), s.RowPtr...),
		ColIdx: append([]int32(nil), s.ColIdx...), Val: make([]float64, len(s.Val))}
	for k, v := range s.Val {
		out.Val[k] = c * v
	}
	return out
}

// verifyAnswer is Verify on a problem of unit scale (Solve's frame), by
// internal/verify's Answer. With pca (α = 0 on a fully observed Y) the
// answer asked for is the truncated SVD of Y, whatever the rest of Y
// holds, so only finiteness, the empty S and stationarity are checked.
func verifyAnswer(p *Problem, u, v *mat.Dense, sp *Sparse, dropped []verify.Entry, alpha float64, seed uint64, workers int, pca, likelyExact bool) *Verification {
	y, o := p.storage()
	r := verify.Answer(verify.Input{Y: y, Observed: o, U: u, V: v, S: csrOf(sp),
		Dropped: dropped, Alpha: alpha, Seed: seed, Workers: workers, PCA: pca, LikelyExact: likelyExact})
	return &Verification{Verified: r.Verified, Exact: r.Exact, Failed: Check(r.Failed), Reason: r.Reason,
		Residual: r.Residual, SparseRow: r.SparseRow, SparseCol: r.SparseCol, SparseAllowed: r.SparseAllowed,
		Stationary: r.Stationary, Structure: r.Structure, Coherence: r.Coherence}
}
