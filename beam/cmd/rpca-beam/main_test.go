package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

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
		{2, "--runner flink needs --work", []string{"--in", y, "--out", filepath.Join(dir, "o2"), "--rank", "2", "--runner", "flink"}},
	} {
		code, _, stderr := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
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
