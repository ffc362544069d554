package video

import (
	"math"
	"math/rand/v2"
	"slices"
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
	return modelSubtractor(t, frames.Geometry{Width: 40, Height: 30}, k, track, rng)
}

// modelSubtractor is trackingSubtractor for the geometry g, whose model
// holds a constant per channel.
func modelSubtractor(t *testing.T, g frames.Geometry, k int, track float64, rng *rand.Rand) *Subtractor {
	t.Helper()
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
			fit, w := s.project(y, &s.buf, 0)
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
		fit, w := s.project(y, &s.buf, 0)
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

// TestProjectObvious: the robust projection of a frame equals the
// obvious winsorised least squares, fitted by gonum's QR each round
// without assuming the basis orthonormal: the fit of the frame with its
// residual clipped at projectClip times 1.4826 times the median absolute
// residual of the strided sample, projectRounds times after a first
// plain fit. The frame is a colour 200×120 one (72,000 entries: a sample
// stride of 3, and 71 blocks, the last one short) in the span of the
// constants and three directions, plus noise, and bright and dark
// objects on 12% of it, so that the clip binds on both sides. The two
// differ by rounding alone (the clip moves continuously with the fit);
// the tolerance, 1e-9 of the frame's largest value, leaves room for
// that and none for a round or a block dropped. The answer is the same to
// the bit on one goroutine or several.
func TestProjectObvious(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	g := frames.Geometry{Width: 200, Height: 120, Color: true}
	s := modelSubtractor(t, g, 3, 0, rng)
	rows := g.Rows()
	k, _ := s.basisT.Dims()
	y := make([]float64, rows)
	for c := range k {
		floats.AddScaled(y, 100*rng.NormFloat64(), s.basisT.RawRowView(c))
	}
	clipped := 0
	for i := range y {
		y[i] += 0.01 * rng.NormFloat64()
		if rng.Float64() < 0.12 {
			y[i] += float64(2*rng.IntN(2)-1) * (0.5 + rng.Float64())
			clipped++
		}
	}

	// The obvious way.
	bt := s.basisT.T()
	yc := slices.Clone(y)
	fit := make([]float64, rows)
	for round := 0; ; round++ {
		var coef mat.VecDense
		if err := coef.SolveVec(bt, mat.NewVecDense(rows, yc)); err != nil {
			t.Fatal(err)
		}
		var f mat.VecDense
		f.MulVec(bt, &coef)
		copy(fit, f.RawVector().Data)
		if round == projectRounds {
			break
		}
		lim := obviousClip(y, fit)
		beyond := 0
		for i, v := range y {
			r := v - fit[i]
			yc[i] = fit[i] + min(max(r, -lim), lim)
			if math.Abs(r) > lim {
				beyond++
			}
		}
		if beyond < clipped/2 {
			t.Fatalf("round %d clips %d entries, fewer than half the %d objects': the test would not test the clip", round, beyond, clipped)
		}
	}

	got, w := s.project(y, &s.buf, 1)
	if len(w) != k {
		t.Fatalf("%d coefficients, want %d", len(w), k)
	}
	// The same bits on any number of goroutines.
	for _, workers := range []int{2, 3, 8} {
		var other projectBuf
		f, ow := s.project(y, &other, workers)
		if !slices.Equal(f, got) || !slices.Equal(ow, w) {
			t.Fatalf("%d goroutines: not the answer of one", workers)
		}
	}
	tol := 1e-9 * floats.Norm(y, math.Inf(1))
	for i := range got {
		if math.Abs(got[i]-fit[i]) > tol {
			t.Fatalf("entry %d: %.12g, the obvious fit %.12g (tolerance %.3g)", i, got[i], fit[i], tol)
		}
	}
}

// obviousClip is the Huber fit's clip for the residual y − fit:
// projectClip times 1.4826 times the median absolute residual over the
// entries at an even stride of len(y)/projectSample (at least 1), sorted.
func obviousClip(y, fit []float64) float64 {
	var abs []float64
	for i := 0; i < len(y); i += max(1, len(y)/projectSample) {
		abs = append(abs, math.Abs(y[i]-fit[i]))
	}
	slices.Sort(abs)
	n := len(abs)
	med := abs[n/2]
	if n%2 == 0 {
		med = (abs[n/2-1] + abs[n/2]) / 2
	}
	return projectClip * max(1.4826*med, MinNoise)
}

// TestTrackStepObvious: the tracking step on a colour 200×120 frame
// (72,000 entries, five chunks of its passes) with a foreground mask
// moves the basis as the step's formula written with gonum's matrices
// does: γ the residual clipped at the fit's clip and zeroed on the mask
// in every channel, p = (I − BᵀB)γ twice, θ = Track·atan(‖p‖/‖w_Q‖), Q ←
// Q + ((cos θ − 1)·Q·ŵ + sin θ·p̂)·ŵᵀ. The two differ by rounding in
// sums of 72,000 terms (1e-12 of the basis's entries, about 4e-3, leaves
// a factor of 10⁴ over it), and the constants' rows stay bit for bit.
func TestTrackStepObvious(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	g := frames.Geometry{Width: 200, Height: 120, Color: true}
	s := modelSubtractor(t, g, 2, 0.7, rng)
	rows, nc := g.Rows(), g.Channels()
	k, _ := s.basisT.Dims()
	y := make([]float64, rows)
	for i := range y {
		y[i] = 100 + 10*rng.NormFloat64()
	}
	mask := make([]float64, g.Pixels())
	for i := range mask {
		if i%200 < 30 && i/200 < 40 { // a 30×40 object
			mask[i] = 1
		}
	}
	before := mat.DenseCopyOf(s.basisT)
	fit, w := s.project(y, &s.buf, 0)

	// The obvious step.
	lim := obviousClip(y, fit)
	gamma := mat.NewVecDense(rows, nil)
	for i := range rows {
		if mask[i%len(mask)] == 0 {
			gamma.SetVec(i, min(max(y[i]-fit[i], -lim), lim))
		}
	}
	for range 2 {
		var h, bh mat.VecDense
		h.MulVec(before, gamma)
		bh.MulVec(before.T(), &h)
		gamma.SubVec(gamma, &bh)
	}
	pn := mat.Norm(gamma, 2)
	wq := mat.NewVecDense(k-nc, slices.Clone(w[nc:]))
	wn := mat.Norm(wq, 2)
	wq.ScaleVec(1/wn, wq)
	theta := s.track * math.Atan2(pn, wn)
	q := before.Slice(nc, k, 0, rows).(*mat.Dense)
	var x mat.VecDense
	x.MulVec(q.T(), wq)
	x.ScaleVec(math.Cos(theta)-1, &x)
	x.AddScaledVec(&x, math.Sin(theta)/pn, gamma)
	var step mat.Dense
	step.Outer(1, wq, &x)
	var want mat.Dense
	want.Add(q, &step)

	s.trackStep(y, fit, w, mask)
	for c := range k {
		for i := range rows {
			got := s.basisT.At(c, i)
			if c < nc {
				if got != before.At(c, i) {
					t.Fatalf("constant row %d changed at %d", c, i)
				}
				continue
			}
			if e := math.Abs(got - want.At(c-nc, i)); e > 1e-12 {
				t.Fatalf("row %d, entry %d: %.15g, the formula %.15g", c, i, got, want.At(c-nc, i))
			}
		}
	}
	if d := mat.Norm(before.Slice(nc, k, 0, rows), 2); !(mat.Norm(&step, 2) > 1e-3*d) {
		t.Fatalf("the step moved the basis by %.3g: the test would not test it", mat.Norm(&step, 2))
	}
}
