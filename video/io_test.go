package video

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rpca-gd/rpca/video/frames"
	"github.com/rpca-gd/rpca/video/internal/videotest"
	"gonum.org/v1/gonum/mat"
)

// TestRunStdinStream: a stream job reads its frames from standard input
// as they come and writes a mask for each, window by window.
func TestRunStdinStream(t *testing.T) {
	const nFrames = 2*StreamWindow + 3
	c, err := Generate(SceneStatic, GenerateOptions{Width: 32, Height: 24, Frames: nFrames, Gray: true, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "YUV4MPEG2 W32 H24 F25:1 Cmono XCOLORRANGE=FULL\n")
	for k := range nFrames {
		b.WriteString("FRAME\n")
		for i := range 32 * 24 {
			b.WriteByte(byte(math.Round(255 * c.Y.At(i, k))))
		}
	}
	job := Job{Input: frames.StdinInput, Load: frames.Options{Stdin: &b}, Dir: t.TempDir(), Separate: DefaultOptions(), Stream: &StreamOptions{History: 30}}
	rep, err := Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Frames != nFrames || rep.Stream == nil || rep.Stream.Fits == 0 {
		t.Fatalf("%d nFrames, stream %+v", rep.Frames, rep.Stream)
	}
	sc, err := c.Score(mustMasks(t, job.Dir, nFrames, c.Pixels()))
	if err != nil {
		t.Fatal(err)
	}
	// The static scene's stream scores 1.000 from nFrames; the first
	// nFrames, compared with the median of the nFrames so far, cost a little.
	if sc.F < 0.95 {
		t.Errorf("F %.3f over the nFrames from standard input", sc.F)
	}
}

// mustMasks reads the n mask PNGs of an output directory, in name order,
// as a pixels × n matrix of 0/1.
func mustMasks(t *testing.T, dir string, n, pixels int) *mat.Dense {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "mask", "*.png"))
	if err != nil || len(paths) != n {
		t.Fatalf("%d masks (%v), want %d", len(paths), err, n)
	}
	slices.Sort(paths)
	m := mat.NewDense(pixels, n, nil)
	for k, p := range paths {
		img, err := frames.DecodeFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		for y := range b.Dy() {
			for x := range b.Dx() {
				if r, _, _, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA(); r > 0 {
					m.Set(y*b.Dx()+x, k, 1)
				}
			}
		}
	}
	return m
}

func TestAutoMethod(t *testing.T) {
	for _, c := range []struct {
		sub    bool
		preset string
		want   string
	}{{false, "", "scaledgd"}, {true, "", "gd"}, {false, "paper", "gd"}} {
		if got := AutoMethod(c.sub, c.preset); got != c.want {
			t.Errorf("AutoMethod(%v, %q) = %s, want %s", c.sub, c.preset, got, c.want)
		}
	}
}

// TestLoadTruth: the truth mask of one frame, scaled as the frames are.
func TestLoadTruth(t *testing.T) {
	dir := t.TempDir()
	path := videotest.WriteMask(t, filepath.Join(dir, "gt.png"))
	tr, err := LoadTruth(path, "f7", 0.5)
	if err != nil || tr.Frame != "f7" || tr.Path != path || tr.W != 2 || tr.H != 1 || !slices.Equal(tr.Mask, []bool{true, false}) {
		t.Errorf("LoadTruth: %+v, %v", tr, err)
	}
	if _, err := LoadTruth(filepath.Join(dir, "none.png"), "f7", 1); err == nil {
		t.Error("LoadTruth of a missing file")
	}
}
