package frames

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// WindowSizes splits n frames into windows of size frames, the first of
// at least first frames; a last window shorter than size/2 joins the one
// before it, so windows hold between size/2 and 1.5·size frames (or all n
// when n < size), the first at least max(first, size) unless n is less.
func WindowSizes(n, first, size int) []int {
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

// ReadWindows reads the frames at path (a directory of images, a video
// file or URL, or StdinInput; opts.Range selects the frames) in windows
// of the sizes WindowSizes gives (size ≥ math.MaxInt32: one window), and
// hands each to each, in order, with the index of its first frame among
// the selected frames. A video is decoded once, in a stream; only the
// window being handed on is held.
func ReadWindows(ctx context.Context, path string, opts Options, size, firstSize int, each func(seq *Sequence, first int) error) error {
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
		for _, n := range WindowSizes(hi-lo, firstSize, size) {
			wo := opts
			wo.Range = Range{Start: lo + first, End: lo + first + n}
			seq, err := LoadDir(ctx, path, wo)
			if err != nil {
				return err
			}
			if err := each(seq, first); err != nil {
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
		return each(seq, first-opts.Range.Start)
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
	for _, n := range WindowSizes(len(rest), firstSize, size) {
		if err := sink(rest[:n], opts.Range.Start+first); err != nil {
			return err
		}
		rest, first = rest[n:], first+n
	}
	return nil
}
