package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats"
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

// checkRobust runs the cases of command cmd, each with --out (synth:
// --save) in a fresh directory.
func checkRobust(t *testing.T, cmd string, cases []robustCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(cmd+"/"+c.name, func(t *testing.T) {
			parent := t.TempDir()
			outFlag := "--out"
			if cmd == "synth" {
				outFlag = "--save"
			}
			args := append([]string{cmd, outFlag, filepath.Join(parent, "out")}, c.args...)
			wantError(t, c.code, c.keys, args...)
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("failed run left %d entries in the output's parent", len(ents))
			}
		})
	}
}

// writeRaw writes text into a new file of dir and returns its path.
func writeRaw(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
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
	writeFile(t, y, func(w io.Writer) error { return formats.WriteNpy(w, testInstance(t, 20, 15, 2, 0.05, 3).Y) })
	checkRobust(t, "decompose", []robustCase{
		{"empty npy", 1, []string{"empty file"}, []string{"--in", writeRaw(t, dir, "empty.npy", ""), "--rank", "1"}},
		{"0×0 npy", 1, []string{"empty", "(0, 0)"}, []string{"--in", writeRaw(t, dir, "zero.npy", npyFile("(0, 0)")), "--rank", "1"}},
		{"1×1 npy", 2, []string{"--rank 1", "1×1"}, []string{"--in", writeRaw(t, dir, "one.npy", npyFile("(1, 1)", 1)), "--rank", "1"}},
		{"truncated npy", 1, []string{"truncated"}, []string{"--in", writeRaw(t, dir, "trunc.npy", npyFile("(10, 10)", 1, 2, 3)), "--rank", "1"}},
		{"negative npy shape", 1, []string{"-3"}, []string{"--in", writeRaw(t, dir, "neg.npy", npyFile("(-3, 4)")), "--rank", "1"}},
		{"empty csv", 1, []string{"no data rows"}, []string{"--in", writeRaw(t, dir, "empty.csv", ""), "--rank", "1"}},
		{"header-only csv", 1, []string{"no data rows"}, []string{"--in", writeRaw(t, dir, "hdr.csv", "a,b,c\n"), "--header", "--rank", "1"}},
		{"ragged csv", 1, []string{"line 2", "2 fields", "3"}, []string{"--in", writeRaw(t, dir, "ragged.csv", "1,2,3\n4,5\n6,7,8\n"), "--rank", "1"}},
		{"empty mtx", 1, []string{"empty file"}, []string{"--in", writeRaw(t, dir, "empty.mtx", ""), "--rank", "1"}},
		{"mtx index 0", 1, []string{"line 3", "row index 0"}, []string{"--in", writeRaw(t, dir, "zero.mtx", mm+"3 3 3\n0 1 1\n2 2 1\n3 3 1\n"), "--rank", "1"}},
		{"mtx negative size", 1, []string{`"-3"`}, []string{"--in", writeRaw(t, dir, "neg.mtx", mm+"-3 3 1\n1 1 1\n"), "--rank", "1"}},
		{"mtx size overflow", 1, []string{"overflows"}, []string{"--in", writeRaw(t, dir, "over.mtx", mm+"3000000000000 3000000000000 3\n1 1 1\n"), "--rank", "1"}},
		// Huge dimensions with few entries: refused from the size line,
		// before any per-row or per-column array is allocated.
		{"mtx huge dimensions", 1, []string{"3 entries cannot cover", "20000000 rows", "every row and column"},
			[]string{"--in", writeRaw(t, dir, "huge.mtx", mm+"20000000 20000000 3\n1 1 1\n2 2 1\n1 2 3\n"), "--rank", "1"}},
		{"mtx huge entry count", 1, []string{"GB"}, []string{"--in", writeRaw(t, dir, "nnz.mtx", mm+"3 3 99999999999\n1 1 1\n"), "--rank", "1"}},
		{"directory as --in", 1, []string{"is a directory"}, []string{"--in", t.TempDir(), "--in-format", "npy", "--rank", "1"}},
		{"rank 0", 2, []string{"--rank must be at least 1"}, []string{"--in", y, "--rank", "0"}},
		{"alpha 1", 2, []string{"--alpha"}, []string{"--in", y, "--rank", "1", "--alpha", "1"}},
		{"p 0", 2, []string{"--p must be in (0, 1]"}, []string{"--in", y, "--rank", "1", "--p", "0"}},
		{"p 1.5", 2, []string{"--p must be in (0, 1]"}, []string{"--in", y, "--rank", "1", "--p", "1.5"}},
		{"gamma NaN", 2, []string{"--gamma", "NaN"}, []string{"--in", y, "--rank", "1", "--gamma", "NaN"}},
		{"step negative", 2, []string{"--step", "-1"}, []string{"--in", y, "--rank", "1", "--step", "-1"}},
		{"mu Inf", 2, []string{"--mu", "Inf"}, []string{"--in", y, "--rank", "1", "--mu", "Inf"}},
		{"tol NaN", 2, []string{"--tol", "NaN"}, []string{"--in", y, "--rank", "1", "--tol", "NaN"}},
		{"max-iter negative", 2, []string{"--max-iter", "-1"}, []string{"--in", y, "--rank", "1", "--max-iter", "-1"}},
		{"lambda negative", 2, []string{"--lambda"}, []string{"--in", y, "--rank", "1", "--method", "ialm", "--lambda", "-2"}},
	})
}

func TestCompleteRobust(t *testing.T) {
	dir := t.TempDir()
	checkRobust(t, "complete", []robustCase{
		{"empty file", 1, []string{"no entries"}, []string{"--in", writeRaw(t, dir, "empty.tsv", ""), "--rank", "1"}},
		{"header only", 1, []string{"no entries"}, []string{"--in", writeRaw(t, dir, "hdr.tsv", "user\titem\trating\n"), "--header", "--rank", "1"}},
		{"header without --header", 1, []string{"line 1", `"rating"`, "header"}, []string{"--in", writeRaw(t, dir, "hdr2.tsv", "user\titem\trating\n"), "--rank", "1"}},
		{"ragged rows", 1, []string{"line 2", "2 fields"}, []string{"--in", writeRaw(t, dir, "ragged.tsv", "u1\tm1\t3\nu1\tm2\n"), "--rank", "1"}},
		{"extra fields", 1, []string{"line 1", "4 fields", "use --ignore-extra"}, []string{"--in", writeRaw(t, dir, "ml.dat", "1::2::5::978300760\n"), "--delim", "::", "--rank", "1"}},
		{"extra fields in --predict", 1, []string{"p.tsv", "line 1", "5 fields", "use --ignore-extra"},
			[]string{"--in", writeRaw(t, dir, "ok.tsv", "a\tx\t1\na\ty\t2\nb\tx\t3\nb\ty\t1\n"), "--predict", writeRaw(t, dir, "p.tsv", "a\tx\t1\t2\t3\n"), "--rank", "1"}},
		{"one rating", 2, []string{"--rank 1", "1 distinct rows"}, []string{"--in", writeRaw(t, dir, "one.tsv", "u1\tm1\t3\n"), "--rank", "1"}},
		{"directory as --in", 1, []string{"is a directory"}, []string{"--in", t.TempDir(), "--rank", "1"}},
		{"rank 0", 2, []string{"--rank must be at least 1"}, []string{"--in", writeRaw(t, dir, "r.tsv", "a\tb\t1\n"), "--rank", "0"}},
		{"holdout 1", 2, []string{"--holdout"}, []string{"--in", writeRaw(t, dir, "h.tsv", "a\tb\t1\n"), "--rank", "1", "--holdout", "1"}},
	})
	// Ids are arbitrary bytes, not necessarily UTF-8: they are kept as
	// given and written back unchanged.
	in := writeRaw(t, dir, "bytes.tsv", "\xff\xfe\tm1\t3\nu2\t\xc3\x28\t4\nu3\tm2\t5\nu2\tm1\t4\n")
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "complete", "--in", in, "--rank", "1", "--out", out)
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
		{"negative size", 1, []string{"-5×-5", "positive"}, []string{"--d", "-5", "--quiet"}},
		{"rank 0", 2, []string{"--rank must be at least 1"}, []string{"--d", "10", "--rank", "0"}},
		{"p 0", 2, []string{"--p must be in (0, 1]"}, []string{"--d", "10", "--rank", "1", "--p", "0"}},
		{"huge dense", 1, []string{"10000000×10000000", "GB", "free"}, []string{"--d", "10000000", "--rank", "1", "--quiet"}},
		{"huge dense, save only", 1, []string{"10000000×10000000", "GB", "free"}, []string{"--d", "10000000", "--rank", "1", "--no-solve"}},
		{"huge partial", 1, []string{"10000000×10000000", "--p 0.5", "GB", "free"}, []string{"--d", "10000000", "--rank", "1", "--p", "0.5", "--quiet"}},
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
	writeFile(t, y, func(w io.Writer) error { return formats.WriteNpy(w, testInstance(t, 20, 15, 2, 0.05, 3).Y) })
	ratings := writeRaw(t, dir, "r.tsv", "a\tx\t1\na\ty\t2\nb\tx\t3\nb\ty\t1\nc\tx\t2\nc\ty\t5\n")
	out := filepath.Join(ro, "rpca-out")
	for _, args := range [][]string{
		{"decompose", "--in", y, "--rank", "2"},
		{"complete", "--in", ratings, "--rank", "1"},
		{"synth", "--d", "30", "--rank", "2", "--save", out},
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
		{"scale 0", 2, []string{"--scale", "0"}, []string{"--in", in, "--scale", "0"}},
		{"scale negative", 2, []string{"--scale"}, []string{"--in", in, "--scale", "-0.5"}},
		{"frames past the end", 1, []string{"selects no frames", "there are 30"}, []string{"--in", in, "--frames", "30:40"}},
		{"one frame", 1, []string{"at least 2 frames"}, []string{"--in", in, "--frames", "29:"}},
		{"negative frame", 2, []string{"--frames"}, []string{"--in", in, "--frames", "-1:3"}},
		{"alpha 1", 2, []string{"--alpha"}, []string{"--in", in, "--alpha", "1"}},
		{"p 1.5", 2, []string{"--p must be in (0, 1]"}, []string{"--in", in, "--p", "1.5"}},
		{"step NaN", 2, []string{"--step", "NaN"}, []string{"--in", in, "--step", "NaN"}},
		{"a file that is no video", 1, []string{"empty.npy"}, []string{"--in", writeRaw(t, t.TempDir(), "empty.npy", "")}},
	})
}
