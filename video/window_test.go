package video

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWindowSizes(t *testing.T) {
	for _, tc := range []struct {
		n, size int
		want    []int
	}{
		{0, 200, nil},
		{100, 200, []int{100}},
		{200, 200, []int{200}},
		{299, 200, []int{299}},
		{300, 200, []int{200, 100}},
		{450, 200, []int{200, 250}},
		{1000, 200, []int{200, 200, 200, 200, 200}},
	} {
		got := windowSizes(tc.n, 0, tc.size)
		if !slices.Equal(got, tc.want) {
			t.Errorf("windowSizes(%d, %d) = %v, want %v", tc.n, tc.size, got, tc.want)
		}
		sum := 0
		for _, k := range got {
			sum += k
			if k < tc.size/2 && len(got) > 1 {
				t.Errorf("windowSizes(%d, %d): window of %d", tc.n, tc.size, k)
			}
		}
		if sum != tc.n {
			t.Errorf("windowSizes(%d, %d) covers %d frames", tc.n, tc.size, sum)
		}
	}
}

// TestSeparateWindowsDir: a directory of 70 frames in windows of 30
// (30 + 40) gives the same frames, in order, as the whole clip, each
// window separated on its own; a video file through the stand-in ffmpeg
// gives windows of 30 and 40 as well.
func TestSeparateWindowsDir(t *testing.T) {
	c, dir := writeClip(t, SceneIllumination, GenerateOptions{Width: 32, Height: 24, Frames: 70, Gray: true, Seed: 2})
	var names []string
	var sizes []int
	err := SeparateWindows(context.Background(), dir, Options{}, 30, DefaultOptions(), func(w Window) error {
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
	if err := SeparateWindows(context.Background(), dir, Options{}, 5, DefaultOptions(), func(Window) error { return nil }); err == nil {
		t.Error("window of 5 frames accepted")
	}
	stop := fmt.Errorf("stop")
	if err := SeparateWindows(context.Background(), dir, Options{}, 30, DefaultOptions(), func(Window) error { return stop }); err != stop {
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
	lookPath, _ := fakeTools(t, "printf '"+b.String()+"'")
	var sizes []int
	var names []string
	o := DefaultOptions()
	o.Settings.Rank = 1
	err := SeparateWindows(context.Background(), vid, Options{LookPath: lookPath, Color: ColorGray}, 30, o, func(w Window) error {
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
