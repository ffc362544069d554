package video

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lowRankPlusSparse returns a d1×d2 matrix of rank r with singular values
// near sv (random, nearly orthogonal factors) plus spikes of +1 at random
// entries.
func lowRankPlusSparse(rng *rand.Rand, d1, d2 int, sv []float64, spikes int) *mat.Dense {
	y := mat.NewDense(d1, d2, nil)
	for _, s := range sv {
		u := make([]float64, d1)
		v := make([]float64, d2)
		for i := range u {
			u[i] = rng.NormFloat64() / math.Sqrt(float64(d1))
		}
		for j := range v {
			v[j] = rng.NormFloat64() / math.Sqrt(float64(d2))
		}
		var o mat.Dense
		o.Outer(s, mat.NewVecDense(d1, u), mat.NewVecDense(d2, v))
		y.Add(y, &o)
	}
	for k := 0; k < spikes; k++ {
		i, j := rng.IntN(d1), rng.IntN(d2)
		y.Set(i, j, y.At(i, j)+1)
	}
	return y
}

func TestChooseRankSpectrumMatchesSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	y := mat.NewDense(300, 40, nil)
	for i := 0; i < 300; i++ {
		for j := 0; j < 40; j++ {
			y.Set(i, j, rng.Float64())
		}
	}
	c, err := ChooseRank(context.Background(), y, 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	var svd mat.SVD
	if !svd.Factorize(y, mat.SVDNone) {
		t.Fatal("SVD failed")
	}
	want := svd.Values(nil)
	if len(c.Sigma) != 13 {
		t.Fatalf("%d singular values, want 13", len(c.Sigma))
	}
	// The Gram route squares the condition number: with σ₁ ≈ 100 and the
	// others ≥ 2, relative errors stay far below 1e-8.
	for k, s := range c.Sigma {
		if math.Abs(s-want[k]) > 1e-8*want[0] {
			t.Errorf("σ%d = %.12g, SVD gives %.12g", k+1, s, want[k])
		}
	}
	if c.Frames != 40 || c.Pixels != 300 {
		t.Errorf("sample %d frames × %d pixels, want all 40 × 300", c.Frames, c.Pixels)
	}
	// A uniform random matrix: one dominant value (the mean), then a flat
	// spectrum.
	if c.Rank != 1 {
		t.Errorf("rank %d on a random matrix, want 1 (%s)", c.Rank, c.Reason())
	}
}

func TestChooseRankLowRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name    string
		d1, d2  int
		sv      []float64
		spikes  int
		maxRank int
		want    int
	}{
		// Exactly rank 3: σ4 = 0 ends the search.
		{"exact rank 3", 200, 30, []float64{50, 20, 10}, 0, 10, 3},
		// Rank 3 under a dominant first value and sparse spikes: the last
		// clear gap, not the largest, decides.
		{"rank 3 with spikes", 400, 60, []float64{1000, 30, 25}, 40, 10, 3},
		{"capped", 400, 60, []float64{1000, 30, 25}, 40, 2, 1},
		// More frames than DefaultRankFrames: the sampled spectrum still
		// shows the rank.
		{"sampled frames", 100, DefaultRankFrames + 150, []float64{80, 40}, 30, 10, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := lowRankPlusSparse(rng, tc.d1, tc.d2, tc.sv, tc.spikes)
			c, err := ChooseRank(context.Background(), y, tc.maxRank, 0)
			if err != nil {
				t.Fatal(err)
			}
			if c.Rank != tc.want {
				t.Errorf("rank %d, want %d (%s)", c.Rank, tc.want, c.Reason())
			}
			if tc.spikes == 0 && !math.IsInf(c.Gap, 1) {
				t.Errorf("exactly low-rank: gap %v, want +Inf", c.Gap)
			}
			if c.Frames > DefaultRankFrames {
				t.Errorf("spectrum from %d frames, above the cap %d", c.Frames, DefaultRankFrames)
			}
		})
	}
}

func TestChooseRankErrors(t *testing.T) {
	if _, err := ChooseRank(context.Background(), mat.NewDense(10, 1, nil), 0, 0); err == nil {
		t.Error("one frame: no error")
	}
	y := mat.NewDense(10, 5, nil)
	y.Set(0, 0, math.NaN())
	if _, err := ChooseRank(context.Background(), y, 0, 0); err == nil {
		t.Error("NaN: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ChooseRank(ctx, mat.NewDense(10, 5, nil), 0, 0); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

func TestMedianBackground(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 8} {
		y := mat.NewDense(50, n, nil)
		for i := 0; i < 50; i++ {
			for j := 0; j < n; j++ {
				y.Set(i, j, float64(rng.IntN(5))) // many ties
			}
		}
		med, err := MedianBackground(context.Background(), y)
		if err != nil {
			t.Fatal(err)
		}
		// By definition: for odd n, at least (n+1)/2 values ≤ m and ≥ m;
		// for even n, m is halfway between the n/2-th and the n/2+1-th
		// smallest, found here by counting.
		for i := 0; i < 50; i++ {
			m := med.AtVec(i)
			row := y.RawRowView(i)
			kth := func(k int) float64 { // k-th smallest (1-based) by counting
				for _, v := range row {
					less, eq := 0, 0
					for _, w := range row {
						if w < v {
							less++
						} else if w == v {
							eq++
						}
					}
					if less < k && k <= less+eq {
						return v
					}
				}
				return math.NaN()
			}
			want := kth((n + 1) / 2)
			if n%2 == 0 {
				want = (kth(n/2) + kth(n/2+1)) / 2
			}
			if m != want {
				t.Fatalf("n=%d row %d: median %v, want %v (row %v)", n, i, m, want, row)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MedianBackground(ctx, mat.NewDense(3, 3, nil)); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

// atOnly hides a matrix's type, so that ChooseRank reads it by At.
type atOnly struct{ mat.Matrix }

// TestChooseRankDenseSample: the tiled sample of a *mat.Dense is the
// sample At reads, so the singular values are the same to the bit, with
// more pixels than the sample takes (evenly spaced rows) and a strided
// view.
func TestChooseRankDenseSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 2))
	y := mat.NewDense(50001, 33, nil)
	for i := range y.RawMatrix().Data {
		y.RawMatrix().Data[i] = rng.NormFloat64()
	}
	for _, m := range []*mat.Dense{y, y.Slice(0, 50001, 2, 30).(*mat.Dense)} {
		fast, err := ChooseRank(context.Background(), m, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := ChooseRank(context.Background(), atOnly{m}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if fast.Pixels != DefaultRankPixels || len(fast.Sigma) != len(slow.Sigma) {
			t.Fatalf("%d pixels, %d and %d values", fast.Pixels, len(fast.Sigma), len(slow.Sigma))
		}
		for k := range fast.Sigma {
			if fast.Sigma[k] != slow.Sigma[k] {
				t.Fatalf("σ%d: %v from the tiled sample, %v by At", k+1, fast.Sigma[k], slow.Sigma[k])
			}
		}
	}
}
