package rpca

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/selection"
)

// How Solve presents the data to a method: its frame. The methods
// measure everything against the data they see, ‖Y‖ in their stopping
// rules and σ₁(Y) in their thresholds, and the paper's model has Y of
// mean 0 with corruptions of the size of M's entries. Data that users
// bring do not: a constant offset of 10⁶ makes ‖Y‖ a measure of the
// offset, not of M, and one entry of 10²⁰⁰ makes every sum of squares
// overflow. So, before any method runs, Solve
//
//   - estimates the location c of the observed values (their median) and
//     their robust spread σ̂ (1.4826 times the median absolute deviation
//     from c, the standard deviation for Gaussian data, unmoved by
//     corruptions of fewer than half of the entries),
//   - with α > 0, sets aside as gross corruptions the entries more than
//     GrossSpreads·σ̂ from c (they are reported in S; the method sees c
//     there),
//   - with α > 0, removes the part of the location beyond one spread,
//     c' = sign(c)·max(|c| − σ̂, 0): what is left of the offset is no
//     larger than the data's variation, so it neither dominates ‖Y‖ nor
//     makes the offset direction the one singular value that sets the
//     condition number, and it is not removed entirely, which would leave
//     a component of M of about the size of the median's error — weak and
//     badly conditioned,
//   - divides by a power of two near the spread (exact),
//   - and makes every residual rule relative to the clean scale of the
//     data, √|Φ|·√(σ̂² + min(|c − c'|, σ̂)²), not to ‖Π_Φ Y‖.
//
// After the method returns, the location is added back to M, which is
// then truncated to the rank the method returned: when c'·11ᵀ lies in
// M's column or row space (an offset the rank allows) nothing is lost,
// and when it does not, the loss is measured and the data are solved
// again without removing the location (CheckOffset).
//
// With α = 0 nothing is set aside or removed: the answer is the rank-r
// fit of Y itself (PCA, or matrix completion), and Y is only divided by a
// power of two when its largest magnitude is beyond 2^±64.

// GrossSpreads is the distance from the median, in robust spreads, beyond
// which Solve sets an entry aside as a gross corruption before the method
// runs (with α > 0). An entry of an incoherent rank-r matrix is at most
// about μr times the matrix's root mean square, so one a million spreads
// away is a corruption by any model the methods can recover, and removing
// it keeps every sum of squares within the range of float64.
const GrossSpreads = 1 << 20

// frameSample bounds the number of observed values, evenly spaced, from
// which the median and spread are estimated.
const frameSample = 1 << 16

// safeExp: data whose largest magnitude lies within 2^±safeExp are used as
// they are at α = 0. Beyond it sums of squares of the entries could
// underflow or overflow for some d1·d2 below 2^62.
const safeExp = 64

// frame is Solve's view of the data (see the comment above).
type frame struct {
	median, halfSpread float64 // c and σ̂/2 (half, so that no step overflows)
	loc                float64 // c', removed from every observed value
	scale              float64 // the power of two the centred values are divided by
	transform          bool    // the method works on a transformed copy
	gross              []int   // flat positions (row-major, or CSR index) set aside
	constant           bool    // every observed value equals the median
	n                  int     // |Φ|
	normF, refF        float64 // ‖Π_Φ Y_f‖ and the clean norm, in frame units
}

// observedLen returns |Φ|.
func observedLen(p *Problem) int {
	if p.Dense != nil {
		r, c := p.Dense.Dims()
		return r * c
	}
	return p.Observed.m.NNZ()
}

// observedAt returns a function giving the k-th observed value of p in
// row-major order.
func observedAt(p *Problem) func(k int) float64 {
	if p.Dense != nil {
		raw := p.Dense.RawMatrix()
		return func(k int) float64 { return raw.Data[(k/raw.Cols)*raw.Stride+k%raw.Cols] }
	}
	val := p.Observed.m.Val
	return func(k int) float64 { return val[k] }
}

// analyze returns p's frame; robust (α > 0) sets gross entries aside and
// removes the location. The median and spread come from a sample; one
// pass over the data, in parallel over fixed chunks combined in order (the
// frame does not depend on the worker count), finds the gross entries,
// the largest deviation and magnitude, and the norm of the values the
// method will see.
func analyze(p *Problem, robust bool) frame { return analyzeFrame(p, robust, robust) }

// analyzeFrame is analyze, with the removal of the location (centre) apart
// from the setting aside of gross entries (robust).
func analyzeFrame(p *Problem, robust, centre bool) frame {
	fr := frame{scale: 1, n: observedLen(p)}
	if fr.n == 0 {
		fr.constant = true
		return fr
	}
	at := observedAt(p)
	m := min(fr.n, frameSample)
	buf := make([]float64, m)
	for k := range buf {
		buf[k] = at(int(int64(k) * int64(fr.n) / int64(m)))
	}
	c, sH := robustHalf(buf)
	fr.median = c
	ch := c / 2
	if sH == 0 {
		// The sample was constant: the data may not be (a sparse M).
		st := framePass(p, ch, 0, 1, false)
		if st.maxH == 0 {
			fr.constant = true
			return fr
		}
		sH = st.maxH * math.Sqrt(st.devSS/float64(fr.n))
	}
	fr.halfSpread = sH
	var locH float64
	if robust && centre {
		locH = math.Copysign(max(math.Abs(ch)-sH, 0), ch)
	}
	st := framePass(p, ch, locH, sH, robust)
	if st.maxH == 0 {
		fr.constant = true
		return fr
	}
	fr.gross = st.gross
	fr.loc = 2 * locH
	rest := ch - locH // what is left of the location: |rest| ≤ σ̂/2 when centred
	if robust {
		_, e := math.Frexp(math.Hypot(sH, min(math.Abs(rest), sH))) // in [2^(e−1), 2^e)
		if fr.loc != 0 || len(fr.gross) > 0 || e < -40 || e > 40 {
			fr.scale, fr.transform = math.Ldexp(1, e+1), true
		}
	} else if _, e := math.Frexp(st.maxAbs); e-1 < -safeExp || e-1 > safeExp {
		// α = 0: Y as it is, scaled only when its largest magnitude is
		// far from 1.
		fr.scale, fr.transform = math.Ldexp(1, e-1), true
	}
	// ‖Π_Φ Y_f‖ from the pass's sum of squares of (y/2 − c'/2)/σ̂ (with
	// the gross entries at the median), and the clean norm.
	fr.normF = st.ss.norm() * sH * 2 / fr.scale
	fr.refF = math.Sqrt(float64(fr.n)) * 2 * math.Hypot(sH, min(math.Abs(rest), sH)) / fr.scale
	return fr
}

// passStats is what framePass finds.
type passStats struct {
	maxH, maxAbs float64 // largest |y/2 − c/2| and |y|
	devSS        float64 // Σ(|y/2 − c/2|/maxH)², with spread 0 only
	ss           scaledSum
	gross        []int
}

// framePasses is the number of chunks framePass splits the data into.
const framePasses = 64

// framePass makes the pass of analyze over the observed values with
// ch = c/2, locH = c'/2 and sH = σ̂/2: the largest deviation and
// magnitude, the gross entries (robust only), and the sum of squares of
// (y/2 − locH)/sH with a gross entry counted at the median. With robust,
// every other term is below (2^20 + 1)², so plain sums per chunk cannot
// overflow; without, a second pass sums the squares scaled by a power of
// two near the largest magnitude. Chunks are combined in order. With
// spread 0 (sH = 1, from the constant-sample case) it also returns devSS.
func framePass(p *Problem, ch, locH, sH float64, robust bool) passStats {
	type part struct {
		maxH, maxAbs, ss float64
		gross            []int
	}
	n := observedLen(p)
	parts := make([]part, framePasses)
	inv := 1 / sH
	gH := (ch - locH) * inv
	chunks := func(fn func(t, base int, vals []float64)) {
		switch {
		case p.Dense != nil:
			raw := p.Dense.RawMatrix()
			kernels.ForEach(framePasses, 0, func(t int) {
				for i := t * raw.Rows / framePasses; i < (t+1)*raw.Rows/framePasses; i++ {
					fn(t, i*raw.Cols, raw.Data[i*raw.Stride:i*raw.Stride+raw.Cols])
				}
			})
		default:
			val := p.Observed.m.Val
			kernels.ForEach(framePasses, 0, func(t int) {
				lo, hi := t*n/framePasses, (t+1)*n/framePasses
				fn(t, lo, val[lo:hi])
			})
		}
	}
	limit := GrossSpreads * sH
	chunks(func(t, base int, vals []float64) {
		pt := &parts[t]
		// Four accumulators each, so that the chains of max and sum do
		// not wait on one another.
		var mh, ma, ss [4]float64
		mh[0], ma[0], ss[0] = pt.maxH, pt.maxAbs, pt.ss
		q := 0
		if robust {
			for ; q+4 <= len(vals); q += 4 {
				for l := range 4 {
					x := vals[q+l]
					h := math.Abs(x*0.5 - ch)
					// Plain comparisons: the data are finite (checked),
					// and the NaN-aware max is slower.
					if h > mh[l] {
						mh[l] = h
					}
					if a := math.Abs(x); a > ma[l] {
						ma[l] = a
					}
					f := (x*0.5 - locH) * inv
					if h > limit {
						pt.gross = append(pt.gross, base+q+l)
						f = gH
					}
					ss[l] += f * f
				}
			}
		}
		for ; q < len(vals); q++ {
			x := vals[q]
			h := math.Abs(x*0.5 - ch)
			mh[0] = max(mh[0], h)
			ma[0] = max(ma[0], math.Abs(x))
			if !robust {
				continue
			}
			f := (x*0.5 - locH) * inv
			if h > limit {
				pt.gross = append(pt.gross, base+q)
				f = gH
			}
			ss[0] += f * f
		}
		pt.maxH = max(mh[0], mh[1], mh[2], mh[3])
		pt.maxAbs = max(ma[0], ma[1], ma[2], ma[3])
		pt.ss = (ss[0] + ss[1]) + (ss[2] + ss[3])
	})
	var st passStats
	for _, pt := range parts {
		st.maxH = max(st.maxH, pt.maxH)
		st.maxAbs = max(st.maxAbs, pt.maxAbs)
		st.ss.add(math.Sqrt(pt.ss))
		st.gross = append(st.gross, pt.gross...)
	}
	if !robust && st.maxAbs > 0 {
		// Sums of squares of y/(2·sH) scaled by a power of two near the
		// largest, in the same chunks.
		_, e := math.Frexp(st.maxAbs * 0.5 * inv)
		f := math.Ldexp(1, -e)
		chunks(func(t, _ int, vals []float64) {
			ss := 0.0
			for _, x := range vals {
				v := (x*0.5 - locH) * inv * f
				ss += v * v
			}
			parts[t].ss = ss
		})
		st.ss = scaledSum{}
		for _, pt := range parts {
			st.ss.add(math.Sqrt(pt.ss) / f)
		}
		if sH == 1 && st.maxH > 0 {
			// The constant-sample case: the deviations' sum of squares,
			// scaled by their largest.
			g := 1 / st.maxH
			chunks(func(t, _ int, vals []float64) {
				ss := 0.0
				for _, x := range vals {
					v := math.Abs(x*0.5-ch) * g
					ss += v * v
				}
				parts[t].ss = ss
			})
			for _, pt := range parts {
				st.devSS += pt.ss
			}
		}
	}
	return st
}

// scaledSum is a sum of squares kept as scale²·sumsq, as LAPACK's dnrm2
// does, so that it neither overflows nor underflows.
type scaledSum struct{ scale, sumsq float64 }

func (s *scaledSum) add(x float64) {
	a := math.Abs(x)
	switch {
	case a == 0:
	case a > s.scale:
		s.sumsq = 1 + s.sumsq*(s.scale/a)*(s.scale/a)
		s.scale = a
	default:
		s.sumsq += (a / s.scale) * (a / s.scale)
	}
}

func (s *scaledSum) merge(o scaledSum) {
	switch {
	case o.scale == 0:
	case o.scale > s.scale:
		s.sumsq = o.sumsq + s.sumsq*(s.scale/o.scale)*(s.scale/o.scale)
		s.scale = o.scale
	default:
		s.sumsq += o.sumsq * (o.scale / s.scale) * (o.scale / s.scale)
	}
}

// norm returns √(Σx²), +Inf when it exceeds the float64 range.
func (s scaledSum) norm() float64 { return s.scale * math.Sqrt(s.sumsq) }

// value returns Σx² (for sums that cannot overflow).
func (s scaledSum) value() float64 { return s.scale * s.scale * s.sumsq }

// RobustScale returns the median of x and its robust spread: 1.4826 times
// the median absolute deviation from the median (the standard deviation of
// Gaussian data, unmoved by outliers on fewer than half of the values);
// when more than half of the values equal the median, a higher quantile of
// the deviations over the Gaussian's (75%, 90%, 99%), or their root mean
// square. It reorders x. Solve's frame and the ratings' gross-entry rule
// use it; the spread is +Inf only when it exceeds the float64 range.
func RobustScale(x []float64) (median, spread float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	c, sH := robustHalf(x)
	return c, 2 * sH
}

// robustHalf is RobustScale with half the spread (which cannot overflow);
// it overwrites x with the half deviations |x/2 − c/2|.
func robustHalf(x []float64) (c, sH float64) {
	m := len(x)
	c = selection.SelectSmallest(x, (m+1)/2)
	ch := c / 2
	for k, v := range x {
		x[k] = math.Abs(v/2 - ch)
	}
	sH = 1.4826 * selection.SelectSmallest(x, (m+1)/2)
	// Most values equal to the median (a sparse M, constant rows): take
	// a higher quantile, as a Gaussian's, or the root mean square.
	for _, q := range []struct{ p, z float64 }{{0.75, 1.1503}, {0.9, 1.6449}, {0.99, 2.5758}} {
		if sH > 0 {
			break
		}
		sH = selection.SelectSmallest(x, min(m, max(1, int(math.Ceil(q.p*float64(m)))))) / q.z
	}
	if sH == 0 {
		sH = scaledRMS(x)
	}
	return c, sH
}

// scaledRMS returns the root mean square of x without overflow.
func scaledRMS(x []float64) float64 {
	mx := 0.0
	for _, v := range x {
		mx = max(mx, v)
	}
	if mx == 0 {
		return 0
	}
	ss := 0.0
	for _, v := range x {
		ss += (v / mx) * (v / mx)
	}
	return mx * math.Sqrt(ss/float64(len(x)))
}

// value maps an observed value of the data to the frame (half of y and
// of the location, so that nothing overflows; the product by a power of
// two is exact).
func (fr *frame) value(y, locH float64) float64 { return (y/2 - locH) * (2 / fr.scale) }

// grossValue is the frame value that replaces a gross entry: the median.
func (fr *frame) grossValue() float64 { return fr.value(fr.median, fr.loc/2) }

// resFactor is the factor from a method's relative residual, against
// ‖Π_Φ Y_f‖, to one against the clean norm.
func (fr *frame) resFactor() float64 {
	if fr.refF > 0 && fr.normF > 0 {
		return fr.normF / fr.refF
	}
	return 1
}

// problem returns the problem the method sees: p itself when the frame
// changes nothing, or a transformed copy, with the truth mapped likewise
// and the residual rules' factor set.
func (fr *frame) problem(p *Problem) (*Problem, error) {
	q := *p
	q.resFactor = fr.resFactor()
	if !fr.transform {
		return &q, nil
	}
	locH := fr.loc / 2
	gv := fr.grossValue()
	g := 0
	switch {
	case p.Dense != nil:
		d1, d2 := p.Dense.Dims()
		raw := p.Dense.RawMatrix()
		data := make([]float64, d1*d2)
		for i := range d1 {
			row := data[i*d2 : (i+1)*d2]
			for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+d2] {
				row[j] = fr.value(x, locH)
			}
			for g < len(fr.gross) && fr.gross[g] < (i+1)*d2 {
				row[fr.gross[g]-i*d2] = gv
				g++
			}
		}
		q.Dense = mat.NewDense(d1, d2, data)
	case p.Observed != nil:
		m := *p.Observed.m
		m.Val = make([]float64, len(m.Val))
		for k, x := range p.Observed.m.Val {
			m.Val[k] = fr.value(x, locH)
		}
		for _, k := range fr.gross {
			m.Val[k] = gv
		}
		q.Observed = &Observed{m: &m}
	}
	if t := p.Truth; t != nil {
		q.Truth = fr.truth(t)
	}
	return &q, nil
}

// truth maps the truth A·Bᵀ to the frame: (A·Bᵀ − c'·11ᵀ)/scale, as the
// factors [A/scale, −c'/scale·1] and [B, 1] when c' ≠ 0.
func (fr *frame) truth(t *Truth) *Truth {
	d1, r := t.A.Dims()
	d2, _ := t.B.Dims()
	if fr.loc == 0 {
		var a mat.Dense
		a.Scale(1/fr.scale, t.A)
		return &Truth{A: &a, B: t.B}
	}
	a, b := mat.NewDense(d1, r+1, nil), mat.NewDense(d2, r+1, nil)
	for i := range d1 {
		for k := range r {
			a.Set(i, k, t.A.At(i, k)/fr.scale)
		}
		a.Set(i, r, -fr.loc/fr.scale)
	}
	for j := range d2 {
		for k := range r {
			b.Set(j, k, t.B.At(j, k))
		}
		b.Set(j, r, 1)
	}
	return &Truth{A: a, B: b}
}
