package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/factor"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/observed"
	"github.com/rpca-gd/rpca/metrics"
)

// The names of the checks (rpca.Check) and the tolerances
// (rpca.VerifyExact …) of the verification; the root package documents
// them and exports them under its own names.
const (
	CheckFinite       = "finite"
	CheckSparse       = "sparse"
	CheckSparseFit    = "sparse-fit"
	CheckFit          = "fit"
	CheckStationary   = "stationary"
	CheckStructure    = "structure"
	CheckIdentifiable = "identifiable"
	CheckSampled      = "sampled"
	CheckConverged    = "converged"
	CheckOffset       = "offset"

	Exact      = 5e-7
	Stationary = 0.5
	Structure  = 2
	// GrossShareMax bounds the share of the residual's entries outside S
	// beyond GrossSpreads robust spreads (GrossShare): ten times what
	// Student's t with 3 degrees of freedom puts there, none under
	// Gaussian noise.
	GrossShareMax = 1e-3
	Sketch        = 16
	Bias          = 3
	Redundancy    = 10
)

// Input is an answer M = U·Vᵀ, S for data of unit scale (the frame of
// rpca.Solve), with what the checks need to know of the problem.
type Input struct {
	Y        blas64.General   // the dense data, or
	Observed *observed.Matrix // the observed entries
	U, V     *mat.Dense
	S        CSR
	// Dropped are the entries the caller took out of the method's S as
	// noise: part of the residual here, not of the method's fit.
	Dropped []Entry
	Alpha   float64
	Seed    uint64
	Workers int
	// PCA: α = 0 on a fully observed Y, where the answer asked for is the
	// truncated SVD of Y whatever the rest of Y holds, so only
	// finiteness, the empty S and stationarity are checked.
	PCA bool
	// LikelyExact: the method reports a fit at rounding. It changes the
	// order of the work only, never the report: the residual's sums are
	// taken first, and the products only if the answer is not exact.
	LikelyExact bool
}

// Report is the outcome of Answer: the fields of rpca.Verification.
type Report struct {
	Verified, Exact                     bool
	Failed, Reason                      string
	Residual                            float64
	SparseRow, SparseCol, SparseAllowed float64
	Stationary, Structure, Coherence    float64
}

// dims returns d1 and d2.
func (in *Input) dims() (int, int) {
	d1, _ := in.U.Dims()
	d2, _ := in.V.Dims()
	return d1, d2
}

// Answer runs the checks of rpca.Verify, in their order, on in; the first
// that fails is reported.
func Answer(in Input) *Report {
	d1, d2 := in.dims()
	_, k := in.U.Dims()
	rep := &Report{Stationary: math.NaN(), Structure: math.NaN()}
	fail := func(c string, format string, a ...any) *Report {
		rep.Failed, rep.Reason = c, fmt.Sprintf(format, a...)
		return rep
	}
	if !finiteDense(in.U) || !finiteDense(in.V) || !Finite(in.S.Val) {
		return fail(CheckFinite, "the answer holds a value that is not finite")
	}
	rowN, colN := in.observedCounts()
	if msg := sparseCounts(in.S, rowN, colN, in.Alpha, rep); msg != "" {
		return fail(CheckSparse, "%s", msg)
	}
	nObs := sum(rowN)
	qu, ru := factor.ThinQ(in.U)
	qv, rv := factor.ThinQ(in.V)
	rep.Coherence = Coherence(qu, qv, k)
	if in.Alpha > 0 {
		if _, rows, cols, ok := Localized(qu, ru, qv, rv, in.Alpha, nObs/max(d1, 1), nObs/max(d2, 1), d1+d2); ok {
			return fail(CheckIdentifiable, "the low-rank part holds a rank-one block on %d rows and %d columns, small enough to be corruptions within α, so the split of Y into M and S is not unique; the rank may be set above the data's (try a lower rank)", rows, cols)
		}
	}
	// The residual pass: E, its sums of squares per row and column, and
	// E_off·X, E_offᵀ·Z for X = [Q_V Ω₂], Z = [Q_U Ω₁]. When the answer
	// is likely exact, the first pass takes the sums only: an exact
	// answer needs no products, and another answer gets a full pass.
	m := max(Sketch, 2*k+8)
	rng := rand.New(rand.NewPCG(in.Seed, 0x7e51f7))
	pass := &residualPass{in: &in, x: WithSketch(qv, m, rng), z: qu}
	onSS, rowSS := pass.run(!in.LikelyExact)
	ss := 0.0
	for _, x := range rowSS {
		ss += x
	}
	nnz := len(in.S.Val)
	nOff, nOn := nObs-nnz, nnz
	rmsE, rmsM := residualScales(in.U, in.V, ru, rv, ss, nOff)
	rep.Residual = residualRatio(ss, rmsE, rmsM)
	// CheckSampled: every line has more observed entries outside S than
	// M has parameters for it, or its factor is free; and M's k(d1+d2−k)
	// degrees of freedom are at most half of the entries outside S (the
	// rule Solve applies to a dense problem's rank before it runs), or an
	// exact fit says nothing: a rank-k part fits that few entries, and S
	// can take the rest, whatever Y holds (a method that sets its own
	// rank, IALM, can return one as high as min(d1, d2)).
	minRow, minCol := linesOutside(in.S, rowN, colN)
	partial := in.Observed != nil
	dof := float64(k) * float64(d1+d2-k)
	if !in.PCA && min(minRow, minCol) <= k {
		return fail(CheckSampled, "a row or column has only %d observed entries outside S, no more than the rank %d: its part of M is not determined by the data", min(minRow, minCol), k)
	}
	if !in.PCA {
		if line, col, r, bad := Undetermined(in.Observed, qu, qv, in.S, in.Workers); bad {
			name := "row"
			if col {
				name = "column"
			}
			return fail(CheckSampled, "the observed entries of %s %d outside S leave a direction of the rank-%d part free (the least eigenvalue of their Gram matrix is %.2g of a uniform sample's): M is not determined there, however well it fits; the rank may be set above the data's (try a lower rank)", name, line+1, k, r)
		}
	}
	if !in.PCA && float64(nOff) < 2*dof {
		return fail(CheckSampled, "the rank-%d part has %.0f degrees of freedom for %d observed entries outside S: a part of that rank fits so few entries whatever the data hold, so the fit does not determine the split (lower the rank)", k, dof, nOff)
	}
	// CheckSparseFit: on its support S takes up what M leaves of Y.
	if nOn > 0 {
		rmsOn := math.Sqrt(onSS / float64(nOn))
		if rmsOn > math.Max(Bias*rmsE, Exact*rmsM) {
			return fail(CheckSparseFit, "the residual on the entries of S has an rms %.3g times that on the other entries: S holds less than what the low-rank part leaves there (a shrunk S, as an ℓ1 penalty gives), so M is biased toward the corruptions", rmsOn/math.Max(rmsE, math.SmallestNonzeroFloat64))
		}
	}
	if rep.Residual <= Exact {
		rep.Verified, rep.Exact = true, true
		return rep
	}
	if in.LikelyExact {
		_, rowSS = pass.run(true) // the same sums, and the products
	}
	if !(rep.Residual <= 1) && !in.PCA {
		return fail(CheckFit, "the residual's rms is %.3g times that of the low-rank part's variation: the rank-%d model explains less of the data than it leaves; raise the rank, or the data are mostly noise", rep.Residual, k)
	}
	// CheckStationary, against the method's own S: the dropped entries
	// are part of E here but were not part of the method's fit.
	proj, ssFit := Dropped(pass.ex, pass.etz, k, qu, qv, in.Dropped, ss)
	rep.Stationary = 0
	if ssFit > 0 {
		rep.Stationary = proj / (ssFit * (float64(k)/float64(d2) + float64(k)/float64(d1)))
	}
	if rep.Stationary > Stationary {
		return fail(CheckStationary, "%.3g of the residual (rms %.3g of the low-rank part's) lies in the low-rank part's own spaces, %.2g times white noise's share: the method stopped before it converged; raise the iteration cap or lower the tolerances", proj/ssFit, rep.Residual, rep.Stationary)
	}
	if in.PCA {
		rep.Verified = true
		return rep
	}
	// Noise is told from an error only where the data leave room to see it.
	if partial && (float64(nOff) < Redundancy*dof || min(minRow, minCol) < 2*k+2) {
		return fail(CheckSampled, "the residual is %.3g of the low-rank part's variation, and with %d observed entries outside S for %.0f degrees of freedom (the sparsest line has %d) it cannot be told from an error of M; only an exact fit is verified on data this sparse", rep.Residual, nOff, dof, min(minRow, minCol))
	}
	if min(d1, d2) < 2*m {
		return fail(CheckSampled, "the residual is %.3g of the low-rank part's variation, and a %d×%d matrix is too small to tell noise from a missed low-rank part at rank %d; only an exact fit is verified at this size", rep.Residual, d1, d2, k)
	}
	// A residual with gross entries is not noise, however isotropic its
	// sketch: corruptions left out of S look white in it.
	if g := GrossShare(in.Y, in.Observed, in.U.RawMatrix(), in.V.RawMatrix(), in.S); g > GrossShareMax {
		return fail(CheckStructure, "%.2g%% of the residual's entries outside S lie beyond %d robust spreads of the fit's noise: corruptions the sparse part did not take up, or a model that does not fit there, so the residual is not noise", 100*g, GrossSpreads)
	}
	rep.Structure = SketchStructure(pass.ex, k, rowSS)
	if rep.Structure > Structure {
		return fail(CheckStructure, "the residual (rms %.3g of the low-rank part's) has a low-rank structure, %.2g times what noise shows: a part of Y that a rank-%d model with these corruptions does not explain; raise the rank, or another method may find it", rep.Residual, rep.Structure, k)
	}
	// On partial data the sampling hides much of a low-rank part from
	// the sketch; the residual's spectral norm does not.
	if partial {
		if sr := SpectralRatio(in.Observed, in.U.RawMatrix(), in.V.RawMatrix(), in.S, in.Seed, in.Workers); sr > SpectralMax {
			return fail(CheckStructure, "the residual (rms %.3g of the low-rank part's) has a singular value %.2g times the edge of noise with its row and column energies: a low-rank part of Y that the rank-%d model leaves out; raise the rank", rep.Residual, sr, k)
		}
	}
	rep.Verified = true
	return rep
}

// residualPass is Answer's pass over the residual (ResidualProducts):
// its sums, and when asked its products ex = E_off·x and etz = E_offᵀ·z.
type residualPass struct {
	in      *Input
	x, z    blas64.General
	ex, etz blas64.General
}

// run makes the pass, with the products or without them.
func (p *residualPass) run(products bool) (onSS float64, rowSS []float64) {
	in := p.in
	x, z, ex, etz := blas64.General{}, blas64.General{}, blas64.General{}, blas64.General{}
	if products {
		d1, d2 := in.dims()
		p.ex, p.etz = kernels.NewGeneral(d1, p.x.Cols), kernels.NewGeneral(d2, p.z.Cols)
		x, z, ex, etz = p.x, p.z, p.ex, p.etz
	}
	return ResidualProducts(in.Y, in.Observed, in.U.RawMatrix(), in.V.RawMatrix(), in.S, x, z, ex, etz, in.Workers)
}

// sum returns the sum of counts.
func sum(counts []int) int {
	t := 0
	for _, n := range counts {
		t += n
	}
	return t
}

// finiteDense reports whether every element of m is finite.
func finiteDense(m *mat.Dense) bool {
	raw := m.RawMatrix()
	for i := range raw.Rows {
		if !Finite(raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]) {
			return false
		}
	}
	return true
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

// residualRatio is the report's Residual, rmsE/rmsM: 0 for a residual
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
func linesOutside(sp CSR, rowN, colN []int) (minRow, minCol int) {
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
// column.
func (in *Input) observedCounts() (rowN, colN []int) {
	d1, d2 := in.dims()
	rowN, colN = make([]int, d1), make([]int, d2)
	if in.Observed == nil {
		for i := range rowN {
			rowN[i] = d2
		}
		for j := range colN {
			colN[j] = d1
		}
		return rowN, colN
	}
	o := in.Observed
	for i := range d1 {
		rowN[i] = o.RowPtr[i+1] - o.RowPtr[i]
	}
	for _, j := range o.ColIdx {
		colN[j]++
	}
	return rowN, colN
}

// sparseCounts fills rep's sparse figures and returns the reason S breaks
// α, or "".
func sparseCounts(sp CSR, rowN, colN []int, alpha float64, rep *Report) string {
	rows, cols := len(rowN), len(colN)
	colS := make([]int, cols)
	for _, j := range sp.ColIdx {
		colS[j]++
	}
	total, nObs := len(sp.Val), 0
	lines := rows + cols
	worst := ""
	frac := func(c, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(c) / float64(n)
	}
	for i := range rows {
		c := sp.RowPtr[i+1] - sp.RowPtr[i]
		nObs += rowN[i]
		rep.SparseRow = max(rep.SparseRow, frac(c, rowN[i]))
		if worst == "" && float64(c) > SparseAllowed(alpha, rowN[i], lines) {
			worst = fmt.Sprintf("row %d has %d of its %d entries in S (α = %g allows %.0f)", i, c, rowN[i], alpha, math.Floor(SparseAllowed(alpha, rowN[i], lines)))
		}
	}
	for j, c := range colS {
		rep.SparseCol = max(rep.SparseCol, frac(c, colN[j]))
		if worst == "" && float64(c) > SparseAllowed(alpha, colN[j], lines) {
			worst = fmt.Sprintf("column %d has %d of its %d entries in S (α = %g allows %.0f)", j, c, colN[j], alpha, math.Floor(SparseAllowed(alpha, colN[j], lines)))
		}
	}
	if rows > 0 {
		rep.SparseAllowed = SparseAllowed(alpha, nObs/rows, lines) / math.Max(float64(nObs/rows), 1)
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
