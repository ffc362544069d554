// Command cdnetscore scores a directory of foreground masks (PNG, nonzero
// = foreground, named like their frames) against ground truths in the
// layout of the CDnet 2014 benchmark, with the benchmark's rules
// (video.LabelsFor), pooled over the frames, and prints one line:
//
//	go run ./docs/bench/cdnetscore MASKS GROUNDTRUTH
//
// It scores the masks of any method the same way: those of rpca video,
// and those ../shared/peers/opencv/bgs.py writes.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/rpca-gd/rpca/video"
	"github.com/rpca-gd/rpca/video/frames"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cdnetscore MASKS GROUNDTRUTH")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "cdnetscore:", err)
		os.Exit(1)
	}
}

func run(masks, truth string) error {
	names, err := filepath.Glob(filepath.Join(masks, "*.png"))
	if err != nil {
		return err
	}
	sort.Strings(names)
	var c video.Counts
	for _, name := range names {
		l, err := video.LabelsFor(truth, name)
		if errors.Is(err, video.ErrNoLabels) {
			continue
		}
		if err != nil {
			return err
		}
		m, w, h, err := frames.LoadMask(name, 1)
		if err != nil {
			return err
		}
		if w != l.W || h != l.H {
			return fmt.Errorf("%s is %d×%d, its ground truth %d×%d", name, w, h, l.W, l.H)
		}
		if err := c.Add(m, l); err != nil {
			return err
		}
	}
	if c.Frames == 0 {
		return fmt.Errorf("no mask in %s has a ground truth in %s", masks, truth)
	}
	s := c.Score()
	fmt.Printf("frames %d F %.4f precision %.4f recall %.4f (tp %d fp %d fn %d)\n", c.Frames, s.F, s.Precision, s.Recall, c.TruePos, c.FalsePos, c.FalseNeg)
	return nil
}
