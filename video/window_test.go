package video

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/video/frames"
	"github.com/rpca-gd/rpca/video/internal/videotest"
)

func TestSeparateWindowsDir(t *testing.T) {
	c, dir := writeClip(t, SceneIllumination, GenerateOptions{Width: 32, Height: 24, Frames: 70, Gray: true, Seed: 2})
	var names []string
	var sizes []int
	err := SeparateWindows(context.Background(), dir, frames.Options{}, 30, DefaultOptions(), func(w Window) error {
		if w.First != len(names) || w.Index != len(sizes) {
			t.Errorf("window %d starts at %d after %d frames", w.Index, w.First, len(names))
		}
		if r, n := w.Sep.Masks.Dims(); r != c.Pixels() || n != len(w.Seq.Names) {
			t.Errorf("window %d: masks %d×%d", w.Index, r, n)
		}
		names = append(names, w.Seq.Names...)
		sizes = append(sizes, len(w.Seq.Names))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sizes, []int{30, 40}) || !slices.Equal(names, c.Names) {
		t.Errorf("windows of %v frames, names %v", sizes, names)
	}
	if err := SeparateWindows(context.Background(), dir, frames.Options{}, 5, DefaultOptions(), func(Window) error { return nil }); err == nil {
		t.Error("window of 5 frames accepted")
	}
	stop := fmt.Errorf("stop")
	if err := SeparateWindows(context.Background(), dir, frames.Options{}, 30, DefaultOptions(), func(Window) error { return stop }); err != stop {
		t.Errorf("error of the callback: %v", err)
	}
}

// TestSeparateWindowsVideo streams 70 frames of 4×3 gray pixels from a
// stand-in ffmpeg: windows of 30 and 40 frames, numbered from 1 in the
// video.
func TestSeparateWindowsVideo(t *testing.T) {
	vid := filepath.Join(t.TempDir(), "clip.mp4")
	os.WriteFile(vid, []byte("x"), 0o644)
	// 70 frames of 12 bytes, a varying gray so that the fit has work.
	var b strings.Builder
	for k := 0; k < 70; k++ {
		for i := 0; i < 12; i++ {
			fmt.Fprintf(&b, "\\%03o", 60+(k*7+i*13)%90)
		}
	}
	lookPath, _ := videotest.FakeTools(t, "printf '"+b.String()+"'")
	var sizes []int
	var names []string
	o := DefaultOptions()
	o.Settings.Rank = 1
	err := SeparateWindows(context.Background(), vid, frames.Options{LookPath: lookPath, Color: frames.ColorGray}, 30, o, func(w Window) error {
		sizes = append(sizes, len(w.Seq.Names))
		names = append(names, w.Seq.Names[0])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sizes, []int{30, 40}) || !slices.Equal(names, []string{"frame000001.png", "frame000031.png"}) {
		t.Errorf("windows %v starting at %v", sizes, names)
	}
}
