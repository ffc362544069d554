package video

import (
	"context"
	"fmt"
	"time"

	"github.com/rpca-gd/rpca/video/frames"
)

// MinWindow is the smallest window size of [SeparateWindows].
const MinWindow = 20

// Window is one window of a clip separated by [SeparateWindows].
type Window struct {
	// Index counts the windows from 0; First is the index of the window's
	// first frame among the selected frames.
	Index, First int
	Seq          *frames.Sequence
	Sep          *Separation
	// LoadSeconds is the time spent reading and decoding the window.
	LoadSeconds float64
}

// SeparateWindows separates a long clip window by window, so that memory
// is bounded by a window instead of the clip: the frames at path (a
// directory or a video file, as [frames.Load]; opts.Range selects the frames)
// are taken size frames at a time (a short last window joins the one
// before it, see [Window]), each window is loaded, separated with o as
// [Separate] does (choosing its own rank), handed to each, and released.
// A video file is decoded once, in a stream. Each window is solved from
// scratch: there is no warm start from the previous window's background.
func SeparateWindows(ctx context.Context, path string, opts frames.Options, size int, o SeparateOptions, each func(Window) error) error {
	return separateWindows(ctx, path, opts, size, 0, func(ctx context.Context, seq *frames.Sequence) (*Separation, error) {
		return Separate(ctx, seq, o)
	}, each)
}

// separateWindows is SeparateWindows with the separation of a window
// given as a function (Separate, or a Subtractor's frame by frame).
func separateWindows(ctx context.Context, path string, opts frames.Options, size, firstSize int, separate func(context.Context, *frames.Sequence) (*Separation, error), each func(Window) error) error {
	if size < MinWindow {
		return fmt.Errorf("video: a window must hold at least %d frames, got %d", MinWindow, size)
	}
	k := 0
	last := time.Now() // the end of the previous window's work
	process := func(seq *frames.Sequence, first int) error {
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
	return frames.ReadWindows(ctx, path, opts, size, firstSize, process)
}
