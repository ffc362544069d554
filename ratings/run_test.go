package ratings

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/formats/triples"
)

// TestPredictSaveReport fits a rank-2 model with biases and one junk
// rating, then checks PredictPairs under each unknown-id policy against
// Predict and PredictBiases, the outliers file against IsOutlier, the
// files Save writes, and the report's counts.
func TestPredictSaveReport(t *testing.T) {
	r := lowRankRatings(t, 40, 30, 0.6, 3)
	r.Val[5] = 40 // a junk rating for α > 0 to set aside
	held := HoldOut(r.Len(), 0.1, 1)
	m, err := Fit(context.Background(), r, held, Options{Rank: 2, Alpha: 0.05, Baseline: BaselineBiases})
	if err != nil {
		t.Fatal(err)
	}
	i0, j0 := r.RowIDs[m.Train.Row[0]], r.ColIDs[0]
	pairs, err := triples.ReadPairs(strings.NewReader(i0+"\t"+j0+"\nnobody\t"+j0+"\n"), "p", triples.Options{Delimiter: "\t"})
	if err != nil {
		t.Fatal(err)
	}
	var uie *UnknownIDError
	if _, _, err := m.PredictPairs(pairs, UnknownError); !errors.As(err, &uie) || uie.Line != 2 || uie.Kind != "row" || uie.ID != "nobody" {
		t.Fatalf("unknown id: %v", err)
	}
	preds, fromBiases, err := m.PredictPairs(pairs, UnknownNaN)
	i, j, _, _ := m.Index(i0, j0)
	if err != nil || fromBiases != 0 || preds[0] != m.Predict(i, j) || !math.IsNaN(preds[1]) {
		t.Fatalf("nan policy: %v %v", preds, err)
	}
	preds, fromBiases, err = m.PredictPairs(pairs, UnknownBias)
	if err != nil || fromBiases != 1 || preds[1] != m.PredictBiases(-1, j) {
		t.Fatalf("bias policy: %v %d %v", preds, fromBiases, err)
	}
	if _, _, err := m.PredictPairs(pairs, "guess"); !errors.Is(err, ErrUnknownPolicy) {
		t.Errorf("unknown policy: %v", err)
	}

	dir := t.TempDir()
	files, err := m.Save(context.Background(), dir, false, pairs, preds)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"U.npy", "V.npy", FileRows, FileCols, FileModel, FileTrain, FilePredictions}
	outliers := 0
	for k := range m.Train.Val {
		if m.IsOutlier(k) {
			outliers++
		}
	}
	if outliers > 0 {
		want = append(want, FileOutliers)
		raw, _ := os.ReadFile(filepath.Join(dir, FileOutliers))
		if lines := strings.Count(string(raw), "\n"); lines != outliers+1 {
			t.Errorf("%s has %d lines for %d outliers", FileOutliers, lines, outliers)
		}
	}
	if !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	u, err := npy.ReadFile(filepath.Join(dir, "U.npy"))
	if err != nil || u.At(3, 1) != m.U.At(3, 1) {
		t.Errorf("U.npy: %v", err)
	}

	rep := NewReport(r, held, 0.1, m)
	rep.AddPredictions(preds, fromBiases, UnknownBias)
	if rep.Rank != 2 || rep.Outliers != m.Result.S.NNZ() || rep.HoldoutRatings == 0 || rep.HoldoutRMSE == nil || rep.BiasRMSE == nil || rep.Predictions != 2 || rep.PredictionsFromBiases != 1 {
		t.Errorf("report %+v", rep)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Error(err)
	}
	if s := rep.String(); !strings.Contains(s, "held-out RMSE") || !strings.Contains(s, "2 predictions (1 from the biases") {
		t.Errorf("summary line %q", s)
	}
}

// TestReportWarnsOverfit: an unregularised fit at a rank the sparse,
// noisy ratings cannot support (rank 8, about 5 ratings a column, noise
// σ = 1) predicts held-out ratings worse than their mean, and the report
// says so with the remedy; the Gibbs fit of the same ratings does not
// (its priors regularise), and neither does a report without a holdout.
func TestReportWarnsOverfit(t *testing.T) {
	r := biasedRatings(60, 50, 0.1, 1, 4)
	held := HoldOut(r.Len(), 0.2, 1)
	m, err := Fit(context.Background(), r, held, Options{Rank: 8, Baseline: BaselineNone, Model: &ALS{}})
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReport(r, held, 0.2, m)
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "worse than the mean training rating") || !strings.Contains(rep.Warnings[0], "add a ridge") {
		t.Errorf("held-out RMSE %v against the mean's %v: warnings %q", *rep.HoldoutRMSE, *rep.BaselineRMSE, rep.Warnings)
	}
	if w := NewReport(r, nil, 0, m).Warnings; len(w) != 0 {
		t.Errorf("no holdout: warnings %q", w)
	}
	g, err := Fit(context.Background(), r, held, Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if w := NewReport(r, held, 0.2, g).Warnings; len(w) != 0 {
		t.Errorf("gibbs: warnings %q", w)
	}
}
