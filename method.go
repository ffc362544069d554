package rpca

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpca-gd/rpca/internal/errs"
	"github.com/rpca-gd/rpca/internal/verify"
	"gonum.org/v1/gonum/mat"
)

// Method is an algorithm that decomposes a Problem: gd.Method (the
// paper's), als.Method, accaltproj.Method, altproj.Method, ialm.Method.
// Implementations honour ctx, check their own parameters, and return
// errors (never panic) for bad input.
type Method interface {
	// Name is a short identifier such as "gd", "altproj" or "ialm".
	Name() string
	// Capabilities declares what the method needs and uses; [Solve]
	// checks the problem against it first.
	Capabilities() Capabilities
	// Solve runs the method; callers use [Solve], which checks the
	// problem and the shared settings first.
	Solve(ctx context.Context, p *Problem, s Settings) (*Result, error)
}

// Resolver is implemented by methods that stand for others chosen by the
// data, such as the command line's auto (methods.Auto): [Solve] asks it
// for the method to run and for the ones to try, in order, when the
// answer before is not verified, and returns the first verified answer.
type Resolver interface {
	Resolve(p *Problem, s Settings) (first Method, fallbacks []Method)
}

// ParamChecker is implemented by methods that can check their own
// parameters against a problem's shape and the settings without solving.
// [Solve] calls it before anything else is done with the data, so that a
// bad parameter is an error ([ErrBadSettings]) whatever Y is, even the
// Y = 0 that Solve answers without the method.
type ParamChecker interface {
	CheckParams(p *Problem, s Settings) error
}

// Capabilities describe a method's needs and how it reads the shared
// settings.
type Capabilities struct {
	// DenseOnly: the method needs a fully observed Y (Problem.Dense);
	// [Solve] refuses a partially observed problem with [ErrDenseOnly].
	DenseOnly bool
	// UsesAlpha: the method reads Settings.Alpha (the sparse estimator
	// T_α); methods that find S by thresholding ignore it.
	UsesAlpha bool
	// FixedRank: the result has exactly Settings.Rank factor columns;
	// without it (IALM) the rank is a hint, and Result.U's width tells
	// the rank found.
	FixedRank bool
	// BytesPerEntry is the peak memory per entry of a dense problem, Y
	// included, measured on the paper's model (0: unknown), for loaders
	// to refuse what cannot fit; [Solve] may add 8 for its copy of Y.
	BytesPerEntry float64
	// FitsOffset: the model has its own offsets (als.Method.Biases), so
	// [Solve] does not remove a location from Y.
	FitsOffset bool
}

// Start holds the factors of a warm start: the low-rank part starts as
// U·Vᵀ (gd.Method.Start, als.Method.Start, the result of their Initialize).
type Start struct {
	U, V *mat.Dense
}

// Factors returns U and V, nil for a nil start.
func (s *Start) Factors() (u, v *mat.Dense) {
	if s == nil {
		return nil, nil
	}
	return s.U, s.V
}

// WarmStarter is implemented by methods that can start from given factors
// (gd.Method.Start). [Solve] scales the start with the data and removes no
// location from Y when a start is set (it would no longer have rank r).
type WarmStarter interface {
	// WarmStart returns the start's factors, nil when there is none.
	WarmStart() (u, v *mat.Dense)
	// WithWarmStart returns a copy of the method that starts from U·Vᵀ.
	WithWarmStart(u, v *mat.Dense) Method
}

// Checkpointer is implemented by methods that can hand their state over
// between iterations and go on from one (gd.Method, als.Method). While
// one does either, [Solve] runs it in one frame, the data's own with its
// scale, so that a state always belongs to one problem.
type Checkpointer interface {
	// Checkpointing reports whether the method saves or resumes a state.
	Checkpointing() bool
}

// checkInput returns the ErrBadInput error of a problem or settings that
// no method can solve, or nil.
func checkInput(p *Problem, s Settings) error {
	if err := p.Validate(); err != nil {
		return errs.Input(err)
	}
	d1, d2 := p.Dims()
	if err := s.Check(d1, d2); err != nil {
		return errs.Input(err)
	}
	if err := identifiable(p, s); err != nil {
		return errs.Input(err)
	}
	return nil
}

// ErrBadInput is wrapped by every error that [Solve] returns for a
// problem or settings it refuses before solving (non-finite values, ranks
// or parameters out of range, a model that cannot be identified from the
// data); errors.Is(err, ErrBadInput) tells them from failures of a run
// (ErrDiverged, context.Canceled, …).
var ErrBadInput = errs.BadInput

// ErrBadSettings is wrapped, with ErrBadInput, by every error about a
// method's own parameters (a negative altproj.Method.Mu, …) as distinct
// from the data: a command line reports it as a usage error.
var ErrBadSettings = errs.BadSettings

// BadSettings marks err, the error of a method's parameter check, as
// ErrBadSettings and ErrBadInput without changing its text. Methods
// outside this package return their parameter errors through it.
func BadSettings(err error) error { return errs.Settings(err) }

// BadInput marks err as ErrBadInput without changing its text: the error
// of a problem or settings that a method refuses before solving. Methods
// outside this package return their input errors through it.
func BadInput(err error) error { return errs.Input(err) }

// CheckProblem returns the ErrBadInput error of a problem or settings that
// no method can solve (what Solve checks before it hands over), or nil:
// for methods' own entry points, such as gd.Method.Initialize.
func CheckProblem(p *Problem, s Settings) error {
	if err := checkInput(p, s); err != nil {
		return err
	}
	return checkEntries(p)
}

// identifiable refuses a dense problem with α > 0 in which the rank-r
// model has more degrees of freedom, r(d1+d2−r), than half the entries
// outside the corrupted fraction α: a 2×2 matrix at rank 1 has 3 degrees
// of freedom and 4 entries, one of which may be corrupted, and no method
// can tell which. (Partially observed problems are not checked here: the
// paper's own video setting, 10 observations per pixel at rank 10, has
// fewer observations than degrees of freedom, and its experiment must
// run; the gradient method refuses rows or columns without observations.)
func identifiable(p *Problem, s Settings) error {
	if p.Dense == nil || s.Alpha == 0 {
		return nil
	}
	d1, d2 := p.Dims()
	if s.Rank > MaxSeparableRank(d1, d2, s.Alpha) {
		r := float64(s.Rank)
		dof := r * (float64(d1) + float64(d2) - r)
		return fmt.Errorf("rpca: a %d×%d matrix is too small to separate a rank-%d part (%.0f degrees of freedom) from corruptions of up to a fraction α = %g of its entries; lower the rank or alpha, or use more data", d1, d2, s.Rank, dof, s.Alpha)
	}
	return nil
}

// MaxSeparableRank is the largest rank r at which [Solve] accepts a fully
// observed d1×d2 problem whose entries may be corrupted up to a fraction
// alpha > 0: the model's r(d1+d2−r) degrees of freedom may be at most
// half of the (1−α)·d1·d2 entries left clean. It is 0 when not even rank
// 1 is accepted, and min(d1, d2) for alpha = 0, where nothing is refused.
func MaxSeparableRank(d1, d2 int, alpha float64) int { return verify.MaxSeparableRank(d1, d2, alpha) }

// ErrNoEntries is returned by Solve and SolveDistributed when Φ is empty.
var ErrNoEntries = errors.New("rpca: no observed entries")

// ErrDiverged is wrapped by the error a method returns when its iterates
// become non-finite or explode; the message names the likely cause.
var ErrDiverged = errors.New("rpca: iterates diverged")

// ErrDenseOnly is returned by methods that need a fully observed matrix
// when given a partially observed one.
var ErrDenseOnly = errors.New("rpca: method needs a fully observed (dense) matrix")
