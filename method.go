package rpca

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpca-gd/rpca/internal/errs"
	"gonum.org/v1/gonum/mat"
)

// Method is an algorithm that decomposes a Problem. The gradient method of
// the paper is [GD]; the baselines are altproj.Method and ialm.Method.
// Implementations must honour ctx, validate their own parameters, and
// return errors (never panic) for bad input.
type Method interface {
	// Name is a short identifier such as "gd", "altproj" or "ialm".
	Name() string

	// Capabilities declares what the method needs and uses; [Solve]
	// checks the problem against it before calling Solve.
	Capabilities() Capabilities

	// Solve runs the method. Callers should use [Solve], which validates
	// the problem and the shared settings first.
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
	// T_α); methods that find the support of S by thresholding ignore it.
	UsesAlpha bool

	// FixedRank: the result has exactly Settings.Rank factor columns. A
	// method without it (IALM) treats the rank as a hint and reports the
	// rank it found through the width of Result.U.
	FixedRank bool

	// BytesPerEntry is the method's peak memory per entry of a dense
	// d1×d2 problem, Y itself included, measured on the paper's model
	// (0: unknown). Loaders use it to refuse a problem that cannot fit
	// before reading it. [Solve] may add 8 for the copy of Y it makes
	// when it removes a location or sets gross entries aside.
	BytesPerEntry float64

	// FitsOffset: the method's model has its own offsets (GD.Biases: a
	// bias per row and per column), so [Solve] does not remove a
	// location from Y before it runs.
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
// (GD.Start). [Solve] uses it to express the start in the units of the
// data it hands the method, and does not remove a location from Y when a
// start is set (the start would no longer have rank r).
type WarmStarter interface {
	// WarmStart returns the start's factors, nil when there is none.
	WarmStart() (u, v *mat.Dense)
	// WithWarmStart returns a copy of the method that starts from U·Vᵀ.
	WithWarmStart(u, v *mat.Dense) Method
}

// Checkpointer is implemented by methods that can hand their state over
// between iterations and go on from one (gd.Method, als.Method). While
// one does either, [Solve] runs it in one frame, the data's own with its
// scale, as for a warm start: a state then always belongs to the problem
// the method is given, where removing a location first, and solving
// again without it when that answer is not verified, would run it on two
// problems.
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
	if err := s.validate(d1, d2); err != nil {
		return errs.Input(err)
	}
	if err := identifiable(p, s); err != nil {
		return errs.Input(err)
	}
	return nil
}

// liveContext returns ctx (context.Background() for nil) and its error
// if it is already done.
func liveContext(ctx context.Context) (context.Context, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	return ctx, ctx.Err()
}

// ErrBadInput is wrapped by every error that [Solve] returns for a
// problem or settings it refuses before solving (non-finite values, ranks
// or parameters out of range, a model that cannot be identified from the
// data); errors.Is(err, ErrBadInput) tells them from failures of a run
// (ErrDiverged, context.Canceled, …).
var ErrBadInput = errs.BadInput

// ErrBadSettings is wrapped, with ErrBadInput, by every error about a
// method's own parameters or their combination (GD.Huber without
// UpdateALS, a negative altproj.Method.Mu, …) as distinct from the data:
// a program whose settings come from its user, such as a command line,
// can report it as a usage error.
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

// ErrDiverged is wrapped by the error a method returns when its iterates
// become non-finite or explode; the message names the likely cause.
var ErrDiverged = errors.New("rpca: iterates diverged")

// ErrDenseOnly is returned by methods that need a fully observed matrix
// when given a partially observed one.
var ErrDenseOnly = errors.New("rpca: method needs a fully observed (dense) matrix")
