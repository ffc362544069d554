package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/internal/hostile"
	"github.com/rpca-gd/rpca/internal/testfile"
)

// TestAdversarialDefaults runs the adversarial suite's problems
// (internal/hostile) through the command line's defaults: rpca decompose
// with only --rank and --alpha, on the matrix written as .npy (fully
// observed) or Matrix Market coordinates (partial). An answer the summary
// calls verified must be right (error ≤ 1e-6 against the truth's varying
// part, from the factors written with --factors); one that is not must
// say so on stderr; and where the model holds with margin, the defaults
// verify.
func TestAdversarialDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite through the command line")
	}
	holds, verified := 0, 0
	for k, sp := range hostile.Suite(7, 1) {
		c, err := hostile.Build(sp)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		in := join(dir, "Y.npy")
		if c.Problem.Observed != nil {
			in = join(dir, "Y.mtx")
			testfile.WriteWith(t, in, func(w io.Writer) error { return mtx.WriteSparse(w, c.Problem.Observed) })
		} else {
			testfile.WriteWith(t, in, func(w io.Writer) error { return npy.Write(w, c.Problem.Dense) })
		}
		out := join(dir, "out")
		r := runCLI(t, t.Context(), "decompose", "--in", in, "--rank", fmt.Sprint(c.Settings.Rank),
			"--alpha", fmt.Sprint(c.Settings.Alpha), "--factors", "--out", out, "--json")
		if r.code != 0 {
			// Refused inputs (a problem too small for α, say) are errors,
			// not answers.
			if c.Holds {
				t.Errorf("%d %s: exit %d: %s", k, c.Name, r.code, r.stderr)
			}
			continue
		}
		sum := readJSON(t, r.stdout)
		e := hostile.Error(readNpy(t, join(out, "U.npy")), readNpy(t, join(out, "V.npy")), c.A, c.B)
		switch {
		case sum["verified"] == true && e > max(1e-6, c.Noise):
			t.Errorf("%d %s: verified by %v, but error %.3g", k, c.Name, sum["method"], e)
		case sum["verified"] != true && !strings.Contains(r.stderr, "is not verified"):
			t.Errorf("%d %s: not verified, and stderr does not say so: %q", k, c.Name, r.stderr)
		}
		if c.Holds {
			holds++
			if sum["verified"] == true {
				verified++
			} else {
				t.Errorf("%d %s: the model holds, but the defaults did not verify: %s", k, c.Name, r.stderr)
			}
		}
	}
	t.Logf("the defaults verified %d of the %d problems where the model holds with margin", verified, holds)
}

// TestExtremeValues: an input holding the largest float64 gave a
// lowrank.npy of +Inf, and synth --magnitude 1e300 printed "relative
// error 1.35e+300" and reported converged. Now the first is set aside as
// a gross corruption and M is finite and right, and the second is solved
// on its robust scale, verified, to a small error.
func TestExtremeValues(t *testing.T) {
	dir, in, _ := writeInstance(t, 60, 50, 3, 0.05, 11)
	y := mat.DenseCopyOf(in.Y)
	y.Set(3, 4, math.MaxFloat64)
	path := join(dir, "max.npy")
	testfile.WriteWith(t, path, func(w io.Writer) error { return npy.Write(w, y) })
	out := join(dir, "out")
	sum := readJSON(t, mustRun(t, "decompose", "--in", path, "--rank", "3", "--alpha", "0.1", "--out", out, "--json").stdout)
	low := readNpy(t, join(out, "lowrank.npy"))
	for _, x := range low.RawMatrix().Data {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			t.Fatal("lowrank.npy holds a value that is not finite")
		}
	}
	if e := relDiff(low, truthM(in)); e > 1e-6 || sum["verified"] != true {
		t.Errorf("the largest float64 in Y: error %.3g, verified %v", e, sum["verified"])
	}
	sum = readJSON(t, mustRun(t, "synth", "--d", "200", "--rank", "3", "--alpha", "0.1", "--magnitude", "1e300", "--json").stdout)
	if e, _ := sum["rel_error"].(float64); !(e < 1e-6) || sum["verified"] != true {
		t.Errorf("--magnitude 1e300: error %v, verified %v", sum["rel_error"], sum["verified"])
	}
}
