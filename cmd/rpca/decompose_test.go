package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/synth"
)

// Tolerances of the end-to-end recoveries. On the paper's model at these
// sizes the gradient method's default stopping rules (residual 1e-9,
// factor change 1e-16) end at a relative error of about 1e-7; 1e-5 leaves
// room for other seeds and machines while a wrong answer (wrong rank,
// transposed or misread data, corruptions left in M) is off by 1e-2 or
// more. A float32 input perturbs every entry by up to 2⁻²⁴ ≈ 6e-8 of its
// size, which the estimate carries over at a similar relative size; 1e-4
// covers that with a wide margin.
const (
	tolFloat64 = 1e-5
	tolFloat32 = 1e-4
)

// checkSparse reads sparse.mtx and compares it with the true corruptions:
// on the model the sparse part recovers S* exactly up to the error of M.
func checkSparse(t *testing.T, dir string, in *synth.Instance, sum map[string]any, tol float64) {
	t.Helper()
	mm, err := mtx.ReadFile(join(dir, "sparse.mtx"))
	if err != nil {
		t.Fatal(err)
	}
	if mm.Coord == nil {
		t.Fatal("sparse.mtx is not a coordinate file")
	}
	if err := mm.Coord.CheckDuplicates("sparse.mtx"); err != nil {
		t.Fatal(err)
	}
	if got := float64(mm.Coord.Len()); got != sum["sparse_entries"].(float64) {
		t.Errorf("sparse.mtx has %v entries, summary says %v", got, sum["sparse_entries"])
	}
	d1, d2 := in.Y.Dims()
	s := mat.NewDense(d1, d2, nil)
	for k, v := range mm.Coord.Val {
		s.Set(mm.Coord.Row[k], mm.Coord.Col[k], v)
	}
	if e := relDiff(s, in.S.ToDense()); e > tol {
		t.Errorf("sparse part: relative error %.3g against S*, want ≤ %g", e, tol)
	}
}

func TestDecomposeNpy(t *testing.T) {
	in := testInstance(t, 120, 100, 3, 0.05, 11)
	m := truthM(in)
	for _, c := range []struct {
		name string
		opt  npy.Options
		tol  float64
	}{
		{"float64 C order", npy.Options{}, tolFloat64},
		{"float64 Fortran order", npy.Options{FortranOrder: true}, tolFloat64},
		{"float32 Fortran order", npy.Options{Float32: true, FortranOrder: true}, tolFloat32},
		{"float32 C order", npy.Options{Float32: true}, tolFloat32},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			y := join(dir, "Y.npy")
			testfile.WriteWith(t, y, func(w io.Writer) error { return npy.WriteWith(w, in.Y, c.opt) })
			out := join(dir, "out")
			r := mustRun(t, "decompose", "--in", y, "--rank", "3", "--alpha", "0.05", "--out", out, "--json")
			sum := readJSON(t, r.stdout)
			if fmt.Sprint(testfile.List(t, out, outdir.OwnerMarker)) != "[lowrank.npy sparse.mtx summary.json]" {
				t.Fatalf("output files %v", testfile.List(t, out, outdir.OwnerMarker))
			}
			if file := readJSONFile(t, join(out, "summary.json")); fmt.Sprint(file) != fmt.Sprint(sum) {
				t.Errorf("summary.json %v differs from --json output %v", file, sum)
			}
			if sum["d1"] != 120.0 || sum["d2"] != 100.0 || sum["method"] != "accaltproj" || sum["observed_entries"] != 12000.0 || sum["partial"] != false {
				t.Errorf("summary %v", sum)
			}
			if it := sum["iterations"].(float64); it < 1 {
				t.Errorf("iterations %v", it)
			}
			low := readNpy(t, join(out, "lowrank.npy"))
			if e := relDiff(low, m); e > c.tol {
				t.Errorf("low-rank part: relative error %.3g, want ≤ %g", e, c.tol)
			}
			checkSparse(t, out, in, sum, 100*c.tol)
		})
	}
}

func TestDecomposeCSVHeader(t *testing.T) {
	in := testInstance(t, 90, 110, 2, 0.05, 12)
	dir := t.TempDir()
	y := join(dir, "Y.csv")
	testfile.WriteWith(t, y, func(w io.Writer) error {
		var names []string
		for j := 0; j < 110; j++ {
			names = append(names, fmt.Sprintf("col%d", j))
		}
		if _, err := fmt.Fprintln(w, strings.Join(names, ",")); err != nil {
			return err
		}
		return delim.Write(w, in.Y, ",")
	})
	// Without --header the names are a malformed number at line 1, column 1.
	wantError(t, 1, []string{"Y.csv", "line 1, column 1", `invalid number "col0"`, "use --header"},
		"decompose", "--in", y, "--rank", "2", "--alpha", "0.05", "--out", join(dir, "bad"))
	out := join(dir, "out")
	mustRun(t, "decompose", "--in", y, "--header", "--rank", "2", "--alpha", "0.05", "--out", out, "--format", "csv", "--quiet")
	if fmt.Sprint(testfile.List(t, out, outdir.OwnerMarker)) != "[lowrank.csv sparse.mtx summary.json]" {
		t.Fatalf("output files %v", testfile.List(t, out, outdir.OwnerMarker))
	}
	low, err := delim.ReadFile(join(out, "lowrank.csv"), delim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(low, truthM(in)); e > tolFloat64 {
		t.Errorf("low-rank part from CSV: relative error %.3g, want ≤ %g", e, tolFloat64)
	}
	checkSparse(t, out, in, readJSONFile(t, join(out, "summary.json")), 100*tolFloat64)
}

func TestDecomposeMatrixMarketPartial(t *testing.T) {
	cfg := synth.Config{D1: 200, D2: 160, Rank: 3, Alpha: 0.05, P: 0.5, Seed: 13}
	in, err := synth.Observed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	y := join(dir, "Y.mtx")
	testfile.WriteWith(t, y, func(w io.Writer) error { return mtx.WriteSparse(w, in.Obs) })
	out := join(dir, "out")
	r := mustRun(t, "decompose", "--in", y, "--rank", "3", "--alpha", "0.05", "--out", out, "--factors", "--json")
	sum := readJSON(t, r.stdout)
	if fmt.Sprint(testfile.List(t, out, outdir.OwnerMarker)) != "[U.npy V.npy sparse.mtx summary.json]" {
		t.Fatalf("output files %v", testfile.List(t, out, outdir.OwnerMarker))
	}
	// The default for partial data starts with ALS (methods.AutoChain).
	if sum["partial"] != true || sum["observed_entries"] != float64(in.Obs.Len()) || sum["method"] != "als" || sum["verified"] != true {
		t.Errorf("summary %v", sum)
	}
	u := readNpy(t, join(out, "U.npy"))
	v := readNpy(t, join(out, "V.npy"))
	if e := metrics.RelError(u, v, in.A, in.B); e > tolFloat64 {
		t.Errorf("partial input: relative error %.3g, want ≤ %g", e, tolFloat64)
	}
	// The sparse part lives on the observed entries and matches S* there.
	mm, err := mtx.ReadFile(join(out, "sparse.mtx"))
	if err != nil {
		t.Fatal(err)
	}
	var diff, norm float64
	in.S.Do(func(i, j int, v float64) { norm += v * v })
	got := map[[2]int]float64{}
	for k, v := range mm.Coord.Val {
		got[[2]int{mm.Coord.Row[k], mm.Coord.Col[k]}] = v
	}
	in.S.Do(func(i, j int, v float64) { d := got[[2]int{i, j}] - v; diff += d * d; delete(got, [2]int{i, j}) })
	for _, v := range got {
		diff += v * v
	}
	if e := math.Sqrt(diff / norm); e > 100*tolFloat64 {
		t.Errorf("sparse part on Φ: relative error %.3g", e)
	}

	// --missing-nan: the same data as a dense CSV with NaN for the
	// missing entries gives the same answer.
	full := mat.NewDense(200, 160, nil)
	for i := 0; i < 200; i++ {
		for j := 0; j < 160; j++ {
			full.Set(i, j, math.NaN())
		}
	}
	in.Obs.Do(func(i, j int, v float64) { full.Set(i, j, v) })
	ycsv := join(dir, "Y.csv")
	testfile.WriteWith(t, ycsv, func(w io.Writer) error { return delim.Write(w, full, ",") })
	wantError(t, 1, []string{"Y.csv", "line 1, column", "non-finite", "--missing-nan"}, "decompose", "--in", ycsv, "--rank", "3", "--out", join(dir, "nan"))
	r2 := mustRun(t, "decompose", "--in", ycsv, "--missing-nan", "--rank", "3", "--alpha", "0.05", "--out", join(dir, "nan"), "--json", "--factors")
	if s2 := readJSON(t, r2.stdout); s2["residual"] != sum["residual"] || s2["iterations"] != sum["iterations"] {
		t.Errorf("--missing-nan on CSV: %v %v, want the .mtx run's %v %v", s2["residual"], s2["iterations"], sum["residual"], sum["iterations"])
	}
}

func TestDecomposeSubsampled(t *testing.T) {
	dir, in, y := writeInstance(t, 200, 200, 2, 0.05, 14)
	out := join(dir, "out")
	testfile.WriteWith(t, join(dir, "A.npy"), func(w io.Writer) error { return npy.Write(w, in.A) })
	testfile.WriteWith(t, join(dir, "B.npy"), func(w io.Writer) error { return npy.Write(w, in.B) })
	r := mustRun(t, "decompose", "--in", y, "--rank", "2", "--alpha", "0.05", "--p", "0.5", "--out", out, "--truth", dir, "--json")
	sum := readJSON(t, r.stdout)
	// |Φ| ~ Binomial(40000, 0.5): mean 20000, standard deviation 100.
	if n := sum["observed_entries"].(float64); sum["partial"] != true || math.Abs(n-20000) > 600 || sum["params"].(map[string]any)["p"] != n/40000 {
		t.Errorf("summary %v", sum)
	}
	low := readNpy(t, join(out, "lowrank.npy"))
	e := relDiff(low, truthM(in))
	if e > tolFloat64 {
		t.Errorf("--p 0.5: relative error %.3g, want ≤ %g", e, tolFloat64)
	}
	// --truth reports the same error as the one measured here.
	if te := sum["rel_error"].(float64); math.Abs(te-e) > 1e-6*e+1e-12 {
		t.Errorf("--truth rel_error %v, measured %v", te, e)
	}
	// The sample depends on the seed and the positions only: the same
	// matrix as a Fortran-order .npy (sampled while read) and as CSV (read,
	// then sampled) gives the same run.
	yf := join(dir, "Yf.npy")
	testfile.WriteWith(t, yf, func(w io.Writer) error { return npy.WriteWith(w, in.Y, npy.Options{FortranOrder: true}) })
	yc := join(dir, "Y.csv")
	testfile.WriteWith(t, yc, func(w io.Writer) error { return delim.Write(w, in.Y, ",") })
	for _, other := range []string{yf, yc} {
		r2 := mustRun(t, "decompose", "--in", other, "--rank", "2", "--alpha", "0.05", "--p", "0.5", "--out", join(dir, "o2"), "--force", "--json")
		s2 := readJSON(t, r2.stdout)
		if s2["observed_entries"] != sum["observed_entries"] || s2["residual"] != sum["residual"] || s2["iterations"] != sum["iterations"] {
			t.Errorf("%s: %v entries, residual %v, %v iterations; .npy gave %v, %v, %v", other,
				s2["observed_entries"], s2["residual"], s2["iterations"], sum["observed_entries"], sum["residual"], sum["iterations"])
		}
	}
	// Another seed, another sample.
	r3 := mustRun(t, "decompose", "--in", y, "--rank", "2", "--alpha", "0.05", "--p", "0.5", "--seed", "2", "--out", join(dir, "o3"), "--json")
	if s3 := readJSON(t, r3.stdout); s3["observed_entries"] == sum["observed_entries"] && s3["residual"] == sum["residual"] {
		t.Errorf("--seed 2 gave the same sample as --seed 1")
	}
}

func TestDecomposeErrors(t *testing.T) {
	dir, in, ynpy := writeInstance(t, 20, 15, 2, 0.05, 15)
	bad := testfile.Write(t, dir, "bad.csv", "1,2,3\n4,5,6\n7,8.5.1,9\n")
	nanY := mat.DenseCopyOf(in.Y)
	nanY.Set(3, 4, math.NaN())
	ynan := join(dir, "nan.npy")
	testfile.WriteWith(t, ynan, func(w io.Writer) error { return npy.Write(w, nanY) })
	dup := testfile.Write(t, dir, "dup.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n1 1 2\n")
	part := testfile.Write(t, dir, "part.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n1 2 1\n2 1 1\n")
	odd := testfile.Write(t, dir, "Y.xyz", "1 2\n3 4\n")

	cases := []robustCase{
		{"missing file", 1, []string{"nothere.npy", "does not exist"}, []string{"--in", join(dir, "nothere.npy"), "--rank", "2"}},
		{"bad number", 1, []string{"bad.csv", "line 3, column 2", `invalid number "8.5.1"`}, []string{"--in", bad, "--rank", "1"}},
		{"NaN in npy", 1, []string{"nan.npy", "NaN", "row 4, column 5", "--missing-nan"}, []string{"--in", ynan, "--rank", "2"}},
		{"rank too large", 2, []string{"--rank 15", "min(d1, d2) = 15", "20×15"}, []string{"--in", ynpy, "--rank", "15"}},
		{"rank word", 2, []string{"flag -rank", "a positive integer or auto"}, []string{"--in", ynpy, "--rank", "many"}},
		{"max-rank with a rank", 2, []string{"--max-rank", "--rank 2"}, []string{"--in", ynpy, "--rank", "2", "--max-rank", "5"}},
		{"alpha 1", 2, []string{"flag -alpha", "[0, 1)", "invalid value \"1\""}, []string{"--in", ynpy, "--rank", "2", "--alpha", "1"}},
		{"alpha negative", 2, []string{"flag -alpha", "[0, 1)"}, []string{"--in", ynpy, "--rank", "2", "--alpha", "-0.1"}},
		{"unknown extension", 2, []string{"unknown input format", ".xyz", "--in-format"}, []string{"--in", odd, "--rank", "1"}},
		{"unknown method", 2, []string{"unknown --method", "svd"}, []string{"--in", ynpy, "--rank", "2", "--method", "svd"}},
		{"duplicate entry", 1, []string{"dup.mtx", "line 5", "duplicate entry at row 1, column 1", "line 3"}, []string{"--in", dup, "--rank", "1"}},
		{"no --out", 2, []string{"--out", "required"}, []string{"--in", ynpy, "--rank", "2", "--out", ""}},
		{"bad --format", 2, []string{"flag -format", "npy or csv"}, []string{"--in", ynpy, "--rank", "2", "--format", "parquet"}},
		{"empty row", 1, []string{"1 rows and 1 columns have no observed entry"}, []string{"--in", part, "--rank", "1"}},
		{"altproj on partial", 2, []string{"altproj", "--method auto, als, gd or scaledgd"}, []string{"--in", part, "--rank", "1", "--method", "altproj"}},
		{"unknown flag", 2, []string{"-rnak", "not defined"}, []string{"--rnak", "2"}},
		{"target error without truth", 2, []string{"--target-error", "--truth"}, []string{"--in", ynpy, "--rank", "2", "--target-error", "1e-3"}},
		{"target error negative", 2, []string{"flag -target-error"}, []string{"--in", ynpy, "--rank", "2", "--target-error", "-1"}},
		{"target error NaN", 2, []string{"flag -target-error"}, []string{"--in", ynpy, "--rank", "2", "--truth", dir, "--target-error", "NaN"}},
		{"target error, truth missing", 1, []string{"--truth"}, []string{"--in", ynpy, "--rank", "2", "--truth", join(dir, "nothere"), "--target-error", "1e-3"}},
	}
	checkRobust(t, "decompose", cases)
	// The .xyz file reads as white-space text with --in-format txt.
	mustRun(t, "decompose", "--in", odd, "--in-format", "txt", "--rank", "1", "--alpha", "0", "--out", join(dir, "xyz"))
}

func TestDecomposeOutputDir(t *testing.T) {
	dir, _, y := writeInstance(t, 30, 25, 2, 0.05, 16)
	out := join(dir, "out")
	os.Mkdir(out, 0o755)
	os.WriteFile(join(out, "keep.txt"), []byte("mine"), 0o644)
	wantError(t, 1, []string{"out", "exists and is not empty", "--force"}, "decompose", "--in", y, "--rank", "2", "--out", out)
	if b, err := os.ReadFile(join(out, "keep.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("existing directory touched: %v", err)
	}
	// --force does not replace a directory that rpca did not write.
	wantError(t, 1, []string{"out", "not written by rpca"}, "decompose", "--in", y, "--rank", "2", "--out", out, "--force")
	if b, err := os.ReadFile(join(out, "keep.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("existing directory touched by --force: %v", err)
	}
	os.Remove(join(out, "keep.txt"))
	mustRun(t, "decompose", "--in", y, "--rank", "2", "--out", out)
	mustRun(t, "decompose", "--in", y, "--rank", "2", "--out", out, "--force")
	if fmt.Sprint(testfile.List(t, out, outdir.OwnerMarker)) != "[lowrank.npy sparse.mtx summary.json]" {
		t.Fatalf("--force: files %v", testfile.List(t, out, outdir.OwnerMarker))
	}
	// Nothing but the input and the output directory is left in dir.
	if got := fmt.Sprint(testfile.List(t, dir, outdir.OwnerMarker)); got != "[Y.npy out]" {
		t.Errorf("leftovers in the parent directory: %v", got)
	}
}

// TestDecomposeCancel interrupts a run after its second iteration (the
// context is cancelled by the progress output, as Ctrl-C would) and after
// the solve: no output directory and no temporary files may remain.
func TestDecomposeCancel(t *testing.T) {
	dir, _, y := writeInstance(t, 60, 50, 2, 0.05, 17)
	out := join(dir, "out")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOnWrite{text: "iter    2", cancel: cancel}
	var stdout strings.Builder
	code := run(ctx, &env{stdout: &stdout, stderr: stderr}, []string{"decompose", "--in", y, "--rank", "2", "--out", out, "--verbose"})
	if code != 130 || !strings.Contains(stderr.buf.String(), "interrupted") {
		t.Errorf("exit %d, stderr %q; want 130 and 'interrupted'", code, stderr.buf.String())
	}
	if got := fmt.Sprint(testfile.List(t, dir, outdir.OwnerMarker)); got != "[Y.npy]" {
		t.Errorf("files left after the interrupt: %v", got)
	}

	// Cancelled before the start.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if r := runCLI(t, ctx2, "decompose", "--in", y, "--rank", "2", "--out", out); r.code != 130 {
		t.Errorf("pre-cancelled: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := fmt.Sprint(testfile.List(t, dir, outdir.OwnerMarker)); got != "[Y.npy]" {
		t.Errorf("files left after the interrupt: %v", got)
	}
}

// TestDecomposeMemoryCheck gives a .npy whose header declares a matrix far
// larger than memory; the file is sparse (a hole after the header), so it
// costs no disk. The command must refuse before reading the data.
func TestDecomposeMemoryCheck(t *testing.T) {
	dir := t.TempDir()
	y := join(dir, "big.npy")
	const d = 200000 // 3.2e11 bytes of float64
	f, err := os.Create(y)
	if err != nil {
		t.Fatal(err)
	}
	// The header is written before the first row is asked for.
	stop := fmt.Errorf("header only")
	if err := npy.WriteRows(f, d, d, func(int, []float64) error { return stop }); err != stop {
		t.Fatal(err)
	}
	hdr, err := f.Seek(0, io.SeekCurrent)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(y, hdr+8*d*d); err != nil {
		t.Skipf("cannot create a sparse file here: %v", err)
	}
	wantError(t, 1, []string{"200000×200000", "GB", "--p"}, "decompose", "--in", y, "--rank", "5", "--out", join(dir, "out"))
}

// TestDecomposeMatrixMarketArray reads a dense matrix from a Matrix Market
// array file and a complete coordinate file: both are dense problems
// (Algorithm 1, and altproj works on them).
func TestDecomposeMatrixMarketArray(t *testing.T) {
	in := testInstance(t, 70, 60, 2, 0.05, 18)
	dir := t.TempDir()
	arr := join(dir, "array.mtx")
	testfile.WriteWith(t, arr, func(w io.Writer) error { return mtx.WriteDense(w, in.Y) })
	coo := join(dir, "coord.mtx")
	testfile.WriteWith(t, coo, func(w io.Writer) error { return mtx.WriteSparse(w, denseEntries{in.Y}) })
	for _, y := range []string{arr, coo} {
		out := join(dir, "out")
		r := mustRun(t, "decompose", "--in", y, "--rank", "2", "--alpha", "0.05", "--out", out, "--force", "--json")
		// A complete matrix is dense whatever its file format, so the
		// default method is the dense one.
		if sum := readJSON(t, r.stdout); sum["partial"] != false || sum["method"] != "accaltproj" {
			t.Errorf("%s: summary %v", y, sum)
		}
		low := readNpy(t, join(out, "lowrank.npy"))
		if e := relDiff(low, truthM(in)); e > tolFloat64 {
			t.Errorf("%s: relative error %.3g, want ≤ %g", y, e, tolFloat64)
		}
	}
	// AltProj stops at the paper's tolerance, 1e-3: its answer runs and
	// is written, but it is not verified.
	r := runCLI(t, context.Background(), "decompose", "--in", coo, "--rank", "2", "--alpha", "0.05", "--method", "altproj", "--out", join(dir, "ap"))
	if r.code != 0 || !strings.Contains(r.stderr, "altproj's answer is not verified") {
		t.Errorf("altproj: exit %d, stderr %q", r.code, r.stderr)
	}
}

// denseEntries lists every entry of a dense matrix for the coordinate writer.
type denseEntries struct{ m *mat.Dense }

func (d denseEntries) Dims() (int, int) { return d.m.Dims() }
func (d denseEntries) NNZ() int         { r, c := d.m.Dims(); return r * c }
func (d denseEntries) Do(fn func(i, j int, v float64)) {
	r, c := d.m.Dims()
	for j := 0; j < c; j++ { // column order, to differ from the reader's
		for i := 0; i < r; i++ {
			fn(i, j, d.m.At(i, j))
		}
	}
}

// TestForceOwnership: --force replaces only what rpca wrote, and never a
// directory holding the command's input, the current directory or its
// parents. The input is untouched in every case.
func TestForceOwnership(t *testing.T) {
	dir := t.TempDir()
	inst := join(dir, "inst")
	mustRun(t, "synth", "--d", "40", "--rank", "2", "--alpha", "0.05", "--out", inst, "--no-solve")
	if _, err := os.Stat(join(inst, outdir.OwnerMarker)); err != nil {
		t.Fatalf("synth --out wrote no marker: %v", err)
	}
	y := join(inst, "Y.npy")
	before, err := os.ReadFile(y)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"input inside --out", []string{"--out", inst, "--force"}, "holds an input"},
		{"truth inside --out", []string{"--out", inst, "--force", "--truth", inst}, "holds an input"},
		{"current directory", []string{"--out", ".", "--force"}, "current directory"},
		{"working directory by path", []string{"--out", wd, "--force"}, "current directory"},
		{"parent of the working directory", []string{"--out", "..", "--force"}, "current directory"},
		{"root", []string{"--out", "/", "--force"}, "root"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"decompose", "--in", y, "--rank", "2"}, c.args...)
			wantError(t, 1, []string{c.msg}, args...)
			after, err := os.ReadFile(y)
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("input changed or deleted: %v", err)
			}
		})
	}
}

// TestDecomposeReportsRankUsed: IALM treats --rank as a hint and finds
// its own rank; the summary reports the rank of the result (3 here, the
// rank of M*) next to the one requested.
func TestDecomposeReportsRankUsed(t *testing.T) {
	dir, _, y := writeInstance(t, 60, 50, 3, 0.05, 21)
	r := mustRun(t, "decompose", "--in", y, "--rank", "1", "--method", "ialm", "--out", join(dir, "out"), "--json")
	sum := readJSON(t, r.stdout)
	if sum["rank"] != 3.0 || sum["rank_requested"] != 1.0 {
		t.Errorf("rank %v, rank_requested %v; want 3 and 1", sum["rank"], sum["rank_requested"])
	}
}

// TestDecomposeWarnsWhenNotConverged: GD's paper update slows down with
// the condition number; with its iterations capped at 20 it stops short of
// every tolerance. The run succeeds, the summary says max-iter and "not
// verified", and stderr carries one warning line that says the answer is
// not verified, why, and what to try; the scaled update on the same data
// (a rank-3 matrix plus an offset of 10³) converges, verifies and says
// nothing.
func TestDecomposeWarnsWhenNotConverged(t *testing.T) {
	dir := t.TempDir()
	in := testInstance(t, 60, 50, 3, 0, 31)
	var y mat.Dense
	y.Apply(func(_, _ int, v float64) float64 { return v + 1e3 }, truthM(in))
	path := join(dir, "Y.csv")
	testfile.WriteWith(t, path, func(w io.Writer) error { return delim.Write(w, &y, ",") })
	r := runCLI(t, context.Background(), "decompose", "--in", path, "--rank", "4", "--method", "gd", "--max-iter", "20", "--out", join(dir, "gd"))
	if r.code != 0 || !strings.Contains(r.stdout, "(max-iter, not verified)") {
		t.Fatalf("gd: exit %d, stdout %q", r.code, r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "rpca: warning: gd's answer is not verified (") ||
		strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "raise the iteration cap") {
		t.Errorf("gd: stderr %q", r.stderr)
	}
	r = mustRun(t, "decompose", "--in", path, "--rank", "4", "--method", "scaledgd", "--out", join(dir, "scaled"), "--json")
	if sum := readJSON(t, r.stdout); sum["stop_reason"] == "max-iter" {
		t.Errorf("scaledgd: stop reason %v", sum["stop_reason"])
	}
	r = runCLI(t, context.Background(), "decompose", "--in", path, "--rank", "4", "--method", "gd", "--max-iter", "200", "--quiet", "--out", join(dir, "quiet"))
	if r.code != 0 || r.stderr != "" {
		t.Errorf("gd --quiet: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestDecomposeDataScale: summary.json names the power of two that data
// far beyond 2^64 were divided by, and says nothing for ordinary data.
func TestDecomposeDataScale(t *testing.T) {
	dir := t.TempDir()
	in := testInstance(t, 40, 30, 2, 0.05, 7)
	for _, c := range []float64{1, 1e300} {
		var y mat.Dense
		y.Scale(c, in.Y)
		path := join(dir, fmt.Sprintf("Y%g.csv", c))
		testfile.WriteWith(t, path, func(w io.Writer) error { return delim.Write(w, &y, ",") })
		sum := readJSON(t, mustRun(t, "decompose", "--in", path, "--rank", "2", "--out", join(dir, fmt.Sprintf("out%g", c)), "--json").stdout)
		s, ok := sum["data_scale"].(float64)
		if c == 1 && ok {
			t.Errorf("c=1: data_scale %v", s)
		}
		if c != 1 && (!ok || s < 1e200 || math.Log2(s) != math.Round(math.Log2(s))) {
			t.Errorf("c=%g: data_scale %v", c, sum["data_scale"])
		}
	}
}

// TestDecomposeRankAuto: without --rank the rank is chosen from the data.
// Rank 5 plus an offset of 1e3 is rank 6; the answer at the chosen rank
// is verified and right to the end-to-end tolerance, measured against
// the varying part of M* (the offset is not in the denominator), and the
// summary says which rank was chosen and why.
func TestDecomposeRankAuto(t *testing.T) {
	in := testInstance(t, 150, 120, 5, 0.05, 21)
	const offset = 1e3
	m := truthM(in)
	d1, d2 := m.Dims()
	var mean float64
	for i := range d1 {
		for j := range d2 {
			mean += m.At(i, j)
			m.Set(i, j, m.At(i, j)+offset)
			in.Y.Set(i, j, in.Y.At(i, j)+offset)
		}
	}
	mean = mean/float64(d1*d2) + offset
	dir := t.TempDir()
	y := join(dir, "Y.npy")
	testfile.WriteWith(t, y, func(w io.Writer) error { return npy.Write(w, in.Y) })
	out := join(dir, "out")
	r := mustRun(t, "decompose", "--in", y, "--alpha", "0.05", "--out", out, "--json")
	sum := readJSON(t, r.stdout)
	choice, ok := sum["rank_choice"].(map[string]any)
	if !ok {
		t.Fatalf("summary has no rank_choice: %v", sum)
	}
	if sum["rank"] != 6.0 || choice["rank"] != 6.0 || sum["rank_requested"] != 0.0 || sum["verified"] != true {
		t.Errorf("rank %v (choice %v, requested %v), verified %v; want 6, verified", sum["rank"], choice["rank"], sum["rank_requested"], sum["verified"])
	}
	if reason, _ := choice["reason"].(string); !strings.Contains(reason, "verified at rank 6") {
		t.Errorf("reason %q does not say where it was verified", reason)
	}
	low := readNpy(t, join(out, "lowrank.npy"))
	var diff, centred mat.Dense
	diff.Sub(low, m)
	centred.Apply(func(_, _ int, v float64) float64 { return v - mean }, m)
	if e := mat.Norm(&diff, 2) / mat.Norm(&centred, 2); e > tolFloat64 {
		t.Errorf("low-rank part: error %.3g of M*'s variation, want ≤ %g", e, tolFloat64)
	}
	// The text summary has the reason on its second line.
	r = mustRun(t, "decompose", "--in", y, "--alpha", "0.05", "--out", out, "--force", "--quiet")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[0], "chosen by --rank auto") || !strings.HasPrefix(lines[1], "rank 6: ") {
		t.Errorf("summary:\n%s", r.stdout)
	}
}
