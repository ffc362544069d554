package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/outdir"
)

// ratingSet is a generated rating matrix: truth[i][j] = 3 + a_i·b_j of
// rank 3 (rank 4 with the offset), observed with probability p, with
// Gaussian noise of standard deviation sigma, and a fraction of the
// observed ratings replaced by gross outliers.
type ratingSet struct {
	d1, d2   int
	truth    *mat.Dense
	observed map[[2]int]bool
	outlier  map[[2]int]bool
	sigma    float64
}

func rowID(i int) string { return fmt.Sprintf("user-%03d", i) }
func colID(j int) string { return fmt.Sprintf("item_%d", j) }

// fixtureSigma is the noise of ratingFixture's ratings.
const fixtureSigma = 0.05

// ratingFixture writes the ratings that the bias, auto-rank and implicit
// tests share (150 users, 100 items, 40% rated, rank 3, noise
// fixtureSigma, seed 23) into a new directory, and returns both paths.
func ratingFixture(t *testing.T) (dir, in string) {
	t.Helper()
	dir = t.TempDir()
	in = join(dir, "ratings.tsv")
	newRatingSet(t, in, 150, 100, 0.4, fixtureSigma, 0, 23)
	return dir, in
}

// newRatingSet writes the observed ratings to path as "row col value"
// lines in random order, with a header line.
func newRatingSet(t *testing.T, path string, d1, d2 int, p, sigma, outliers float64, seed uint64) *ratingSet {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	const r = 3
	a, b := mat.NewDense(d1, r, nil), mat.NewDense(d2, r, nil)
	for _, m := range []*mat.Dense{a, b} {
		rows, _ := m.Dims()
		for i := 0; i < rows; i++ {
			for k := 0; k < r; k++ {
				m.Set(i, k, rng.NormFloat64()/math.Sqrt(math.Sqrt(r)))
			}
		}
	}
	rs := &ratingSet{d1: d1, d2: d2, truth: mat.NewDense(d1, d2, nil), observed: map[[2]int]bool{}, outlier: map[[2]int]bool{}, sigma: sigma}
	rs.truth.Mul(a, b.T())
	rs.truth.Apply(func(i, j int, v float64) float64 { return 3 + v }, rs.truth)
	var lines []string
	for i := 0; i < d1; i++ {
		for j := 0; j < d2; j++ {
			if rng.Float64() >= p {
				continue
			}
			v := rs.truth.At(i, j) + sigma*rng.NormFloat64()
			if rng.Float64() < outliers {
				v = 3 + (5+5*rng.Float64())*float64(2*rng.IntN(2)-1)
				rs.outlier[[2]int{i, j}] = true
			}
			rs.observed[[2]int{i, j}] = true
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s", rowID(i), colID(j), strconv.FormatFloat(v, 'g', -1, 64)))
		}
	}
	rng.Shuffle(len(lines), func(x, y int) { lines[x], lines[y] = lines[y], lines[x] })
	testfile.WriteWith(t, path, func(w io.Writer) error {
		_, err := io.WriteString(w, "user\titem\trating\n"+strings.Join(lines, "\n")+"\n")
		return err
	})
	return rs
}

// writePairs writes n unobserved pairs, with the true value as a third
// field (which complete must ignore), and returns them.
func (rs *ratingSet) writePairs(t *testing.T, path string, n int, extra ...string) [][2]int {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	var pairs [][2]int
	var b strings.Builder
	b.WriteString("user\titem\ttruth\n")
	for len(pairs) < n {
		q := [2]int{rng.IntN(rs.d1), rng.IntN(rs.d2)}
		if rs.observed[q] {
			continue
		}
		pairs = append(pairs, q)
		fmt.Fprintf(&b, "%s\t%s\t%g\n", rowID(q[0]), colID(q[1]), rs.truth.At(q[0], q[1]))
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	testfile.WriteWith(t, path, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err })
	return pairs
}

// readPredictions reads predictions.tsv.
func readPredictions(t *testing.T, path string) *triples.Ratings {
	t.Helper()
	r, err := triples.ReadFile(path, triples.Options{Delimiter: "\t", AllowNonFinite: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f := bytes.NewReader(testfile.Read(t, path))
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func index(ids []string) map[string]int {
	m := map[string]int{}
	for k, id := range ids {
		m[id] = k
	}
	return m
}

// TestCompleteHoldout fits a noisy rank-4 rating matrix with 10% of the
// ratings held out. The held-out RMSE cannot beat the noise σ (the noise
// of a held-out rating is independent of the fit) and exceeds it by the
// estimation error, about σ·√(r(d1+d2)/n) ≈ 0.45σ here (n = 5400 training
// ratings, r = 4, d1+d2 = 250), so σ·√(1+0.2) ≈ 1.1σ is expected; the test
// accepts [0.8σ, 1.6σ]. The RMSE of 600 held-out noise draws varies by
// about 3%, so 0.8σ is far outside chance, and a fit that misses the
// low-rank structure is at the training-mean RMSE, ≈ 20σ.
func TestCompleteHoldout(t *testing.T) {
	dir := t.TempDir()
	in := join(dir, "ratings.tsv")
	const sigma = 0.05
	rs := newRatingSet(t, in, 150, 100, 0.4, sigma, 0, 21)
	pairsPath := join(dir, "pairs.tsv")
	pairs := rs.writePairs(t, pairsPath, 200)
	out := join(dir, "model")
	r := mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "4", "--holdout", "0.1", "--seed", "7",
		"--predict", pairsPath, "--predict-header", "--out", out, "--json", "--quiet")
	sum := readJSON(t, r.stdout)
	if fmt.Sprint(testfile.List(t, out, outdir.OwnerMarker)) != "[U.npy V.npy cols.txt model.json predictions.tsv rows.txt summary.json train.tsv]" {
		t.Fatalf("files %v", testfile.List(t, out, outdir.OwnerMarker))
	}
	n := float64(len(rs.observed))
	if sum["ratings"] != n || sum["holdout_ratings"] != math.Round(0.1*n) || sum["observed_entries"] != n-math.Round(0.1*n) || sum["alpha"] != 0.0 {
		t.Errorf("summary counts %v", sum)
	}
	rmse, mae, base := sum["holdout_rmse"].(float64), sum["holdout_mae"].(float64), sum["baseline_rmse"].(float64)
	if rmse < 0.8*sigma || rmse > 1.6*sigma {
		t.Errorf("held-out RMSE %.4g, want within [0.8σ, 1.6σ] for σ = %g", rmse, sigma)
	}
	// The default method is alternating least squares; the paper's
	// gradient steps stay selectable and fit as well.
	if sum["method"] != "als" {
		t.Errorf("method %v, want the default als", sum["method"])
	}
	gd := readJSON(t, mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "4", "--holdout", "0.1", "--seed", "7",
		"--method", "gd", "--out", join(dir, "gd"), "--json", "--quiet").stdout)
	if e := gd["holdout_rmse"].(float64); gd["method"] != "gd" || e < 0.8*sigma || e > 1.6*sigma {
		t.Errorf("--method gd: method %v, held-out RMSE %.4g", gd["method"], e)
	}
	// For Gaussian errors MAE ≈ 0.8·RMSE.
	if mae > rmse || mae < 0.6*rmse {
		t.Errorf("held-out MAE %.4g with RMSE %.4g", mae, rmse)
	}
	if base < 10*rmse {
		t.Errorf("training-mean RMSE %.4g is not far above the fit's %.4g", base, rmse)
	}
	// The same figures in the one-line summary without --json.
	r2 := mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "4", "--holdout", "0.1", "--seed", "7", "--out", join(dir, "m2"), "--quiet")
	if want := fmt.Sprintf("held-out RMSE %.4g, MAE %.4g", rmse, mae); !strings.Contains(r2.stdout, want) || strings.Count(r2.stdout, "\n") != 1 {
		t.Errorf("stdout %q does not have %q on one line", r2.stdout, want)
	}

	// Predictions: in the order of pairs.tsv, equal to U[row]·V[col] of
	// the written factors, and close to the noiseless truth (estimation
	// error ≈ 0.45σ, see above; 1σ bound).
	u := readNpy(t, join(out, "U.npy"))
	v := readNpy(t, join(out, "V.npy"))
	rows, cols := index(readLines(t, join(out, "rows.txt"))), index(readLines(t, join(out, "cols.txt")))
	if ur, _ := u.Dims(); ur != len(rows) || ur != 150 {
		t.Fatalf("U has %d rows, rows.txt %d ids", ur, len(rows))
	}
	// Centered fit: rank 4 plus a column holding the median rating.
	if _, uc := u.Dims(); uc != 5 || u.At(17, 4) != sum["offset"] || v.At(9, 4) != 1 || math.Abs(sum["offset"].(float64)-3) > 0.5 {
		t.Errorf("U has %d columns, last %v (offset %v), V's last %v; want 5, the offset, 1", uc, u.At(17, 4), sum["offset"], v.At(9, 4))
	}
	pred := readPredictions(t, join(out, "predictions.tsv"))
	if pred.Len() != len(pairs) {
		t.Fatalf("%d predictions for %d pairs", pred.Len(), len(pairs))
	}
	var sq float64
	for k, q := range pairs {
		ri, ci := pred.RowIDs[pred.Row[k]], pred.ColIDs[pred.Col[k]]
		if ri != rowID(q[0]) || ci != colID(q[1]) {
			t.Fatalf("prediction %d is for (%s, %s), want (%s, %s)", k, ri, ci, rowID(q[0]), colID(q[1]))
		}
		want := mat.Dot(u.RowView(rows[ri]), v.RowView(cols[ci]))
		if math.Abs(pred.Val[k]-want) > 1e-12*math.Abs(want) {
			t.Fatalf("prediction %v differs from U·V = %v", pred.Val[k], want)
		}
		d := pred.Val[k] - rs.truth.At(q[0], q[1])
		sq += d * d
	}
	if e := math.Sqrt(sq / float64(len(pairs))); e > sigma {
		t.Errorf("prediction RMSE against the truth %.4g, want ≤ σ = %g", e, sigma)
	}
}

func TestCompletePredictOptions(t *testing.T) {
	dir := t.TempDir()
	in := join(dir, "ratings.tsv")
	rs := newRatingSet(t, in, 60, 50, 0.5, 0.05, 0, 22)
	pairsPath := join(dir, "pairs.tsv")
	rs.writePairs(t, pairsPath, 50, "user-000\tno-such-item", "nobody\titem_1")

	// Unknown ids: an error naming the line (header, 50 pairs, then these).
	wantError(t, 1, []string{"pairs.tsv", "line 52", `unknown column id "no-such-item"`, "--unknown nan"},
		"complete", "--method", "als", "--in", in, "--header", "--predict-header", "--rank", "4", "--predict", pairsPath, "--out", join(dir, "a"), "--quiet")
	if _, err := os.Stat(join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("output written despite the error")
	}
	// --unknown nan: NaN for those two, counted; --clip bounds the rest.
	r := mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--predict-header", "--rank", "4", "--predict", pairsPath, "--unknown", "nan",
		"--clip", "2.8:3.2", "--out", join(dir, "b"), "--json", "--quiet")
	sum := readJSON(t, r.stdout)
	if sum["predictions"] != 52.0 || sum["predictions_nan"] != 2.0 {
		t.Errorf("summary %v", sum)
	}
	pred := readPredictions(t, join(dir, "b", "predictions.tsv"))
	clipped := 0
	for k, v := range pred.Val {
		switch {
		case k >= 50:
			if !math.IsNaN(v) {
				t.Errorf("prediction %d for an unknown id is %v, want NaN", k, v)
			}
		case v < 2.8 || v > 3.2:
			t.Errorf("prediction %v outside --clip 2.8:3.2", v)
		case v == 2.8 || v == 3.2:
			clipped++
		}
	}
	if clipped == 0 {
		t.Errorf("no prediction was clipped (the truth spreads well beyond 2.8..3.2)")
	}
}

// TestCompleteOutliers corrupts 5% of the ratings grossly (±5..10 around
// the mean, where the ratings spread by about 1). Plain completion (α = 0)
// bends the fit towards them (measured with als: RMSE against the truth
// ≈ 0.86 on unobserved entries); with α = 0.15 they are set aside and the
// predictions must be at least 5× closer to the truth (measured ≈ 0.08,
// the bound 0.15 also catches a fit that merely shrinks towards the mean,
// whose error is the ratings' spread, ≈ 1). It runs with --rank 4 (als)
// and at the defaults (gibbs).
func TestCompleteOutliers(t *testing.T) {
	dir := t.TempDir()
	in := join(dir, "ratings.tsv")
	rs := newRatingSet(t, in, 150, 120, 0.5, 0.02, 0.05, 23)
	pairsPath := join(dir, "pairs.tsv")
	pairs := rs.writePairs(t, pairsPath, 300)
	for _, method := range []string{"als", "gibbs"} {
		errOf := func(out string, alpha string, more ...string) (float64, map[string]any) {
			args := append([]string{"complete", "--in", in, "--header", "--predict-header", "--alpha", alpha, "--predict", pairsPath, "--out", out, "--json", "--quiet"}, more...)
			if method == "als" {
				args = append(args, "--method", "als", "--rank", "4")
			}
			r := mustRun(t, args...)
			pred := readPredictions(t, join(out, "predictions.tsv"))
			var sq float64
			for k, q := range pairs {
				d := pred.Val[k] - rs.truth.At(q[0], q[1])
				sq += d * d
			}
			return math.Sqrt(sq / float64(len(pairs))), readJSON(t, r.stdout)
		}
		plain, _ := errOf(join(dir, method+"-plain"), "0")
		robust, sum := errOf(join(dir, method+"-robust"), "0.15")
		t.Logf("%s: prediction RMSE against the truth: α = 0.15: %.3g, α = 0: %.3g", method, robust, plain)
		if robust > 0.15 || robust > plain/5 || sum["method"] != method {
			t.Errorf("%s: prediction RMSE against the truth: %.3g with α = 0.15, %.3g with α = 0; want ≤ 0.15 and 5× better (method %v)", method, robust, plain, sum["method"])
		}
		// outliers.tsv lists the set-aside ratings: it must contain nearly
		// all of the true outliers.
		lines := readLines(t, join(dir, method+"-robust", "outliers.tsv"))
		if len(lines)-1 != int(sum["outliers"].(float64)) {
			t.Errorf("%s: outliers.tsv has %d lines after its header, summary says %v", method, len(lines)-1, sum["outliers"])
		}
		found := 0
		for _, l := range lines[1:] {
			f := strings.Split(l, "\t")
			var i, j int
			fmt.Sscanf(f[0], "user-%d", &i)
			fmt.Sscanf(f[1], "item_%d", &j)
			if rs.outlier[[2]int{i, j}] {
				found++
			}
		}
		if found < len(rs.outlier)*95/100 {
			t.Errorf("%s: outliers.tsv holds %d of the %d true outliers", method, found, len(rs.outlier))
		}
		if method == "gibbs" { // α > 0 brings the t noise, and --tail inf takes it away
			_, normal := errOf(join(dir, method+"-normal"), "0.15", "--tail", "inf")
			tail := func(s map[string]any) any { return s["params"].(map[string]any)["tail"] }
			if tail(sum) != 5.0 || tail(normal) != nil {
				t.Errorf("summary tails %v (defaults) and %v (--tail inf), want 5 and none", tail(sum), tail(normal))
			}
		}
	}
}

func TestCompleteErrors(t *testing.T) {
	dir := t.TempDir()
	dup := testfile.Write(t, dir, "dup.csv", "# ratings\nu1,m1,4\nu2,m1,3\n\nu1,m1,5\n")
	bad := testfile.Write(t, dir, "bad.txt", "u1 m1 4\nu2 m1 three\n")
	small := testfile.Write(t, dir, "small.tsv", "a\tx\t1\nb\ty\t2\nc\tx\t3\n")
	cases := []robustCase{
		{"duplicate", 1, []string{"dup.csv", "line 5", `duplicate rating for row "u1", column "m1"`, "line 2"}, []string{"--in", dup, "--rank", "1"}},
		{"bad value", 1, []string{"bad.txt", "line 2, column 3", `invalid number "three"`}, []string{"--in", bad, "--rank", "1"}},
		{"missing file", 1, []string{"none.tsv", "does not exist"}, []string{"--in", join(dir, "none.tsv"), "--rank", "1"}},
		{"rank too large", 2, []string{"--rank 2", "min(d1, d2) = 2", "3 distinct rows and 2 distinct columns"}, []string{"--in", small, "--rank", "2"}},
		{"alpha", 2, []string{"flag -alpha", "[0, 1)"}, []string{"--in", small, "--rank", "1", "--alpha", "1.5"}},
		{"holdout", 2, []string{"flag -holdout", "[0, 1)"}, []string{"--in", small, "--rank", "1", "--holdout", "1"}},
		{"clip", 2, []string{"--clip", "lo:hi"}, []string{"--in", small, "--rank", "1", "--clip", "5"}},
		{"unknown policy", 2, []string{"flag -unknown", "error, nan or bias"}, []string{"--in", small, "--rank", "1", "--unknown", "zero"}},
		{"method", 2, []string{"--method ialm", "gd"}, []string{"--in", small, "--rank", "1", "--method", "ialm"}},
		{"p", 2, []string{"not defined: -p"}, []string{"--in", small, "--rank", "1", "--p", "0.5"}},
		{"missing predict file", 1, []string{"--predict", "nopairs.tsv", "does not exist"}, []string{"--in", small, "--rank", "1", "--predict", join(dir, "nopairs.tsv")}},
	}
	checkRobust(t, "complete", cases)
}

// TestCompleteCancel interrupts a fit after its second iteration: exit
// code 130 and no output directory or temporary files.
func TestCompleteCancel(t *testing.T) {
	dir := t.TempDir()
	in := join(dir, "ratings.tsv")
	newRatingSet(t, in, 40, 30, 0.5, 0.05, 0, 24)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOnWrite{text: "iter    2", cancel: cancel}
	code := run(ctx, &env{stdout: io.Discard, stderr: stderr}, []string{"complete", "--method", "als", "--in", in, "--header", "--rank", "2", "--out", join(dir, "m"), "--verbose"})
	if code != 130 {
		t.Errorf("exit %d, stderr %q", code, stderr.buf.String())
	}
	if got := fmt.Sprint(testfile.List(t, dir, outdir.OwnerMarker)); got != "[ratings.tsv]" {
		t.Errorf("files left after the interrupt: %v", got)
	}
	// The same in the Gibbs fit (the defaults) at its second sweep, and
	// during als's choice of the rank (--rank auto) at the first
	// candidate's second iteration.
	for _, c := range []struct{ name, method string }{{"gibbs", "gibbs"}, {"auto", "als"}} {
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		stderr = &cancelOnWrite{text: "iter    2", cancel: cancel2}
		code = run(ctx2, &env{stdout: io.Discard, stderr: stderr}, []string{"complete", "--in", in, "--header", "--method", c.method, "--out", join(dir, c.name), "--verbose"})
		if code != 130 {
			t.Errorf("%s: exit %d, stderr %q", c.name, code, stderr.buf.String())
		}
		if got := fmt.Sprint(testfile.List(t, dir, outdir.OwnerMarker)); got != "[ratings.tsv]" {
			t.Errorf("%s: files left after the interrupt: %v", c.name, got)
		}
	}
}

// TestCompleteBiases: with --biases the model is mean + user and item
// biases + a rank-r part, stored as two more columns of U and V; the
// summary reports the biases alone on the same held-out ratings, and on
// low-rank data the full model is far better than they are. The data are
// rank 4; what the biases leave is rank 4 plus the two bias directions,
// so the fit takes --rank 6. Its 1,464 degrees of freedom, fitted to
// about 5,400 noisy ratings, raise the held-out error above σ (measured
// 1.7σ), hence the bound 2σ, against 1.6σ for the plain rank-4 fit.
func TestCompleteBiases(t *testing.T) {
	dir, in := ratingFixture(t)
	const sigma = fixtureSigma
	out := join(dir, "model")
	r := mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "6", "--biases", "--holdout", "0.1", "--seed", "7", "--out", out, "--json", "--quiet")
	sum := readJSON(t, r.stdout)
	rmse, bias := sum["holdout_rmse"].(float64), sum["bias_baseline_rmse"].(float64)
	if rmse > 2*sigma || bias < 3*rmse {
		t.Errorf("held-out RMSE %.4g, biases alone %.4g", rmse, bias)
	}
	u := readNpy(t, join(out, "U.npy"))
	if _, c := u.Dims(); c != 8 {
		t.Errorf("U has %d columns, want rank 6 + 2", c)
	}
}

// TestCompleteUnknownFallsBackToBiases: with --biases --unknown bias a
// pair with an unknown user is predicted as the mean plus the item's
// bias (and an unknown item as the mean plus the user's), the summary
// counts them; --unknown bias without --biases is a usage error.
func TestCompleteUnknownFallsBackToBiases(t *testing.T) {
	dir := t.TempDir()
	in := testfile.Write(t, dir, "r.tsv", "a\tx\t5\na\ty\t3\nb\tx\t4\nb\ty\t2\nc\tx\t5\nc\ty\t3\nc\tz\t1\na\tz\t2\n")
	pairs := testfile.Write(t, dir, "p.tsv", "newuser\tx\na\tnewitem\nnewuser\tnewitem\na\ty\n")
	out := join(dir, "out")
	r := mustRun(t, "complete", "--method", "als", "--in", in, "--rank", "1", "--biases", "--unknown", "bias", "--predict", pairs, "--out", out, "--json")
	sum := readJSON(t, r.stdout)
	if sum["predictions_from_biases"] != 3.0 {
		t.Errorf("predictions_from_biases %v, want 3", sum["predictions_from_biases"])
	}
	b, err := os.ReadFile(join(out, "predictions.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("predictions %q", b)
	}
	val := func(l string) float64 {
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The unknown pair gets the mean of the 8 ratings, 25/8; the other
	// fallbacks differ from it by a bias.
	if v := val(lines[2]); math.Abs(v-25.0/8) > 1e-12 {
		t.Errorf("unknown pair predicted %v, want the mean 3.125", v)
	}
	if val(lines[0]) == val(lines[2]) || val(lines[1]) == val(lines[2]) {
		t.Errorf("half-known pairs carry no bias: %q", b)
	}
	wantError(t, 2, []string{"--unknown bias needs --biases"}, "complete", "--method", "als", "--in", in, "--rank", "1", "--unknown", "bias", "--predict", pairs, "--out", join(dir, "o2"))
}

// TestCompleteAutoRank: without --rank, complete chooses the rank and the
// ridge by validation, fits the bias model with them (U gets the two bias
// columns), reports the choice and its curve in summary.json, and
// predicts the held-out ratings of rank-3 data to within 2× the noise.
// --ridge with auto fixes the ridge: every candidate has it.
func TestCompleteAutoRank(t *testing.T) {
	dir, in := ratingFixture(t)
	const sigma = fixtureSigma
	out := join(dir, "model")
	r := mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "auto", "--holdout", "0.1", "--seed", "7", "--out", out, "--json", "--quiet")
	sum := readJSON(t, r.stdout)
	if rmse := sum["holdout_rmse"].(float64); !(rmse <= 2*sigma) {
		t.Errorf("held-out RMSE %.4g, noise %v; choice %v", rmse, sigma, sum["chosen"])
	}
	chosen, ok := sum["chosen"].(map[string]any)
	if !ok {
		t.Fatalf("summary has no choice: %v", sum)
	}
	best := chosen["best"].(map[string]any)
	rank := int(best["rank"].(float64))
	if rank < 3 || int(sum["rank"].(float64)) != rank || sum["method"] != "als" {
		t.Errorf("chose rank %d, summary rank %v, method %v", rank, sum["rank"], sum["method"])
	}
	u := readNpy(t, join(out, "U.npy"))
	if _, c := u.Dims(); c != rank+2 {
		t.Errorf("U has %d columns, want rank %d + 2 bias columns", c, rank)
	}
	r = mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "auto", "--ridge", "3", "--out", join(dir, "ridge"), "--json", "--quiet")
	for _, c := range readJSON(t, r.stdout)["chosen"].(map[string]any)["candidates"].([]any) {
		if l := c.(map[string]any)["ridge"]; l != 3.0 {
			t.Errorf("candidate with ridge %v, --ridge 3 given", l)
		}
	}
}

// TestCompleteImplicit: --implicit reaches als.Method.Implicit (the summary's
// params say so), and on generated low-rank ratings with the biases the
// fit is as good as without it: the held-out RMSE within 2σ, the
// implicit factors neither break nor degrade a model that does not need
// them, also with Huber weights.
func TestCompleteImplicit(t *testing.T) {
	dir, in := ratingFixture(t)
	const sigma = fixtureSigma
	r := mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "6", "--biases", "--implicit", "5", "--holdout", "0.1", "--seed", "7",
		"--out", join(dir, "model"), "--json", "--quiet")
	sum := readJSON(t, r.stdout)
	params, _ := sum["params"].(map[string]any)
	if params["implicit"] != 5.0 {
		t.Errorf("params %v: want implicit 5", sum["params"])
	}
	if rmse := sum["holdout_rmse"].(float64); !(rmse <= 2*sigma) {
		t.Errorf("held-out RMSE %.4g with --implicit 5, want at most %g", rmse, 2*sigma)
	}
	// With Huber weights too (the implicit step is then weighted as the
	// fits are): as good, and both reported.
	r = mustRun(t, "complete", "--method", "als", "--in", in, "--header", "--rank", "6", "--biases", "--alpha", "0.05", "--huber", "3", "--implicit", "5",
		"--holdout", "0.1", "--seed", "7", "--out", join(dir, "model2"), "--json", "--quiet")
	sum = readJSON(t, r.stdout)
	params, _ = sum["params"].(map[string]any)
	if params["implicit"] != 5.0 || params["huber"] != 3.0 {
		t.Errorf("params %v: want implicit 5 and huber 3", sum["params"])
	}
	if rmse := sum["holdout_rmse"].(float64); !(rmse <= 2*sigma) {
		t.Errorf("held-out RMSE %.4g with --implicit 5 --huber 3, want at most %g", rmse, 2*sigma)
	}
}

// TestCompleteWarnsOverfit: rank 8 without a ridge on sparse, noisy
// ratings (about 5 a column, noise σ = 1) predicts held-out ratings worse
// than their mean; complete still writes the model (the fit is what was
// asked for) but warns on stderr and in summary.json, and --quiet keeps
// stderr silent.
func TestCompleteWarnsOverfit(t *testing.T) {
	dir := t.TempDir()
	in := join(dir, "ratings.tsv")
	newRatingSet(t, in, 60, 50, 0.1, 1, 0, 4)
	args := []string{"complete", "--method", "als", "--in", in, "--header", "--rank", "8", "--holdout", "0.2", "--max-iter", "20"}
	r := runCLI(t, context.Background(), append(args, "--out", join(dir, "a"))...)
	if r.code != 0 || !strings.Contains(r.stderr, "rpca: warning: the model predicts the held-out ratings worse than the mean training rating") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	// At --max-iter 20 the sweeps stop at the cap, which is warned of too.
	q := mustRun(t, append(args, "--out", join(dir, "b"), "--quiet", "--json")...)
	if w, _ := readJSON(t, q.stdout)["warnings"].([]any); len(w) != 2 || !strings.Contains(fmt.Sprint(w[0]), "without converging") || !strings.Contains(fmt.Sprint(w[1]), "worse than the mean") {
		t.Errorf("summary warnings %v", readJSON(t, q.stdout)["warnings"])
	}
	if q.stderr != "" {
		t.Errorf("--quiet printed %q", q.stderr)
	}
}

// TestCompleteExtremeScale: ratings of a user-plus-item model times 1e300
// and times 1e-300 complete at the defaults (the Gibbs fit runs on the
// ratings divided by a power of two) with a finite summary, and predict
// the held-out ratings at least 2× better than their mean, as at scale 1.
func TestCompleteExtremeScale(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	for _, scale := range []float64{1, 1e300, 1e-300} {
		var b strings.Builder
		for u := range 60 {
			for i := range 40 {
				if rng.Float64() < 0.4 {
					fmt.Fprintf(&b, "u%d\ti%d\t%v\n", u, i, scale*(3+0.3*float64(u%5)-0.2*float64(i%4)+0.1*rng.NormFloat64()))
				}
			}
		}
		in := join(dir, fmt.Sprintf("r%g.tsv", scale))
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := readJSON(t, mustRun(t, "complete", "--in", in, "--holdout", "0.2", "--out", join(dir, fmt.Sprintf("o%g", scale)), "--json", "--quiet").stdout)
		rmse, mean := sum["holdout_rmse"].(float64), sum["baseline_rmse"].(float64)
		if sum["method"] != "gibbs" || !(rmse < mean/2) {
			t.Errorf("scale %g: %v held-out RMSE %v, the mean's %v", scale, sum["method"], rmse, mean)
		}
	}
}

// TestCompleteModelChoice: --rank alone keeps the default model (Gibbs) at
// that rank; a flag only the least-squares fit takes chooses als, and the
// summary names it; --header skips the first line of --in only, and
// --predict-header that of --predict.
func TestCompleteModelChoice(t *testing.T) {
	dir, in := ratingFixture(t)
	sum := readJSON(t, mustRun(t, "complete", "--in", in, "--header", "--rank", "4", "--out", join(dir, "g"), "--json", "--quiet").stdout)
	if sum["method"] != "gibbs" || sum["rank"] != 4.0 || sum["model_chosen_by"] != nil {
		t.Errorf("--rank 4 alone: method %v, rank %v, chosen by %v; want gibbs at rank 4", sum["method"], sum["rank"], sum["model_chosen_by"])
	}
	r := mustRun(t, "complete", "--in", in, "--header", "--rank", "4", "--ridge", "0.5", "--out", join(dir, "a"), "--quiet")
	if !strings.HasPrefix(r.stdout, "als (chosen by --ridge) on ") {
		t.Errorf("--ridge: %q", r.stdout)
	}
	// A pairs file without a header: with --header alone, all of it is
	// predicted.
	rs := readRatingsFile(t, in)
	var pairs strings.Builder
	for k := range 5 {
		fmt.Fprintf(&pairs, "%s\t%s\n", rs[k][0], rs[k][1])
	}
	p := testfile.Write(t, dir, "p.tsv", pairs.String())
	sum = readJSON(t, mustRun(t, "complete", "--in", in, "--header", "--predict", p, "--out", join(dir, "p"), "--json", "--quiet").stdout)
	if sum["predictions"] != 5.0 {
		t.Errorf("--header with a pairs file of 5 lines: %v predictions", sum["predictions"])
	}
	ph := testfile.Write(t, dir, "ph.tsv", "user\titem\n"+pairs.String())
	sum = readJSON(t, mustRun(t, "complete", "--in", in, "--header", "--predict", ph, "--predict-header", "--out", join(dir, "ph"), "--json", "--quiet").stdout)
	if sum["predictions"] != 5.0 {
		t.Errorf("--predict-header: %v predictions", sum["predictions"])
	}
}

// readRatingsFile returns the (row, col) ids of a ratings file with a
// header line.
func readRatingsFile(t *testing.T, path string) [][2]string {
	t.Helper()
	b := testfile.Read(t, path)
	var out [][2]string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		out = append(out, [2]string{f[0], f[1]})
	}
	return out
}

// TestCompleteCV: --cv K prints a row per fold, then the mean and the
// standard deviation, the model's RMSE below the biases' on low-rank
// ratings; --json gives the same figures; it writes nothing; and the
// flags it cannot combine with are usage errors.
func TestCompleteCV(t *testing.T) {
	_, in := ratingFixture(t)
	r := mustRun(t, "complete", "--in", in, "--header", "--cv", "3", "--rank", "4", "--quiet")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[4], "mean") || !strings.HasPrefix(lines[5], "std") {
		t.Fatalf("table %q", r.stdout)
	}
	var mean [4]float64
	if _, err := fmt.Sscanf(strings.TrimPrefix(lines[4], "mean"), "%f %f %f %f", &mean[0], &mean[1], &mean[2], &mean[3]); err != nil || !(mean[0] < mean[2]) {
		t.Errorf("mean row %q (%v): want the model's RMSE below the biases'", lines[4], err)
	}
	j := mustRun(t, "complete", "--in", in, "--header", "--cv", "3", "--rank", "4", "--quiet", "--json")
	sum := readJSON(t, j.stdout)
	folds, _ := sum["folds"].([]any)
	m, _ := sum["mean"].(map[string]any)
	if len(folds) != 3 || m == nil || fmt.Sprintf("%.4f", m["rmse"]) != fmt.Sprintf("%.4f", mean[0]) || sum["model"] != "gibbs" {
		t.Errorf("JSON %v: want 3 folds and the table's mean RMSE %.4f", sum, mean[0])
	}
	wantError(t, 2, []string{"--cv needs at least 2 folds"}, "complete", "--in", in, "--header", "--cv", "1")
	wantError(t, 2, []string{"--cv", "drop --out"}, "complete", "--in", in, "--header", "--cv", "3", "--out", join(t.TempDir(), "o"))
}
