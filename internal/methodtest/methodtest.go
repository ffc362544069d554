// Package methodtest holds the checks that every method (gd, scaledgd,
// accaltproj, altproj, ialm) must pass behind rpca.Solve, and the test
// helpers they share, so that each contract is written once.
package methodtest

import (
	"bufio"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/testmat"
	"github.com/rpca-gd/rpca/synth"
)

// Instance generates the paper's synthetic model (Section 5.1).
func Instance(t testing.TB, d1, d2, r int, alpha float64, seed uint64) *synth.Instance {
	t.Helper()
	in, err := synth.Dense(synth.Config{D1: d1, D2: d2, Rank: r, Alpha: alpha, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Recovered checks that res recovers the instance's low-rank part:
// ‖UVᵀ − ABᵀ‖_F/‖ABᵀ‖_F (dense, with gonum) at most maxErr. It logs the
// run's figures and returns the error.
func Recovered(t *testing.T, res *rpca.Result, in *synth.Instance, maxErr float64) float64 {
	t.Helper()
	e := testmat.RelErr(res.U, res.V, in.A, in.B)
	d1, d2 := in.Y.Dims()
	t.Logf("%d×%d: %d iterations, stop %s, residual %.3g, error %.3g, params %v", d1, d2, res.Iterations, res.Stop, res.Residual, e, res.Params)
	if e > maxErr {
		t.Errorf("%d×%d, params %v: relative error %.3g > %g", d1, d2, res.Params, e, maxErr)
	}
	return e
}

// CheckResult checks what every method's result must satisfy on a fully
// observed Y: one history record per iteration plus the start, numbered
// in order; the reported residual equal to ‖Y − UVᵀ − S‖_F/scale (the
// scale is rpca.ResidualScale for a run through rpca.Solve, ‖Y‖_F for a
// method run directly)
// recomputed densely (to 1e-6 relative, the accuracy the trackers promise,
// plus 1e-12 for residuals near zero); and S stored without explicit zeros,
// columns increasing within each row.
func CheckResult(t *testing.T, res *rpca.Result, y *mat.Dense, scale float64) {
	t.Helper()
	if len(res.History) != res.Iterations+1 {
		t.Errorf("history has %d records for %d iterations", len(res.History), res.Iterations)
	}
	for i, rec := range res.History {
		if rec.Iter != i {
			t.Fatalf("record %d has Iter %d", i, rec.Iter)
		}
	}
	l := res.LowRank()
	l.Add(l, res.S.ToDense())
	l.Sub(y, l)
	got := mat.Norm(l, 2) / scale
	if math.Abs(got-res.Residual) > 1e-12+1e-6*res.Residual {
		t.Errorf("residual %.6g, recomputed %.6g", res.Residual, got)
	}
	for i := 0; i < res.S.Rows; i++ {
		for k := res.S.RowPtr[i]; k < res.S.RowPtr[i+1]; k++ {
			if res.S.Val[k] == 0 || (k > res.S.RowPtr[i] && res.S.ColIdx[k] <= res.S.ColIdx[k-1]) {
				t.Fatalf("bad CSR entry in row %d", i)
			}
		}
	}
}

// MatchesReference checks a result against a literal transcription of the
// method's algorithm: M and S must each be within tol of the reference in
// relative Frobenius norm.
func MatchesReference(t *testing.T, res *rpca.Result, lowRank, sparse *mat.Dense, tol float64) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want *mat.Dense
	}{{"M", res.LowRank(), lowRank}, {"S", res.S.ToDense(), sparse}} {
		var d mat.Dense
		d.Sub(c.got, c.want)
		if e := mat.Norm(&d, 2) / mat.Norm(c.want, 2); e > tol {
			t.Errorf("%s differs from the reference by %.3g", c.name, e)
		}
	}
}

// ZeroMatrix checks that Y = 0 gives M = 0, S = 0 and the stop reason
// "exact".
func ZeroMatrix(t *testing.T, m rpca.Method) {
	t.Helper()
	y := mat.NewDense(20, 30, nil)
	res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 2}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.S.NNZ() != 0 || mat.Norm(res.LowRank(), 2) != 0 || res.Stop != rpca.StopExact {
		t.Errorf("zero input gave stop %s, nnz %d", res.Stop, res.S.NNZ())
	}
}

// Cancel checks that cancelling the context from the callback of record
// 3 stops the run with context.Canceled right after that record.
func Cancel(t *testing.T, m rpca.Method) {
	t.Helper()
	in := Instance(t, 200, 200, 5, 0.05, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	// The tolerances are off so that no method converges before record 3.
	s := rpca.Settings{Rank: 5, Alpha: 0.05, Stop: rpca.Stop{ResidualTol: -1, FactorTol: -1, MaxIter: 1000}, Callback: func(rec rpca.Record) {
		calls++
		if rec.Iter == 3 {
			cancel()
		}
	}}
	_, err := rpca.Solve(ctx, in.Problem(), s, m)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if calls != 4 {
		t.Errorf("callback called %d times, want 4 (records 0–3)", calls)
	}
}

// BadSettings checks that rpca.Solve refuses each of the methods bad
// (one method with one bad setting each) on a random 30×30 matrix and on
// a zero one with an error that is ErrBadSettings (and so ErrBadInput),
// and that
// good, a dense-only method, refuses partial observations with
// rpca.ErrDenseOnly. It returns the matrix for further checks.
func BadSettings[M rpca.Method](t *testing.T, good M, bad []M) *mat.Dense {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	y := testmat.Normal(rng, 30, 30)
	p := &rpca.Problem{Dense: y}
	s := rpca.Settings{Rank: 2}
	zero := &rpca.Problem{Dense: mat.NewDense(30, 30, nil)} // answered by Solve, but the settings are still checked
	for _, m := range bad {
		for _, p := range []*rpca.Problem{p, zero} {
			if _, err := rpca.Solve(context.Background(), p, s, m); !errors.Is(err, rpca.ErrBadSettings) || !errors.Is(err, rpca.ErrBadInput) {
				t.Errorf("%+v: got %v, want ErrBadSettings and ErrBadInput", m, err)
			}
		}
	}
	obs, err := rpca.SampleDense(y, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = rpca.Solve(context.Background(), &rpca.Problem{Observed: obs}, s, good); !errors.Is(err, rpca.ErrDenseOnly) {
		t.Errorf("observed input: got %v, want ErrDenseOnly", err)
	}
	return y
}

// BenchPaper times m on the paper's synthetic model (Section 5.1, r = 10,
// α = 0.1, d×d) to a relative residual of tol and reports the final
// relative error ‖UVᵀ − M*‖_F/‖M*‖_F and the iteration count. The truth is
// not attached to the problem, so the per-iteration error is not part of
// the timing. It returns the last result.
func BenchPaper(b *testing.B, d int, m rpca.Method, tol float64) *rpca.Result {
	if d >= 3000 && testing.Short() {
		b.Skip("d = 3000 skipped under -short")
	}
	in := Instance(b, d, d, 10, 0.1, 1)
	p := &rpca.Problem{Dense: in.Y}
	s := rpca.Settings{Rank: 10, Alpha: 0.1, Stop: rpca.Stop{ResidualTol: tol}}
	var res *rpca.Result
	for b.Loop() {
		var err error
		if res, err = rpca.Solve(context.Background(), p, s, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(testmat.RelErr(res.U, res.V, in.A, in.B), "relerr")
	b.ReportMetric(float64(res.Iterations), "iters")
	return res
}

// ResetPeakRSS resets the kernel's high-water mark of the process's
// resident memory (Linux ≥ 4.0; ignored elsewhere), for benchmarks and
// experiments that report PeakRSS.
func ResetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// PeakRSS returns the peak resident memory of the process in bytes
// (VmHWM), or runtime.MemStats.Sys where /proc/self/status is unavailable.
func PeakRSS() uint64 {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys
}
