package main

import (
	"bufio"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary run as rpca itself (RPCA_TEST_AS_MAIN=1),
// so that the signal tests can send signals to a separate process.
func TestMain(m *testing.M) {
	if os.Getenv("RPCA_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestSignalsCleanUp: SIGINT, SIGTERM and SIGHUP during a long run end it
// with exit code 130 and leave nothing in the output's parent directory
// (no temporary directory), for each signal.
func TestSignalsCleanUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			parent := t.TempDir()
			cmd := exec.Command(os.Args[0], "synth", "--d", "1500", "--rank", "5", "--alpha", "0.1", "--method", "gd",
				"--max-iter", "100000", "--factor-tol", "-1", "--tol", "-1", "--verbose", "--out", filepath.Join(parent, "out"))
			cmd.Env = append(os.Environ(), "RPCA_TEST_AS_MAIN=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait for the iterations to start, then signal.
			sc := bufio.NewScanner(stderr)
			started := make(chan bool, 1)
			go func() {
				sent := false
				for sc.Scan() {
					if !sent && strings.HasPrefix(sc.Text(), "iter ") {
						started <- true
						sent = true
					}
				}
				if !sent {
					started <- false
				}
			}()
			select {
			case ok := <-started:
				if !ok {
					t.Fatal("the run ended before its iterations")
				}
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("no iteration within 60 s")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%v: still running 30 s after the signal", sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("%v: exit code %d, want 130", sig, code)
			}
			entries, _ := os.ReadDir(parent)
			for _, e := range entries {
				t.Errorf("%v: left %s in the output's parent", sig, e.Name())
			}
		})
	}
}

// TestSpecialInputsRefused: a named pipe given as an input is refused at
// once (reading it would block out of reach of Ctrl-C), and a PNG frame
// whose header claims 100000×100000 pixels is refused before it is
// decoded; neither leaves anything behind.
func TestSpecialInputsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.tsv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	frames := filepath.Join(dir, "frames")
	if err := os.Mkdir(frames, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f1.png", "f2.png"} {
		if err := os.WriteFile(filepath.Join(frames, name), forgedPNG(100000, 100000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkRobust(t, "complete", []robustCase{{"fifo", 1, []string{"pipe.tsv", "named pipe"}, []string{"--in", fifo}}})
	checkRobust(t, "decompose", []robustCase{{"fifo", 1, []string{"pipe.tsv", "named pipe"}, []string{"--in", fifo, "--rank", "2"}}})
	checkRobust(t, "video", []robustCase{{"forged png header", 1, []string{"f1.png", "header claims 100000×100000"}, []string{"--in", frames}}})
}

// forgedPNG returns a PNG signature and an IHDR chunk (with its CRC)
// claiming w×h 8-bit RGB pixels, and no image data.
func forgedPNG(w, h uint32) []byte {
	be := func(x uint32) []byte { return []byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)} }
	ihdr := append([]byte("IHDR"), be(w)...)
	ihdr = append(ihdr, be(h)...)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, be(13)...)
	out = append(out, ihdr...)
	out = append(out, be(crc32.ChecksumIEEE(ihdr))...)
	return out
}
