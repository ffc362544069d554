package rpca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/errs"
	"github.com/rpca-gd/rpca/internal/robust"
	"github.com/rpca-gd/rpca/internal/tsvd"
	"github.com/rpca-gd/rpca/internal/verify"
	"github.com/rpca-gd/rpca/metrics"
)

// checkEntries returns the ErrBadInput error of a problem with no
// observed entry (ErrNoEntries) or with a row or column that has none.
func checkEntries(p *Problem) error {
	if p.Observed != nil && p.obs().NNZ() == 0 {
		return errs.Input(fmt.Errorf("%w: the problem has no observed entry", ErrNoEntries))
	}
	if p.Observed != nil {
		if er, ec := p.obs().EmptyLines(); er > 0 || ec > 0 {
			return errs.Input(fmt.Errorf("rpca: %d rows and %d columns have no observed entry; the low-rank part is not identifiable there (drop them or observe more entries)", er, ec))
		}
	}
	return nil
}

// Solve decomposes p with method m (gd.Method, accaltproj.Method, … or
// methods.Auto, the command line's default chain). It checks the problem
// and the shared settings, then runs the method in a frame no method has
// to know about (frame.go, docs/verification.md): with α > 0 it sets
// aside entries beyond GrossSpreads robust spreads (reported in S); it
// removes the part of the median beyond one spread (Result.Location, added
// back to M at the method's rank; at α = 0 only on partial data, since
// α = 0 on a dense Y asks for its truncated SVD) and then divides by a power of two near the spread
// (Result.DataScale); residuals are relative to the clean scale of the
// data, not to ‖Y‖. Data without a location are scaled only beyond
// 2^±40 of that scale (α > 0) or 2^±64 of their largest magnitude.
//
// Every answer is then verified against the data ([Verify],
// Result.Verification). A converged answer that fails is continued once
// from itself; an answer with a location removed that fails, when the
// location did not fit the rank (CheckOffset) or the method did not
// converge, is solved again without it; a chain (Resolver) tries its
// fallbacks. Each second answer is kept only when verified, and every run
// is listed in Result.Attempts. On cancellation Solve returns ctx's error.
//
// A constant Y is answered without the method (M = Y, S = 0), and α = 0
// with a thresholding method (AccAltProj, AltProj, IALM), which cannot
// honour it, by the truncated SVD of Y (Result.Method "pca"). Entries of
// S that do not stand above the fit's noise are not reported
// ([SparseNoiseFactor]).
func Solve(ctx context.Context, p *Problem, s Settings, m Method) (*Result, error) {
	if err := checkInput(p, s); err != nil {
		return nil, err
	}
	if s.Stop.TargetError > 0 && p.Truth == nil {
		return nil, errNoTruth
	}
	if err := checkEntries(p); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("rpca: no method: pass one, such as &accaltproj.Method{}, &gd.Method{} or the command line's default, methods.Auto")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var fallbacks []Method
	if r, ok := m.(Resolver); ok {
		m, fallbacks = r.Resolve(p, s)
		if m == nil {
			return nil, errors.New("rpca: the method resolved to no method")
		}
	}
	res, err := solveWith(ctx, p, s, m)
	if err != nil || len(fallbacks) == 0 || callerStop(res) {
		return res, err
	}
	attempts := res.Attempts // a continuation (goOn) lists both of its runs
	if attempts == nil {
		attempts = []Attempt{attempt(m, res, nil)}
	}
	best := res
	for _, f := range fallbacks {
		if best.Verification.Verified {
			break
		}
		r, err := solveWith(ctx, p, s, f)
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		if err == nil && r.Attempts != nil {
			attempts = append(attempts, r.Attempts...)
		} else {
			attempts = append(attempts, attempt(f, r, err))
		}
		if err == nil && r.Verification.Verified {
			best = r
		}
	}
	if len(attempts) > 1 {
		best.Attempts = attempts
	}
	return best, nil
}

// callerStop reports whether the run ended where the caller asked it to
// stop short of convergence (Stop.TargetError, a benchmark's stop): its
// answer is reported as it is, verified or not, and neither the next
// method of a chain nor the second try without the location runs.
func callerStop(res *Result) bool { return res.Stop == StopTargetError }

// attempt records a run of m for Result.Attempts.
func attempt(m Method, res *Result, err error) Attempt {
	a := Attempt{Method: m.Name()}
	if err != nil {
		a.Err = err.Error()
		return a
	}
	v := res.Verification
	a.Method, a.Iterations, a.Elapsed = res.Method, res.Iterations, res.Elapsed
	a.Verified, a.Failed, a.Reason = v.Verified, v.Failed, v.Reason
	return a
}

// solveWith is Solve with one method: its checks, the frame, the method's
// run and its verification, and the second try without the location.
func solveWith(ctx context.Context, p *Problem, s Settings, m Method) (*Result, error) {
	caps := m.Capabilities()
	if caps.DenseOnly && p.Dense == nil {
		return nil, fmt.Errorf("rpca: method %s: %w", m.Name(), ErrDenseOnly)
	}
	if c, ok := m.(ParamChecker); ok {
		if err := c.CheckParams(p, s); err != nil {
			return nil, BadSettings(err)
		}
	}
	// The location is removed with α > 0, and at α = 0 on partial data
	// (matrix completion); on a dense Y α = 0 asks for the truncated SVD,
	// which a location removed and added back would change under noise.
	// Methods with offsets of their own, early stopping on held-out data,
	// warm starts and checkpoints keep the data uncentred.
	pcaAnswer := s.Alpha == 0 && !caps.UsesAlpha && p.Dense != nil
	centre := (s.Alpha > 0 || p.Dense == nil) && !caps.FitsOffset && s.Stop.Validation == nil && !hasWarmStart(m) && !checkpointing(m)
	fr := analyzeFrame(p, s.Alpha > 0, centre)
	if fr.Constant && (fr.Median == 0 || !caps.FitsOffset) {
		return constantResult(ctx, p, s, m, caps, fr.Median)
	}
	if pcaAnswer {
		m, caps = pca{}, pca{}.Capabilities()
	}
	res, err := solveFramed(ctx, p, s, m, caps, &fr)
	if err != nil {
		return nil, err
	}
	if res, err = goOn(ctx, p, s, m, res); err != nil {
		return nil, err
	}
	if fr.Loc != 0 && !res.Verification.Verified && !callerStop(res) && (res.locationMisfit || !res.Stop.Converged()) {
		return retryUncentred(ctx, p, s, m, caps, res)
	}
	return res, nil
}

// retryUncentred solves p again without removing the location after res,
// solved with it removed, was not verified, and returns the second answer
// when that is verified, res otherwise.
func retryUncentred(ctx context.Context, p *Problem, s Settings, m Method, caps Capabilities, res *Result) (*Result, error) {
	alt := analyzeFrame(p, s.Alpha > 0, false)
	res2, err := solveFramed(ctx, p, s, m, caps, &alt)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err == nil && res2.Verification.Verified:
		return res2, nil
	}
	return res, nil
}

// goOn lets m go on once from its own answer res when res met the
// method's convergence rule, its residual is at rounding as a whole
// (Result.Residual ≤ VerifyExact), and it was not verified: a rule on the
// factors as a whole can fire while a few lines are short of the accuracy
// the verification asks of every line (docs/verification.md). On noisy
// data or at a wrong answer more iterations do not help, so those are
// left as they are, as are methods without a warm start, runs from a warm
// start or checkpoint, factors wider than the rank, and caller stops. The
// continuation is kept, with both runs joined in Result.Attempts, only
// when verified.
func goOn(ctx context.Context, p *Problem, s Settings, m Method, res *Result) (*Result, error) {
	w, ok := m.(WarmStarter)
	if !ok || res.Verification.Verified || !res.Stop.Converged() || callerStop(res) || hasWarmStart(m) || checkpointing(m) {
		return res, nil
	}
	if _, k := res.U.Dims(); !(res.Residual <= VerifyExact) || k != s.Rank {
		return res, nil
	}
	n := res.Iterations
	next := w.WithWarmStart(res.U, res.V)
	sc := s
	if cb := s.Callback; cb != nil {
		// The iterations go on from the first run's; its start repeats
		// the first run's last record.
		sc.Callback = func(rec Record) {
			if rec.Iter > 0 {
				rec.Iter += n
				rec.Elapsed += res.Elapsed
				cb(rec)
			}
		}
	}
	more, err := solveWith(ctx, p, sc, next)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil || !more.Verification.Verified:
		return res, nil
	}
	first := attempt(m, res, nil)
	cont := attempt(next, more, nil)
	cont.Continued = true
	more.Attempts = []Attempt{first, cont}
	more.Iterations += n
	more.Elapsed += res.Elapsed
	hist := slices.Clone(res.History)
	for _, rec := range more.History[min(1, len(more.History)):] {
		rec.Iter += n
		rec.Elapsed += res.Elapsed
		hist = append(hist, rec)
	}
	more.History = hist
	return more, nil
}

// ResidualScale is the scale the residuals of Solve are relative to
// (Result.Residual, Record.Residual, Stop.ResidualTol): √|Φ|·√(σ̂² +
// min(|c|, σ̂)²), where c is the median of the observed values and σ̂
// their robust spread, 1.4826 times the median absolute deviation from c
// (or a higher quantile of it, when more than half the values equal c).
// Unlike ‖Π_Φ Y‖_F, neither a large offset nor a few huge corruptions can
// make it large, so a residual small against it is small against the
// data's variation. It is 0 for a constant Y.
func ResidualScale(p *Problem, s Settings) float64 {
	if p.Validate() != nil {
		return math.NaN()
	}
	fr := analyze(p, s.Alpha > 0)
	return fr.RefF * fr.Scale
}

// analyzeFrame is the frame of p: aside (α > 0) sets gross entries
// aside, centre removes the location (not for the methods Solve leaves
// uncentred, nor for its second try).
func analyzeFrame(p *Problem, aside, centre bool) frame {
	return robust.Analyze(robustValues(p), aside, centre)
}

// hasWarmStart reports whether m starts from given factors.
func hasWarmStart(m Method) bool {
	w, ok := m.(WarmStarter)
	if !ok {
		return false
	}
	u, _ := w.WarmStart()
	return u != nil
}

// checkpointing reports whether m saves or resumes a state (Checkpointer).
func checkpointing(m Method) bool {
	c, ok := m.(Checkpointer)
	return ok && c.Checkpointing()
}

// solveFramed runs m on p in the frame fr, verifies the answer and maps it
// back to the units of the data.
func solveFramed(ctx context.Context, p *Problem, s Settings, m Method, caps Capabilities, fr *frame) (*Result, error) {
	pf, err := framedProblem(fr, p)
	if err != nil {
		return nil, err
	}
	if c := fr.Scale; c != 1 {
		m = scaledStart(m, c)
		if f := s.Stop.Validation; f != nil { // it sees M in the units of the data
			var w mat.Dense
			s.Stop.Validation = func(u, v *mat.Dense) float64 {
				w.Scale(c, u)
				return f(&w, v)
			}
		}
	}
	res, err := m.Solve(ctx, pf, s)
	if err != nil {
		return nil, err
	}
	if res == nil || res.U == nil || res.V == nil || res.S == nil {
		return nil, fmt.Errorf("rpca: method %s returned no result", m.Name())
	}
	dropped := res.pruneSparse(pf)
	res.Residual *= fr.ResFactor()
	if len(fr.Gross) > 0 {
		y, o := pf.storage()
		r := verify.Residuals{Y: y, O: o, U: res.U, V: res.V}
		s := verify.WithEntries(csrOf(res.S), res.S.Rows, fr.Gross, r.At, r.Value)
		res.S = &Sparse{Rows: res.S.Rows, Cols: res.S.Cols, RowPtr: s.RowPtr, ColIdx: s.ColIdx, Val: s.Val}
	}
	ver := verifyAnswer(pf, res, dropped, s)
	res.DataScale = fr.Scale
	if fr.Scale != 1 {
		res.unscale(fr.Scale)
	}
	misfit := false
	if fr.Loc != 0 {
		misfit = foldLocation(res, fr.Loc, caps.FixedRank, ver)
	}
	if len(fr.Gross) > 0 {
		y, o := p.storage()
		r := verify.Residuals{Y: y, O: o, U: res.U, V: res.V}
		verify.SetEntries(csrOf(res.S), fr.Gross, r.At, r.Value)
	}
	res.Verification = ver
	res.locationMisfit = misfit
	return res, nil
}

// csrOf returns the arrays of s.
func csrOf(s *Sparse) verify.CSR { return verify.CSR{RowPtr: s.RowPtr, ColIdx: s.ColIdx, Val: s.Val} }

// scaledStart returns m, or for a method with a warm start a copy whose
// start U·Vᵀ is divided by c like the data (U/c).
func scaledStart(m Method, c float64) Method {
	w, ok := m.(WarmStarter)
	if !ok {
		return m
	}
	u, v := w.WarmStart()
	if u == nil {
		return m
	}
	var us mat.Dense
	us.Scale(1/c, u)
	return w.WithWarmStart(&us, v)
}

// foldLocation adds c'·11ᵀ to M = U·Vᵀ (in the units of the data) and
// keeps the method's rank (verify.Fold: the best rank-k approximation;
// methods without a fixed rank keep k + 1 columns unless σ_{k+1} is
// rounding). When σ_{k+1} is larger than the noise the verification
// measured, the location was not one the rank allows, and ver fails
// CheckOffset; it reports whether it did, whatever check failed first.
func foldLocation(res *Result, loc float64, fixedRank bool, ver *Verification) (misfit bool) {
	res.Location = loc
	var reason string
	res.U, res.V, ver.OffsetGap, reason = verify.Fold(res.U, res.V, loc, fixedRank, ver.Residual)
	if reason != "" {
		ver.fail(CheckOffset, reason)
	}
	return reason != ""
}

// fail marks ver as failed by check c, unless an earlier check failed.
func (v *Verification) fail(c Check, reason string) {
	if !v.Verified && v.Failed != "" {
		return
	}
	v.Verified, v.Exact, v.Failed, v.Reason = false, false, c, reason
}

// constantResult is the answer for a Y whose observed values all equal c
// (0 included): M = c·11ᵀ (rank one, or zero), S = 0, exact, without the
// method.
func constantResult(ctx context.Context, p *Problem, s Settings, m Method, caps Capabilities, c float64) (*Result, error) {
	d1, d2 := p.Dims()
	k := s.Rank
	if !caps.FixedRank && c != 0 {
		k = 1
	}
	u, v := mat.NewDense(d1, k, nil), mat.NewDense(d2, k, nil)
	sq := math.Sqrt(math.Abs(c))
	for i := range d1 {
		u.Set(i, 0, sq)
	}
	for j := range d2 {
		v.Set(j, 0, math.Copysign(sq, c))
	}
	res, err := oneStep(ctx, p, s, m.Name(), time.Now(), 0, u, v)
	if err != nil {
		return nil, err
	}
	res.DataScale = 1
	res.Verification = &Verification{Verified: true, Exact: true, Stationary: math.NaN(), Structure: math.NaN()}
	return res, nil
}

// pca is the truncated SVD of a fully observed Y, the answer to α = 0 for
// the methods that cannot honour it.
type pca struct{}

func (pca) Name() string { return "pca" }

func (pca) Capabilities() Capabilities {
	return Capabilities{DenseOnly: true, UsesAlpha: true, FixedRank: true, BytesPerEntry: 8}
}

// Solve computes the rank-r truncated SVD Y ≈ L·Σ·Rᵀ to tsvd's default
// accuracy and returns U = L·Σ^½, V = R·Σ^½.
func (pca) Solve(ctx context.Context, p *Problem, s Settings) (*Result, error) {
	start := time.Now()
	u, v, res, err := tsvd.Factors(ctx, p.Dense.RawMatrix(), s.Rank, s.Seed, s.Workers)
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("rpca: pca: %w", err)
	}
	return oneStep(ctx, p, s, "pca", start, res, u, v)
}

// oneStep is the result of an answer found in one step (Solve's
// constant and PCA answers): S = 0 and one record, given to the callback,
// with the true error when the truth is known; an error when ctx is done.
func oneStep(ctx context.Context, p *Problem, s Settings, name string, start time.Time, residual float64, u, v *mat.Dense) (*Result, error) {
	rec := Record{Elapsed: time.Since(start), Residual: residual, FactorChange: math.NaN(), Error: math.NaN(), Validation: math.NaN()}
	if f := p.resFactor; f > 0 && !math.IsInf(f, 0) { // the residual reported, as the methods' trackers do
		rec.Residual *= f
	}
	if t := p.Truth; t != nil {
		rec.Error = metrics.CentredRelError(u, v, t.A, t.B)
	}
	if val := s.Stop.Validation; val != nil {
		rec.Validation = val(u, v)
	}
	if s.Callback != nil {
		s.Callback(rec)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d1, d2 := p.Dims()
	return &Result{Method: name, U: u, V: v, S: &Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)},
		Stop: StopExact, Residual: residual, Elapsed: rec.Elapsed, History: []Record{rec}}, nil
}

// unscale maps a result on data divided by c back to the caller's units:
// M = (c·U)·Vᵀ and S = c·S. Relative quantities (residuals, errors,
// factor changes) are unchanged.
func (r *Result) unscale(c float64) {
	if r.U != nil {
		r.U.Scale(c, r.U)
	}
	if r.S != nil {
		for k := range r.S.Val {
			r.S.Val[k] *= c
		}
	}
}
