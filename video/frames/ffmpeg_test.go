package frames

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/video/internal/videotest"
	"gonum.org/v1/gonum/mat"
)

func TestLoadVideoWithoutFFmpeg(t *testing.T) {
	vid := filepath.Join(t.TempDir(), "clip.mp4")
	os.WriteFile(vid, []byte("not really a video"), 0o644)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNoFFmpeg) {
			t.Fatalf("%s: error %v does not wrap ErrNoFFmpeg", what, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "apt-get install ffmpeg") || !strings.Contains(msg, "clip.mp4") || strings.Contains(msg, "\n") {
			t.Fatalf("%s: unhelpful error %q", what, msg)
		}
	}
	// Injected lookup.
	noFFmpeg := func(string) (string, error) { return "", exec.ErrNotFound }
	_, err := loadVideo(context.Background(), vid, Options{LookPath: noFFmpeg})
	check("injected LookPath", err)
	// A PATH without ffmpeg, through Load's dispatch on a non-directory.
	t.Setenv("PATH", t.TempDir())
	_, err = Load(context.Background(), vid, Options{})
	check("empty PATH", err)
	// A missing file is reported as such before looking for ffmpeg.
	_, err = loadVideo(context.Background(), filepath.Join(t.TempDir(), "none.mp4"), Options{LookPath: noFFmpeg})
	if err == nil || errors.Is(err, ErrNoFFmpeg) {
		t.Fatalf("missing file: %v", err)
	}
}

// needFFmpeg skips the test unless ffmpeg is installed.
func needFFmpeg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed")
	}
}

// makeVideo writes frames as PNG files into a directory and encodes them
// losslessly with ffmpeg (FFV1 gray for gray frames, PNG-in-Matroska for
// color), so that the decoded video must equal the frames exactly.
func makeVideo(t *testing.T, n, w, h int, color bool) (frameDir, video string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(w)))
	frameDir = t.TempDir()
	for k := 0; k < n; k++ {
		videotest.WriteImage(t, filepath.Join(frameDir, fmt.Sprintf("img%03d.png", k+1)), videotest.RandomFrame(rng, w, h, !color), !color)
	}
	video = filepath.Join(t.TempDir(), "clip.mkv")
	codec := []string{"-c:v", "ffv1", "-pix_fmt", "gray"}
	if color {
		codec = []string{"-c:v", "png", "-pix_fmt", "rgb24"}
	}
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-framerate", "10",
		"-i", filepath.Join(frameDir, "img%03d.png")}, codec...)
	out, err := exec.Command("ffmpeg", append(args, video)...).CombinedOutput()
	if err != nil {
		t.Fatalf("encoding test video: %v: %s", err, out)
	}
	return frameDir, video
}

func TestLoadVideoMatchesFrames(t *testing.T) {
	needFFmpeg(t)
	frameDir, vid := makeVideo(t, 12, 10, 6, false)
	ctx := context.Background()
	for _, opts := range []Options{
		{},
		{Range: Range{Start: 3, End: 7}},
		{Range: Range{Start: 9}},
		{Range: Range{End: 100}},
		{Scale: 0.5, Range: Range{Start: 1, End: 4}},
	} {
		want, err := LoadDir(ctx, frameDir, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := loadVideo(ctx, vid, opts)
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		if got.Geometry != want.Geometry || !mat.Equal(got.Y, want.Y) {
			t.Fatalf("%+v: video frames differ from the image frames", opts)
		}
		var wantNames []string
		for k := range want.Names {
			wantNames = append(wantNames, fmt.Sprintf("frame%06d.png", opts.Range.Start+k+1))
		}
		if !slices.Equal(got.Names, wantNames) {
			t.Fatalf("%+v: names %v, want %v", opts, got.Names, wantNames)
		}
	}
	// Without ffprobe the size comes from ffmpeg's stream description.
	noProbe := func(file string) (string, error) {
		if file == "ffprobe" {
			return "", exec.ErrNotFound
		}
		return exec.LookPath(file)
	}
	want, _ := LoadDir(ctx, frameDir, Options{})
	got, err := loadVideo(ctx, vid, Options{LookPath: noProbe})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.Y, want.Y) {
		t.Fatal("frames differ without ffprobe")
	}
	// Errors: range past the end, memory limit, cancellation.
	if _, err := loadVideo(ctx, vid, Options{Range: Range{Start: 12}}); err == nil || !strings.Contains(err.Error(), "selects no frames") {
		t.Fatalf("range past the end: %v", err)
	}
	if _, err := loadVideo(ctx, vid, Options{MaxBytes: 5 * 60 * 8}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("memory limit: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := loadVideo(cctx, vid, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	// Load dispatches a file to the video loader.
	if s, err := Load(ctx, vid, Options{Range: Range{Start: 0, End: 2}}); err != nil || len(s.Names) != 2 {
		t.Fatalf("Load: %v", err)
	}
}

func TestLoadVideoColor(t *testing.T) {
	needFFmpeg(t)
	frameDir, vid := makeVideo(t, 4, 6, 4, true)
	want, err := LoadDir(context.Background(), frameDir, Options{Color: ColorRGB})
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadVideo(context.Background(), vid, Options{Color: ColorRGB})
	if err != nil {
		t.Fatal(err)
	}
	if got.Geometry != want.Geometry || !mat.Equal(got.Y, want.Y) {
		t.Fatal("color video frames differ from the image frames")
	}
}

func TestLoadVideoBadFile(t *testing.T) {
	needFFmpeg(t)
	bad := filepath.Join(t.TempDir(), "bad.mp4")
	os.WriteFile(bad, []byte("this is not a video file at all"), 0o644)
	for _, lp := range []func(string) (string, error){nil, func(f string) (string, error) {
		if f == "ffprobe" {
			return "", exec.ErrNotFound
		}
		return exec.LookPath(f)
	}} {
		_, err := loadVideo(context.Background(), bad, Options{LookPath: lp})
		if err == nil || !strings.Contains(err.Error(), "bad.mp4") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("bad video: %v", err)
		}
	}
}

func TestSizeRE(t *testing.T) {
	cases := map[string][2]string{
		"  Stream #0:0: Video: ffv1 (FFV1 / 0x31564646), gray(pc, progressive), 10x6, SAR 1:1 DAR 5:3, 5 fps":                                       {"10", "6"},
		"  Stream #0:0[0x1](und): Video: h264 (High) (avc1 / 0x31637661), yuv420p(tv, bt709, progressive), 1920x1080 [SAR 1:1 DAR 16:9], 4999 kb/s": {"1920", "1080"},
		"    Stream #1:0: Video: mjpeg, yuvj420p(pc, bt470bg/unknown/unknown), 320x240, 25 tbr":                                                     {"320", "240"},
	}
	for line, want := range cases {
		m := sizeRE.FindStringSubmatch("Input #0, matroska\n" + line + "\n")
		if m == nil || m[1] != want[0] || m[2] != want[1] {
			t.Errorf("%q: matched %v, want %v", line, m, want)
		}
	}
	if m := sizeRE.FindStringSubmatch("  Stream #0:1: Audio: aac (LC), 48000 Hz, stereo, fltp\n"); m != nil {
		t.Errorf("audio stream matched: %v", m)
	}
}

func TestLoadVideoOldFFmpeg(t *testing.T) {
	needFFmpeg(t)
	real, _ := exec.LookPath("ffmpeg")
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	// A wrapper that behaves like ffmpeg before 5.1, which lacks -fps_mode.
	fake := filepath.Join(t.TempDir(), "ffmpeg")
	script := "#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = -fps_mode ]; then echo \"Unrecognized option 'fps_mode'.\" >&2; echo 'Error splitting the argument list: Option not found' >&2; exit 1; fi; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	lookPath := func(file string) (string, error) {
		if file == "ffmpeg" {
			return fake, nil
		}
		return exec.LookPath(file)
	}
	frameDir, vid := makeVideo(t, 3, 4, 4, false)
	want, _ := LoadDir(context.Background(), frameDir, Options{})
	got, err := loadVideo(context.Background(), vid, Options{LookPath: lookPath})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.Y, want.Y) {
		t.Fatal("frames differ with the -vsync fallback")
	}
}
