package gdcore

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/kernels"
)

// Checkpoint is everything Phase II carries from one iteration to the
// next: a run resumed from it takes the steps the run that wrote it would
// have taken. Its fields are exported for encoding (encoding/gob keeps
// every float64 bit for bit); a program only stores and returns it.
type Checkpoint struct {
	// Iteration is the number of iterations done (0: Phase I only).
	Iteration int
	// U and V are the factors after it (with the bias columns of
	// als.Method.Biases).
	U, V *mat.Dense
	// Sigma1 is σ̂₁ of Phase I, which sets the step η = c/σ̂₁ and the
	// constraint sets (Algorithm 1 line 4).
	Sigma1 float64
	// Location is the offset c of Phase I (for the report).
	Location float64
	// StepScale is the multiplier of the backtracking rule, PrevStep the
	// last relative squared step (NaN before the first), MinResidual the
	// smallest relative residual so far (the divergence rule).
	StepScale, PrevStep, MinResidual float64
	// History is the tracker's records of iterations 0..Iteration.
	History []rpca.Record
	// ImplicitY and ImplicitZ are the implicit factors of
	// als.Method.Implicit (SVD++'s Y, d2×r, and Z, d1 × U's width), nil
	// without it.
	ImplicitY, ImplicitZ *mat.Dense
	// The problem it is a state of: Y's size, |Φ| (d1·d2 when dense),
	// ‖Π_Φ Y‖_F, and the rank, α and update rule of the run.
	D1, D2, Observed int
	NormY            float64
	Rank             int
	Alpha            float64
	Update           UpdateRule
}

// ErrResumeStart: Resume and Start both set (each replaces Phase I).
var ErrResumeStart = errors.New("Resume goes on from a saved state and Start starts from given factors; set one")

// ErrCheckpoint is wrapped by the errors of a checkpoint that does not
// belong to the problem and method it is resumed with.
var ErrCheckpoint = errors.New("checkpoint does not match")

// newCheckpoint records the state after iteration iter.
func newCheckpoint(q *gdParams, st gdState, upd updater, nnz int, iter int, u, v blas64.General, sigma1, t, prevStep, minRes float64, hist []rpca.Record) *Checkpoint {
	cu, cv := mat.DenseCopyOf(kernels.Dense(u)), mat.DenseCopyOf(kernels.Dense(v))
	c := &Checkpoint{Iteration: iter, U: cu, V: cv, Sigma1: sigma1, Location: st.initLocation(),
		StepScale: t, PrevStep: prevStep, MinResidual: minRes, History: append([]rpca.Record(nil), hist...),
		D1: q.d1, D2: q.d2, Observed: nnz, NormY: st.normY(), Rank: q.rank, Alpha: q.alpha, Update: q.update()}
	if a, ok := upd.(*alsUpdate); ok && a.im != nil {
		c.ImplicitY, c.ImplicitZ = mat.DenseCopyOf(kernels.Dense(a.im.y)), mat.DenseCopyOf(kernels.Dense(a.im.z))
	}
	return c
}

// restore sets the state of upd that c carries beyond the factors: the
// ridge of ALS at its decay (λ·ρᵏ, by the same k products as the sweeps)
// and the implicit factors.
func (c *Checkpoint) restore(upd updater, q *gdParams) error {
	for range c.Iteration {
		switch a := upd.(type) {
		case *alsUpdate:
			a.ridge *= q.ridgeDecay
		case *distALSUpdate:
			a.ridge *= q.ridgeDecay
		}
	}
	a, ok := upd.(*alsUpdate)
	if !ok || a.im == nil {
		return nil
	}
	y, z := kernels.Dense(a.im.y), kernels.Dense(a.im.z)
	if c.ImplicitY == nil || c.ImplicitZ == nil {
		return fmt.Errorf("%w: it has no implicit factors (Implicit)", ErrCheckpoint)
	}
	yr, yc := c.ImplicitY.Dims()
	zr, zc := c.ImplicitZ.Dims()
	if wr, wc := y.Dims(); yr != wr || yc != wc {
		return fmt.Errorf("%w: its implicit factors are %d×%d, want %d×%d", ErrCheckpoint, yr, yc, wr, wc)
	}
	if wr, wc := z.Dims(); zr != wr || zc != wc {
		return fmt.Errorf("%w: its implicit factors are %d×%d, want %d×%d", ErrCheckpoint, zr, zc, wr, wc)
	}
	y.Copy(c.ImplicitY)
	z.Copy(c.ImplicitZ)
	return nil
}

// update returns the rule q runs.
func (q *gdParams) update() UpdateRule {
	switch {
	case q.als:
		return UpdateALS
	case q.scaled:
		return UpdateScaled
	}
	return UpdatePaper
}

// check returns an error wrapping ErrCheckpoint when c is not a state of
// the run of q on st with nnz observed entries.
func (c *Checkpoint) check(q *gdParams, st gdState, nnz int) error {
	switch {
	case c.D1 != q.d1 || c.D2 != q.d2 || c.Observed != nnz:
		return fmt.Errorf("%w: it is of a %d×%d matrix with %d entries, and this one is %d×%d with %d", ErrCheckpoint, c.D1, c.D2, c.Observed, q.d1, q.d2, nnz)
	case c.NormY != st.normY():
		return fmt.Errorf("%w: the observed values differ (norm %.17g, now %.17g)", ErrCheckpoint, c.NormY, st.normY())
	case c.Rank != q.rank || c.Alpha != q.alpha || c.Update != q.update():
		return fmt.Errorf("%w: it is of rank %d, alpha %g, update %q; this run has rank %d, alpha %g, update %q", ErrCheckpoint, c.Rank, c.Alpha, c.Update, q.rank, q.alpha, q.update())
	case c.U == nil || c.V == nil || c.Iteration < 0 || len(c.History) != c.Iteration+1:
		return fmt.Errorf("%w: it is incomplete", ErrCheckpoint)
	}
	ur, uc := c.U.Dims()
	vr, vc := c.V.Dims()
	w := q.width()
	if ur != q.d1 || vr != q.d2 || uc != w || vc != w || !finite(c.U) || !finite(c.V) ||
		!(c.Sigma1 > 0) || math.IsInf(c.Sigma1, 0) || !(c.StepScale > 0) {
		return fmt.Errorf("%w: its factors or scalars are damaged", ErrCheckpoint)
	}
	return nil
}

// width is the number of columns of the factors: the rank, and the two
// bias columns with Biases.
func (q *gdParams) width() int {
	if q.biases {
		return q.rank + 2
	}
	return q.rank
}

// factors copies c's factors into the solver's layout.
func (c *Checkpoint) factors(q *gdParams) (u, v blas64.General) {
	u, v = kernels.NewGeneral(q.d1, q.width()), kernels.NewGeneral(q.d2, q.width())
	kernels.Dense(u).Copy(c.U)
	kernels.Dense(v).Copy(c.V)
	return u, v
}
