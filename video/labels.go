package video

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/video/frames"
)

// Labels is a ground truth with pixels that are not scored, as the
// change-detection benchmark CDnet 2014 (Wang et al.) writes it: per
// pixel 255 is foreground; 0 (static) and 50 (hard shadow) are
// background; 85 (outside the region of interest) and 170 (unknown
// motion) are not scored.
type Labels struct {
	Path  string
	Label []int8 // 1 foreground, 0 background, −1 not scored
	W, H  int
}

// ErrNoLabels: a frame has no ground truth in the directory.
var ErrNoLabels = errors.New("video: no ground truth for the frame")

// LabelsFor reads the ground truth of the frame named frame from dir,
// the file named "gt" + the frame name's digits + ".png" (in001500.jpg →
// gt001500.png, the benchmark's layout); ErrNoLabels when there is none.
func LabelsFor(dir, frame string) (*Labels, error) {
	digits := strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return r
		}
		return -1
	}, strings.TrimSuffix(filepath.Base(frame), filepath.Ext(frame)))
	if digits == "" {
		return nil, fmt.Errorf("%w: %s has no number in its name", ErrNoLabels, frame)
	}
	path := filepath.Join(dir, "gt"+digits+".png")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoLabels, path)
	}
	img, err := frames.DecodeFile(path)
	if err != nil {
		return nil, fmt.Errorf("video: %v", err)
	}
	b := img.Bounds()
	l := &Labels{Path: path, W: b.Dx(), H: b.Dy(), Label: make([]int8, b.Dx()*b.Dy())}
	for y := range l.H {
		for x := range l.W {
			v := color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
			switch {
			case v >= 250:
				l.Label[y*l.W+x] = 1
			case v == 0 || v == 50:
				l.Label[y*l.W+x] = 0
			default:
				l.Label[y*l.W+x] = -1
			}
		}
	}
	return l, nil
}

// Counts are the pooled confusion counts of masks against labels.
type Counts struct {
	Frames            int
	TruePos, FalsePos int
	FalseNeg, TrueNeg int
}

// Add counts the mask pred (row-major, the labels' size) against l.
func (c *Counts) Add(pred []bool, l *Labels) error {
	if len(pred) != len(l.Label) {
		return fmt.Errorf("video: a mask of %d pixels against the %d×%d ground truth %s", len(pred), l.W, l.H, l.Path)
	}
	c.Frames++
	for i, lab := range l.Label {
		switch {
		case lab < 0:
		case lab == 1 && pred[i]:
			c.TruePos++
		case lab == 1:
			c.FalseNeg++
		case pred[i]:
			c.FalsePos++
		default:
			c.TrueNeg++
		}
	}
	return nil
}

// Score returns precision, recall and F over the pooled counts.
func (c Counts) Score() metrics.Scores {
	return metrics.FromCounts(c.TruePos, c.FalsePos, c.FalseNeg)
}
