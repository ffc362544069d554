package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/ratings"
)

// TestPredict fits a model with rpca complete, then checks rpca predict
// against it: --pairs gives the predictions complete wrote for the same
// pairs, digit for digit, on stdout and in --out; --top N lists, per
// user, N items the user did not rate, best first, and agrees with the
// pair predictions; --users picks users; and the output file rules.
func TestPredict(t *testing.T) {
	dir := t.TempDir()
	in, pairsFile, model := join(dir, "r.tsv"), join(dir, "pairs.tsv"), join(dir, "model")
	rs := newRatingSet(t, in, 40, 30, 0.4, 0.05, 0, 9)
	rs.writePairs(t, pairsFile, 50, "nobody\titem_1\t0")
	mustRun(t, "complete", "--in", in, "--header", "--method", "als", "--rank", "3", "--biases", "--clip", "1:5",
		"--predict", pairsFile, "--predict-header", "--unknown", "bias", "--out", model, "--quiet")
	want := readLines(t, join(model, "predictions.tsv"))

	r := mustRun(t, "predict", "--model", model, "--pairs", pairsFile, "--header", "--unknown", "bias", "--quiet")
	got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if got[0] != strings.TrimSuffix(ratings.PairsMarker, "\n") || !slices.Equal(got[1:], want) {
		t.Fatalf("predict --pairs: %d lines, first %q; complete wrote %d, first %q", len(got), got[:2], len(want), want[0])
	}
	out := join(dir, "pred.tsv")
	mustRun(t, "predict", "--model", model, "--pairs", pairsFile, "--header", "--unknown", "bias", "--out", out)
	if b, _ := os.ReadFile(out); string(b) != r.stdout {
		t.Errorf("--out differs from stdout")
	}
	wantError(t, 1, []string{"--out", "exists", "--force"}, "predict", "--model", model, "--pairs", pairsFile, "--header", "--unknown", "nan", "--out", out)
	mustRun(t, "predict", "--model", model, "--pairs", pairsFile, "--header", "--unknown", "nan", "--out", out, "--force")
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "nobody\titem_1\tNaN") {
		t.Errorf("--force did not replace the file rpca wrote")
	}

	// The pairs' predictions, to check the recommendations against.
	pred := map[[2]string]float64{}
	rated := map[[2]string]bool{}
	for q := range rs.observed {
		rated[[2]string{rowID(q[0]), colID(q[1])}] = true
	}
	var all strings.Builder
	for i := range rs.d1 {
		for j := range rs.d2 {
			all.WriteString(rowID(i) + "\t" + colID(j) + "\n")
		}
	}
	allFile := join(dir, "all.tsv")
	os.WriteFile(allFile, []byte(all.String()), 0o644)
	r = mustRun(t, "predict", "--model", model, "--pairs", allFile, "--quiet")
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		f := strings.Split(l, "\t")
		v, _ := strconv.ParseFloat(f[2], 64)
		pred[[2]string{f[0], f[1]}] = v
	}
	const n = 4
	r = mustRun(t, "predict", "--model", model, "--top", strconv.Itoa(n), "--quiet")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if lines[0] != strings.TrimSuffix(ratings.TopMarker, "\n") || len(lines) != 1+n*rs.d1 {
		t.Fatalf("predict --top: %d lines, first %q", len(lines), lines[0])
	}
	last := map[string]float64{}
	for k, l := range lines[1:] {
		f := strings.Split(l, "\t")
		rank, _ := strconv.Atoi(f[1])
		v, _ := strconv.ParseFloat(f[3], 64)
		user, item := f[0], f[2]
		switch {
		case len(f) != 4 || rank != k%n+1:
			t.Fatalf("line %q", l)
		case rated[[2]string{user, item}]:
			t.Errorf("%s: recommended %s, which the user rated", user, item)
		case v != pred[[2]string{user, item}]:
			t.Errorf("%s %s: %v, and --pairs predicts %v", user, item, v, pred[[2]string{user, item}])
		case rank > 1 && v > last[user]:
			t.Errorf("%s: rank %d predicts %v, above rank %d's %v", user, rank, v, rank-1, last[user])
		}
		last[user] = v
	}
	users := join(dir, "users.txt")
	os.WriteFile(users, []byte("# who\n"+rowID(7)+"\n\n"+rowID(2)+"\n"), 0o644)
	r = mustRun(t, "predict", "--model", model, "--top", "2", "--users", users, "--quiet")
	if l := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(l) != 5 || !strings.HasPrefix(l[1], rowID(7)+"\t1\t") || !strings.HasPrefix(l[3], rowID(2)+"\t1\t") {
		t.Errorf("--users: %q", r.stdout)
	}
}

// TestPredictErrors: usage errors exit 2; a missing or damaged model, an
// unknown id, and an output that is not rpca's exit 1 and leave it as it
// was.
func TestPredictErrors(t *testing.T) {
	dir := t.TempDir()
	in, pairsFile, model := join(dir, "r.tsv"), join(dir, "pairs.tsv"), join(dir, "model")
	rs := newRatingSet(t, in, 20, 15, 0.5, 0.05, 0, 4)
	rs.writePairs(t, pairsFile, 5, "nobody\titem_1\t0")
	mustRun(t, "complete", "--in", in, "--header", "--method", "als", "--rank", "2", "--out", model, "--quiet")
	users := join(dir, "users.txt")
	os.WriteFile(users, []byte(rowID(1)+"\nstranger\n"), 0o644)
	mine := join(dir, "mine.tsv")
	os.WriteFile(mine, []byte("my notes\n"), 0o644)
	for _, c := range []struct {
		name string
		code int
		keys []string
		args []string
	}{
		{"no model", 2, []string{"--model"}, []string{"--top", "3"}},
		{"neither", 2, []string{"--pairs", "--top"}, []string{"--model", model}},
		{"both", 2, []string{"--pairs", "--top"}, []string{"--model", model, "--top", "3", "--pairs", pairsFile}},
		{"users without top", 2, []string{"--users"}, []string{"--model", model, "--pairs", pairsFile, "--users", users}},
		{"top negative", 2, []string{"-top"}, []string{"--model", model, "--top", "-1"}},
		{"bias without biases", 2, []string{"--unknown bias"}, []string{"--model", model, "--pairs", pairsFile, "--header", "--unknown", "bias"}},
		{"model missing", 1, []string{"nowhere"}, []string{"--model", join(dir, "nowhere"), "--top", "3"}},
		{"pairs missing", 1, []string{"--pairs", "absent.tsv"}, []string{"--model", model, "--pairs", join(dir, "absent.tsv")}},
		{"users missing", 1, []string{"--users", "absent.txt"}, []string{"--model", model, "--top", "2", "--users", join(dir, "absent.txt")}},
		{"not a model", 1, []string{"model.json", "missing"}, []string{"--model", dir, "--top", "3"}},
		{"unknown id", 1, []string{"pairs.tsv", "line 7", "nobody", "--unknown"}, []string{"--model", model, "--pairs", pairsFile, "--header"}},
		{"unknown user", 1, []string{"users.txt", "line 2", "stranger"}, []string{"--model", model, "--top", "2", "--users", users}},
		{"a file of the user's", 1, []string{"not written by 'rpca predict'"}, []string{"--model", model, "--top", "2", "--out", mine, "--force"}},
		{"output in the model", 1, []string{"input"}, []string{"--model", model, "--top", "2", "--out", join(model, "top.tsv")}},
		{"output a directory", 1, []string{"directory"}, []string{"--model", model, "--top", "2", "--out", dir}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, c.code, c.keys, append([]string{"predict"}, c.args...)...)
		})
	}
	if b, _ := os.ReadFile(mine); string(b) != "my notes\n" {
		t.Errorf("the user's file changed: %q", b)
	}
	if _, err := os.Stat(join(model, "top.tsv")); err == nil {
		t.Error("wrote into the model directory")
	}
}
