package robust

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Frame is how rpca.Solve presents the data to a method. The methods
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
type Frame struct {
	Median, HalfSpread float64 // c and σ̂/2 (half, so that no step overflows)
	Loc                float64 // c', removed from every observed value
	Scale              float64 // the power of two the centred values are divided by
	Transform          bool    // the method works on a transformed copy
	Gross              []int   // flat positions (row-major, or CSR index) set aside
	Constant           bool    // every observed value equals the median
	N                  int     // |Φ|
	NormF, RefF        float64 // ‖Π_Φ Y_f‖ and the clean norm, in frame units
}

// frameSample bounds the number of observed values, evenly spaced, from
// which the median and spread are estimated.
const frameSample = 1 << 16

// safeExp: data whose largest magnitude lies within 2^±safeExp are used as
// they are at α = 0. Beyond it sums of squares of the entries could
// underflow or overflow for some d1·d2 below 2^62.
const safeExp = 64

// at returns the k-th value, in row-major order for Dense.
func (v Values) at(k int) float64 {
	if v.Flat != nil {
		return v.Flat[k]
	}
	return v.Dense.Data[(k/v.Dense.Cols)*v.Dense.Stride+k%v.Dense.Cols]
}

// Analyze returns the frame of the observed values vals: aside (α > 0)
// sets gross entries aside, centre removes the location. The median and
// spread come from a sample; one pass over the data, in parallel over
// fixed chunks combined in order (the frame does not depend on the
// worker count), finds the gross entries, the largest deviation and
// magnitude, and the norm of the values the method will see.
func Analyze(vals Values, aside, centre bool) Frame {
	fr := Frame{Scale: 1, N: vals.Len()}
	if fr.N == 0 {
		fr.Constant = true
		return fr
	}
	pos := SamplePositions(fr.N)
	buf := make([]float64, len(pos))
	for k, q := range pos {
		buf[k] = vals.at(q)
	}
	c, sH := Half(buf)
	fr.Median = c
	ch := c / 2
	if sH == 0 {
		// The sample was constant: the data may not be (a sparse M).
		st := Pass(vals, ch, 0, 1, false)
		if st.MaxH == 0 {
			fr.Constant = true
			return fr
		}
		sH = st.MaxH * math.Sqrt(st.DevSS/float64(fr.N))
	}
	fr.HalfSpread = sH
	var locH float64
	if centre {
		locH = locationHalf(ch, sH)
	}
	st := Pass(vals, ch, locH, sH, aside)
	if st.MaxH == 0 {
		fr.Constant = true
		return fr
	}
	fr.Gross = st.Gross
	fr.Loc = 2 * locH
	rest := ch - locH // what is left of the location: |rest| ≤ σ̂/2 when centred
	if aside || locH != 0 {
		_, e := math.Frexp(math.Hypot(sH, min(math.Abs(rest), sH))) // in [2^(e−1), 2^e)
		if fr.Loc != 0 || len(fr.Gross) > 0 || e < -40 || e > 40 {
			fr.Scale, fr.Transform = math.Ldexp(1, e+1), true
		}
	} else if _, e := math.Frexp(st.MaxAbs); e-1 < -safeExp || e-1 > safeExp {
		// α = 0 without a location: Y as it is, scaled only when its
		// largest magnitude is far from 1.
		fr.Scale, fr.Transform = math.Ldexp(1, e-1), true
	}
	// ‖Π_Φ Y_f‖ from the pass's sum of squares of (y/2 − c'/2)/σ̂ (with
	// the gross entries at the median), and the clean norm.
	fr.NormF = st.SS.Norm() * sH * 2 / fr.Scale
	fr.RefF = cleanNorm(fr.N, sH, rest) / fr.Scale
	return fr
}

// SamplePositions are the positions, among n observed values, of the
// sample from which Analyze estimates the median and the spread: up to
// 2¹⁶, at an even stride.
func SamplePositions(n int) []int {
	m := min(n, frameSample)
	pos := make([]int, m)
	for k := range pos {
		pos[k] = int(int64(k) * int64(n) / int64(m))
	}
	return pos
}

// SampleFrame returns what a method on entries it does not hold needs of
// the frame, from the values at SamplePositions of n observed values: the
// location c' that Analyze removes when centre is set (the part of the
// median beyond one robust spread); the power of two it divides the
// values by (Analyze's with α > 0: near the clean scale, when c' ≠ 0 or
// that scale is beyond 2^±40; 1 otherwise); and the clean norm RefF of
// the values less c' (Solve's ResidualScale) in the units of the data.
// A constant sample gives 0, 1 and 0. It overwrites sample.
func SampleFrame(sample []float64, n int, centre bool) (loc, scale, ref float64) {
	if len(sample) == 0 {
		return 0, 1, 0
	}
	c, sH := Half(sample)
	if sH == 0 {
		return 0, 1, 0
	}
	var locH float64
	if centre {
		locH = locationHalf(c/2, sH)
	}
	rest := c/2 - locH
	scale = 1
	if _, e := math.Frexp(math.Hypot(sH, min(math.Abs(rest), sH))); locH != 0 || e < -40 || e > 40 {
		scale = math.Ldexp(1, e+1)
	}
	return 2 * locH, scale, cleanNorm(n, sH, rest)
}

// cleanNorm is RefF before the scale: √n·2·√(sH² + min(|rest|, sH)²) for
// the half spread sH and the half location rest left in the values.
func cleanNorm(n int, sH, rest float64) float64 {
	return math.Sqrt(float64(n)) * 2 * math.Hypot(sH, min(math.Abs(rest), sH))
}

// locationHalf is half of the location for the half median ch and the
// half spread sH: ch moved towards 0 by sH, and 0 within it.
func locationHalf(ch, sH float64) float64 { return math.Copysign(max(math.Abs(ch)-sH, 0), ch) }

// FrameValue maps a value y of the data to the frame of location loc and
// scale: (y/2 − loc/2)·(2/scale), formed in halves so that nothing
// overflows (the products by powers of two are exact). A distributed
// store that implements distributed.Framer presents its values so, and a
// solve that frames a store's sample forms them so too.
func FrameValue(y, loc, scale float64) float64 { return (y/2 - loc/2) * (2 / scale) }

// Value maps an observed value y of the data to the frame, with locH =
// Loc/2 (half of y and of the location, so that nothing overflows; the
// product by a power of two is exact).
func (fr *Frame) Value(y, locH float64) float64 { return (y/2 - locH) * (2 / fr.Scale) }

// GrossValue is the frame value that replaces a gross entry: the median.
func (fr *Frame) GrossValue() float64 { return fr.Value(fr.Median, fr.Loc/2) }

// ResFactor is the factor from a method's relative residual, against
// ‖Π_Φ Y_f‖, to one against the clean norm.
func (fr *Frame) ResFactor() float64 {
	if fr.RefF > 0 && fr.NormF > 0 {
		return fr.NormF / fr.RefF
	}
	return 1
}

// Apply returns the values of vals in the frame (Value), the gross
// entries replaced by GrossValue: for Dense the d1×d2 values row-major
// without stride, for Flat as many values as Flat.
func (fr *Frame) Apply(vals Values) []float64 {
	locH, gv := fr.Loc/2, fr.GrossValue()
	if vals.Flat != nil {
		out := make([]float64, len(vals.Flat))
		for k, x := range vals.Flat {
			out[k] = fr.Value(x, locH)
		}
		for _, k := range fr.Gross {
			out[k] = gv
		}
		return out
	}
	raw := vals.Dense
	d1, d2 := raw.Rows, raw.Cols
	out := make([]float64, d1*d2)
	g := 0
	for i := range d1 {
		row := out[i*d2 : (i+1)*d2]
		for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+d2] {
			row[j] = fr.Value(x, locH)
		}
		for g < len(fr.Gross) && fr.Gross[g] < (i+1)*d2 {
			row[fr.Gross[g]-i*d2] = gv
			g++
		}
	}
	return out
}

// Truth maps the truth A·Bᵀ to the frame: (A·Bᵀ − c'·11ᵀ)/Scale, as the
// factors [A/Scale, −c'/Scale·1] and [B, 1] when c' ≠ 0.
func (fr *Frame) Truth(a, b *mat.Dense) (*mat.Dense, *mat.Dense) {
	d1, r := a.Dims()
	d2, _ := b.Dims()
	if fr.Loc == 0 {
		var as mat.Dense
		as.Scale(1/fr.Scale, a)
		return &as, b
	}
	af, bf := mat.NewDense(d1, r+1, nil), mat.NewDense(d2, r+1, nil)
	for i := range d1 {
		for k := range r {
			af.Set(i, k, a.At(i, k)/fr.Scale)
		}
		af.Set(i, r, -fr.Loc/fr.Scale)
	}
	for j := range d2 {
		for k := range r {
			bf.Set(j, k, b.At(j, k))
		}
		bf.Set(j, r, 1)
	}
	return af, bf
}
