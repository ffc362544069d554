package ratings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/outdir"
)

// TestRunWritesReport checks Run against Fit called directly with the same
// split: the same held-out RMSE, the files listed in the report present,
// and the predictions of the pairs equal to Model.Predict.
func TestRunWritesReport(t *testing.T) {
	r := lowRankRatings(t, 80, 60, 0.5, 3)
	pairs, err := triples.ReadPairs(strings.NewReader("u1\ti2\nu5\ti7\n"), "pairs", triples.Options{Delimiter: "\t"})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Rank: 3, Baseline: BaselineNone, Settings: rpca.Settings{Seed: 1}}
	out := filepath.Join(t.TempDir(), "model")
	fitted := 0
	rep, err := Run(context.Background(), Job{Input: "r.tsv", Ratings: r, Pairs: pairs, Unknown: UnknownError, Holdout: 0.1, Seed: 5,
		Options: opt, Out: out, Fitted: func(*Model) { fitted++ }})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit(context.Background(), r, HoldOut(r.Len(), 0.1, 5), opt)
	if err != nil {
		t.Fatal(err)
	}
	ev := m.Evaluate(r, HoldOut(r.Len(), 0.1, 5))
	if fitted != 1 || rep.HoldoutRMSE == nil || *rep.HoldoutRMSE != ev.RMSE {
		t.Errorf("held-out RMSE %v, Fit's %v (fitted called %d times)", rep.HoldoutRMSE, ev.RMSE, fitted)
	}
	names, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	for _, f := range rep.Files {
		if !slices.Contains(got, f) {
			t.Errorf("%s listed in the report but not written (%v)", f, got)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "predictions.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	i, j, _, _ := m.Index("u5", "i7")
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "u5\ti7\t") {
		t.Errorf("predictions.tsv %q", b)
	} else if want := m.Predict(i, j); !strings.HasSuffix(lines[1], "\t"+strconv.FormatFloat(want, 'g', -1, 64)) {
		t.Errorf("prediction %q, want %v", lines[1], want)
	}
}

// TestRunRefuses: an unknown id is an *UnknownIDError naming the pairs'
// file, and a failed or cancelled run leaves no output.
func TestRunRefuses(t *testing.T) {
	r := lowRankRatings(t, 40, 30, 0.5, 4)
	pairs, err := triples.ReadPairs(strings.NewReader("nobody\ti2\n"), "pairs", triples.Options{Delimiter: "\t"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "model")
	job := Job{Predict: "pairs.tsv", Ratings: r, Pairs: pairs, Unknown: UnknownError, Options: Options{Rank: 2}, Out: out}
	var idErr *UnknownIDError
	// The unknown id is found before the fit, which it would waste.
	unknownFitted := false
	job.Fitted = func(*Model) { unknownFitted = true }
	if _, err := Run(context.Background(), job); !errors.As(err, &idErr) || !strings.HasPrefix(err.Error(), "pairs.tsv: ") || unknownFitted {
		t.Errorf("unknown id: %v (fitted first: %v)", err, unknownFitted)
	}
	job.Fitted = nil
	// A directory that exists is refused before the fit.
	taken := t.TempDir()
	if err := os.WriteFile(filepath.Join(taken, "mine.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fitted := false
	bad := job
	bad.Out, bad.Fitted = taken, func(*Model) { fitted = true }
	if _, err := Run(context.Background(), bad); !errors.Is(err, outdir.ErrExists) || fitted {
		t.Errorf("existing output: %v (fitted %v)", err, fitted)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	job.Pairs = nil
	if _, err := Run(ctx, job); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output after the failures: %v", err)
	}
}
