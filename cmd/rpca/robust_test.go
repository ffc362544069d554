package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/internal/testfile"
	"gonum.org/v1/gonum/mat"
)

// robustCase is one bad command line: the run must exit with code, print
// one 'rpca: ' line containing every key on stderr (no stack trace, see
// wantError) and leave nothing in the output directory's parent.
type robustCase struct {
	name string
	code int
	keys []string
	args []string // without --out
}

// checkRobust runs the cases of command cmd, each with --out in a fresh
// directory.
func checkRobust(t *testing.T, cmd string, cases []robustCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(cmd+"/"+c.name, func(t *testing.T) {
			parent := t.TempDir()
			outFlag := "--out"
			args := append([]string{cmd, outFlag, filepath.Join(parent, "out")}, c.args...)
			if cmd == "experiment" { // the experiment's name comes first
				args = append([]string{cmd, c.args[0], outFlag, filepath.Join(parent, "out")}, c.args[1:]...)
			}
			before := snapshotInputs(c.args)
			wantError(t, c.code, c.keys, args...)
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("failed run left %d entries in the output's parent", len(ents))
			}
			for path, data := range before {
				if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, data) {
					t.Errorf("input %s changed or removed (%v)", path, err)
				}
			}
		})
	}
}

// snapshotInputs returns the contents of every argument that names an
// existing regular file (the inputs of a case), to check after the run
// that none was changed or removed.
func snapshotInputs(args []string) map[string][]byte {
	m := map[string][]byte{}
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() {
			if b, err := os.ReadFile(a); err == nil {
				m[a] = b
			}
		}
	}
	return m
}

// npyFile returns the bytes of a version 1.0 .npy file of float64 with the
// given shape text, e.g. "(0, 0)", followed by data.
func npyFile(shape string, data ...float64) string {
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	binary.Write(&b, binary.LittleEndian, data)
	return b.String()
}

func TestDecomposeRobust(t *testing.T) {
	dir := t.TempDir()
	const mm = "%%MatrixMarket matrix coordinate real general\n"
	y := filepath.Join(dir, "Y.npy")
	testfile.WriteWith(t, y, func(w io.Writer) error { return npy.Write(w, testInstance(t, 20, 15, 2, 0.05, 3).Y) })
	checkRobust(t, "decompose", []robustCase{
		{"empty npy", 1, []string{"empty file"}, []string{"--in", testfile.Write(t, dir, "empty.npy", ""), "--rank", "1"}},
		{"0×0 npy", 1, []string{"empty", "(0, 0)"}, []string{"--in", testfile.Write(t, dir, "zero.npy", npyFile("(0, 0)")), "--rank", "1"}},
		{"1×1 npy", 2, []string{"--rank 1", "1×1"}, []string{"--in", testfile.Write(t, dir, "one.npy", npyFile("(1, 1)", 1)), "--rank", "1"}},
		{"truncated npy", 1, []string{"truncated"}, []string{"--in", testfile.Write(t, dir, "trunc.npy", npyFile("(10, 10)", 1, 2, 3)), "--rank", "1"}},
		{"negative npy shape", 1, []string{"-3"}, []string{"--in", testfile.Write(t, dir, "neg.npy", npyFile("(-3, 4)")), "--rank", "1"}},
		{"empty csv", 1, []string{"no data rows"}, []string{"--in", testfile.Write(t, dir, "empty.csv", ""), "--rank", "1"}},
		{"header-only csv", 1, []string{"no data rows"}, []string{"--in", testfile.Write(t, dir, "hdr.csv", "a,b,c\n"), "--header", "--rank", "1"}},
		{"ragged csv", 1, []string{"line 2", "2 fields", "3"}, []string{"--in", testfile.Write(t, dir, "ragged.csv", "1,2,3\n4,5\n6,7,8\n"), "--rank", "1"}},
		{"empty mtx", 1, []string{"empty file"}, []string{"--in", testfile.Write(t, dir, "empty.mtx", ""), "--rank", "1"}},
		{"mtx index 0", 1, []string{"line 3", "row index 0"}, []string{"--in", testfile.Write(t, dir, "zero.mtx", mm+"3 3 3\n0 1 1\n2 2 1\n3 3 1\n"), "--rank", "1"}},
		{"mtx negative size", 1, []string{`"-3"`}, []string{"--in", testfile.Write(t, dir, "neg.mtx", mm+"-3 3 1\n1 1 1\n"), "--rank", "1"}},
		{"mtx size overflow", 1, []string{"overflows"}, []string{"--in", testfile.Write(t, dir, "over.mtx", mm+"3000000000000 3000000000000 3\n1 1 1\n"), "--rank", "1"}},
		// Huge dimensions with few entries: refused from the size line,
		// before any per-row or per-column array is allocated.
		{"mtx huge dimensions", 1, []string{"3 entries cannot cover", "20000000 rows", "every row and column"},
			[]string{"--in", testfile.Write(t, dir, "huge.mtx", mm+"20000000 20000000 3\n1 1 1\n2 2 1\n1 2 3\n"), "--rank", "1"}},
		{"mtx huge entry count", 1, []string{"GB"}, []string{"--in", testfile.Write(t, dir, "nnz.mtx", mm+"3 3 99999999999\n1 1 1\n"), "--rank", "1"}},
		{"directory as --in", 1, []string{"is a directory"}, []string{"--in", t.TempDir(), "--in-format", "npy", "--rank", "1"}},
		{"rank negative", 2, []string{"flag -rank", "a positive integer or auto"}, []string{"--in", y, "--rank", "-3"}},
		{"rank not a number", 2, []string{"flag -rank", "a positive integer or auto", "ten"}, []string{"--in", y, "--rank", "ten"}},
		{"max-rank 0", 2, []string{"flag -max-rank", "at least 1"}, []string{"--in", y, "--max-rank", "0"}},
		{"alpha 1", 2, []string{"flag -alpha"}, []string{"--in", y, "--rank", "1", "--alpha", "1"}},
		{"p 0", 2, []string{"flag -p: must be in (0, 1]"}, []string{"--in", y, "--rank", "1", "--p", "0"}},
		{"p 1.5", 2, []string{"flag -p: must be in (0, 1]"}, []string{"--in", y, "--rank", "1", "--p", "1.5"}},
		{"gamma NaN", 2, []string{"flag -gamma", "NaN"}, []string{"--in", y, "--rank", "1", "--gamma", "NaN"}},
		{"step negative", 2, []string{"flag -step", "-1"}, []string{"--in", y, "--rank", "1", "--step", "-1"}},
		{"mu Inf", 2, []string{"flag -mu", "Inf"}, []string{"--in", y, "--rank", "1", "--mu", "Inf"}},
		{"tol NaN", 2, []string{"flag -tol", "NaN"}, []string{"--in", y, "--rank", "1", "--tol", "NaN"}},
		{"max-iter negative", 2, []string{"flag -max-iter", "-1"}, []string{"--in", y, "--rank", "1", "--max-iter", "-1"}},
		{"lambda negative", 2, []string{"flag -lambda"}, []string{"--in", y, "--rank", "1", "--method", "ialm", "--lambda", "-2"}},
		{"mtx row index out of range", 1, []string{"line 3", "row index 4", "out of range 1..3"}, []string{"--in", testfile.Write(t, dir, "oob.mtx", mm+"3 3 2\n4 1 1\n1 1 2\n"), "--rank", "1"}},
		{"mtx row index 0, few entries", 1, []string{"line 3", "row index 0"}, []string{"--in", testfile.Write(t, dir, "zero2.mtx", mm+"3 3 2\n0 1 1\n1 1 2\n"), "--rank", "1"}},
		{"mtx negative index", 1, []string{"line 3", "row index -1"}, []string{"--in", testfile.Write(t, dir, "negidx.mtx", mm+"3 3 2\n-1 1 1\n1 1 2\n"), "--rank", "1"}},
		{"mtx column out of range", 1, []string{"column index 9"}, []string{"--in", testfile.Write(t, dir, "coloob.mtx", mm+"3 3 3\n1 9 1\n2 2 1\n3 3 1\n"), "--rank", "1"}},
		{"mtx duplicate entry", 1, []string{"duplicate"}, []string{"--in", testfile.Write(t, dir, "dup.mtx", mm+"3 3 4\n1 1 1\n1 1 2\n2 2 1\n3 3 1\n"), "--rank", "1"}},
		{"mtx NaN value", 1, []string{"NaN"}, []string{"--in", testfile.Write(t, dir, "nan.mtx", mm+"3 3 3\n1 1 NaN\n2 2 1\n3 3 1\n"), "--rank", "1"}},
		{"mtx bad header", 1, []string{"MatrixMarket"}, []string{"--in", testfile.Write(t, dir, "hdr.mtx", "%%MatrixMarket matrix pattern\n3 3 1\n1 1\n"), "--rank", "1"}},
		{"npy object dtype", 1, []string{"dtype", "Python objects", "numeric dtype"}, []string{"--in", testfile.Write(t, dir, "obj.npy", npyDescr("|O", "(2, 2)")), "--rank", "1"}},
		{"npy 3-d", 1, []string{"3 dimensions"}, []string{"--in", testfile.Write(t, dir, "3d.npy", npyFile("(2, 2, 2)", 1, 2, 3, 4, 5, 6, 7, 8)), "--rank", "1"}},
		{"csv with text", 1, []string{"line 1"}, []string{"--in", testfile.Write(t, dir, "text.csv", "1,abc,3\n4,5,6\n"), "--rank", "1"}},
		{"csv Inf", 1, []string{"non-finite", "Inf"}, []string{"--in", testfile.Write(t, dir, "inf.csv", "1,2,3\n4,Inf,6\n7,8,9\n1,2,2\n"), "--rank", "1"}},
		{"missing --in", 2, []string{"--in"}, []string{"--rank", "1"}},
		{"missing file", 1, []string{"no-such-file"}, []string{"--in", filepath.Join(dir, "no-such-file.npy"), "--rank", "1"}},
		{"rank too large", 2, []string{"--rank 20"}, []string{"--in", y, "--rank", "20"}},
		{"unknown method", 2, []string{"unknown --method", "accaltproj"}, []string{"--in", y, "--rank", "1", "--method", "svd"}},
		{"dense-only method with --p", 2, []string{"accaltproj", "--p"}, []string{"--in", y, "--rank", "1", "--method", "accaltproj", "--p", "0.5"}},
		{"dense-only method on partial data", 2, []string{"partially observed", "ialm"}, []string{"--in", testfile.Write(t, dir, "part.mtx", mm+"3 3 4\n1 1 1\n2 2 1\n3 3 1\n1 2 1\n"), "--rank", "1", "--method", "ialm"}},
		{"unknown format", 2, []string{"flag -format"}, []string{"--in", y, "--rank", "1", "--format", "xls"}},
		{"unknown flag", 2, []string{"flag provided but not defined"}, []string{"--in", y, "--rank", "1", "--bogus"}},
		{"stray argument", 2, []string{"unexpected argument"}, []string{"--in", y, "--rank", "1", "extra"}},
		{"factor-tol NaN", 2, []string{"flag -factor-tol"}, []string{"--in", y, "--rank", "1", "--factor-tol", "NaN"}},
		{"workers negative", 2, []string{"flag -workers"}, []string{"--in", y, "--rank", "1", "--workers", "-1"}},
		{"step rule unknown", 2, []string{"flag -step-rule", "fixed, backtracking"}, []string{"--in", y, "--rank", "1", "--method", "gd", "--step-rule", "fast"}},
		{"ridge negative", 2, []string{"flag -ridge"}, []string{"--in", y, "--rank", "1", "--method", "gd", "--ridge", "-1"}},
		{"ridge NaN", 2, []string{"flag -ridge"}, []string{"--in", y, "--rank", "1", "--ridge", "NaN"}},
		{"huber negative", 2, []string{"flag -huber"}, []string{"--in", y, "--rank", "1", "--method", "als", "--huber", "-3"}},
		{"huber NaN", 2, []string{"flag -huber"}, []string{"--in", y, "--rank", "1", "--method", "als", "--huber", "NaN"}},
		{"huber a word", 2, []string{"flag -huber"}, []string{"--in", y, "--rank", "1", "--method", "als", "--huber", "strong"}},
		{"huber with gd", 2, []string{"--huber does not apply to --method gd", "als"}, []string{"--in", y, "--rank", "1", "--method", "gd", "--huber", "3"}},
		{"implicit Inf", 2, []string{"flag -implicit"}, []string{"--in", y, "--rank", "1", "--method", "als", "--implicit", "Inf"}},
		{"implicit with gd", 2, []string{"--implicit does not apply to --method gd", "als"}, []string{"--in", y, "--rank", "1", "--method", "gd", "--implicit", "5"}},
		{"too small for the model", 1, []string{"too small to separate"}, []string{"--in", testfile.Write(t, dir, "tiny.csv", "1,2\n3,4\n"), "--rank", "1"}},
		{"truth dir missing", 1, []string{"--truth: input file", "A.npy", "does not exist"}, []string{"--in", y, "--rank", "1", "--truth", t.TempDir()}},
		{"mtx NaN entry", 1, []string{"line 3", "leave missing entries out"}, []string{"--in", testfile.Write(t, dir, "nan.mtx", mm+"2 2 2\n1 1 nan\n2 2 1\n"), "--rank", "1"}},
		{"csv Inf", 1, []string{"line 2", "non-finite"}, []string{"--in", testfile.Write(t, dir, "inf.csv", "1,2\n3,inf\n"), "--rank", "1"}},
		{"output holds the input", 1, []string{"holds an input"}, []string{"--in", y, "--rank", "1", "--force", "--out", dir}},
	})
}

// npyDescr returns a .npy header with the given dtype descr and shape and
// no data.
func npyDescr(descr, shape string) string {
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	return "\x93NUMPY\x01\x00" + string([]byte{byte(len(hdr) + 1), 0}) + hdr + "\n"
}

func TestCompleteRobust(t *testing.T) {
	dir := t.TempDir()
	checkRobust(t, "complete", []robustCase{
		{"empty file", 1, []string{"no entries"}, []string{"--in", testfile.Write(t, dir, "empty.tsv", ""), "--rank", "1"}},
		{"header only", 1, []string{"no entries"}, []string{"--in", testfile.Write(t, dir, "hdr.tsv", "user\titem\trating\n"), "--header", "--rank", "1"}},
		{"header without --header", 1, []string{"line 1", `"rating"`, "header"}, []string{"--in", testfile.Write(t, dir, "hdr2.tsv", "user\titem\trating\n"), "--rank", "1"}},
		{"ragged rows", 1, []string{"line 2", "2 fields"}, []string{"--in", testfile.Write(t, dir, "ragged.tsv", "u1\tm1\t3\nu1\tm2\n"), "--rank", "1"}},
		{"extra fields", 1, []string{"line 1", "4 fields", "use --ignore-extra"}, []string{"--in", testfile.Write(t, dir, "ml.dat", "1::2::5::978300760\n"), "--delim", "::", "--rank", "1"}},
		{"extra fields in --predict", 1, []string{"p.tsv", "line 1", "5 fields", "use --ignore-extra"},
			[]string{"--in", testfile.Write(t, dir, "ok.tsv", "a\tx\t1\na\ty\t2\nb\tx\t3\nb\ty\t1\n"), "--predict", testfile.Write(t, dir, "p.tsv", "a\tx\t1\t2\t3\n"), "--rank", "1"}},
		{"one rating", 2, []string{"--rank 1", "1 distinct rows"}, []string{"--in", testfile.Write(t, dir, "one.tsv", "u1\tm1\t3\n"), "--rank", "1"}},
		{"directory as --in", 1, []string{"is a directory"}, []string{"--in", t.TempDir(), "--rank", "1"}},
		{"rank auto, one rating", 1, []string{"cannot choose the rank by validation", "too few"}, []string{"--method", "als", "--in", testfile.Write(t, dir, "r.tsv", "a\tb\t1\n"), "--rank", "auto"}},
		{"rank negative", 2, []string{"flag -rank", "must be a positive integer"}, []string{"--in", testfile.Write(t, dir, "rn.tsv", "a\tb\t1\n"), "--rank", "-2"}},
		{"holdout 1", 2, []string{"flag -holdout"}, []string{"--in", testfile.Write(t, dir, "h.tsv", "a\tb\t1\n"), "--rank", "1", "--holdout", "1"}},
		{"NaN rating", 1, []string{"line 2"}, []string{"--in", testfile.Write(t, dir, "nan.tsv", "a\tx\t1\na\ty\tNaN\nb\tx\t3\n"), "--rank", "1"}},
		{"Inf rating", 1, []string{"line 1"}, []string{"--in", testfile.Write(t, dir, "inf.tsv", "a\tx\tInf\na\ty\t2\nb\tx\t3\n"), "--rank", "1"}},
		{"duplicate pair", 1, []string{"duplicate"}, []string{"--in", testfile.Write(t, dir, "dup.tsv", "a\tx\t1\na\tx\t2\nb\ty\t3\nb\tx\t3\n"), "--rank", "1"}},
		{"text rating", 1, []string{"line 1"}, []string{"--in", testfile.Write(t, dir, "txt.tsv", "a\tx\tgood\n"), "--rank", "1"}},
		{"missing --in", 2, []string{"--in"}, []string{"--rank", "1"}},
		{"missing --in file", 1, []string{"no-such.tsv", "does not exist"}, []string{"--in", filepath.Join(dir, "no-such.tsv"), "--rank", "1"}},
		{"lambda, an ialm flag", 2, []string{"not defined: -lambda"}, []string{"--in", testfile.Write(t, dir, "l.tsv", "a\tx\t1\n"), "--rank", "1", "--lambda", "0.1"}},
		{"no --rank (auto), two ratings", 1, []string{"cannot choose the rank by validation", "1 distinct rows"}, []string{"--method", "als", "--in", testfile.Write(t, dir, "nr.tsv", "a\tx\t1\nb\ty\t2\n"), "--rank", "auto"}},
		{"defaults (gibbs), two ratings", 1, []string{"too few training ratings for the Gibbs fit", "2, and it sets 10 aside"}, []string{"--in", testfile.Write(t, dir, "ng.tsv", "a\tx\t1\nb\ty\t2\n")}},
		{"defaults (gibbs), one user", 1, []string{"too few training ratings for the Gibbs fit", "two distinct rows"}, []string{"--in", testfile.Write(t, dir, "nu.tsv", "a\tx\t1\na\ty\t2\na\tz\t3\n")}},
		{"gibbs with ridge", 2, []string{"--method gibbs takes none of", "--ridge"}, []string{"--in", testfile.Write(t, dir, "gr.tsv", "a\tx\t1\n"), "--method", "gibbs", "--ridge", "0.1"}},
		{"tail without alpha", 2, []string{"--tail sets the noise"}, []string{"--in", testfile.Write(t, dir, "ta.tsv", "a\tx\t1\n"), "--tail", "3"}},
		{"tail with als", 2, []string{"--tail sets the noise"}, []string{"--method", "als", "--in", testfile.Write(t, dir, "tl.tsv", "a\tx\t1\n"), "--rank", "1", "--alpha", "0.1", "--tail", "3"}},
		{"tail below 1", 2, []string{"flag -tail", "at least 1, or inf"}, []string{"--in", testfile.Write(t, dir, "tn.tsv", "a\tx\t1\n"), "--alpha", "0.1", "--tail", "0.5"}},
		{"tail NaN", 2, []string{"flag -tail"}, []string{"--in", testfile.Write(t, dir, "tnan.tsv", "a\tx\t1\n"), "--alpha", "0.1", "--tail", "NaN"}},
		{"gibbs without biases", 2, []string{"--method gibbs fits the biases"}, []string{"--in", testfile.Write(t, dir, "gb.tsv", "a\tx\t1\n"), "--method", "gibbs", "--center=false"}},
		{"method altproj", 2, []string{"--method altproj"}, []string{"--in", testfile.Write(t, dir, "m.tsv", "a\tx\t1\n"), "--rank", "1", "--method", "altproj"}},
		{"p given", 2, []string{"not defined: -p"}, []string{"--in", testfile.Write(t, dir, "pgiven.tsv", "a\tx\t1\n"), "--rank", "1", "--p", "0.5"}},
		{"unknown policy bias without biases", 2, []string{"--unknown bias needs --biases"}, []string{"--method", "als", "--in", testfile.Write(t, dir, "ub.tsv", "a\tx\t1\n"), "--rank", "1", "--unknown", "bias"}},
		{"ridge Inf", 2, []string{"flag -ridge"}, []string{"--in", testfile.Write(t, dir, "ri.tsv", "a\tx\t1\n"), "--rank", "1", "--ridge", "Inf"}},
		{"implicit negative", 2, []string{"flag -implicit"}, []string{"--in", testfile.Write(t, dir, "im.tsv", "a\tx\t1\n"), "--rank", "1", "--implicit", "-1"}},
		{"holdout negative", 2, []string{"flag -holdout"}, []string{"--in", testfile.Write(t, dir, "hn.tsv", "a\tb\t1\n"), "--rank", "1", "--holdout", "-0.1"}},
		{"clip reversed", 2, []string{"--clip"}, []string{"--in", testfile.Write(t, dir, "c.tsv", "a\tb\t1\n"), "--rank", "1", "--clip", "5:1"}},
		{"missing --predict file", 1, []string{"no-such"}, []string{"--in", testfile.Write(t, dir, "pp.tsv", "a\tx\t1\na\ty\t2\nb\tx\t3\nb\ty\t1\n"), "--rank", "1", "--predict", filepath.Join(dir, "no-such.tsv")}},
		{"alpha leaves nothing", 2, []string{"γ·α", "keep every entry"}, []string{"--method", "als", "--in", testfile.Write(t, dir, "al.tsv", "a\tx\t1\na\ty\t2\nb\tx\t3\nb\ty\t1\nc\tx\t2\nc\ty\t4\n"), "--rank", "1", "--alpha", "0.99"}},
		{"output holds the input", 1, []string{"holds an input"}, []string{"--in", testfile.Write(t, dir, "own.tsv", "a\tx\t1\na\ty\t2\nb\tx\t3\nb\ty\t1\n"), "--rank", "1", "--force", "--out", dir}},
	})
	// Ids are arbitrary bytes, not necessarily UTF-8: they are kept as
	// given and written back unchanged.
	in := testfile.Write(t, dir, "bytes.tsv", "\xff\xfe\tm1\t3\nu2\t\xc3\x28\t4\nu3\tm2\t5\nu2\tm1\t4\n")
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "complete", "--method", "als", "--in", in, "--rank", "1", "--out", out)
	rows, err := os.ReadFile(filepath.Join(out, "rows.txt"))
	if err != nil || !strings.HasPrefix(string(rows), "\xff\xfe\n") {
		t.Errorf("rows.txt %q (%v) does not start with the non-UTF-8 id", rows, err)
	}
}

func TestSynthRobust(t *testing.T) {
	// Sizes beyond any machine's memory are refused before anything is
	// allocated, with and without a solve, dense and partial (before the
	// check, the save-only run died in makeslice after a minute).
	checkRobust(t, "synth", []robustCase{
		{"negative size", 2, []string{"-5×-5", "positive"}, []string{"--d", "-5", "--quiet"}},
		// --d1 and --d2 replace --d; a negative one used to be ignored.
		{"negative d1", 2, []string{"-5×30", "positive"}, []string{"--d", "30", "--d1", "-5", "--quiet"}},
		{"rank 0", 2, []string{"flag -rank", "must be a positive integer"}, []string{"--d", "10", "--rank", "0"}},
		{"ridge-decay above 1", 2, []string{"flag -ridge-decay", "in [0, 1]"}, []string{"--d", "40", "--p", "0.5", "--method", "als", "--ridge", "0.01", "--ridge-decay", "1.5"}},
		{"ridge-decay NaN", 2, []string{"flag -ridge-decay"}, []string{"--d", "40", "--p", "0.5", "--method", "als", "--ridge", "0.01", "--ridge-decay", "NaN"}},
		{"ridge-decay with gd", 2, []string{"--ridge-decay does not apply to --method gd", "als"}, []string{"--d", "40", "--p", "0.5", "--method", "gd", "--ridge", "0.01", "--ridge-decay", "0.8", "--quiet"}},
		{"huber with auto on a full matrix", 2, []string{"--huber does not apply to --method auto", "als"}, []string{"--d", "40", "--huber", "3", "--quiet"}},
		{"rank auto", 2, []string{"flag -rank", "must be a positive integer"}, []string{"--d", "10", "--rank", "auto"}},
		{"p 0", 2, []string{"flag -p: must be in (0, 1]"}, []string{"--d", "10", "--rank", "1", "--p", "0"}},
		{"huge dense", 1, []string{"10000000×10000000", "GB", "free"}, []string{"--d", "10000000", "--rank", "1", "--quiet"}},
		{"huge dense, save only", 1, []string{"10000000×10000000", "GB", "free"}, []string{"--d", "10000000", "--rank", "1", "--no-solve"}},
		{"huge partial", 1, []string{"10000000×10000000", "--p 0.5", "GB", "free"}, []string{"--d", "10000000", "--rank", "1", "--p", "0.5", "--quiet"}},
		{"d 2", 1, []string{"too small to separate"}, []string{"--d", "2", "--rank", "1", "--quiet"}},
		{"rank too large", 2, []string{"rank"}, []string{"--d", "10", "--rank", "10", "--quiet"}},
		{"alpha negative", 2, []string{"flag -alpha"}, []string{"--d", "10", "--rank", "1", "--alpha", "-0.1"}},
		{"kappa below 1", 2, []string{"κ"}, []string{"--d", "10", "--rank", "1", "--kappa", "0.5"}},
		{"kappa NaN", 2, []string{"κ"}, []string{"--d", "10", "--rank", "1", "--kappa", "NaN"}},
		{"magnitude negative", 2, []string{"magnitude"}, []string{"--d", "10", "--rank", "1", "--magnitude", "-1"}},
		{"corruption unknown", 2, []string{"flag -corruption"}, []string{"--d", "10", "--rank", "1", "--corruption", "adversarial"}},
		{"target error negative", 2, []string{"flag -target-error"}, []string{"--d", "10", "--rank", "1", "--target-error", "-1"}},
		{"no-solve without save", 2, []string{"--no-solve"}, []string{"--d", "10", "--rank", "1", "--no-solve", "--out", ""}},
		{"unknown method", 2, []string{"unknown --method"}, []string{"--d", "10", "--rank", "1", "--method", "pca"}},
		{"dense-only method with p", 2, []string{"--p"}, []string{"--d", "10", "--rank", "1", "--method", "accaltproj", "--p", "0.5"}},
		{"step rule unknown", 2, []string{"flag -step-rule"}, []string{"--d", "10", "--rank", "1", "--method", "gd", "--step-rule", "newton"}},
		{"d zero", 2, []string{"0×0", "positive"}, []string{"--d", "0", "--rank", "1"}},
	})
}

// readOnlyParent returns a directory in which nothing can be created, or
// skips the test: a directory without write permission, or (for root, who
// may write anyway) /proc/self.
func readOnlyParent(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if f, err := os.CreateTemp(dir, "probe"); err != nil {
		return dir
	} else {
		f.Close()
		os.Remove(f.Name())
	}
	if _, err := os.Stat("/proc/self"); err == nil {
		if _, err := os.CreateTemp("/proc/self", "probe"); err != nil {
			return "/proc/self"
		}
	}
	t.Skip("no read-only directory available")
	return ""
}

// TestOutputNotCreatable checks that an --out that cannot be created is
// reported before the solve (--verbose would print iteration lines).
func TestOutputNotCreatable(t *testing.T) {
	ro := readOnlyParent(t)
	dir := t.TempDir()
	y := filepath.Join(dir, "Y.npy")
	testfile.WriteWith(t, y, func(w io.Writer) error { return npy.Write(w, testInstance(t, 20, 15, 2, 0.05, 3).Y) })
	ratings := testfile.Write(t, dir, "r.tsv", "a\tx\t1\na\ty\t2\nb\tx\t3\nb\ty\t1\nc\tx\t2\nc\ty\t5\n")
	out := filepath.Join(ro, "rpca-out")
	for _, args := range [][]string{
		{"decompose", "--in", y, "--rank", "2"},
		{"complete", "--in", ratings, "--rank", "1"},
		{"synth", "--d", "30", "--rank", "2", "--out", out},
		{"synth", "--d", "30", "--rank", "2", "--save", out, "--no-solve"},
	} {
		if args[0] != "synth" {
			args = append(args, "--out", out)
		}
		wantError(t, 1, []string{"cannot create output directory", out}, append(args, "--verbose")...)
	}
}

func TestVideoRobust(t *testing.T) {
	_, in := newClip(t)
	checkRobust(t, "video", []robustCase{
		{"scale 0", 2, []string{"flag -scale", "0"}, []string{"--in", in, "--scale", "0"}},
		{"scale negative", 2, []string{"flag -scale"}, []string{"--in", in, "--scale", "-0.5"}},
		{"frames past the end", 1, []string{"selects no frames", "there are 30"}, []string{"--in", in, "--frames", "30:40"}},
		{"one frame", 1, []string{"at least 2 frames"}, []string{"--in", in, "--frames", "29:"}},
		{"one frame, median", 1, []string{"at least 2 frames"}, []string{"--in", in, "--frames", "29:", "--method", "median"}},
		{"one frame, stream", 1, []string{"at least 2 frames"}, []string{"--in", in, "--frames", "29:", "--stream"}},
		{"negative frame", 2, []string{"--frames"}, []string{"--in", in, "--frames", "-1:3"}},
		{"alpha 1", 2, []string{"flag -alpha"}, []string{"--in", in, "--alpha", "1"}},
		{"p 1.5", 2, []string{"flag -p: must be in (0, 1]"}, []string{"--in", in, "--p", "1.5"}},
		{"step NaN", 2, []string{"flag -step", "NaN"}, []string{"--in", in, "--step", "NaN"}},
		{"a file that is no video", 1, []string{"empty.npy"}, []string{"--in", testfile.Write(t, t.TempDir(), "empty.npy", "")}},
		{"missing --in", 2, []string{"--in"}, nil},
		{"no such directory", 1, []string{"no-such"}, []string{"--in", filepath.Join(t.TempDir(), "no-such")}},
		{"empty directory", 1, []string{"no frame"}, []string{"--in", t.TempDir()}},
		{"unknown method", 2, []string{"unknown --method"}, []string{"--in", in, "--method", "pca"}},
		{"unknown preset", 2, []string{"--preset"}, []string{"--in", in, "--preset", "fast"}},
		{"rank negative", 2, []string{"flag -rank", "positive integer or auto"}, []string{"--in", in, "--rank", "-1"}},
		{"rank not a number", 2, []string{"flag -rank", "positive integer or auto"}, []string{"--in", in, "--rank", "two"}},
		{"rank too large", 2, []string{"--rank"}, []string{"--in", in, "--rank", "40"}},
		{"median with sparse foreground", 2, []string{"median"}, []string{"--in", in, "--method", "median", "--foreground", "sparse"}},
		{"dense-only method with p", 2, []string{"--p"}, []string{"--in", in, "--method", "ialm", "--p", "0.5"}},
		{"frames reversed", 2, []string{"--frames"}, []string{"--in", in, "--frames", "5:2"}},
		{"frames not a range", 2, []string{"--frames"}, []string{"--in", in, "--frames", "abc"}},
		{"montage frames 0", 2, []string{"flag -montage-frames"}, []string{"--in", in, "--montage-frames", "0"}},
		{"truth missing", 1, []string{"no-such"}, []string{"--in", in, "--truth", filepath.Join(t.TempDir(), "no-such.png"), "--truth-frame", "f000.png"}},
		{"output holds the input", 1, []string{"holds an input"}, []string{"--in", in, "--force", "--out", filepath.Dir(in)}},
		{"output is the input", 2, []string{"--out must differ from --in"}, []string{"--in", in, "--force", "--out", in}},
		{"workers negative", 2, []string{"flag -workers"}, []string{"--in", in, "--workers", "-2"}},
		{"mask filter negative", 2, []string{"flag -mask-filter"}, []string{"--in", in, "--mask-filter", "-1"}},
		{"min object negative", 2, []string{"flag -min-object"}, []string{"--in", in, "--min-object", "-5"}},
		{"displacement above 3", 2, []string{"flag -displacement", "from 0 (off) to 3"}, []string{"--in", in, "--displacement", "4"}},
		{"displacement negative", 2, []string{"flag -displacement"}, []string{"--in", in, "--displacement", "-1"}},
		{"displacement not a number", 2, []string{"-displacement"}, []string{"--in", in, "--displacement", "two"}},
		{"sketch rows negative", 2, []string{"flag -sketch-rows"}, []string{"--in", in, "--sketch-rows", "-1"}},
		{"sketch rows not a number", 2, []string{"-sketch-rows"}, []string{"--in", in, "--sketch-rows", "half"}},
		{"window too small", 2, []string{"flag -window", "at least 20"}, []string{"--in", in, "--window", "5"}},
		{"history without stream", 2, []string{"--history", "--stream"}, []string{"--in", in, "--history", "50"}},
		{"refit 0", 2, []string{"flag -refit"}, []string{"--in", in, "--stream", "--refit", "0"}},
		{"history below the warm-up", 2, []string{"flag -history"}, []string{"--in", in, "--stream", "--history", "5"}},
		{"track without stream", 2, []string{"--track", "--stream"}, []string{"--in", in, "--track", "0.5"}},
		{"track above 1", 2, []string{"flag -track"}, []string{"--in", in, "--stream", "--track", "1.5"}},
		{"track NaN", 2, []string{"flag -track"}, []string{"--in", in, "--stream", "--track", "NaN"}},
		{"track on the median", 2, []string{"--track", "--method median"}, []string{"--in", in, "--stream", "--method", "median", "--track", "0.5"}},
		{"stream with the sparse foreground", 2, []string{"--stream", "--foreground sparse"}, []string{"--in", in, "--stream", "--foreground", "sparse"}},
		{"window negative", 2, []string{"flag -window"}, []string{"--in", in, "--window", "-200"}},
		{"window not a number", 2, []string{"-window"}, []string{"--in", in, "--window", "many"}},
		{"noise factor 0", 2, []string{"flag -noise-factor"}, []string{"--in", in, "--noise-factor", "0"}},
		{"noise factor NaN", 2, []string{"flag -noise-factor"}, []string{"--in", in, "--noise-factor", "NaN"}},
		{"mask threshold negative", 2, []string{"flag -mask-threshold"}, []string{"--in", in, "--mask-threshold", "-0.1"}},
		{"mask threshold Inf", 2, []string{"flag -mask-threshold"}, []string{"--in", in, "--mask-threshold", "Inf"}},
		{"mask smooth too large", 2, []string{"flag -mask-smooth"}, []string{"--in", in, "--mask-smooth", "60"}},
		{"gray and color", 2, []string{"--color", "--gray"}, []string{"--in", in, "--gray", "--color"}},
		{"a single image", 1, []string{"single image"}, []string{"--in", filepath.Join(in, "shot_001.png")}},
		{"truth frame outside the windows", 1, []string{"not among"}, []string{"--in", in, "--window", "20", "--truth", filepath.Join(in, "shot_001.png"), "--truth-frame", "nosuch.png"}},
	})
}

func TestExperimentRobust(t *testing.T) {
	// The experiment name comes first; checkRobust puts --out before the
	// arguments, so each case starts with the name.
	dir := t.TempDir()
	checkRobust(t, "experiment", []robustCase{
		{"unknown name", 2, []string{"unknown experiment"}, []string{"fig9"}},
		{"d negative", 2, []string{"non-negative"}, []string{"fig1a", "--d", "-5"}},
		{"rank negative", 2, []string{"flag -rank", "positive integer"}, []string{"fig1a", "--rank", "-1"}},
		{"rank 0", 2, []string{"flag -rank", "positive integer"}, []string{"fig1a", "--rank", "0"}},
		{"scale 0", 2, []string{"flag -scale", "(0, 1]"}, []string{"video", "--scale", "0"}},
		{"scale above 1", 2, []string{"flag -scale", "(0, 1]"}, []string{"video", "--scale", "2"}},
		{"method, not an experiment flag", 2, []string{"not defined: -method"}, []string{"fig1a", "--method", "gd"}},
		{"rates not numbers", 2, []string{"flag -rates"}, []string{"fig1a", "--rates", "a,b"}},
		{"the old list flag --p", 2, []string{"-p"}, []string{"fig1a", "--p", "0.5"}},
		{"dims not numbers", 2, []string{"flag -dims"}, []string{"fig1b", "--dims", "1e4,x"}},
		{"gamma NaN", 2, []string{"gamma"}, []string{"fig1a", "--gamma", "NaN"}},
		{"frames missing", 1, []string{"no-such"}, []string{"video", "--quick", "--clips", filepath.Join(dir, "no-such")}},
		{"unknown flag", 2, []string{"not defined"}, []string{"fig1a", "--bogus"}},
		{"output holds the frames", 1, []string{"holds an input"}, []string{"video", "--quick", "--force", "--clips", dir, "--out", dir}},
		{"ratings missing", 1, []string{"no-such.csv"}, []string{"ratings", "--quick", "--ratings", filepath.Join(dir, "no-such.csv")}},
		{"ratings alpha 1", 2, []string{"flag -alpha", "[0, 1)"}, []string{"ratings", "--alpha", "1"}},
		{"ratings alpha NaN", 2, []string{"flag -alpha"}, []string{"ratings", "--alpha", "NaN"}},
		{"ratings a directory", 1, []string{dir}, []string{"ratings", "--quick", "--ratings", dir}},
		{"output is the ratings file", 1, []string{"holds an input"}, []string{"ratings", "--quick", "--force", "--ratings", filepath.Join(dir, "r.csv"), "--out", dir}},
	})
}

// TestLibraryRobust: the library refuses what the command line refuses,
// with errors (wrapping rpca.ErrBadInput where the input is at fault),
// never a panic.
func TestLibraryRobust(t *testing.T) {
	y := testInstance(t, 30, 20, 2, 0.05, 5).Y
	nan := mat.DenseCopyOf(y)
	nan.Set(3, 4, math.NaN())
	obs, err := rpca.NewObserved(3, 3, []int{0, 1, 2, 0}, []int{0, 1, 2, 1}, []float64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	off := rpca.Stop{MaxIter: -1, FactorTol: -1, ResidualTol: -1}
	for _, c := range []struct {
		name string
		p    *rpca.Problem
		s    rpca.Settings
		m    rpca.Method
		bad  bool // wraps ErrBadInput
	}{
		{"nil problem", nil, rpca.Settings{Rank: 1}, nil, true},
		{"empty problem", &rpca.Problem{}, rpca.Settings{Rank: 1}, nil, true},
		{"both dense and observed", &rpca.Problem{Dense: y, Observed: obs}, rpca.Settings{Rank: 1}, nil, true},
		{"zero Observed", &rpca.Problem{Observed: &rpca.Observed{}}, rpca.Settings{Rank: 1}, nil, true},
		{"NaN", &rpca.Problem{Dense: nan}, rpca.Settings{Rank: 1}, nil, true},
		{"rank 0", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 0}, nil, true},
		{"rank too large", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 20}, nil, true},
		{"alpha 1", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Alpha: 1}, nil, true},
		{"alpha NaN", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Alpha: math.NaN()}, nil, true},
		{"workers negative", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Workers: -1}, nil, true},
		{"every stop disabled", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Stop: off}, nil, true},
		{"tolerance Inf", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Stop: rpca.Stop{FactorTol: math.Inf(1)}}, nil, true},
		{"target error without truth", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Stop: rpca.Stop{TargetError: 1e-3}}, nil, false},
		{"too small to identify", &rpca.Problem{Dense: mat.NewDense(2, 2, []float64{1, 2, 3, 4})}, rpca.Settings{Rank: 1, Alpha: 0.1}, nil, true},
		{"dense-only on partial", &rpca.Problem{Observed: obs}, rpca.Settings{Rank: 1}, &ialm.Method{}, false},
		{"GD balance negative", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &gd.Method{Scaled: true, Balance: -1}, false},
		{"GD step NaN", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &gd.Method{StepConst: math.NaN()}, false},
		{"GD unknown step rule", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &gd.Method{Step: "newton"}, false},
		{"GD ridge negative", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &gd.Method{Ridge: -1}, false},
		{"GD ridge Inf", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &gd.Method{Ridge: math.Inf(1)}, false},
		{"GD gamma·alpha ≥ 1", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1, Alpha: 0.6}, &gd.Method{}, false},
		{"accaltproj gamma 1", &rpca.Problem{Dense: y}, rpca.Settings{Rank: 1}, &accaltproj.Method{Gamma: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			res, err := rpca.Solve(context.Background(), c.p, c.s, c.m)
			if err == nil || res != nil {
				t.Fatalf("no error (result %v)", res)
			}
			if c.bad && !errors.Is(err, rpca.ErrBadInput) {
				t.Errorf("%v does not wrap ErrBadInput", err)
			}
		})
	}
	for _, c := range []struct {
		name       string
		d1, d2     int
		rows, cols []int
		vals       []float64
	}{
		{"huge size, no entries", 1e9, 1e9, nil, nil, nil},
		{"index out of range", 2, 2, []int{2}, []int{0}, []float64{1}},
		{"negative index", 2, 2, []int{-1}, []int{0}, []float64{1}},
		{"mismatched lengths", 2, 2, []int{0, 1}, []int{0}, []float64{1}},
		{"duplicate", 2, 2, []int{0, 0}, []int{1, 1}, []float64{1, 2}},
		{"Inf value", 2, 2, []int{0}, []int{0}, []float64{math.Inf(-1)}},
		{"negative size", -2, 2, nil, nil, nil},
	} {
		if _, err := rpca.NewObserved(c.d1, c.d2, c.rows, c.cols, c.vals); err == nil {
			t.Errorf("NewObserved %s: no error", c.name)
		}
	}
	if _, err := rpca.SampleDense(nil, 0.5, 1); err == nil {
		t.Error("SampleDense(nil): no error")
	}
	for _, p := range []float64{0, -1, 1.5, math.NaN()} {
		if _, err := rpca.SampleDense(y, p, 1); err == nil {
			t.Errorf("SampleDense p=%v: no error", p)
		}
	}
}
