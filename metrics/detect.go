package metrics

import (
	"fmt"
	"math"
)

// Scores are the detection scores of a predicted foreground mask against
// the true one.
type Scores struct {
	TruePos, FalsePos, FalseNeg int

	// Precision = TP/(TP+FP), or 1 when nothing is predicted (no false
	// alarm is possible).
	Precision float64
	// Recall = TP/(TP+FN), or 1 when the true mask is empty (nothing can
	// be missed).
	Recall float64
	// F = 2·P·R/(P+R), the F-measure, or 0 when P+R = 0. With the
	// conventions above, two empty masks score F = 1, and an empty mask
	// against a non-empty one scores F = 0.
	F float64
}

// Detect compares a predicted foreground mask with the true one, entry by
// entry (for example pixels of all frames, in any fixed order). The masks
// must have the same length.
func Detect(pred, truth []bool) (Scores, error) {
	if len(pred) != len(truth) {
		return Scores{}, fmt.Errorf("metrics: predicted mask has %d entries, true mask %d", len(pred), len(truth))
	}
	var s Scores
	for i, p := range pred {
		t := truth[i]
		switch {
		case p && t:
			s.TruePos++
		case p:
			s.FalsePos++
		case t:
			s.FalseNeg++
		}
	}
	return FromCounts(s.TruePos, s.FalsePos, s.FalseNeg), nil
}

// FromCounts returns the scores of tp true positives, fp false positives
// and fn false negatives, with Detect's conventions.
func FromCounts(tp, fp, fn int) Scores {
	s := Scores{TruePos: tp, FalsePos: fp, FalseNeg: fn}
	s.Precision, s.Recall = 1, 1
	if n := s.TruePos + s.FalsePos; n > 0 {
		s.Precision = float64(s.TruePos) / float64(n)
	}
	if n := s.TruePos + s.FalseNeg; n > 0 {
		s.Recall = float64(s.TruePos) / float64(n)
	}
	if sum := s.Precision + s.Recall; sum > 0 {
		s.F = 2 * s.Precision * s.Recall / sum
	}
	return s
}

// Threshold returns the mask |x_i| > tau, for example the foreground given
// by the entries of an estimated sparse part S. NaN entries are not
// foreground.
func Threshold(x []float64, tau float64) []bool {
	m := make([]bool, len(x))
	for i, v := range x {
		m[i] = math.Abs(v) > tau
	}
	return m
}
