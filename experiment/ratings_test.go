package experiment

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRatingsQuick runs the ratings experiment on generated ratings and
// checks its tables against their definitions: every scenario is fitted
// by gibbs and als, each with α = 0 and α > 0; α = 0 sets nothing aside; precision and recall
// are the counts' ratios; on the flipped ratings α > 0 finds injected
// ratings with precision ≥ 0.8 and lowers the held-out RMSE (the point
// of the experiment, at this seed); the shilling attack raises the
// predictions on its targets above those of the clean fit.
func TestRatingsQuick(t *testing.T) {
	dir := runQuick(t, "ratings", Options{Ratings: SyntheticRatings})
	rows := readTable(t, filepath.Join(dir, "ratings.csv"), []string{"scenario", "method", "alpha", "injected", "rank", "ridge", "iterations", "seconds",
		"heldout_rmse", "bias_rmse", "set_aside", "set_aside_injected", "precision", "recall", "target_mean"})
	if len(rows) != 12 {
		t.Fatalf("%d rows, want 12", len(rows))
	}
	rmse := map[string]float64{}
	target := map[string]float64{}
	for _, r := range rows {
		key := r["scenario"] + "/" + r["method"] + "/" + r["alpha"]
		flagged, correct, junk := fnum(t, r["set_aside"]), fnum(t, r["set_aside_injected"]), fnum(t, r["injected"])
		rmse[key], target[key] = fnum(t, r["heldout_rmse"]), fnum(t, r["target_mean"])
		if !(rmse[key] > 0.3 && rmse[key] < 1.2) {
			t.Errorf("%s: held-out RMSE %v", key, rmse[key])
		}
		if r["alpha"] == "0" && flagged != 0 {
			t.Errorf("%s: α = 0 set aside %v ratings", key, flagged)
		}
		if (r["scenario"] == "clean") != (junk == 0) || correct > flagged || correct > junk {
			t.Errorf("%s: injected %v, set aside %v of which %v injected", key, junk, flagged, correct)
		}
		if p := fnum(t, r["precision"]); flagged > 0 && math.Abs(p-correct/flagged) > 1e-5 {
			t.Errorf("%s: precision %v, want %v", key, p, correct/flagged)
		}
		if rc := fnum(t, r["recall"]); junk > 0 && math.Abs(rc-correct/junk) > 1e-5 {
			t.Errorf("%s: recall %v, want %v", key, rc, correct/junk)
		}
	}
	for _, r := range rows {
		if r["scenario"] == "flipped" && r["alpha"] != "0" {
			if p := fnum(t, r["precision"]); !(p >= 0.8) {
				t.Errorf("flipped, α > 0: precision %v", p)
			}
			if m := r["method"]; rmse["flipped/"+m+"/"+r["alpha"]] >= rmse["flipped/"+m+"/0"] {
				t.Errorf("flipped, %s: α > 0 RMSE %v not below α = 0's %v", m, rmse["flipped/"+m+"/"+r["alpha"]], rmse["flipped/"+m+"/0"])
			}
		}
	}
	if !(target["shilling/als/0"] > target["clean/als/0"]+0.2) {
		t.Errorf("als: shilling targets predicted at %v, clean %v: the attack has no effect", target["shilling/als/0"], target["clean/als/0"])
	}
	curve := readTable(t, filepath.Join(dir, "ratings_curve.csv"), []string{"rank", "ridge", "validation_rmse", "iterations", "seconds"})
	if len(curve) < 5 {
		t.Errorf("%d candidates in the curve", len(curve))
	}
	for _, f := range []string{"ratings.png", "ratings_rank.png", "ratings_ridge.png"} {
		checkPNG(t, filepath.Join(dir, f), 500, 300)
	}
}

// TestRatingsJunk checks the two kinds of junk against their definitions:
// the flipped ratings are exactly 5% of the training ones, none held out,
// each moved to the opposite end of the scale; the fake users are new ids
// whose ratings are the targets at the top and popular fillers at the
// bottom; the clean part is unchanged in both.
func TestRatingsJunk(t *testing.T) {
	r := syntheticRatings(3, 120, 80)
	held := make([]bool, r.Len())
	for k := range held {
		held[k] = k%5 == 0
	}
	train := r.Len() - countTrue(held)
	rng := rand.New(rand.NewPCG(1, 1))
	fl := flipRatings(rng, r, held, 0.5, 5)
	if n := countTrue(fl.junk); n != int(math.Round(0.05*float64(train))) {
		t.Errorf("%d flipped of %d training ratings", n, train)
	}
	for k, v := range fl.r.Val {
		switch {
		case fl.junk[k] && held[k]:
			t.Errorf("held-out rating %d flipped", k)
		case fl.junk[k] && !(v == 0.5 && r.Val[k] >= 2.75 || v == 5 && r.Val[k] < 2.75):
			t.Errorf("rating %d: %v flipped to %v", k, r.Val[k], v)
		case !fl.junk[k] && v != r.Val[k]:
			t.Errorf("rating %d changed from %v to %v", k, r.Val[k], v)
		}
	}
	sh := shillRatings(rng, r, held, 0.5, 5)
	fakes := sh.r.D1 - r.D1
	if fakes != 6 || sh.r.Len() != r.Len()+fakes*(shillTargets+shillFillers) || len(sh.junk) != sh.r.Len() || len(sh.held) != sh.r.Len() {
		t.Fatalf("%d fake users, %d ratings (from %d), %d junk flags", fakes, sh.r.Len(), r.Len(), len(sh.junk))
	}
	if !slices.Equal(sh.r.Val[:r.Len()], r.Val) || !slices.Equal(sh.held[:r.Len()], held) || countTrue(sh.junk) != sh.r.Len()-r.Len() {
		t.Error("the clean ratings changed")
	}
	for k := r.Len(); k < sh.r.Len(); k++ {
		i, j, v := sh.r.Row[k], sh.r.Col[k], sh.r.Val[k]
		if _, isReal := r.RowIndex[sh.r.RowIDs[i]]; isReal || i < r.D1 || sh.r.RowIndex[sh.r.RowIDs[i]] != i {
			t.Fatalf("fake rating %d has row %d (%q)", k, i, sh.r.RowIDs[i])
		}
		if slices.Contains(sh.targets, j) != (v == 5) {
			t.Errorf("fake rating %d: column %d rated %v, targets %v", k, j, v, sh.targets)
		}
	}
}

// TestRatingsInput checks the input errors of the ratings experiment.
func TestRatingsInput(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.csv")
	if err := os.WriteFile(small, []byte("user,item,rating\nu1,m1,4\nu2,m1,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{
		"missing file": {Ratings: filepath.Join(dir, "none.csv")},
		"few ratings":  {Ratings: small},
		"alpha 1":      {Ratings: SyntheticRatings, Alpha: 1},
	} {
		o.Out = filepath.Join(dir, "out-"+name)
		if _, err := Run(context.Background(), "ratings", o); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := os.Stat(o.Out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the output directory was left", name)
		}
	}
	// Outside the repository the default ratings are absent: an error
	// that says so, not generated ratings in their place.
	t.Chdir(dir)
	if _, err := Run(context.Background(), "ratings", Options{Quick: true, Out: filepath.Join(dir, "out-default")}); !errors.Is(err, ErrNoRatings) {
		t.Errorf("no default ratings: %v", err)
	}
	// An interrupted run stops with the context's error and leaves nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "cancelled")
	if _, err := Run(ctx, "ratings", Options{Ratings: SyntheticRatings, Quick: true, Out: out}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Error("cancelled run left its directory")
	}
}
