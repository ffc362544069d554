package rpca

import (
	"time"

	"github.com/rpca-gd/rpca/sparse"
	"gonum.org/v1/gonum/mat"
)

// Result is the outcome of a solve: the low-rank part as factors, the
// sparse part, and how the run went.
type Result struct {
	// Method is the name of the method that produced the result.
	Method string
	// U (d1×k) and V (d2×k) are the factors of the low-rank part
	// M = U·Vᵀ: k is the rank r, or for IALM the rank it found.
	U, V *mat.Dense
	// S is the sparse part: the corruptions found, on observed entries.
	S *Sparse
	// Iterations is the number of iterations run.
	Iterations int
	// Elapsed is the wall-clock time of the whole solve, without the
	// evaluation of the true error (Problem.Truth).
	Elapsed time.Duration
	// Stop is the rule that ended the run.
	Stop StopReason
	// Residual is the final ‖Π_Φ(Y − UVᵀ − S)‖_F relative to the clean
	// scale of Y ([ResidualScale]); a method run without Solve reports it
	// relative to ‖Π_Φ Y‖_F.
	Residual float64
	// History has one record per iteration (record 0 is the initialization).
	History []Record
	// Params are the effective parameters the method used, defaults
	// filled in, for reports (the method package's Params; JSON).
	Params any
	// DataScale is the power of two Solve divided Y by (1 when none).
	DataScale float64
	// Location is c', the constant Solve removed from the observed values
	// and added back to M (0 when none).
	Location float64
	// Attempts lists every run Solve made when it made more than one (a
	// continuation, a second try without the location, a chain's
	// fallbacks; see Solve). The result is the first verified attempt, or
	// the first attempt when none was.
	Attempts []Attempt
	// Verification is Solve's check of the answer against the data
	// ([Verify]). Rely on a result only when Verification.Verified; Stop
	// says why the method stopped, not whether its answer is right.
	Verification *Verification

	// locationMisfit: Solve removed a location that the rank did not
	// allow back (CheckOffset's test, whichever check failed first).
	locationMisfit bool
}

// Attempt is one method run by Solve (Result.Attempts).
type Attempt struct {
	Method     string        `json:"method"`
	Verified   bool          `json:"verified"`
	Failed     Check         `json:"failed,omitempty"`
	Reason     string        `json:"reason,omitempty"`
	Iterations int           `json:"iterations"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Err        string        `json:"error,omitempty"` // the method's error, when it returned one
	// Continued: the run went on from the answer of the attempt before
	// it, which had converged but was not verified (see Solve).
	Continued bool `json:"continued,omitempty"`
}

// Record describes one iteration. Quantities a method does not compute are NaN.
type Record struct {
	Iter         int           // iteration number; 0 is the state after initialization
	Elapsed      time.Duration // time since the start of the solve, true-error evaluation excluded
	Residual     float64       // ‖Π_Φ(Y − UVᵀ − S)‖_F against the clean scale of Y (see Result.Residual)
	FactorChange float64       // (‖ΔU‖²_F + ‖ΔV‖²_F)/(‖U‖²_F + ‖V‖²_F) of this step
	Error        float64       // ‖UVᵀ − M*‖_F/‖M* − mean(M*)‖_F when the truth is known (metrics.CentredRelError)
	Validation   float64       // the held-out error of Stop.Validation, when set
}

// LowRank forms the d1×d2 matrix M = U·Vᵀ. It allocates d1·d2 float64s;
// for large matrices keep the factors instead. A nil or zero Result (no
// factors) gives an empty matrix (mat.Dense's zero value).
func (r *Result) LowRank() *mat.Dense {
	if r == nil || r.U == nil || r.V == nil || r.U.IsEmpty() || r.V.IsEmpty() {
		return &mat.Dense{}
	}
	d1, _ := r.U.Dims()
	d2, _ := r.V.Dims()
	m := mat.NewDense(d1, d2, nil)
	m.Mul(r.U, r.V.T())
	return m
}

// Sparse is the sparse part S of an answer, in compressed sparse row
// form: an entry it does not list is zero ([sparse.Matrix]).
type Sparse = sparse.Matrix

// SparseWhere returns the entries of the row-major rows×cols matrix data
// (row stride stride) for which keep is true ([sparse.Where]).
func SparseWhere(rows, cols int, data []float64, stride int, keep func(x float64) bool) *Sparse {
	return sparse.Where(rows, cols, data, stride, keep)
}
