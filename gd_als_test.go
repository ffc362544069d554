package rpca_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/distributed"
	"github.com/rpca-gd/rpca/gd"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/synth"
)

// TestALSRecovers runs UpdateALS on partial instances of the paper's
// model (Algorithm 2's setting): it must reach the truth to the true
// relative error 1e-6 and say it converged, with the paper's counts and
// with PerLine, in far fewer sweeps than the gradient method needs
// iterations (each sweep is an exact minimisation; the paper's update
// took 86 iterations here).
func TestALSRecovers(t *testing.T) {
	in := instance(t, synth.Config{D1: 400, D2: 300, Rank: 4, Alpha: 0.05, P: 0.3, Seed: 8})
	s := rpca.Settings{Rank: 4, Alpha: 0.05, Seed: 1}
	paper := solve(t, in.Problem(), s, &gd.Method{})
	for _, perLine := range []bool{false, true} {
		res := solve(t, in.Problem(), s, &als.Method{PerLine: perLine})
		e := relErr(res, in)
		t.Logf("PerLine %v: %d sweeps (gd: %d iterations), stop %s, error %.2g", perLine, res.Iterations, paper.Iterations, res.Stop, e)
		if !res.Stop.Converged() || e > 1e-6 {
			t.Errorf("PerLine %v: stop %s with error %.3g, want convergence to 1e-6", perLine, res.Stop, e)
		}
		if res.Iterations*3 > paper.Iterations {
			t.Errorf("PerLine %v: %d sweeps against the gradient method's %d iterations, want a third at most", perLine, res.Iterations, paper.Iterations)
		}
		if q := alsParams(t, res); res.Method != "als" || q.PerLine != perLine || q.Gamma != 3 {
			t.Errorf("method %q, params %+v: want als reported with γ = 3 and PerLine %v", res.Method, res.Params, perLine)
		}
	}
}

// TestDistributedSolvers: gd and als both run on an distributed.Store
// store (als on one that also does its half-sweeps,
// distributed.ALSStore; TestSolveDistributedALS).
func TestDistributedSolvers(t *testing.T) {
	for _, m := range []rpca.Method{&als.Method{}, &gd.Method{}} {
		if _, ok := m.(distributed.Solver); !ok {
			t.Errorf("%s is not a DistributedSolver", m.Name())
		}
	}
}

// TestALSBiasesRecovers adds a bias per row and per column to a partial
// instance of the paper's model, M = A·Bᵀ + b1ᵀ + 1cᵀ (biases of the
// size of M's entries). GD.Biases at rank r must recover all of M to
// the true relative error 1e-6, say it converged, and return the bias
// layout U = [U₀ b 1], V = [V₀ 1 c]; without Biases the rank-r fit cannot
// hold the two extra directions and stays far off (above 1e-2).
func TestALSBiasesRecovers(t *testing.T) {
	const d1, d2, r = 400, 300, 4
	in := instance(t, synth.Config{D1: d1, D2: d2, Rank: r, Alpha: 0.05, P: 0.3, Seed: 8})
	rng := rand.New(rand.NewPCG(4, 5))
	b, c := make([]float64, d1), make([]float64, d2)
	for i := range b {
		b[i] = 0.01 * rng.NormFloat64()
	}
	for j := range c {
		c[j] = 0.01 * rng.NormFloat64()
	}
	ptr, idx, vals := in.Obs.CSR()
	shifted := slices.Clone(vals)
	for i := range d1 {
		for k := ptr[i]; k < ptr[i+1]; k++ {
			shifted[k] += b[i] + c[idx[k]]
		}
	}
	obs, err := rpca.NewObservedCSR(d1, d2, ptr, idx, shifted)
	if err != nil {
		t.Fatal(err)
	}
	truth := mat.NewDense(d1, d2, nil)
	truth.Mul(in.A, in.B.T())
	truth.Apply(func(i, j int, x float64) float64 { return x + b[i] + c[j] }, truth)
	errOf := func(res *rpca.Result) float64 {
		m := res.LowRank()
		m.Sub(m, truth)
		return mat.Norm(m, 2) / mat.Norm(truth, 2)
	}
	s := rpca.Settings{Rank: r, Alpha: 0.05, Seed: 1}
	p := &rpca.Problem{Observed: obs}
	res := solve(t, p, s, &als.Method{Biases: true})
	e := errOf(res)
	t.Logf("with biases: %d sweeps, stop %s, error %.2g", res.Iterations, res.Stop, e)
	if !res.Stop.Converged() || e > 1e-6 {
		t.Errorf("with biases: stop %s with error %.3g, want convergence to 1e-6", res.Stop, e)
	}
	if _, w := res.U.Dims(); w != r+2 || res.U.At(7, r+1) != 1 || res.V.At(5, r) != 1 || !alsParams(t, res).Biases {
		t.Errorf("U has %d columns, U[7, r+1] = %v, V[5, r] = %v, params %+v: want r+2 columns with the bias layout reported",
			w, res.U.At(7, r+1), res.V.At(5, r), res.Params)
	}
	plain := solve(t, p, s, &als.Method{})
	if e := errOf(plain); e < 1e-2 {
		t.Errorf("without biases: error %.3g; the instance does not need the biases", e)
	}
}
