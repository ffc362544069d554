package video

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// MinWindow is the smallest window size of [SeparateWindows].
const MinWindow = 20

// Window is one window of a clip separated by [SeparateWindows].
type Window struct {
	// Index counts the windows from 0; First is the index of the window's
	// first frame among the selected frames.
	Index, First int
	Seq          *Sequence
	Sep          *Separation
	// LoadSeconds is the time spent reading and decoding the window.
	LoadSeconds float64
}

// windowSizes splits n frames into windows of size frames, the first of
// at least first frames; a last window shorter than size/2 joins the one
// before it, so windows hold between size/2 and 1.5·size frames (or all n
// when n < size), the first at least max(first, size) unless n is less.
func windowSizes(n, first, size int) []int {
	var out []int
	w := max(first, size)
	for n > 0 {
		if n-w < size/2 {
			return append(out, n)
		}
		out = append(out, w)
		n -= w
		w = size
	}
	return out
}

// SeparateWindows separates a long clip window by window, so that memory
// is bounded by a window instead of the clip: the frames at path (a
// directory or a video file, as [Load]; opts.Range selects the frames)
// are taken size frames at a time (a short last window joins the one
// before it, see [Window]), each window is loaded, separated with o as
// [Separate] does (choosing its own rank), handed to each, and released.
// A video file is decoded once, in a stream. Each window is solved from
// scratch: there is no warm start from the previous window's background.
func SeparateWindows(ctx context.Context, path string, opts Options, size int, o SeparateOptions, each func(Window) error) error {
	return separateWindows(ctx, path, opts, size, 0, func(ctx context.Context, seq *Sequence) (*Separation, error) {
		return Separate(ctx, seq, o)
	}, each)
}

// separateWindows is SeparateWindows with the separation of a window
// given as a function (Separate, or a Subtractor's frame by frame).
func separateWindows(ctx context.Context, path string, opts Options, size, firstSize int, separate func(context.Context, *Sequence) (*Separation, error), each func(Window) error) error {
	if size < MinWindow {
		return fmt.Errorf("video: a window must hold at least %d frames, got %d", MinWindow, size)
	}
	k := 0
	last := time.Now() // the end of the previous window's work
	process := func(seq *Sequence, first int) error {
		load := time.Since(last).Seconds()
		sep, err := separate(ctx, seq)
		if err != nil {
			if k == 0 && len(seq.Names) < size {
				return err // the whole clip is one window
			}
			return fmt.Errorf("video: window %d (frames %s … %s): %w", k+1, seq.Names[0], seq.Names[len(seq.Names)-1], err)
		}
		err = each(Window{Index: k, First: first, Seq: seq, Sep: sep, LoadSeconds: load})
		k++
		last = time.Now()
		return err
	}
	dir := false
	if path != StdinInput && !IsURL(path) {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("video: %v", err)
		}
		if !st.IsDir() && imageExts[strings.ToLower(filepath.Ext(path))] {
			return fmt.Errorf("video: %s is a single image; give the directory of frames", path)
		}
		dir = st.IsDir()
	}
	if dir {
		all, err := ListFrames(path, opts)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			return fmt.Errorf("video: no frame images in %s", path)
		}
		lo, hi, err := opts.Range.apply(len(all))
		if err != nil {
			return fmt.Errorf("%v in %s", err, path)
		}
		first := 0
		for _, n := range windowSizes(hi-lo, firstSize, size) {
			wo := opts
			wo.Range = Range{Start: lo + first, End: lo + first + n}
			seq, err := LoadDir(ctx, path, wo)
			if err != nil {
				return err
			}
			if err := process(seq, first); err != nil {
				return err
			}
			first += n
		}
		return nil
	}
	l, err := openInput(ctx, path, opts)
	if err != nil {
		return err
	}
	sink := func(frames [][]byte, first int) error {
		seq, err := l.sequence(frames, first)
		if err != nil {
			return err
		}
		return process(seq, first-opts.Range.Start)
	}
	win := size
	if size >= math.MaxInt32 {
		win = 0 // one window: keep the decoder's early memory check
	}
	rest, err := l.decode(ctx, win, firstSize, sink)
	if err != nil {
		return err
	}
	first := l.run.sent
	if first > 0 {
		firstSize = 0 // the first window was handed on while decoding
	}
	for _, n := range windowSizes(len(rest), firstSize, size) {
		if err := sink(rest[:n], opts.Range.Start+first); err != nil {
			return err
		}
		rest, first = rest[n:], first+n
	}
	return nil
}
