package video

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/video/frames"
)

// trackingSubtractor returns a Subtractor of a gray 40×30 geometry whose
// model is the constant plus k random directions orthogonal to it, as a
// fit would leave it ([withConstants] with the constants first).
func trackingSubtractor(t *testing.T, k int, track float64, rng *rand.Rand) *Subtractor {
	t.Helper()
	g := frames.Geometry{Width: 40, Height: 30}
	s, err := NewSubtractor(g, StreamOptions{Track: track})
	if err != nil {
		t.Fatal(err)
	}
	cols := mat.NewDense(g.Rows(), k, nil)
	for i := range g.Rows() {
		for c := range k {
			cols.Set(i, c, rng.NormFloat64())
		}
	}
	s.basisT = mat.DenseCopyOf(orthonormal(withConstants(cols, g, true)).T())
	return s
}

// distance returns the distance of x from the span of the rows of the
// orthonormal basisT, by a least-squares fit through gonum's QR (not the
// Gram–Schmidt the code uses).
func distance(basisT *mat.Dense, x []float64) float64 {
	var coef mat.Dense
	if err := coef.Solve(basisT.T(), mat.NewVecDense(len(x), x)); err != nil {
		panic(err)
	}
	var fit mat.VecDense
	fit.MulVec(basisT.T(), coef.ColView(0))
	r := make([]float64, len(x))
	floats.SubTo(r, x, fit.RawVector().Data)
	return floats.Norm(r, 2)
}

// frameOff returns a frame in the model's span plus a part outside it
// whose entries are about ±a (signs at random, projected off the model),
// so that the Huber fit clips none of them (its clip is 3 robust spreads,
// about 4.4a), and that part.
func frameOff(s *Subtractor, a float64, rng *rand.Rand) (y, off []float64) {
	k, rows := s.basisT.Dims()
	y, off = make([]float64, rows), make([]float64, rows)
	for i := range off {
		off[i] = a * float64(2*rng.IntN(2)-1)
	}
	for range 2 {
		for c := range k {
			b := s.basisT.RawRowView(c)
			floats.AddScaled(off, -floats.Dot(b, off), b)
		}
	}
	for c := range k {
		floats.AddScaled(y, 0.5+rng.Float64(), s.basisT.RawRowView(c))
	}
	floats.Add(y, off)
	return y, off
}

// TestTrackStep checks GRASTA's geodesic step against what it must do,
// measured independently (distances by gonum's QR):
//   - Track = 1 turns the model until the frame lies in it (the angle
//     arctan(‖p‖/‖w_Q‖) is the one that takes Q·w_Q + p in), so the
//     frame's distance from the new span is rounding (1e-12 of ‖y‖);
//   - Track = ½ turns it half way: in the plane of Q·ŵ and p̂ the frame's
//     part Q·w_Q + p is then at the angle θ*/2 from the model, so its
//     distance is ‖Q·w_Q + p‖·sin(θ*/2), to 1e-10 relative;
//   - the basis stays orthonormal (1e-13) and its constant, first, row
//     is not touched, bit for bit;
//   - a frame's spike of 10⁴ times the rest moves the model by the
//     clipped amount only: within 5% of the same frame's step without it.
func TestTrackStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, k := range []int{1, 3} {
		for _, track := range []float64{1, 0.5} {
			s := trackingSubtractor(t, k, track, rng)
			y, off := frameOff(s, 0.01, rng)
			before := mat.DenseCopyOf(s.basisT)
			fit, w := s.project(y, &s.buf)
			// The part of the frame that the fitted directions and the
			// off-model part make: Q·w_Q + p, and θ*.
			part := make([]float64, len(y))
			for c := 1; c <= k; c++ {
				floats.AddScaled(part, w[c], before.RawRowView(c))
			}
			floats.Add(part, off)
			thetaStar := math.Atan2(floats.Norm(off, 2), floats.Norm(w[1:], 2))
			s.trackStep(y, fit, w, nil)
			got := distance(s.basisT, y)
			want := floats.Norm(part, 2) * math.Sin((1-track)*thetaStar)
			if math.Abs(got-want) > 1e-10*floats.Norm(y, 2) {
				t.Errorf("k=%d, track %g: distance %.6g, want %.6g (θ* %.4f)", k, track, got, want, thetaStar)
			}
			var gram mat.Dense
			gram.Mul(s.basisT, s.basisT.T())
			for i := range k + 1 {
				for j := range k + 1 {
					if e := gram.At(i, j) - b2f(i == j); math.Abs(e) > 1e-13 {
						t.Errorf("k=%d, track %g: BBᵀ[%d,%d] off by %.3g", k, track, i, j, e)
					}
				}
			}
			for i, v := range s.basisT.RawRowView(0) {
				if v != before.At(0, i) {
					t.Fatalf("k=%d, track %g: the constant row changed at %d", k, track, i)
				}
			}
		}
	}

	// A spike: the same frame with and without it.
	moved := func(spike bool) float64 {
		rng := rand.New(rand.NewPCG(9, 9))
		s := trackingSubtractor(t, 2, 0.5, rng)
		y, _ := frameOff(s, 0.01, rng)
		if spike {
			y[17] += 100
		}
		before := mat.DenseCopyOf(s.basisT)
		fit, w := s.project(y, &s.buf)
		s.trackStep(y, fit, w, nil)
		var d mat.Dense
		d.Sub(s.basisT, before)
		return mat.Norm(&d, 2)
	}
	clean, spiked := moved(false), moved(true)
	if !(clean > 0) || math.Abs(spiked-clean) > 0.05*clean {
		t.Errorf("the model moved by %.4g with a spike, %.4g without", spiked, clean)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
