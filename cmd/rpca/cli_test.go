package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/synth"
)

// cliResult is the outcome of one in-process run of the command line:
// stderr holds its messages (the lines that start with "rpca:"), progress
// the rest of what it wrote on stderr (stages and iteration lines, which
// a command writes off a terminal unless --quiet).
type cliResult struct {
	code             int
	stdout, stderr   string
	progress, allErr string
}

// runCLI runs the command line in-process with buffers for its streams.
func runCLI(t *testing.T, ctx context.Context, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, &env{stdout: &out, stderr: &errb}, args)
	r := cliResult{code: code, stdout: out.String(), allErr: errb.String()}
	var msgs, prog strings.Builder
	for _, line := range strings.SplitAfter(r.allErr, "\n") {
		if strings.HasPrefix(line, "rpca:") || strings.HasPrefix(line, "\nrpca:") {
			msgs.WriteString(line)
		} else {
			prog.WriteString(line)
		}
	}
	r.stderr, r.progress = msgs.String(), prog.String()
	return r
}

// mustRun runs the command line and fails the test unless it succeeds
// without a message on stderr (progress lines aside).
func mustRun(t *testing.T, args ...string) cliResult {
	t.Helper()
	r := runCLI(t, context.Background(), args...)
	if r.code != 0 {
		t.Fatalf("rpca %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Fatalf("rpca %s: unexpected stderr %q", strings.Join(args, " "), r.stderr)
	}
	return r
}

// wantError runs the command line and checks the exit code and that the
// error is one line on stderr containing every key phrase.
func wantError(t *testing.T, code int, keys []string, args ...string) {
	t.Helper()
	r := runCLI(t, context.Background(), args...)
	if r.code != code {
		t.Errorf("rpca %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), r.code, code, r.stderr)
	}
	msg := strings.TrimSuffix(r.stderr, "\n")
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "rpca: ") || strings.HasPrefix(msg, "rpca: rpca:") {
		t.Errorf("rpca %s: error is not one 'rpca: ' line: %q", strings.Join(args, " "), r.stderr)
	}
	for _, k := range keys {
		if !strings.Contains(msg, k) {
			t.Errorf("rpca %s: error %q does not contain %q", strings.Join(args, " "), msg, k)
		}
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		t.Errorf("rpca %s: stack trace on stderr: %s", strings.Join(args, " "), r.stderr)
	}
}

// readJSON decodes a JSON file or text into a map.
func readJSON(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("bad JSON %q: %v", data, err)
	}
	return m
}

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readJSON(t, string(b))
}

// relDiff returns ‖X − Y‖_F/‖Y‖_F.
func relDiff(x, y mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(x, y)
	return mat.Norm(&d, 2) / mat.Norm(y, 2)
}

// truthM forms M* = A·Bᵀ of a (small) instance.
func truthM(in *synth.Instance) *mat.Dense {
	var m mat.Dense
	m.Mul(in.A, in.B.T())
	return &m
}

// cancelOnWrite is a stderr that cancels a context once a given text has
// been written to it (e.g. the progress line of an iteration), so that a
// test can interrupt a run at a known point.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	text   string
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.text) {
		c.cancel()
	}
	return len(p), nil
}

// testInstance generates a small dense instance of the paper's model with
// the theory's deterministic corruptions: at most ⌊αd⌋ per row and column.
// (With the random model, at d ≈ 100 some rows get more than the γαd
// corruptions the sparse estimator removes, and recovery stalls near 1e-2.)
func testInstance(t *testing.T, d1, d2, r int, alpha float64, seed uint64) *synth.Instance {
	t.Helper()
	in, err := synth.Dense(synth.Config{D1: d1, D2: d2, Rank: r, Alpha: alpha, Seed: seed, Corruption: synth.Deterministic})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// writeInstance writes the Y of testInstance(t, d1, d2, r, alpha, seed)
// to Y.npy in a new directory and returns the directory, the instance and
// the file's path.
func writeInstance(t *testing.T, d1, d2, r int, alpha float64, seed uint64) (dir string, in *synth.Instance, y string) {
	t.Helper()
	in = testInstance(t, d1, d2, r, alpha, seed)
	dir = t.TempDir()
	y = join(dir, "Y.npy")
	testfile.WriteWith(t, y, func(w io.Writer) error { return npy.Write(w, in.Y) })
	return dir, in, y
}

func join(elem ...string) string { return filepath.Join(elem...) }

// TestHelpTexts: every command's -h (and rpca's own usage) starts with
// its help text, leaves no placeholder unfilled, fits 80 columns, and
// names every flag in one style (--name); a flag's printed default is the
// value its command starts from (complete's --method: gibbs, not the gd
// the shared flags start from).
func TestHelpTexts(t *testing.T) {
	check := func(name, s string) {
		for i, line := range strings.Split(s, "\n") {
			if n := len([]rune(line)); n > 80 {
				t.Errorf("%s: line %d has %d columns: %q", name, i+1, n, line)
			}
			if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
				t.Errorf("%s: line %d names a flag with one dash: %q", name, i+1, line)
			}
		}
	}
	for name := range commands {
		var out bytes.Buffer
		e := &env{stdout: &out, stderr: io.Discard}
		if code := run(context.Background(), e, []string{name, "-h"}); code != 0 {
			t.Errorf("%s -h: exit %d", name, code)
		}
		s := out.String()
		if !strings.HasPrefix(s, "Usage: rpca "+name) || strings.Contains(s, "{{") || len(s) < 200 {
			t.Errorf("%s -h: %q", name, s)
		}
		check(name+" -h", s)
	}
	var out bytes.Buffer
	if code := run(context.Background(), &env{stdout: &out, stderr: io.Discard}, []string{"help"}); code != 0 {
		t.Errorf("rpca help: exit %d", code)
	}
	check("rpca help", out.String())
	out.Reset()
	run(context.Background(), &env{stdout: &out, stderr: io.Discard}, []string{"complete", "-h"})
	if s := out.String(); !strings.Contains(s, `(default "gibbs")`) || strings.Contains(s, `(default "gd")`) {
		t.Errorf("complete -h does not show gibbs as --method's default")
	}
}

// TestNoCommandAndVersion: rpca alone is a usage error (the usage on
// stderr, exit 2); rpca version and --version print the build's version.
func TestNoCommandAndVersion(t *testing.T) {
	r := runCLI(t, context.Background())
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.allErr, "Usage: rpca COMMAND") {
		t.Errorf("rpca alone: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.allErr)
	}
	for _, arg := range []string{"version", "--version"} {
		r := runCLI(t, context.Background(), arg)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "rpca ") || !strings.Contains(r.stdout, "go1.") || r.allErr != "" {
			t.Errorf("rpca %s: exit %d, stdout %q, stderr %q", arg, r.code, r.stdout, r.allErr)
		}
	}
}

// TestDemo runs the demo small: three runs explained on stdout, nothing
// on stderr with --quiet, the stages on stderr without it.
func TestDemo(t *testing.T) {
	r := mustRun(t, "demo", "--d", "400", "--rank", "2", "--quiet")
	if strings.Count(r.stdout, "corruptions found") != 3 {
		t.Errorf("stdout %q", r.stdout)
	}
	r = runCLI(t, context.Background(), "demo", "--d", "400", "--rank", "2")
	if r.code != 0 || strings.Count(r.progress, "initializing") != 3 || !strings.Contains(r.progress, "generating a 400×400") || r.stderr != "" {
		t.Errorf("exit %d, progress %q, messages %q", r.code, r.progress, r.stderr)
	}
	wantError(t, 2, []string{"flag -d", "[1, 20000]"}, "demo", "--d", "0")
	wantError(t, 2, []string{"flag -rank", "positive integer"}, "demo", "--rank", "0")
	wantError(t, 2, []string{"not defined: -p"}, "demo", "--p", "0.5")
	// Interrupted: exit code 130, no summary.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = runCLI(t, ctx, "demo", "--d", "400", "--rank", "2", "--quiet")
	if r.code != 130 || r.stdout != "" || !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("interrupted demo: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// readNpy reads a .npy file that a run wrote, failing the test if it cannot.
func readNpy(t *testing.T, path string) *mat.Dense {
	t.Helper()
	m, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReadmeCommandLines: every "rpca COMMAND …" line of README.md and
// docs/*.md names a command that exists and only flags it defines.
func TestReadmeCommandLines(t *testing.T) {
	files, _ := filepath.Glob(join("..", "..", "docs", "*.md"))
	files = append(files, join("..", "..", "README.md"))
	flagRE := regexp.MustCompile(`(?:^|[\s\[|(])--([a-z][a-z0-9-]*)`)
	checked := 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			name, rest, ok := strings.Cut(strings.TrimPrefix(line, "rpca "), " ")
			if !strings.HasPrefix(line, "rpca ") || !ok || commands[name] == nil {
				continue
			}
			rest, _, _ = strings.Cut(rest, "#") // a comment
			fs := commandFlags(t, name)
			for _, m := range flagRE.FindAllStringSubmatch(rest, -1) {
				if fs.Lookup(m[1]) == nil {
					t.Errorf("%s:%d: rpca %s has no flag --%s", path, n+1, name, m[1])
				}
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d command lines found", checked)
	}
}

// commandFlags returns the flag set of command name, from the flags its
// -h lists after "Flags:".
func commandFlags(t *testing.T, name string) *flag.FlagSet {
	t.Helper()
	var out bytes.Buffer
	run(context.Background(), &env{stdout: &out, stderr: io.Discard}, []string{name, "-h"})
	_, list, _ := strings.Cut(out.String(), "\nFlags:\n")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, l := range strings.Split(list, "\n") {
		if f, ok := strings.CutPrefix(l, "  --"); ok {
			f, _, _ = strings.Cut(f, " ")
			fs.Bool(f, false, "")
		}
	}
	return fs
}
