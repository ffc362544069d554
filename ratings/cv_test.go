package ratings

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestCrossValidate: the folds partition the ratings (every rating scored
// once); a fold whose users and items all have training ratings scores as
// Model.Evaluate does on the same split (an independent path through the
// predictions); the mean and standard deviation are those of the folds;
// the same seed gives the same folds; the model beats the bias baseline
// on low-rank data; and bad fold counts are ErrFolds.
func TestCrossValidate(t *testing.T) {
	r := noisyRatings(t, 150, 120, 3, 0.4, 0.1, 1)
	opt := Options{Rank: 3, Baseline: BaselineBiases, Model: &ALS{}}
	var seen []int
	cv, err := CrossValidate(context.Background(), r, 4, 7, opt, func(f int, _ Fold) { seen = append(seen, f) })
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range cv.Folds {
		total += f.Ratings
		if !(f.RMSE < f.BiasRMSE) || f.Rank != 3 {
			t.Errorf("fold %+v: the rank-3 model should beat the biases on rank-3 data", f)
		}
	}
	if total != r.Len() || len(seen) != 4 || cv.Mean.Ratings != r.Len() {
		t.Errorf("%d ratings scored of %d, %d progress calls", total, r.Len(), len(seen))
	}
	// The folds again, by hand, and Evaluate on each.
	mean, sq := 0.0, 0.0
	for _, f := range cv.Folds {
		mean += f.RMSE / 4
	}
	for _, f := range cv.Folds {
		sq += (f.RMSE - mean) * (f.RMSE - mean)
	}
	if math.Abs(cv.Mean.RMSE-mean) > 1e-15 || math.Abs(cv.Std.RMSE-math.Sqrt(sq/3)) > 1e-15 {
		t.Errorf("mean %v and std %v, want %v and %v", cv.Mean.RMSE, cv.Std.RMSE, mean, math.Sqrt(sq/3))
	}
	again, err := CrossValidate(context.Background(), r, 4, 7, opt, nil)
	if err != nil || again.Folds[2].RMSE != cv.Folds[2].RMSE {
		t.Errorf("same seed, other answer: %v (%v)", again, err)
	}
	// Fold 0 through Fit and Evaluate: the same permutation, the same fold.
	held := make([]bool, r.Len())
	count := 0
	for n, p := range randPerm(r.Len(), 7) {
		if n%4 == 0 {
			held[p], count = true, count+1
		}
	}
	m, err := Fit(context.Background(), r, held, opt)
	if err != nil {
		t.Fatal(err)
	}
	if ev := m.Evaluate(r, held); ev.Skipped == 0 && (math.Abs(ev.RMSE-cv.Folds[0].RMSE) > 1e-12 || ev.Ratings != cv.Folds[0].Ratings) {
		t.Errorf("fold 0: Evaluate gives %v on %d ratings, CrossValidate %v on %d", ev.RMSE, ev.Ratings, cv.Folds[0].RMSE, cv.Folds[0].Ratings)
	} else if ev.Skipped > 0 {
		t.Fatalf("fold 0 has %d ratings of unknown users or items; the comparison needs none", ev.Skipped)
	}
	for _, k := range []int{0, 1, r.Len() + 1} {
		if _, err := CrossValidate(context.Background(), r, k, 1, opt, nil); !errors.Is(err, ErrFolds) {
			t.Errorf("%d folds: %v", k, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CrossValidate(ctx, r, 3, 1, opt, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestFoldJSON: a figure that is not a number is null in JSON.
func TestFoldJSON(t *testing.T) {
	b, err := json.Marshal(Fold{Ratings: 3, RMSE: 0.5, MAE: 0.4, BiasRMSE: math.NaN(), BiasMAE: math.NaN(), Seconds: 1, Rank: 2})
	if err != nil || string(b) != `{"ratings":3,"rmse":0.5,"mae":0.4,"bias_rmse":null,"bias_mae":null,"seconds":1,"rank":2}` {
		t.Errorf("%s (%v)", b, err)
	}
}

// TestCrossValidationTable: a row per fold, then the mean and the
// standard deviation, with the figures of each.
func TestCrossValidationTable(t *testing.T) {
	cv := &CrossValidation{Folds: []Fold{{RMSE: 0.9, MAE: 0.7, BiasRMSE: 1.1, BiasMAE: 0.8, Seconds: 2}, {RMSE: 0.95}},
		Mean: Fold{RMSE: 0.925}, Std: Fold{RMSE: 0.025}}
	lines := strings.Split(strings.TrimSpace(cv.Table("als")), "\n")
	want := []string{"fold", "1 ", "2 ", "mean", "std"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), cv.Table("als"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	if !strings.Contains(lines[0], "als RMSE") || !strings.Contains(lines[1], "0.9000") || !strings.Contains(lines[1], "1.1000") ||
		!strings.Contains(lines[3], "0.9250") || !strings.Contains(lines[4], "0.0250") {
		t.Errorf("figures missing:\n%s", cv.Table("als"))
	}
}
