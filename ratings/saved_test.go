package ratings

import (
	"cmp"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats/triples"
)

// allPairs returns every (row id, column id) pair of m's fitted ids, and
// the pairs of an unknown row and an unknown column.
func allPairs(m *Model) *triples.Pairs {
	p := &triples.Pairs{}
	for _, r := range m.RowIDs {
		for _, c := range m.ColIDs {
			p.Row, p.Col, p.Line = append(p.Row, r), append(p.Col, c), append(p.Line, len(p.Line)+1)
		}
	}
	p.Row, p.Col, p.Line = append(p.Row, "nobody", m.RowIDs[0]), append(p.Col, m.ColIDs[0], "nothing"), append(p.Line, len(p.Line)+1, len(p.Line)+2)
	return p
}

// TestSaveLoad: a model saved in either factor format and loaded back
// predicts every pair, known or unknown, bit for bit as the fitted model
// does, with its clip range and bias model, and keeps its training
// ratings; for the median baseline and for Gibbs too.
func TestSaveLoad(t *testing.T) {
	r := lowRankRatings(t, 30, 25, 0.5, 7)
	r.Val[3] = 30 // junk, clipped by the range below
	held := HoldOut(r.Len(), 0.1, 2)
	for _, c := range []struct {
		name string
		opt  Options
		csv  bool
	}{
		{"biases npy", Options{Rank: 2, Alpha: 0.05, Baseline: BaselineBiases, Clip: &[2]float64{1, 5}}, false},
		{"biases csv", Options{Rank: 2, Alpha: 0.05, Baseline: BaselineBiases, Clip: &[2]float64{1, math.Inf(1)}}, true},
		{"median", Options{Rank: 3}, false},
		{"gibbs", Options{Rank: 2, Model: &Gibbs{Samples: 40, BurnIn: 25}}, false},
	} {
		m, err := Fit(context.Background(), r, held, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		dir := t.TempDir()
		if _, err := m.Save(context.Background(), dir, c.csv, nil, nil); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p, err := Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pairs := allPairs(m)
		policy := UnknownNaN
		if m.Biases != nil {
			policy = UnknownBias
		}
		want, _, err1 := m.PredictPairs(pairs, policy)
		got, _, err2 := p.PredictPairs(pairs, policy)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", c.name, err1, err2)
		}
		for k := range want {
			if got[k] != want[k] && !(math.IsNaN(got[k]) && math.IsNaN(want[k])) {
				t.Fatalf("%s: pair %s %s: loaded %v, fitted %v", c.name, pairs.Row[k], pairs.Col[k], got[k], want[k])
			}
		}
		if a, b := m.ClipRange(), p.ClipRange(); (a == nil) != (b == nil) || a != nil && *a != *b {
			t.Errorf("%s: clip %v, loaded %v", c.name, a, b)
		}
		if p.Train.Len() != m.Train.Len() || !slices.Equal(p.Train.Val, m.Train.Val) || !slices.Equal(p.Train.Row, m.Train.Row) || !slices.Equal(p.Train.Col, m.Train.Col) {
			t.Errorf("%s: training ratings differ", c.name)
		}
		if v, known := p.PredictAny("nobody", "nothing"); known || v != m.Clip(cmp.Or(m.PredictBiases(-1, -1), m.TrainMean)) && !math.IsNaN(m.PredictBiases(-1, -1)) {
			t.Errorf("%s: unknown pair %v", c.name, v)
		}
	}
}

// TestTopN checks TopN, on one worker and on two, against the obvious
// computation: every fitted column the row has not rated, sorted by
// Fitted from the highest (ties by column), the first n; a row with few
// unrated columns gets fewer; and the errors. TopN ranks by a blocked
// product whose values may differ from Fitted's in the last bits, which
// could swap two columns only if their values were that close: not in
// these random factors.
func TestTopN(t *testing.T) {
	r := lowRankRatings(t, 20, 12, 0.6, 4)
	m, err := Fit(context.Background(), r, nil, Options{Rank: 2, Baseline: BaselineBiases, Clip: &[2]float64{2, 4}})
	if err != nil {
		t.Fatal(err)
	}
	// Row 0 rates every column but one, so that it gets that one only.
	rated0 := map[int]bool{}
	for k, i := range m.Train.Row {
		if i == 0 {
			rated0[m.Train.Col[k]] = true
		}
	}
	left := -1
	for j := range m.ColIDs {
		switch {
		case rated0[j]:
		case left < 0:
			left = j
		default:
			m.Train.Row, m.Train.Col, m.Train.Val = append(m.Train.Row, 0), append(m.Train.Col, j), append(m.Train.Val, 3)
		}
	}
	if left < 0 {
		t.Fatal("row 0 rated every column")
	}
	// want is the obvious top n of row i.
	want := func(i, n int) []Recommendation {
		rated := map[int]bool{}
		for k, ri := range m.Train.Row {
			if ri == i {
				rated[m.Train.Col[k]] = true
			}
		}
		var cols []int
		for j := range m.ColIDs {
			if !rated[j] {
				cols = append(cols, j)
			}
		}
		slices.SortStableFunc(cols, func(a, b int) int { return cmp.Compare(m.Fitted(i, b), m.Fitted(i, a)) })
		var out []Recommendation
		for k, j := range cols[:min(n, len(cols))] {
			out = append(out, Recommendation{RowID: m.RowIDs[i], Rank: k + 1, ColID: m.ColIDs[j], Prediction: m.Predict(i, j)})
		}
		return out
	}
	for _, n := range []int{1, 3, 100} {
		recs, err := m.TopN(context.Background(), nil, n, 1+n%2)
		if err != nil {
			t.Fatal(err)
		}
		var all []Recommendation
		for i := range m.RowIDs {
			all = append(all, want(i, n)...)
		}
		if !slices.Equal(recs, all) {
			t.Fatalf("top %d: %d recommendations, want %d; first %v, want %v", n, len(recs), len(all), recs[:min(3, len(recs))], all[:min(3, len(all))])
		}
		if got := want(0, n); len(got) != 1 || got[0].ColID != m.ColIDs[left] {
			t.Errorf("top %d: row 0 gets %v, want column %d only", n, got, left)
		}
	}
	recs, err := m.TopN(context.Background(), []string{m.RowIDs[3], m.RowIDs[1]}, 2, 0)
	if err != nil || !slices.Equal(recs, append(want(3, 2), want(1, 2)...)) {
		t.Errorf("chosen rows: %v %v", recs, err)
	}
	var uie *UnknownIDError
	if _, err := m.TopN(context.Background(), []string{m.RowIDs[1], "nobody"}, 2, 0); !errors.As(err, &uie) || uie.Line != 2 || uie.ID != "nobody" {
		t.Errorf("unknown row: %v", err)
	}
	if _, err := m.TopN(context.Background(), nil, 0, 0); err == nil {
		t.Error("n = 0 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.TopN(ctx, nil, 2, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestLoadDamaged: Load refuses a directory that is not a model, and
// each damaged file with ErrNotModel and the file's name.
func TestLoadDamaged(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
	r := lowRankRatings(t, 15, 12, 0.6, 5)
	m, err := Fit(context.Background(), r, nil, Options{Rank: 2, Baseline: BaselineBiases})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		edit       func(string) string
	}{
		{"no model file", FileModel, nil},
		{"not JSON", FileModel, func(string) string { return "{" }},
		{"other format", FileModel, func(s string) string { return strings.Replace(s, savedFormat, "something", 1) }},
		{"newer version", FileModel, func(s string) string { return strings.Replace(s, `"version": 1`, `"version": 2`, 1) }},
		{"a row id fewer", FileRows, func(s string) string { return s[strings.Index(s, "\n")+1:] }},
		{"repeated id", FileCols, func(s string) string { return s + strings.Split(s, "\n")[0] + "\n" }},
		{"biases short", FileModel, func(s string) string { return strings.Replace(s, `"row": [`, `"row": [1.5,`, 1) }},
		{"training id unknown", FileTrain, func(s string) string { return "stranger\t" + m.ColIDs[0] + "\t3\n" + s }},
		{"no U", "U.npy", nil},
	} {
		dir := t.TempDir()
		if _, err := m.Save(context.Background(), dir, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, c.file)
		if c.edit == nil {
			os.Remove(path)
		} else {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, []byte(c.edit(string(b))), 0o644)
		}
		if _, err := Load(dir); !errors.Is(err, ErrNotModel) || !strings.Contains(err.Error(), c.file) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestReadIDs: ids one a line with their lines, blank lines and comments
// skipped; a file without one is ErrNoIDs.
func TestReadIDs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.txt")
	os.WriteFile(path, []byte("# users\n  u7 \n\nu2\n#u3\n"), 0o644)
	ids, lines, err := ReadIDs(path)
	if err != nil || !slices.Equal(ids, []string{"u7", "u2"}) || !slices.Equal(lines, []int{2, 4}) {
		t.Errorf("got %q %v %v, want [u7 u2] [2 4]", ids, lines, err)
	}
	os.WriteFile(path, []byte("# none\n\n"), 0o644)
	if _, _, err := ReadIDs(path); !errors.Is(err, ErrNoIDs) {
		t.Errorf("no id: got %v, want ErrNoIDs", err)
	}
	if _, _, err := ReadIDs(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
}
