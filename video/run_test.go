package video

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/video/frames"
)

// TestRun runs a windowed job on a generated clip with a truth frame: it
// writes one PNG per frame into each of background/, foreground/ and
// mask/, the montage and the preview; its report counts the frames and
// windows and scores the truth frame exactly as metrics.Detect does on
// the written mask; a truth frame that is not in the clip is
// ErrTruthFrame.
func TestRun(t *testing.T) {
	c, in := writeClip(t, SceneStatic, GenerateOptions{Width: 32, Height: 24, Frames: 50, Gray: true, Seed: 4})
	k := 33
	noFFmpeg := func(string) (string, error) { return "", exec.ErrNotFound } // the GIF, whose pixels checkPreview reads
	job := Job{Input: in, Load: frames.Options{LookPath: noFFmpeg}, Window: 25, Separate: DefaultOptions(), Dir: t.TempDir(), Preview: true,
		Truth:  &Truth{Path: "truth.png", Frame: c.Names[k], Mask: c.Truth[k], W: 32, H: 24},
		Report: Report{Input: in, Output: "out"}}
	rep, err := Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Frames != 50 || len(rep.Windows) != 2 || rep.Windows[1].FirstFrame != c.Names[25] || rep.FirstFrame != c.Names[0] || rep.LastFrame != c.Names[49] {
		t.Errorf("report: %d frames, windows %+v, %s … %s", rep.Frames, rep.Windows, rep.FirstFrame, rep.LastFrame)
	}
	for _, sub := range []string{"background", "foreground", "mask"} {
		ents, err := os.ReadDir(filepath.Join(job.Dir, sub))
		if err != nil || len(ents) != 50 {
			t.Fatalf("%s: %d files (%v)", sub, len(ents), err)
		}
	}
	for _, name := range []string{"montage.png", "preview.gif"} {
		if _, err := os.Stat(filepath.Join(job.Dir, name)); err != nil {
			t.Error(err)
		}
	}
	checkPreview(t, filepath.Join(job.Dir, "preview.gif"), in, job.Dir, c.Names[:25])
	mask, _, _, err := frames.LoadMask(filepath.Join(job.Dir, "mask", c.Names[k]), 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := metrics.Detect(mask, c.Truth[k])
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truth == nil || rep.Truth.F != want.F || rep.Truth.Frame != c.Names[k] {
		t.Errorf("truth score %+v, want F %v", rep.Truth, want.F)
	}
	if !slices.ContainsFunc(montageHeaders(rep), func(s string) bool { return s == "original" }) {
		t.Errorf("headers %v", montageHeaders(rep))
	}

	// With ffmpeg, the preview is an MP4 of the first window's frames.
	if _, err := exec.LookPath("ffmpeg"); err == nil {
		job.Load.LookPath, job.Dir = nil, t.TempDir()
		if _, err := Run(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		seq, err := frames.Load(context.Background(), filepath.Join(job.Dir, "preview.mp4"), frames.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, n := seq.Y.Dims(); n != 25 {
			t.Errorf("preview.mp4 has %d frames, want the first window's 25", n)
		}
		if _, err := os.Stat(filepath.Join(job.Dir, "preview.gif")); err == nil {
			t.Error("preview.gif written beside preview.mp4")
		}
	}

	job.Truth.Frame = "nosuchframe"
	job.Dir = t.TempDir()
	if _, err := Run(context.Background(), job); !errors.Is(err, ErrTruthFrame) {
		t.Errorf("missing truth frame: %v", err)
	}
}

// checkPreview checks a gray 32×24 preview of the given frames against
// the input frames and the written masks: one animation frame per frame,
// the original panel equal to the input frame and the mask panel to the
// mask PNG, pixel for pixel (gray levels map to themselves).
func checkPreview(t *testing.T, path, in, out string, names []string) {
	t.Helper()
	anim := readGIF(t, path)
	if len(anim.Image) != len(names) {
		t.Fatalf("preview: %d frames, want %d", len(anim.Image), len(names))
	}
	const w, h = 32, 24
	y0 := 4 + labelHeight + 4 + labelHeight
	for k, img := range anim.Image {
		orig, err := frames.DecodeFile(filepath.Join(in, names[k]))
		if err != nil {
			t.Fatal(err)
		}
		mask, err := frames.DecodeFile(filepath.Join(out, "mask", pngName(names[k])))
		if err != nil {
			t.Fatal(err)
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				for _, c := range []struct {
					panel int
					src   image.Image
				}{{0, orig}, {3, mask}} {
					got, _, _, _ := img.At(4+c.panel*(w+4)+x, y0+y).RGBA()
					want, _, _, _ := c.src.At(x, y).RGBA()
					if got>>8 != want>>8 {
						t.Fatalf("preview frame %d, panel %d, pixel (%d, %d): %d, want %d", k, c.panel, x, y, got>>8, want>>8)
					}
				}
			}
		}
	}
}

// TestRunDir: RunDir writes summary.json (the report it returns) into a
// new directory, refuses one that exists, and leaves nothing when the
// run fails.
func TestRunDir(t *testing.T) {
	c, in := writeClip(t, SceneStatic, GenerateOptions{Width: 32, Height: 24, Frames: 20, Gray: true, Seed: 5})
	out := filepath.Join(t.TempDir(), "out")
	job := Job{Input: in, Separate: DefaultOptions()}
	rep, err := RunDir(context.Background(), job, out, false, in)
	if err != nil {
		t.Fatal(err)
	}
	var sum Report
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil || sum.Frames != rep.Frames || sum.Rank != rep.Rank {
		t.Errorf("summary.json: %+v (%v), report %+v", sum, err, rep)
	}
	if _, err := RunDir(context.Background(), job, out, false, in); !errors.Is(err, outdir.ErrExists) {
		t.Errorf("existing output: %v", err)
	}
	out2 := filepath.Join(t.TempDir(), "out")
	job.Truth = &Truth{Frame: "nosuchframe", Mask: c.Truth[0], W: 32, H: 24}
	if _, err := RunDir(context.Background(), job, out2, false, in); !errors.Is(err, ErrTruthFrame) {
		t.Errorf("missing truth frame: %v", err)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("output after a failed run: %v", err)
	}
}

// TestRunStreamWindows: a stream job without a window gathers
// StreamWindow frames at a time after a first window that holds the
// warm-up (its memory does not grow with the input's length), with one
// Subtractor across the windows: the fits count every frame, not each
// window's.
func TestRunStreamWindows(t *testing.T) {
	const frames = 3*StreamWindow + 5
	_, in := writeClip(t, SceneStatic, GenerateOptions{Width: 32, Height: 24, Frames: frames, Gray: true, Seed: 5})
	job := Job{Input: in, Dir: t.TempDir(), Separate: DefaultOptions(), Stream: &StreamOptions{History: 30, Refit: 10}}
	var windows []string
	job.Separate.Stage = func(s string) {
		if strings.HasPrefix(s, "separating") {
			windows = append(windows, strings.Fields(s)[1])
		}
	}
	rep, err := Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	// The first window holds the warm-up (30 frames), the next ones
	// StreamWindow; a short last window would join the one before.
	if want := []string{"30", "20", "15"}; rep.Frames != frames || rep.Window != StreamWindow || !slices.Equal(windows, want) {
		t.Fatalf("%d frames, window %d, windows of %v frames; want %d, %d, %v", rep.Frames, rep.Window, windows, frames, StreamWindow, want)
	}
	// Fits at frames 30 (the warm-up held back: StreamHold, at most the
	// history), 40, 50 and 60.
	if want := 1 + (frames-30)/10; rep.Stream == nil || rep.Stream.Fits != want {
		t.Errorf("stream report %+v; want %d fits", rep.Stream, want)
	}
	masks, err := filepath.Glob(filepath.Join(job.Dir, "mask", "*.png"))
	if err != nil || len(masks) != frames {
		t.Errorf("%d masks (%v); want %d", len(masks), err, frames)
	}
}

// writeClip generates a clip and writes its frames into a new temporary
// directory, returning both.
func writeClip(t *testing.T, scene Scene, o GenerateOptions) (*Clip, string) {
	t.Helper()
	c, err := Generate(scene, o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteFrames(dir, c.Names, c.Y, c.Geometry); err != nil {
		t.Fatal(err)
	}
	return c, dir
}
