package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pipeRun is a run of the binary with stderr on a pipe: when each line
// arrived, after the start, and the exit code.
type pipeRun struct {
	lines []string
	at    []time.Duration
	total time.Duration
	code  int
}

// runPiped runs the test binary as rpca (TestMain's RPCA_TEST_AS_MAIN)
// with args, stderr on a pipe and stdout discarded.
func runPiped(t *testing.T, args ...string) pipeRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RPCA_TEST_AS_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var r pipeRun
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		r.lines, r.at = append(r.lines, sc.Text()), append(r.at, time.Since(start))
	}
	cmd.Wait()
	r.total, r.code = time.Since(start), cmd.ProcessState.ExitCode()
	return r
}

// TestProgressOffTerminal is issue 40's check of progress off a terminal
// (a pipe, as under nohup, in CI logs or in Jupyter's !rpca): every
// command writes its first line within 0.5 s of its start, measured from
// the start of a run of 'rpca version' on the same machine (so that a
// loaded machine's slower process start is not counted), and never stays
// silent for 10 s. The commands write a stage line before any work and,
// off a terminal, a line at least every progress.Interval (5 s), from the
// iterations or, when a step has none, from the heartbeat; the bounds
// leave room for a loaded machine.
func TestProgressOffTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	base := runPiped(t, "version").total
	dir, _, y := writeInstance(t, 600, 500, 3, 0.1, 2)
	ratingsFile := join(dir, "r.tsv")
	newRatingSet(t, ratingsFile, 300, 200, 0.3, 0.1, 0, 3)
	_, frames := newClip(t)
	for _, args := range [][]string{
		{"decompose", "--in", y, "--alpha", "0.1", "--out", join(dir, "dec")},
		{"synth", "--d", "800", "--rank", "5", "--alpha", "0.1"},
		{"complete", "--in", ratingsFile, "--header", "--out", join(dir, "model")},
		{"predict", "--model", join(dir, "model"), "--top", "3", "--out", join(dir, "top.tsv")},
		{"video", "--in", frames, "--out", join(dir, "video"), "--preview=false"},
		{"experiment", "fig1a", "--quick", "--out", join(dir, "fig1a")},
	} {
		r := runPiped(t, args...)
		name := args[0]
		if r.code != 0 || len(r.lines) == 0 {
			t.Errorf("%s: exit %d, %d lines on stderr", name, r.code, len(r.lines))
			continue
		}
		if first := r.at[0] - base; first > 500*time.Millisecond {
			t.Errorf("%s: first line %q after %v (rpca version: %v)", name, r.lines[0], r.at[0], base)
		}
		prev := time.Duration(0)
		for k, at := range append(r.at, r.total) {
			if at-prev > 10*time.Second {
				t.Errorf("%s: silent for %v before %q", name, at-prev, strings.Join(append(r.lines, "the exit")[k:k+1], ""))
			}
			prev = at
		}
		t.Logf("%s: %d lines, first after %v, run %v", name, len(r.lines), r.at[0], r.total)
	}
}
