package video

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lowRankRows returns a d1×d2 matrix of rank k with entries of order 1,
// its row-space basis, and the same matrix with trim entries per row
// replaced by gross outliers (±(3…5)).
func lowRankRows(rng *rand.Rand, d1, d2, k, trim int) (clean, corrupt, q *mat.Dense) {
	u := mat.NewDense(d1, k, nil)
	v := mat.NewDense(d2, k, nil)
	for i := range d1 {
		for c := range k {
			u.Set(i, c, rng.NormFloat64())
		}
	}
	for j := range d2 {
		for c := range k {
			v.Set(j, c, rng.NormFloat64())
		}
	}
	clean = mat.NewDense(d1, d2, nil)
	clean.Mul(u, v.T())
	corrupt = mat.DenseCopyOf(clean)
	for i := range d1 {
		for _, j := range rng.Perm(d2)[:trim] {
			sign := float64(1 - 2*rng.IntN(2))
			corrupt.Set(i, j, corrupt.At(i, j)+sign*(3+2*rng.Float64()))
		}
	}
	q, err := rowSpace(v)
	if err != nil {
		panic(err)
	}
	return clean, corrupt, q
}

// TestFitRowsRecoversPlanted: rows of an exactly low-rank matrix with
// trim gross outliers each are fitted back to the clean rows, to
// rounding (1e-9: a few Cholesky solves of a well-conditioned k×k
// system on values of order 1).
func TestFitRowsRecoversPlanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 3} {
		clean, corrupt, q := lowRankRows(rng, 500, 60, k, 6)
		fit, st, err := FitRows(context.Background(), corrupt, q, 6, 2)
		if err != nil {
			t.Fatal(err)
		}
		m := fit.Dense()
		if st.Unsettled != 0 || st.Rows != 500 || st.Rank != k {
			t.Errorf("k=%d: stats %+v", k, st)
		}
		var d mat.Dense
		d.Sub(m, clean)
		if e := mat.Norm(&d, math.Inf(1)); e > 1e-9 {
			t.Errorf("k=%d: largest error %.3g", k, e)
		}
	}
}

// trimmedLS returns the least-squares coefficients of y on the rows of q
// listed in keep and their sum of squared residuals, by gonum's solver.
func trimmedLS(t *testing.T, q *mat.Dense, y []float64, keep []int) (*mat.VecDense, float64) {
	t.Helper()
	_, k := q.Dims()
	a := mat.NewDense(len(keep), k, nil)
	b := mat.NewVecDense(len(keep), nil)
	for r, j := range keep {
		a.SetRow(r, q.RawRowView(j))
		b.SetVec(r, y[j])
	}
	var u mat.VecDense
	if err := u.SolveVec(a, b); err != nil {
		t.Fatal(err)
	}
	var res mat.VecDense
	res.MulVec(a, &u)
	res.SubVec(b, &res)
	return &u, mat.Dot(&res, &res)
}

// TestFitRowsIsConcentrationFixedPoint: on rows without structure (where
// the trimmed problem has many local minima), every row's fit is a fixed
// point of the concentration step, checked independently: the kept
// entries are the d2 − trim smallest residuals of the fit, and the fit
// is gonum's least-squares solution on them. On rows of 10 frames with
// 2 set aside, it is also compared with the exhaustive minimum over all
// 45 kept sets: it may be a local minimum, never below the global one.
func TestFitRowsIsConcentrationFixedPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d1, d2, k, trim = 40, 10, 2, 2
	y := mat.NewDense(d1, d2, nil)
	for i := range d1 {
		for j := range d2 {
			y.Set(i, j, rng.NormFloat64())
		}
	}
	v := mat.NewDense(d2, k, nil)
	for j := range d2 {
		v.Set(j, 0, 1)
		v.Set(j, 1, float64(j))
	}
	q, err := rowSpace(v)
	if err != nil {
		t.Fatal(err)
	}
	fit, _, err := FitRows(context.Background(), y, q, trim, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := fit.Dense()
	global := 0
	for i := range d1 {
		yi, mi := y.RawRowView(i), m.RawRowView(i)
		order := make([]int, d2)
		for j := range order {
			order[j] = j
		}
		sort.SliceStable(order, func(a, b int) bool {
			return math.Abs(yi[order[a]]-mi[order[a]]) < math.Abs(yi[order[b]]-mi[order[b]])
		})
		keep := slices.Clone(order[:d2-trim])
		slices.Sort(keep)
		u, sse := trimmedLS(t, q, yi, keep)
		var fit mat.VecDense
		fit.MulVec(q, u)
		for j := range d2 {
			if math.Abs(fit.AtVec(j)-mi[j]) > 1e-10 {
				t.Fatalf("row %d: fit %v is not the least-squares fit %v on its kept set", i, mi, fit.RawVector().Data)
			}
		}
		best := math.Inf(1)
		for a := 0; a < d2; a++ {
			for b := a + 1; b < d2; b++ {
				var ks []int
				for j := range d2 {
					if j != a && j != b {
						ks = append(ks, j)
					}
				}
				_, s := trimmedLS(t, q, yi, ks)
				best = min(best, s)
			}
		}
		if sse < best-1e-10 {
			t.Fatalf("row %d: trimmed SSE %.6g below the exhaustive minimum %.6g", i, sse, best)
		}
		if sse <= best+1e-10 {
			global++
		}
	}
	t.Logf("%d of %d rows at the global minimum", global, d1)
	if global < d1/2 {
		t.Errorf("only %d of %d rows at the global minimum", global, d1)
	}
}

// TestFitRowsNoTrim: with nothing set aside the fit is the orthogonal
// projection onto the row space, y·q·qᵀ.
func TestFitRowsNoTrim(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	_, y, q := lowRankRows(rng, 30, 20, 2, 3)
	fit, st, err := FitRows(context.Background(), y, q, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := fit.Dense()
	var p, want mat.Dense
	p.Mul(q, q.T())
	want.Mul(y, &p)
	if !mat.EqualApprox(m, &want, 1e-12) || st.Steps != 0 {
		t.Errorf("trim 0: not the projection (steps %d)", st.Steps)
	}
}

// TestFitRowsUndetermined: a component that lives on one frame is not
// determined once that frame is set aside (here by the tie rule: the fit
// on all frames is exact, so every residual is 0 and the first frame goes);
// the row keeps its last finite fit and counts as unsettled.
func TestFitRowsUndetermined(t *testing.T) {
	v := mat.NewDense(8, 2, nil)
	for j := range 8 {
		v.Set(j, 0, 1)
	}
	v.Set(0, 1, 1)
	q, err := rowSpace(v)
	if err != nil {
		t.Fatal(err)
	}
	y := mat.NewDense(1, 8, []float64{9, 1, 1, 1, 1, 1, 1, 1})
	fit, st, err := FitRows(context.Background(), y, q, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := fit.Dense()
	if st.Unsettled != 1 {
		t.Errorf("stats %+v, want the row unsettled", st)
	}
	if !mat.EqualApprox(m, y, 1e-12) {
		t.Errorf("fit %v, want the exact fit on all frames %v", m.RawRowView(0), y.RawRowView(0))
	}
}

func TestFitRowsErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	_, y, q := lowRankRows(rng, 600, 20, 2, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := FitRows(ctx, y, q, 3, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, _, err := FitRows(context.Background(), y, q, 19, 2); err == nil {
		t.Error("19 of 20 frames set aside at rank 2: no error")
	}
	if _, err := rowSpace(mat.NewDense(5, 2, nil)); !errors.Is(err, ErrNoRowSpace) {
		t.Errorf("zero factor: %v", err)
	}
}

// TestRowSpace: the basis is orthonormal and spans the factor's columns;
// a dependent column is dropped.
func TestRowSpace(t *testing.T) {
	v := mat.NewDense(6, 3, []float64{
		1, 2, 3,
		0, 1, 1,
		2, 0, 2,
		1, 1, 2,
		3, 1, 4,
		0, 2, 2,
	}) // column 3 = column 1 + column 2
	q, err := rowSpace(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, k := q.Dims(); k != 2 {
		t.Fatalf("rank %d, want 2", k)
	}
	var g, p, r mat.Dense
	g.Mul(q.T(), q)
	if !mat.EqualApprox(&g, eye(2), 1e-12) {
		t.Errorf("qᵀq = %v", mat.Formatted(&g))
	}
	p.Mul(q, q.T())
	r.Mul(&p, v)
	if !mat.EqualApprox(&r, v, 1e-12) {
		t.Error("q·qᵀ·v ≠ v")
	}
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

func TestSketchRows(t *testing.T) {
	if sketchRows(100, 0, 1) != nil || sketchRows(100, 100, 1) != nil || sketchRows(100, -1, 1) != nil {
		t.Error("no sketch expected for n ≤ 0 or n ≥ d1")
	}
	a, b := sketchRows(1000, 300, 9), sketchRows(1000, 300, 9)
	if !slices.Equal(a, b) {
		t.Error("not reproducible by seed")
	}
	if slices.Equal(a, sketchRows(1000, 300, 10)) {
		t.Error("seed 9 and 10 draw the same rows")
	}
	if len(a) != 300 || !slices.IsSorted(a) || a[0] < 0 || a[len(a)-1] >= 1000 {
		t.Fatalf("bad rows: len %d", len(a))
	}
	for i := 1; i < len(a); i++ {
		if a[i] == a[i-1] {
			t.Fatalf("row %d drawn twice", a[i])
		}
	}
}

// BenchmarkFitRows fits the rows of a 320×240 gray clip (76800 rows):
//   - batch: 200 frames at rank 2 with 40 frames set aside per row, a
//     tenth of the rows with 20 gross outliers;
//   - stream: the stream's fit, 100 frames at rank 1 with the default
//     trim (49 frames), a tenth of the rows covered by an object for a
//     run of 10 to 40 frames, and noise of 1% everywhere (so that the
//     C-steps do not settle at once, as on real footage).
func BenchmarkFitRows(b *testing.B) {
	b.Run("batch", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 1))
		_, y, q := lowRankRows(rng, 76800, 200, 2, 0)
		for i := 0; i < 76800; i += 10 {
			row := y.RawRowView(i)
			for _, j := range rng.Perm(200)[:20] {
				row[j] += 4
			}
		}
		addNoise(rng, y, 0.01)
		benchFitRows(b, y, q, 40)
	})
	b.Run("stream", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		_, y, q := lowRankRows(rng, 76800, 100, 1, 0)
		for i := 0; i < 76800; i += 10 {
			row := y.RawRowView(i)
			n := 10 + rng.IntN(31)
			j0 := rng.IntN(100 - n)
			for j := j0; j < j0+n; j++ {
				row[j] += 4
			}
		}
		addNoise(rng, y, 0.01)
		benchFitRows(b, y, q, rowTrim(0.1, 100, 1))
	})
}

// addNoise adds Gaussian noise of standard deviation sd to every entry.
func addNoise(rng *rand.Rand, y *mat.Dense, sd float64) {
	d1, _ := y.Dims()
	for i := range d1 {
		row := y.RawRowView(i)
		for j := range row {
			row[j] += sd * rng.NormFloat64()
		}
	}
}

// benchFitRows times FitRows on y and q, setting aside trim frames a row.
func benchFitRows(b *testing.B, y, q *mat.Dense, trim int) {
	for b.Loop() {
		if _, _, err := FitRows(context.Background(), y, q, trim, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMasksLazyResidual: the masks of a lazily read residual Y − M with a
// LowRank M (the sketch's path, which derives the residual from the
// gathered frames and background) equal those of the residual formed in
// full.
func TestMasksLazyResidual(t *testing.T) {
	c, err := Generate(SceneShadows, GenerateOptions{Width: 40, Height: 30, Frames: 40, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := mat.NewDense(40, 1, nil)
	for j := range 40 {
		v.Set(j, 0, 1)
	}
	q, err := rowSpace(v)
	if err != nil {
		t.Fatal(err)
	}
	bg, _, err := FitRows(context.Background(), c.Y, q, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	var r mat.Dense
	r.Sub(c.Y, bg.Dense())
	want, wrep, err := Masks(context.Background(), &r, c.Y, bg.Dense(), c.Geometry, MaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, grep, err := Masks(context.Background(), residual{c.Y, bg}, c.Y, bg, c.Geometry, MaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Data, want.Data) || grep.Shadow != wrep.Shadow || wrep.Shadow == 0 {
		t.Errorf("lazy residual: masks differ (shadow pixels %d, want %d > 0)", grep.Shadow, wrep.Shadow)
	}
}

// TestFitRowsWorkers: the rows' fits start from their left neighbour's
// kept set within a block of rows, never across blocks, so the result is
// the same, bit for bit, whatever the number of workers.
func TestFitRowsWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	_, corrupt, q := lowRankRows(rng, 700, 40, 2, 12)
	var first *mat.Dense
	for _, w := range []int{1, 2, 3} {
		fit, _, err := FitRows(context.Background(), corrupt, q, 15, w)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = fit.U
			continue
		}
		if !mat.Equal(first, fit.U) {
			t.Fatalf("%d workers: a different fit from 1 worker's", w)
		}
	}
}

// TestRowTrimHalfCovered: a pixel that an object covers in 40% of the
// frames (a busy lane, an object that stops) keeps its background with
// the row trim of highest breakdown, rowTrim (99 of 200 at rank 1),
// and loses it with a trim of α·frames (40 at α = 0.2): the fit follows
// the object.
func TestRowTrimHalfCovered(t *testing.T) {
	if got := rowTrim(0.2, 200, 1); got != 99 {
		t.Errorf("rowTrim(0.2, 200, 1) = %d, want 99", got)
	}
	if got := rowTrim(0, 200, 1); got != 0 {
		t.Errorf("rowTrim(0, 200, 1) = %d, want 0 (α = 0: no corruptions)", got)
	}
	const d1, d2 = 300, 200
	rng := rand.New(rand.NewPCG(7, 8))
	weights := mat.NewDense(d2, 1, nil)
	for j := range d2 {
		weights.Set(j, 0, 1+0.1*math.Sin(float64(j)/9)) // slowly varying light
	}
	q, err := rowSpace(weights)
	if err != nil {
		t.Fatal(err)
	}
	clean, y := mat.NewDense(d1, d2, nil), mat.NewDense(d1, d2, nil)
	for i := range d1 {
		bg := 0.2 + 0.6*rng.Float64()
		start := rng.IntN(d2)
		for j := range d2 {
			clean.Set(i, j, bg*weights.At(j, 0))
			y.Set(i, j, clean.At(i, j))
			if (j-start+d2)%d2 < 80 { // 80 consecutive frames of an object
				y.Set(i, j, 0.05+0.9*rng.Float64())
			}
		}
	}
	errorOf := func(trim int) float64 {
		fit, _, err := FitRows(context.Background(), y, q, trim, 2)
		if err != nil {
			t.Fatal(err)
		}
		var d mat.Dense
		d.Sub(fit.Dense(), clean)
		return mat.Norm(&d, math.Inf(1))
	}
	if e := errorOf(rowTrim(0.2, d2, 1)); e > 1e-9 {
		t.Errorf("rowTrim: largest error %.3g; want the background to rounding", e)
	}
	if e := errorOf(int(0.2 * d2)); e < 0.01 {
		t.Errorf("α·frames: largest error %.3g; the test's object should pull such a fit", e)
	}
}

// TestChooseObvious: the concentration step's choice of the set-aside
// entries (rowFitter.choose) against sorting: the trim largest |res|,
// ties set aside in order of position. Residuals are drawn from a few
// levels so that ties are common, and each row is chosen from scratch,
// then again after its residuals are perturbed (the selection then runs
// on the entries between the old set's bounds only). A choice reported
// as unchanged must leave a set that is still a largest-trim set, and
// at least 50 of the 900 choices after a perturbation must move it.
func TestChooseObvious(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const d2 = 37
	q := mat.NewDense(d2, 1, nil)
	for _, trim := range []int{1, 5, 18, 30, d2 - 1} {
		f := newRowFitter(q, trim)
		changed := 0
		for range 300 {
			clear(f.kept)
			f.outIdx = f.outIdx[:0]
			for j := range f.res {
				f.res[j] = float64(rng.IntN(12) - 6)
			}
			for step := range 4 {
				if step > 0 {
					for range 1 + rng.IntN(6) {
						f.res[rng.IntN(d2)] = float64(rng.IntN(12)-6) + 0.5*float64(rng.IntN(2))
					}
				}
				old := slices.Clone(f.outIdx)
				moved := f.choose()
				got := slices.Sorted(slices.Values(f.outIdx))
				for j := range d2 {
					if want := float64(b2i(!slices.Contains(got, j))); f.kept[j] != want {
						t.Fatalf("trim %d: kept[%d] = %v, set aside %v", trim, j, f.kept[j], got)
					}
				}
				if !moved {
					if step == 0 || !slices.Equal(old, f.outIdx) || !largestSet(f.res, got, trim) {
						t.Fatalf("trim %d: set %v reported unchanged for residuals %v", trim, got, f.res)
					}
					continue
				}
				if step > 0 {
					changed++
				}
				order := make([]int, d2)
				for j := range order {
					order[j] = j
				}
				sort.SliceStable(order, func(a, b int) bool { return math.Abs(f.res[order[a]]) > math.Abs(f.res[order[b]]) })
				want := slices.Sorted(slices.Values(order[:trim]))
				if !slices.Equal(got, want) {
					t.Fatalf("trim %d: set aside %v, want %v for residuals %v", trim, got, want, f.res)
				}
			}
		}
		if changed < 50 {
			t.Errorf("trim %d: only %d of 900 choices after a perturbation moved the set; the band path is barely tested", trim, changed)
		}
	}
}

// largestSet reports whether the entries out (trim of them) hold trim
// largest |res|: none of them is smaller than an entry outside.
func largestSet(res []float64, out []int, trim int) bool {
	if len(out) != trim {
		return false
	}
	lo := math.Inf(1)
	for _, j := range out {
		lo = min(lo, math.Abs(res[j]))
	}
	for j, r := range res {
		if !slices.Contains(out, j) && math.Abs(r) > lo {
			return false
		}
	}
	return true
}
