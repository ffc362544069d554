package rpca

import (
	"github.com/rpca-gd/rpca/internal/robust"
	"math"

	"gonum.org/v1/gonum/mat"
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
const GrossSpreads = robust.GrossSpreads

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

// analyze returns p's frame; aside (α > 0) sets gross entries aside and
// removes the location. The median and spread come from a sample; one
// pass over the data, in parallel over fixed chunks combined in order (the
// frame does not depend on the worker count), finds the gross entries,
// the largest deviation and magnitude, and the norm of the values the
// method will see.
func analyze(p *Problem, aside bool) frame { return analyzeFrame(p, aside, aside) }

// analyzeFrame is analyze, with the removal of the location (centre) apart
// from the setting aside of gross entries (aside).
func analyzeFrame(p *Problem, aside, centre bool) frame {
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
	c, sH := robust.Half(buf)
	fr.median = c
	ch := c / 2
	if sH == 0 {
		// The sample was constant: the data may not be (a sparse M).
		st := robust.Pass(robustValues(p), ch, 0, 1, false)
		if st.MaxH == 0 {
			fr.constant = true
			return fr
		}
		sH = st.MaxH * math.Sqrt(st.DevSS/float64(fr.n))
	}
	fr.halfSpread = sH
	var locH float64
	if aside && centre {
		locH = math.Copysign(max(math.Abs(ch)-sH, 0), ch)
	}
	st := robust.Pass(robustValues(p), ch, locH, sH, aside)
	if st.MaxH == 0 {
		fr.constant = true
		return fr
	}
	fr.gross = st.Gross
	fr.loc = 2 * locH
	rest := ch - locH // what is left of the location: |rest| ≤ σ̂/2 when centred
	if aside {
		_, e := math.Frexp(math.Hypot(sH, min(math.Abs(rest), sH))) // in [2^(e−1), 2^e)
		if fr.loc != 0 || len(fr.gross) > 0 || e < -40 || e > 40 {
			fr.scale, fr.transform = math.Ldexp(1, e+1), true
		}
	} else if _, e := math.Frexp(st.MaxAbs); e-1 < -safeExp || e-1 > safeExp {
		// α = 0: Y as it is, scaled only when its largest magnitude is
		// far from 1.
		fr.scale, fr.transform = math.Ldexp(1, e-1), true
	}
	// ‖Π_Φ Y_f‖ from the pass's sum of squares of (y/2 − c'/2)/σ̂ (with
	// the gross entries at the median), and the clean norm.
	fr.normF = st.SS.Norm() * sH * 2 / fr.scale
	fr.refF = math.Sqrt(float64(fr.n)) * 2 * math.Hypot(sH, min(math.Abs(rest), sH)) / fr.scale
	return fr
}

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
	c, sH := robust.Half(x)
	return c, 2 * sH
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

// robustValues returns p's observed values for package robust.
func robustValues(p *Problem) robust.Values {
	if p.Dense != nil {
		return robust.Values{Dense: p.Dense.RawMatrix()}
	}
	return robust.Values{Flat: p.Observed.m.Val}
}
