//go:build unix

package frames

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpca-gd/rpca/video/internal/videotest"
)

// TestLoadVideoCancelKillsFFmpeg cancels a decode while ffmpeg is running
// (an ffmpeg that never writes a frame): loadVideo must return the
// context's error promptly and the ffmpeg process must be gone.
func TestLoadVideoCancelKillsFFmpeg(t *testing.T) {
	lookPath, pidFile := videotest.FakeTools(t, "exec sleep 60")
	vid := filepath.Join(t.TempDir(), "clip.mp4")
	os.WriteFile(vid, []byte("x"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := loadVideo(ctx, vid, Options{LookPath: lookPath})
		done <- err
	}()
	// Wait until the fake ffmpeg runs, then cancel.
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("fake ffmpeg did not start")
		}
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "clip.mp4") {
			t.Fatalf("cancelled decode: %v", err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("loadVideo returned %v after the cancellation", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("loadVideo did not return after the cancellation")
	}
	// loadVideo waited for the killed process, so it is reaped: signal 0
	// to its pid must fail.
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("ffmpeg (pid %d) still runs after the cancellation", pid)
	}
}

// TestLoadVideoFFmpegFails reports ffmpeg's last stderr line, in one line,
// when ffmpeg fails without output and when it stops inside a frame.
func TestLoadVideoFFmpegFails(t *testing.T) {
	vid := filepath.Join(t.TempDir(), "clip.mp4")
	os.WriteFile(vid, []byte("x"), 0o644)
	for _, tc := range []struct{ body, want string }{
		{"echo 'first line' >&2; echo 'clip.mp4: Invalid data found when processing input' >&2; exit 1", "ffmpeg failed on " + vid + ": clip.mp4: Invalid data found"},
		// 12 bytes make a 4×3 gray frame; 17 leave a partial second one.
		// (ffmpeg is not killed after a partial frame: its exit status
		// and message decide the error.)
		{"printf 'aaaaaaaaaaaaaaaaa'", "ended inside frame 2 (5 of 12 bytes)"},
		{"printf 'aaaaaaaaaaaaaaaaa'; echo 'Error while decoding stream #0:0' >&2; exit 1", "ffmpeg failed on " + vid + ": Error while decoding stream #0:0"},
		{"exit 0", "selects no frames"},
	} {
		lookPath, _ := videotest.FakeTools(t, tc.body)
		_, err := loadVideo(context.Background(), vid, Options{LookPath: lookPath, Color: ColorGray})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ffmpeg %q: error %v, want one line containing %q", tc.body, err, tc.want)
		}
	}
}

// TestLoadVideoColorAuto: by default a video is decoded as RGB and kept
// in colour when some pixel's channels differ; a video whose decoded
// pixels are all gray becomes one channel, with the same values.
func TestLoadVideoColorAuto(t *testing.T) {
	vid := filepath.Join(t.TempDir(), "clip.mp4")
	os.WriteFile(vid, []byte("x"), 0o644)
	// Two 4×3 RGB frames of 36 bytes each.
	for _, tc := range []struct {
		body  string
		color bool
	}{
		{"printf '" + strings.Repeat("abc", 24) + "'", true},
		{"printf '" + strings.Repeat("ddd", 24) + "'", false},
	} {
		lookPath, _ := videotest.FakeTools(t, tc.body)
		s, err := loadVideo(context.Background(), vid, Options{LookPath: lookPath})
		if err != nil {
			t.Fatal(err)
		}
		if s.Color != tc.color || len(s.Names) != 2 {
			t.Fatalf("%q: colour %v, %d frames", tc.body, s.Color, len(s.Names))
		}
		if r, _ := s.Y.Dims(); r != s.Rows() {
			t.Fatalf("%d rows for %+v", r, s.Geometry)
		}
		if !tc.color && math.Abs(s.Y.At(5, 1)-float64('d')/255) > 1e-15 {
			t.Errorf("gray value %v, want %v", s.Y.At(5, 1), float64('d')/255)
		}
	}
}
