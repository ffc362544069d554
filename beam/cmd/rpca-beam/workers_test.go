package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

// bootWrapper starts the Go SDK's boot loader with the worker id Prism
// gives it. Prism (v2.77) passes --id='ID' to the process environment's
// command with the quotes inside the value, as a shell would need them
// but exec does not; the boot loader then asks for a worker "'ID'" that
// Prism never registered, and the job waits for ever. The wrapper strips
// the quotes.
const bootWrapper = `#!/bin/sh
for a in "$@"; do
  case "$a" in
    --id=*) a=$(printf '%%s' "$a" | tr -d "'") ;;
  esac
  set -- "$@" "$a"
  shift
done
exec %s "$@"
`

// TestSeparateWorkers runs rpca-beam as on a cluster: against a
// stand-alone Prism job server, with every worker a separate process
// started through the SDK's boot loader (the PROCESS environment), which
// fetches the staged worker binary (this command, --worker_binary by
// default) and starts it with the SDK's flags alone. The job server is
// killed in the middle of the run, and the run resumed on a new one with
// --resume. The answer must recover the truth to 1e-4 and agree with
// rpca.Solve to 1e-10, and no worker process may be left when the
// command ends. It builds Prism, the
// boot loader and the command (about a minute on empty caches) and runs
// about a hundred jobs: skipped with -short.
func TestSeparateWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prism and runs about a hundred jobs with separate workers")
	}
	dir := t.TempDir()
	bin := func(name, pkg string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return out
	}
	prism := bin("prism", "github.com/apache/beam/sdks/v2/go/cmd/prism")
	boot := bin("boot", "github.com/apache/beam/sdks/v2/go/container")
	self := bin("rpca-beam", ".")
	wrapper := filepath.Join(dir, "boot.sh")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf(bootWrapper, boot)), 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	tmp := filepath.Join(dir, "tmp") // the job server's and the workers' own temporary directory
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	var prismLog bytes.Buffer
	var server *exec.Cmd
	startServer := func() {
		server = exec.Command(prism, "--job_port", fmt.Sprint(port), "--serve_http=false", "--log_kind", "text")
		server.Env = append(os.Environ(), "TMPDIR="+tmp)
		server.Stdout, server.Stderr = &prismLog, &prismLog
		if err := server.Start(); err != nil {
			t.Fatal(err)
		}
		waitForPort(t, port)
	}
	startServer()
	t.Cleanup(func() {
		server.Process.Kill()
		server.Wait()
	})

	in, err := synth.Observed(synth.Config{D1: 200, D2: 150, Rank: 2, Alpha: 0.05, P: 0.5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(dir, "Y.mtx")
	if err := mtx.WriteFile(y, in.Obs); err != nil {
		t.Fatal(err)
	}
	out, work := filepath.Join(dir, "out"), filepath.Join(dir, "work")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// --tol 1e-6: 53 iterations instead of the default's 78, so that the
	// resumed run takes about 100 jobs (about 2.8 s each with separate
	// workers) and the test package stays within go test's 10 minutes.
	args := []string{"--in", y, "--rank", "2", "--alpha", "0.05", "--out", out, "--shards", "2", "--tol", "1e-6",
		"--runner", "universal", "--endpoint", fmt.Sprintf("localhost:%d", port), "--work", work,
		"--environment_type", "PROCESS", "--environment_config", fmt.Sprintf(`{"command": %q}`, wrapper)}
	env := append(os.Environ(), "TMPDIR="+tmp)

	// The job server is killed once the third checkpoint is in --work:
	// the run fails, as on a cluster that lost its runner, and keeps its
	// checkpoints; --resume on a new server goes on from the last one.
	first := exec.CommandContext(ctx, self, args...)
	first.Env = env
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		if _, err := os.Stat(filepath.Join(work, "checkpoint-000003.gob")); err == nil {
			server.Process.Kill()
			server.Wait()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := first.Wait(); err == nil || !strings.Contains(firstOut.String(), "--resume") {
		t.Fatalf("the run whose job server was killed: exit %v\n%s", err, firstOut.String())
	}
	t.Logf("job server killed: %s", tail(strings.TrimSpace(firstOut.String()), 1))
	startServer()
	cmd := exec.CommandContext(ctx, self, append(args, "--resume")...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rpca-beam with separate workers: %v\n%s\nPrism's log:\n%s", err, b, tail(prismLog.String(), 40))
	}
	t.Logf("%s", strings.TrimSpace(string(b)))
	u, err := npy.ReadFile(filepath.Join(out, "U.npy"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := npy.ReadFile(filepath.Join(out, "V.npy"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := rpca.Solve(context.Background(), in.Problem(), rpca.Settings{Rank: 2, Alpha: 0.05, Seed: 1, Stop: rpca.Stop{ResidualTol: 1e-6}}, &gd.Method{})
	if err != nil {
		t.Fatal(err)
	}
	e := metrics.CentredRelError(u, v, in.A, in.B)
	var m, mr mat.Dense
	m.Mul(u, v.T())
	mr.Mul(ref.U, ref.V.T())
	var diff mat.Dense
	diff.Sub(&m, &mr)
	gap := mat.Norm(&diff, 2) / mat.Norm(&mr, 2)
	if e > 1e-4 || gap > 1e-10 {
		t.Errorf("separate workers: error %.3g (want ≤ 1e-4), gap to rpca.Solve %.3g (want ≤ 1e-10)", e, gap)
	}
	// No worker is left: every worker names the job server's port in
	// its endpoints; an orphaned worker notices within a second.
	endpoint := fmt.Sprintf("localhost:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	left := processesNaming(endpoint, server.Process.Pid)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		left = processesNaming(endpoint, server.Process.Pid)
	}
	if len(left) > 0 {
		t.Errorf("%d worker processes left after the command, e.g. %s", len(left), left[0])
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitForPort(t *testing.T, port int) {
	t.Helper()
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("localhost:%d", port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the job server did not listen on port %d", port)
}

// processesNaming returns the command lines of the running processes
// that mention dir, but the job server (pid) and this test.
func processesNaming(dir string, pid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name() == fmt.Sprint(pid) || e.Name() == fmt.Sprint(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(dir)) {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
