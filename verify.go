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

// The checks of [Verify], in the order they are made; the first that
// fails is reported in Verification.Failed. docs/verification.md gives
// each test with its tolerance and the measurements behind it.
const (
	// CheckFinite: U, V and S hold only finite values.
	CheckFinite Check = verify.CheckFinite
	// CheckSparse: no row or column of S, nor S in all, holds more
	// entries than α allows with a binomial slack; with α = 0, S is empty.
	CheckSparse Check = verify.CheckSparse
	// CheckSparseFit: on S's support E = Π_Φ(Y − M − S) is at most
	// VerifyBias times its rms elsewhere (a shrunk S biases M).
	CheckSparseFit Check = verify.CheckSparseFit
	// CheckFit: off S, rms(E) ≤ rms(M − mean(M)).
	CheckFit Check = verify.CheckFit
	// CheckStationary: M is a least-squares fit of Y − S: E's energy in
	// M's column and row spaces is at most VerifyStationary times white
	// noise's, ‖E‖²·(k/d2 + k/d1).
	CheckStationary Check = verify.CheckStationary
	// CheckStructure: E is noise, not a missed low-rank part or
	// corruptions left out of S: at most a share VerifyGrossShare of its
	// entries lie beyond 20 robust spreads, a sketch E·Ω orthogonal to
	// M's row space is within VerifyStructure of white noise's
	// concentration and conditioning, and on partial data ‖E‖₂ is within
	// 1.5 times the noise edge of E's row and column norms.
	CheckStructure Check = verify.CheckStructure
	// CheckIdentifiable: no component of M is supported on so few rows
	// and columns that it fits in the corruptions α allows (the mark of a
	// rank set above the data's).
	CheckIdentifiable Check = verify.CheckIdentifiable
	// CheckSampled: the data determine the answer: every line has more
	// entries outside S than the rank, and they see every direction of
	// the other factor (a line that sees one only through S, or not at
	// all, leaves M free there); M's degrees of freedom are at most half
	// of the entries outside S; and an answer above rounding is accepted
	// as noise on partial data only with VerifyRedundancy times as many.
	CheckSampled Check = verify.CheckSampled
	// CheckConverged: an answer above rounding comes from a method that
	// met its convergence rule (or StopNoiseFloor, when every other check
	// found noise), not its iteration cap.
	CheckConverged Check = verify.CheckConverged
	// CheckOffset: the location Solve removed could be added back without
	// raising the rank (σ_{r+1} of M + c'·11ᵀ within the noise).
	CheckOffset Check = verify.CheckOffset
)

// Tolerances of the verification (docs/verification.md justifies each).
const (
	// VerifyExact: a residual of at most this fraction of the rms of M's
	// varying part is a fit to rounding; M is then within about 1e-6.
	VerifyExact = verify.Exact
	// VerifyStationary bounds E's energy in M's spaces against white
	// noise's (CheckStationary).
	VerifyStationary = verify.Stationary
	// VerifyStructure bounds the sketch's statistics against white
	// noise's (CheckStructure).
	VerifyStructure = verify.Structure
	// VerifySketch is the least number of columns of the sketch.
	VerifySketch = verify.Sketch
	// VerifyGrossShare bounds the share of gross entries of E outside S
	// (CheckStructure).
	VerifyGrossShare = verify.GrossShareMax
	// VerifyBias bounds E on S's support against the rest (CheckSparseFit).
	VerifyBias = verify.Bias
	// VerifyRedundancy is the observed entries outside S, in multiples of
	// M's degrees of freedom, that noisy partial data need (CheckSampled).
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
// Y − S, and the residual shows no low-rank structure. Either way M's
// rank (IALM sets its own) leaves it determined by the data (CheckSampled).
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
	ur, _ := res.U.Dims()
	vr, _ := res.V.Dims()
	if ur != d1 || vr != d2 || res.S.Rows != d1 || res.S.Cols != d2 || len(res.S.RowPtr) != d1+1 {
		return nil, errs.Input(fmt.Errorf("rpca: U has %d rows, V %d and S is %d×%d, for a %d×%d Y", ur, vr, res.S.Rows, res.S.Cols, d1, d2))
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
	framed := &Result{U: u, V: res.V, S: res.S.Scaled(1 / fr.Scale), Residual: res.Residual, Stop: res.Stop}
	dropped := framed.pruneSparse(pf)
	return verifyAnswer(pf, framed, dropped, s), nil
}

// requireConverged fails a verified answer that is not exact when the
// method stopped (stop, when known) before its convergence rule fired:
// its residual above rounding may be the distance still to go.
func (v *Verification) requireConverged(stop StopReason) {
	if v.Verified && !v.Exact && stop != "" && !stop.Converged() && stop != StopNoiseFloor {
		v.fail(CheckConverged, fmt.Sprintf("the method stopped (%s) before meeting its convergence rule, and its residual, %.3g of the low-rank part's variation, is above rounding", stop, v.Residual))
	}
}

// verifyAnswer is Verify on a problem of unit scale (Solve's frame), by
// internal/verify's Answer, with the method's S before dropped was taken
// out. With α = 0 on a fully observed Y the answer asked for is the
// truncated SVD of Y, whatever the rest of Y holds, so only finiteness,
// the empty S and stationarity are checked.
func verifyAnswer(p *Problem, res *Result, dropped []verify.Entry, s Settings) *Verification {
	y, o := p.storage()
	r := verify.Answer(verify.Input{Y: y, Observed: o, U: res.U, V: res.V, S: csrOf(res.S), Dropped: dropped,
		Alpha: s.Alpha, Seed: s.Seed, Workers: s.Workers, PCA: s.Alpha == 0 && p.Dense != nil, LikelyExact: res.Residual <= VerifyExact})
	v := &Verification{Verified: r.Verified, Exact: r.Exact, Failed: Check(r.Failed), Reason: r.Reason,
		Residual: r.Residual, SparseRow: r.SparseRow, SparseCol: r.SparseCol, SparseAllowed: r.SparseAllowed,
		Stationary: r.Stationary, Structure: r.Structure, Coherence: r.Coherence}
	v.requireConverged(res.Stop)
	return v
}
