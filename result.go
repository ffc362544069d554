package rpca

import (
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Result is the outcome of a solve: the low-rank part as factors, the
// sparse part, and how the run went.
type Result struct {
	// Method is the name of the method that produced the result.
	Method string

	// U (d1×k) and V (d2×k) are the factors of the low-rank part M = U·Vᵀ.
	// k is the rank r for the gradient method and AltProj, and the rank
	// found by singular value thresholding for IALM.
	U, V *mat.Dense

	// S is the sparse part: the corruptions found by the method, on the
	// observed entries only for partially observed problems.
	S *Sparse

	// Iterations is the number of iterations run.
	Iterations int

	// Elapsed is the wall-clock time of the whole solve, initialization
	// included, without the time spent evaluating the true error for the
	// history (which only synthetic runs with Problem.Truth do).
	Elapsed time.Duration

	// Stop is the rule that ended the run.
	Stop StopReason

	// Residual is the final ‖Π_Φ(Y − UVᵀ − S)‖_F relative to the clean
	// scale of Y, √|Φ|·σ̂ with σ̂ the robust spread of the observed values
	// (plus at most one spread of their location; see [Solve]). A method
	// run directly, without Solve, reports it relative to ‖Π_Φ Y‖_F.
	Residual float64

	// History has one record per iteration (record 0 is the initialization).
	History []Record

	// Params are the effective parameters the method used, defaults filled
	// in, for reports: a *GDParams, *accaltproj.Params, *altproj.Params
	// or *ialm.Params (each encodes to JSON).
	Params any

	// DataScale is the power of two Solve divided Y by before the method
	// ran (1 when it did not; see Solve).
	DataScale float64

	// Location is c', the constant Solve removed from every observed
	// value before the method ran and added back to M (0 when it did
	// not; see Solve).
	Location float64

	// Attempts lists every run Solve made, in order, when it made more
	// than one: a method that stands for others (Resolver) falls back to
	// the next when an answer is not verified, and a converged answer
	// that is not verified is first continued once (Attempt.Continued).
	// The result is the first verified attempt, or the first attempt when
	// none was.
	Attempts []Attempt

	// Verification is Solve's check of the answer against the data,
	// independent of the method ([Verify]). A result is to be relied on
	// only when Verification.Verified; Stop says why the method stopped,
	// not whether its answer is right.
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

// Sparse is a d1×d2 sparse matrix in compressed sparse row form: the
// entries of row i are ColIdx[RowPtr[i]:RowPtr[i+1]] (increasing) with values
// Val[RowPtr[i]:RowPtr[i+1]].
//
// Sparse is the output type (the part S of a result): an entry it does
// not list is zero. A partially observed input is an [Observed], whose
// missing entries are unknown, not zero, and which also keeps the column
// index Algorithm 2 needs. The two readings of "not listed" are why they
// are two types: one cannot be passed for the other. Both have Dims, NNZ
// and Do, and write out the same way.
type Sparse struct {
	Rows, Cols int
	RowPtr     []int   // length Rows+1
	ColIdx     []int32 // length NNZ
	Val        []float64
}

// NNZ returns the number of stored entries (0 for nil).
func (s *Sparse) NNZ() int {
	if s == nil {
		return 0
	}
	return len(s.Val)
}

// Dims returns the matrix size (0×0 for nil).
func (s *Sparse) Dims() (r, c int) {
	if s == nil {
		return 0, 0
	}
	return s.Rows, s.Cols
}

// At returns entry (i, j), 0 when it is not stored. A nil Sparse, or one
// without row pointers (the zero value), stores nothing and gives 0; an
// index outside a non-empty matrix panics, as in gonum's mat.
func (s *Sparse) At(i, j int) float64 {
	if s == nil || len(s.RowPtr) == 0 {
		return 0
	}
	if i < 0 || i >= s.Rows || j < 0 || j >= s.Cols || i+1 >= len(s.RowPtr) {
		panic(fmt.Sprintf("rpca: Sparse.At(%d, %d) outside the %d×%d matrix", i, j, s.Rows, s.Cols))
	}
	lo, hi := s.RowPtr[i], s.RowPtr[i+1]
	for lo < hi { // binary search in the sorted column indices of row i
		mid := int(uint(lo+hi) >> 1)
		c := int(s.ColIdx[mid])
		switch {
		case c == j:
			return s.Val[mid]
		case c < j:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0
}

// Do calls fn for every stored entry in row-major order (none for nil or
// the zero value).
func (s *Sparse) Do(fn func(i, j int, v float64)) {
	if s != nil {
		s.DoRows(0, s.Rows, fn)
	}
}

// DoRows calls fn for every stored entry of rows lo, …, hi−1, in row
// order and, within a row, in stored order (a range of what Do lists).
func (s *Sparse) DoRows(lo, hi int, fn func(i, j int, v float64)) {
	if s == nil || len(s.RowPtr) < s.Rows+1 {
		return
	}
	for i := max(lo, 0); i < min(hi, s.Rows); i++ {
		for k := s.RowPtr[i]; k < s.RowPtr[i+1]; k++ {
			fn(i, int(s.ColIdx[k]), s.Val[k])
		}
	}
}

// ToDense forms the d1×d2 dense matrix (an empty mat.Dense for nil or a
// 0×0 Sparse).
func (s *Sparse) ToDense() *mat.Dense {
	if s == nil || s.Rows <= 0 || s.Cols <= 0 {
		return &mat.Dense{}
	}
	m := mat.NewDense(s.Rows, s.Cols, nil)
	s.Do(func(i, j int, v float64) { m.Set(i, j, v) })
	return m
}

// SparseWhere returns the entries of the row-major rows×cols matrix data
// (row stride stride) for which keep is true, as a Sparse: what a method
// keeps of a dense residual as its sparse part.
func SparseWhere(rows, cols int, data []float64, stride int, keep func(x float64) bool) *Sparse {
	sp := &Sparse{Rows: rows, Cols: cols, RowPtr: make([]int, rows+1)}
	for i := 0; i < rows; i++ {
		for j, x := range data[i*stride : i*stride+cols] {
			if keep(x) {
				sp.ColIdx = append(sp.ColIdx, int32(j))
				sp.Val = append(sp.Val, x)
			}
		}
		sp.RowPtr[i+1] = len(sp.Val)
	}
	return sp
}
