package video

import (
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestLabels: the benchmark's codes (255 foreground; 0 and 50
// background; 85 and 170 not scored) read from gt + the frame's digits,
// and the pooled counts and F of masks against them, counted by hand.
func TestLabels(t *testing.T) {
	dir := t.TempDir()
	codes := []uint8{255, 255, 0, 50, 85, 170}
	img := image.NewGray(image.Rect(0, 0, 3, 2))
	for i, c := range codes {
		img.SetGray(i%3, i/3, color.Gray{Y: c})
	}
	f, err := os.Create(filepath.Join(dir, "gt000042.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	l, err := LabelsFor(dir, "in000042.jpg")
	if err != nil {
		t.Fatal(err)
	}
	want := []int8{1, 1, 0, 0, -1, -1}
	for i, w := range want {
		if l.Label[i] != w {
			t.Fatalf("label %d: %d, want %d (code %d)", i, l.Label[i], w, codes[i])
		}
	}
	var c Counts
	// Foreground on the first positive, the static pixel and both
	// unscored ones: 1 TP, 1 FN, 1 FP, 1 TN.
	if err := c.Add([]bool{true, false, true, false, true, true}, l); err != nil {
		t.Fatal(err)
	}
	if c.TruePos != 1 || c.FalseNeg != 1 || c.FalsePos != 1 || c.TrueNeg != 1 || c.Frames != 1 {
		t.Errorf("counts %+v", c)
	}
	if s := c.Score(); s.Precision != 0.5 || s.Recall != 0.5 || s.F != 0.5 {
		t.Errorf("scores %+v", s)
	}
	if _, err := LabelsFor(dir, "in000043.jpg"); !errors.Is(err, ErrNoLabels) {
		t.Errorf("missing truth: %v", err)
	}
	if err := c.Add([]bool{true}, l); err == nil {
		t.Error("a mask of the wrong size was counted")
	}
}
