// Package synth generates the synthetic robust PCA problems of the paper's
// Section 5.1: Y = M* + S* with M* = A·Bᵀ of rank r and S* sparse, fully
// observed ([Dense]) or observed on a random set Φ ([Observed]), entirely
// determined by a seed.
//
// The low-rank part has A ∈ ℝ^{d1×r}, B ∈ ℝ^{d2×r} with i.i.d. entries
// N(0, 1/d1) and N(0, 1/d2) (the paper's N(0, 1/d) for square matrices).
// The corruptions follow either the paper's experiments ([Random]: each
// entry is corrupted with probability α, value uniform on [−c, c]) or the
// deterministic model the theory is about ([Deterministic]: S* ∈ S_α of
// eq. (S_alpha) with the maximal number of corruptions per row and column).
// The default magnitude is c = 5r/d with d = √(d1·d2).
//
// Reproducibility: the output depends only on the [Config] (never on the
// number of goroutines). Row i of A (of B) and the sampled positions of row
// i of Φ come from a PCG generator seeded from (Seed, stream, i); the
// corruption S*_ij is a hash of (Seed, i, j) — a counter-based generator —
// so that [Dense] and [Observed] with the same Config produce the same A, B
// and S*, and the observed values equal the dense Y on Φ exactly.
package synth

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/observed"
)

// Corruption selects the model of the sparse part S*.
type Corruption int

const (
	// Random corrupts each entry independently with probability α, with a
	// value uniform on [−c, c] (the paper's Section 5.1).
	Random Corruption = iota

	// Deterministic corrupts exactly ⌊α·d2⌋ entries in every row and at
	// most ⌊α·d1⌋ in every column (exactly, when d1⌊α·d2⌋ = d2⌊α·d1⌋, in
	// particular for square matrices), so that S* ∈ S_α (eq. (S_alpha)).
	// When d1⌊α·d2⌋ > d2⌊α·d1⌋ the roles swap: exactly ⌊α·d1⌋ per column
	// and at most ⌊α·d2⌋ per row. In all cases the counts of any two rows
	// (columns) differ by at most one. The support is a random row and
	// column permutation of a "staircase": with N the total count, slot
	// t ∈ [0, N) lies in row ⌊t·d1/N⌋ and column t mod d2. The values are
	// a random sign times a magnitude uniform on [c/2, c], so that every
	// corruption is well above the typical entry of M* (standard deviation
	// √r/d).
	Deterministic
)

// String returns "random" or "deterministic".
func (c Corruption) String() string {
	switch c {
	case Random:
		return "random"
	case Deterministic:
		return "deterministic"
	}
	return fmt.Sprintf("Corruption(%d)", int(c))
}

// Config describes one synthetic problem.
type Config struct {
	D1, D2 int     // size of Y
	Rank   int     // r, with 1 ≤ r < min(D1, D2)
	Alpha  float64 // corruption level α ∈ [0, 1)

	// Corruption is the model of S* (default Random).
	Corruption Corruption

	// Magnitude is the corruption scale c; 0 means the paper's 5r/d with
	// d = √(D1·D2).
	Magnitude float64

	// Kappa, when at least 1, gives M* the condition number κ exactly:
	// M* = Q_A·diag(s)·Q_Bᵀ with orthonormal Q_A, Q_B (the QR of the
	// Gaussian factors) and s evenly spaced from 1 down to 1/κ, scaled so
	// that ‖M*‖_F = √r (as for the default model, whose singular values
	// are near 1). The factors are A = Q_A·diag(√s), B = Q_B·diag(√s).
	// κ = 1 is that model with equal singular values; 0 keeps the paper's
	// model (Gaussian factors, whose condition number is near but not 1).
	Kappa float64

	// P is the sampling rate p ∈ (0, 1] of [Observed]: each entry is in Φ
	// independently with probability p (eq. (Y)). [Dense] ignores it.
	P float64

	// Seed determines all random choices.
	Seed uint64

	// Workers is the number of goroutines (GOMAXPROCS when ≤ 0). It does
	// not change the output.
	Workers int
}

// Instance is a generated problem with its ground truth.
type Instance struct {
	Config Config

	// A (d1×r) and B (d2×r) are the truth factors, M* = A·Bᵀ.
	A, B *mat.Dense

	// Y is the full data matrix M* + S* ([Dense] only).
	Y *mat.Dense

	// Obs holds the entries of M* + S* on Φ ([Observed] only).
	Obs *rpca.Observed

	// S holds the corruptions: all of S* for [Dense], those on Φ for
	// [Observed].
	S *rpca.Sparse
}

// Problem wraps the instance as a problem for [rpca.Solve], with the truth
// attached so that methods record the true error. The data are shared, not
// copied.
func (in *Instance) Problem() *rpca.Problem {
	p := &rpca.Problem{Truth: &rpca.Truth{A: in.A, B: in.B}}
	if in.Obs != nil {
		p.Observed = in.Obs
	} else {
		p.Dense = in.Y
	}
	return p
}

// PaperRate returns the sampling rate p = 0.15·r²·log(d)/d of the paper's
// Figure 1(b), clamped to at most 1.
func PaperRate(d, r int) float64 {
	p := 0.15 * float64(r) * float64(r) * math.Log(float64(d)) / float64(d)
	return math.Min(p, 1)
}

// magnitude returns the corruption scale c.
func (c *Config) magnitude() float64 {
	if c.Magnitude > 0 {
		return c.Magnitude
	}
	return 5 * float64(c.Rank) / math.Sqrt(float64(c.D1)*float64(c.D2))
}

// Validate checks the configuration as [Dense] (observed false) or
// [Observed] (observed true) would, without generating anything.
func (c Config) Validate(observed bool) error { return c.validate(observed) }

// validate checks the configuration; observedMode adds the checks on P.
func (c *Config) validate(observedMode bool) error {
	switch {
	case c.D1 <= 0 || c.D2 <= 0:
		return fmt.Errorf("synth: matrix size %d×%d must be positive", c.D1, c.D2)
	case c.D1 > math.MaxInt32 || c.D2 > math.MaxInt32:
		return fmt.Errorf("synth: matrix size %d×%d exceeds the int32 index range", c.D1, c.D2)
	case c.Rank < 1 || c.Rank >= min(c.D1, c.D2):
		return fmt.Errorf("synth: rank %d must satisfy 1 ≤ r < min(d1, d2) = %d", c.Rank, min(c.D1, c.D2))
	case !(c.Alpha >= 0 && c.Alpha < 1):
		return fmt.Errorf("synth: corruption level α = %v must be in [0, 1)", c.Alpha)
	case c.Corruption != Random && c.Corruption != Deterministic:
		return fmt.Errorf("synth: unknown corruption model %d", int(c.Corruption))
	case !(c.Magnitude >= 0) || math.IsInf(c.Magnitude, 1):
		return fmt.Errorf("synth: corruption magnitude %v must be finite and ≥ 0", c.Magnitude)
	case !(c.Kappa >= 0) || math.IsInf(c.Kappa, 1) || (c.Kappa > 0 && c.Kappa < 1):
		return fmt.Errorf("synth: condition number κ = %v must be finite and ≥ 1 (0: the paper's model)", c.Kappa)
	}
	if !observedMode {
		if c.D1 > math.MaxInt/8/c.D2 {
			return fmt.Errorf("synth: a dense %d×%d matrix is too large; use Observed", c.D1, c.D2)
		}
		return nil
	}
	if !(c.P > 0 && c.P <= 1) {
		return fmt.Errorf("synth: sampling rate p = %v must be in (0, 1]", c.P)
	}
	// |Φ| ~ Binomial(d1·d2, p); refuse when its mean plus 6 standard
	// deviations exceeds the storage's int32 limit.
	n := float64(c.D1) * float64(c.D2)
	if mean := n * c.P; mean+6*math.Sqrt(mean)+1 > observed.MaxEntries {
		return fmt.Errorf("synth: about %.3g observed entries exceed the supported %d; lower p", mean, observed.MaxEntries)
	}
	return nil
}
