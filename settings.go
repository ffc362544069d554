package rpca

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Settings are the model parameters and stopping rules shared by all
// methods. Method-specific parameters (step size, γ, λ, …) are fields of
// the method value itself.
type Settings struct {
	// Rank is r, the rank of the low-rank part (required, 1 ≤ r < min(d1, d2)).
	// IALM treats it as a hint for its first truncated SVD only.
	Rank int

	// Alpha is α, the largest fraction of corrupted entries in any row or
	// column (the model S* ∈ S_α of eq. (S_alpha)); 0 ≤ α < 1. With α = 0
	// the sparse step is skipped (plain matrix completion / PCA).
	Alpha float64

	// Stop selects the stopping rules; zero fields take the method's
	// defaults, negative ones disable a rule.
	Stop Stop

	// Callback, if not nil, is called after every iteration with the record
	// just appended to the history. It runs on the solver's goroutine, so it
	// should be quick; cancel the context to stop the solver from it.
	Callback func(Record)

	// Workers bounds the goroutines used by the parallel kernels;
	// 0 means runtime.GOMAXPROCS(0).
	Workers int

	// Seed drives every random choice of the method (the random start of
	// the truncated SVD, subsampling); equal seeds give equal results.
	Seed uint64
}

// Stop holds the stopping rules. A method stops at the first rule met and
// reports which in Result.Stop. A zero field takes the method's default; a
// negative field disables the rule.
type Stop struct {
	// MaxIter caps the number of iterations.
	MaxIter int

	// FactorTol stops when the relative change of the factors,
	// (‖U_{t+1}−U_t‖²_F + ‖V_{t+1}−V_t‖²_F)/(‖U_t‖²_F + ‖V_t‖²_F), is at most
	// FactorTol (the paper's Appendix B rule; it used 4e-4 for video).
	FactorTol float64

	// ResidualTol stops when ‖Π_Φ(Y − UVᵀ − S)‖_F ≤ ResidualTol times the
	// clean scale of Y (see Result.Residual).
	ResidualTol float64

	// TargetError stops as soon as the true relative error
	// ‖UVᵀ − M*‖_F/‖M* − mean(M*)‖_F ≤ TargetError. It needs Problem.Truth
	// and is meant for time-to-accuracy experiments; it is off by default.
	TargetError float64

	// Validation, if not nil, is early stopping on held-out data: called
	// after every iteration, it returns the error of M = U·Vᵀ (in the
	// data's units) on entries the solve does not see, and the run stops
	// (StopValidation) once Patience iterations in a row have not lowered
	// its smallest value. The result holds the last iterate. It must not
	// keep or change u and v.
	Validation func(u, v *mat.Dense) float64

	// Patience is the number of iterations without a new smallest
	// validation error that stops the run; 0 means 10.
	Patience int
}

// DefaultPatience is Stop.Patience when it is 0.
const DefaultPatience = 10

// StopReason tells which rule ended a run.
type StopReason string

// The stop reasons reported in Result.Stop.
const (
	StopMaxIter     StopReason = "max-iter"     // the iteration cap was reached
	StopFactorTol   StopReason = "factor-tol"   // the factors stopped changing
	StopResidualTol StopReason = "residual-tol" // the residual is small enough
	StopTargetError StopReason = "target-error" // the true error reached the target
	StopExact       StopReason = "exact"        // the decomposition is exact (e.g. zero residual, early exit of AltProj)
	StopSchedule    StopReason = "schedule"     // a method with a fixed schedule ran all of it (AltProj's r stages, line 17 of its Algorithm 1)
	StopStationary  StopReason = "stationary"   // no step lowers the objective beyond rounding (GD's backtracking rule)
	StopValidation  StopReason = "validation"   // the held-out error of Stop.Validation stopped improving (early stopping)
	// StopNoiseFloor: the steps stopped shrinking far below the residual,
	// the end of what iterating can do on noisy data. Converged is false:
	// Solve accepts it only when the verification finds the residual to
	// be noise.
	StopNoiseFloor StopReason = "noise-floor"
	// StopSparseExcess: a rule was met, but S holds more than 1.5α of the
	// entries, more corruptions than the model allows (GD.Huber on data
	// too sparse for it); the answer is not to be trusted.
	StopSparseExcess StopReason = "sparse-excess"
)

// Converged reports whether the rule that ended the run says the method
// converged (a tolerance was met, the answer is exact, the factors are
// stationary, or a fixed schedule ran to its end), as opposed to giving up
// at the iteration cap or ending on an answer the model rules out.
func (r StopReason) Converged() bool {
	switch r {
	case StopFactorTol, StopResidualTol, StopTargetError, StopExact, StopSchedule, StopStationary, StopValidation:
		return true
	}
	return false
}

// WithDefaults returns st with zero fields replaced by def and negative
// fields mapped to "disabled" (0 for tolerances, MaxInt for MaxIter), for
// implementations of Method.
func (st Stop) WithDefaults(def Stop) Stop {
	pick := func(v, d float64) float64 {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return d
		}
		return v
	}
	out := Stop{
		FactorTol:   pick(st.FactorTol, def.FactorTol),
		ResidualTol: pick(st.ResidualTol, def.ResidualTol),
		TargetError: pick(st.TargetError, def.TargetError),
		Validation:  st.Validation,
		Patience:    st.Patience,
	}
	out.Patience = cmp.Or(out.Patience, DefaultPatience)
	switch {
	case st.MaxIter < 0:
		out.MaxIter = math.MaxInt
	case st.MaxIter == 0:
		out.MaxIter = def.MaxIter
	default:
		out.MaxIter = st.MaxIter
	}
	return out
}

// Check returns the error of settings that no method can use for a d1×d2
// problem (a rank outside [1, min(d1, d2)), α outside [0, 1), every
// stopping rule disabled, …), or nil; Solve checks them before it hands
// over.
func (s *Settings) Check(d1, d2 int) error {
	mn := min(d1, d2)
	switch {
	case s.Rank < 1:
		return fmt.Errorf("rpca: rank must be at least 1, got %d", s.Rank)
	case s.Rank >= mn:
		return fmt.Errorf("rpca: rank %d must be smaller than min(d1, d2) = %d", s.Rank, mn)
	case math.IsNaN(s.Alpha) || s.Alpha < 0 || s.Alpha >= 1:
		return fmt.Errorf("rpca: alpha must be in [0, 1), got %v", s.Alpha)
	case s.Workers < 0:
		return fmt.Errorf("rpca: workers must be non-negative, got %d", s.Workers)
	case s.Stop.Patience < 0:
		return fmt.Errorf("rpca: Stop.Patience must be non-negative, got %d", s.Stop.Patience)
	}
	if st := s.Stop; st.MaxIter < 0 && st.FactorTol < 0 && st.ResidualTol < 0 && !(st.TargetError > 0) {
		return errors.New("rpca: every stopping rule is disabled (Stop.MaxIter, FactorTol and ResidualTol negative, no TargetError), so the run would never end; keep at least one")
	}
	for i, v := range []float64{s.Stop.FactorTol, s.Stop.ResidualTol, s.Stop.TargetError} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("rpca: Stop.%s must be finite, got %v", [...]string{"FactorTol", "ResidualTol", "TargetError"}[i], v)
		}
	}
	return nil
}

// errNoTruth is returned when Stop.TargetError is set without a truth.
var errNoTruth = errors.New("rpca: Stop.TargetError needs Problem.Truth")
