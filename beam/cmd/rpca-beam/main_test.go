package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

// runMainEnv makes the test binary run as the command (TestMain).
const runMainEnv = "RPCA_BEAM_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestCommand runs rpca-beam on Prism on a generated instance, reads its
// factors back and checks them against the truth; then the exit codes of
// bad usage, a missing input and an output directory it may not replace.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	in, err := synth.Observed(synth.Config{D1: 300, D2: 200, Rank: 3, Alpha: 0.05, P: 0.4, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(dir, "Y.mtx")
	if err := mtx.WriteFile(y, in.Obs); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCmd(t, "--in", y, "--rank", "3", "--alpha", "0.05", "--out", out, "--shards", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	u, err := npy.ReadFile(filepath.Join(out, "U.npy"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := npy.ReadFile(filepath.Join(out, "V.npy"))
	if err != nil {
		t.Fatal(err)
	}
	// The instance is small for recovery (true error about 1e-2 either
	// way); the command must give what rpca.Solve gives.
	ref, err := rpca.Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1}, &gd.Method{})
	if err != nil {
		t.Fatal(err)
	}
	if gap := metrics.RelError(u, v, ref.U, ref.V); gap > 1e-8 {
		t.Errorf("gap to rpca.Solve %.3g; stdout %s", gap, stdout)
	}
	var sum summary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil || sum.Observed != in.Obs.NNZ() || sum.Iterations < 1 || len(sum.History) != sum.Iterations+1 {
		t.Errorf("summary %+v (%v)", sum, err)
	}
	// The launcher checks the answer as rpca.Solve checks its own: the
	// same verdict, said in the summary, on stdout and (when not
	// verified) on stderr.
	rv := ref.Verification
	if sum.Verification == nil || sum.Verified != rv.Verified || sum.Verification.Failed != rv.Failed ||
		!strings.Contains(stdout, rv.Status()) || strings.Contains(stderr, "not verified") == rv.Verified {
		t.Errorf("verification %+v (%q); rpca.Solve's %+v; stdout %q, stderr %q", sum.Verification, sum.NotChecked, rv, stdout, stderr)
	}
	for _, c := range []struct {
		code int
		want string
		args []string
	}{
		{2, "--rank", []string{"--in", y, "--out", filepath.Join(dir, "o2")}},
		{2, "flag -alpha", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--alpha", "1"}},
		{2, "γ·α", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--alpha", "0.5"}},
		{2, "not defined", []string{"--bogus"}},
		{2, "flag -shards", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--shards", "0"}},
		{2, "flag -max-iter", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--max-iter", "-1"}},
		{2, "flag -tol", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--tol", "NaN"}},
		{2, "invalid value", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "two"}},
		{2, "unexpected argument", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "extra"}},
		{1, "no file matches", []string{"--in", filepath.Join(dir, "none.mtx"), "--out", filepath.Join(dir, "o2"), "--rank", "2"}},
		{1, "exists", []string{"--in", y, "--out", out, "--rank", "2"}},
		{2, "flag -cache-mb", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--cache-mb", "-1"}},
		{2, "need --work", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--keep-work"}},
		{2, "want gd or als", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--method", "sgd"}},
		{2, "apply to --method als", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--ridge", "1"}},
		{2, "--ridge-decay", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--method", "als", "--ridge-decay", "2"}},
		{2, "-verify", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--verify=maybe"}},
		{2, "--runner flink needs --work", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--runner", "flink"}},
	} {
		code, _, stderr := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	// --verify=false: not checked, and said so.
	if code, stdout, stderr := runCmd(t, "--in", y, "--rank", "3", "--alpha", "0.05", "--out", filepath.Join(dir, "nv"), "--verify=false"); code != 0 ||
		!strings.Contains(stdout, "not checked") || !strings.Contains(stderr, "--verify=false") {
		t.Errorf("--verify=false: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// --method als gives what als.Method's Solve gives.
	alsOut := filepath.Join(dir, "als")
	if code, _, stderr := runCmd(t, "--in", y, "--rank", "3", "--alpha", "0.05", "--out", alsOut, "--shards", "2", "--method", "als", "--ridge", "0.1"); code != 0 {
		t.Fatalf("--method als: exit %d: %s", code, stderr)
	}
	ua, err := npy.ReadFile(filepath.Join(alsOut, "U.npy"))
	if err != nil {
		t.Fatal(err)
	}
	va, err := npy.ReadFile(filepath.Join(alsOut, "V.npy"))
	if err != nil {
		t.Fatal(err)
	}
	refALS, err := (&als.Method{Ridge: 0.1}).Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if gap := metrics.RelError(ua, va, refALS.U, refALS.V); gap > 1e-10 {
		t.Errorf("--method als: gap to als.Method.Solve %.3g", gap)
	}
	var sumALS summary
	b, err = os.ReadFile(filepath.Join(alsOut, "summary.json"))
	if err != nil || json.Unmarshal(b, &sumALS) != nil || sumALS.Method != "als" || sumALS.Iterations != refALS.Iterations {
		t.Errorf("summary of --method als: %+v (%v); Solve took %d sweeps", sumALS, err, refALS.Iterations)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errOut strings.Builder
	if code := run(ctx, []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2"}, io.Discard, &errOut); code != 130 || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("interrupted: exit %d, %q", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "o2")); !os.IsNotExist(err) {
		t.Errorf("a failed run left its output: %v", err)
	}
}

// TestCommandOffset: a rank-2 matrix plus 1e4 on every entry, fitted at
// rank 3, gives what rpca.Solve gives: the same location removed and
// added back (summary.json's location), the same answer and the same
// verdict. Without the location the gradient method does not get near
// this matrix (the root package's TestSolveDistributedLocation).
func TestCommandOffset(t *testing.T) {
	dir := t.TempDir()
	in, err := synth.Observed(synth.Config{D1: 200, D2: 150, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	rows, cols, vals := []int{}, []int{}, []float64{}
	in.Obs.Do(func(i, j int, v float64) {
		rows, cols, vals = append(rows, i), append(cols, j), append(vals, v+1e4)
	})
	obs, err := rpca.NewObserved(200, 150, rows, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(dir, "Y.mtx")
	if err := mtx.WriteFile(y, obs); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCmd(t, "--in", y, "--rank", "3", "--alpha", "0.05", "--out", out, "--shards", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	u, errU := npy.ReadFile(filepath.Join(out, "U.npy"))
	v, errV := npy.ReadFile(filepath.Join(out, "V.npy"))
	if errU != nil || errV != nil {
		t.Fatal(errU, errV)
	}
	ref, err := rpca.Solve(context.Background(), &rpca.Problem{Observed: obs}, rpca.Settings{Rank: 3, Alpha: 0.05, Seed: 1}, &gd.Method{})
	if err != nil {
		t.Fatal(err)
	}
	var sum summary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary: %v", err)
	}
	gap := metrics.CentredRelError(u, v, ref.U, ref.V)
	t.Logf("%s; gap to rpca.Solve %.3g (against its varying part), location %.6g and %.6g", strings.TrimSpace(stdout), gap, sum.Location, ref.Location)
	if gap > 1e-8 || sum.Location == 0 || sum.Location != ref.Location || sum.Verification == nil ||
		sum.Verified != ref.Verification.Verified || !ref.Verification.Verified {
		t.Errorf("gap %.3g, location %v against %v, verified %v (%+v) against rpca.Solve's %v", gap, sum.Location, ref.Location,
			sum.Verified, sum.Verification, ref.Verification.Verified)
	}
}

// TestWorkerStarts: started as a runner starts a worker, with the SDK's
// flags alone (--worker=true --id=… and the endpoints, none of the
// command's), the binary hands over to the SDK's harness (beam.Init)
// before any of its own flags is checked, and exits 0 when the harness
// returns. beam.Init is replaced by a recorder here (the real harness
// would dial the endpoints).
func TestWorkerStarts(t *testing.T) {
	saved := beamInit
	t.Cleanup(func() {
		beamInit = saved
		flag.CommandLine.Set("worker", "false")
	})
	calls := 0
	beamInit = func() { calls++ }
	code, _, stderr := runCmd(t, "--worker=true", "--id=1-1", "--logging_endpoint=localhost:1", "--control_endpoint=localhost:1", "--semi_persist_dir=/tmp")
	if code != 0 || calls != 1 || stderr != "" {
		t.Errorf("as a worker: exit %d, beam.Init called %d times, stderr %q; want 0, once, nothing", code, calls, stderr)
	}
	flag.CommandLine.Set("worker", "false")
	calls = 0
	code, _, stderr = runCmd(t, "--rank", "2")
	if code != 2 || calls != 0 || !strings.Contains(stderr, "--in and --out are required") {
		t.Errorf("as a launcher without --in: exit %d, beam.Init called %d times, stderr %q", code, calls, stderr)
	}
}

// TestHelp: rpca-beam -h shows its own flags first, in full, and Beam's
// SDK flags apart, by name only; no line is wider than 80 columns.
func TestHelp(t *testing.T) {
	code, _, stderr := runCmd(t, "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	own := strings.Index(stderr, "\nFlags:\n")
	beamAt := strings.Index(stderr, "Apache Beam's flags")
	if own < 0 || beamAt < own {
		t.Fatalf("own flags not before Beam's:\n%s", stderr)
	}
	for _, f := range []string{"--in", "--out", "--rank", "--alpha", "--work", "--runner", "--shards"} {
		if i := strings.Index(stderr, "  "+f+" "); i < own || i > beamAt {
			t.Errorf("%s is not among rpca-beam's own flags", f)
		}
	}
	for _, f := range []string{"--worker_binary", "--environment_type", "--job_name"} {
		if i := strings.Index(stderr, f); i < beamAt {
			t.Errorf("Beam's %s is not in Beam's list", f)
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
}

// TestResume interrupts a run once its third checkpoint is in --work,
// and requires --resume to end with the factors of a run that was not
// interrupted, bit for bit; then the refusals around it: a new run on
// that --work, --resume with another input or without --work. A
// successful run removes its files from --work.
func TestResume(t *testing.T) {
	dir := t.TempDir()
	in, err := synth.Observed(synth.Config{D1: 200, D2: 150, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(dir, "Y.mtx")
	if err := mtx.WriteFile(y, in.Obs); err != nil {
		t.Fatal(err)
	}
	args := func(out, work string, more ...string) []string {
		return append([]string{"--in", y, "--rank", "2", "--alpha", "0.05", "--shards", "2", "--out", filepath.Join(dir, out), "--work", filepath.Join(dir, work)}, more...)
	}
	if code, _, stderr := runCmd(t, args("whole", "w1")...); code != 0 {
		t.Fatalf("uninterrupted run: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "w1")); !os.IsNotExist(err) {
		t.Errorf("--work left after a success: %v", err)
	}

	// The interrupted run is this test binary run as the command (see
	// TestMain), stopped with SIGINT as Ctrl-C would: in-process Prism
	// may panic on the job after one that was cancelled in the middle,
	// which would end this test binary.
	cmd := exec.Command(os.Args[0], args("resumed", "w2")...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "w2", "checkpoint-000003.gob")); err == nil {
			cmd.Process.Signal(os.Interrupt)
			break
		}
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(errOut.String(), "--resume") {
		t.Fatalf("interrupted: exit %d, %q", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "resumed")); !os.IsNotExist(err) {
		t.Fatalf("an interrupted run left its output: %v", err)
	}
	other := filepath.Join(dir, "other.mtx")
	if err := os.WriteFile(other, []byte("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{args("resumed", "w2"), "holds the state of an earlier run"},
		{append(args("resumed", "w2", "--resume"), "--in", other), "another input"},
		{[]string{"--in", y, "--rank", "2", "--out", filepath.Join(dir, "resumed"), "--resume"}, "need --work"},
		{args("resumed", "w3", "--resume"), "no completed load"},
	} {
		if code, _, stderr := runCmd(t, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	code, _, stderr := runCmd(t, args("resumed", "w2", "--resume")...)
	if code != 0 {
		t.Fatalf("--resume: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"U.npy", "V.npy"} {
		a, err := npy.ReadFile(filepath.Join(dir, "whole", f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := npy.ReadFile(filepath.Join(dir, "resumed", f))
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a, b) {
			t.Errorf("%s of the resumed run differs from the uninterrupted run's", f)
		}
	}
	var sum summary
	b, err := os.ReadFile(filepath.Join(dir, "resumed", "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil || sum.Resumed == nil || *sum.Resumed < 3 || len(sum.History) != sum.Iterations+1 {
		t.Errorf("summary of the resumed run: %+v (%v)", sum, err)
	}
	// It went on, rather than starting again: no load, no Phase I, and
	// none of the iterations before its checkpoint.
	var whole summary
	b, err = os.ReadFile(filepath.Join(dir, "whole", "summary.json"))
	if err != nil || json.Unmarshal(b, &whole) != nil || sum.Iterations != whole.Iterations || sum.Pipelines >= whole.Pipelines-3 {
		t.Errorf("resumed run: %d pipelines for %d iterations; uninterrupted: %d for %d (%v)", sum.Pipelines, sum.Iterations, whole.Pipelines, whole.Iterations, err)
	}
	t.Logf("resumed from iteration %d: %d pipelines, against %d for the whole run", *sum.Resumed, sum.Pipelines, whole.Pipelines)
}

// TestInterruptTwice: the first interrupt cancels the run (which ends
// after the pass under way), a second ends the process at once with exit
// 130; each says so on stderr.
func TestInterruptTwice(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	canceled := make(chan struct{})
	exited := make(chan int, 1)
	var out strings.Builder
	go onInterrupts(sigs, func() { close(canceled) }, &out, func(code int) { exited <- code })
	sigs <- os.Interrupt
	<-canceled
	select {
	case code := <-exited:
		t.Fatalf("exit %d on the first interrupt", code)
	case <-time.After(50 * time.Millisecond):
	}
	sigs <- os.Interrupt
	if code := <-exited; code != 130 {
		t.Errorf("exit %d on the second interrupt, want 130", code)
	}
	if s := out.String(); !strings.Contains(s, "interrupt again") || !strings.Contains(s, "stopped at once") {
		t.Errorf("stderr %q", s)
	}
}
