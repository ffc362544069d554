// Package robust computes rpca.Solve's frame (Frame, Analyze): the median
// and robust spread of the observed values, the one parallel pass that
// finds the largest deviation, the gross entries and a sum of squares that
// neither overflows nor underflows, the location removed and the power of
// two the values are divided by.
package robust

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/selection"
)

// GrossSpreads is the number of robust spreads from the median beyond
// which an entry is gross (rpca.GrossSpreads).
const GrossSpreads = 1 << 20

// Values are the observed values of a problem: the rows of Dense, or Flat.
type Values struct {
	Dense blas64.General
	Flat  []float64
}

// Len is the number of values.
func (v Values) Len() int {
	if v.Flat != nil {
		return len(v.Flat)
	}
	return v.Dense.Rows * v.Dense.Cols
}

// Stats is what Pass finds.
type Stats struct {
	MaxH, MaxAbs float64 // largest |y/2 − c/2| and |y|
	DevSS        float64 // Σ(|y/2 − c/2|/MaxH)², with spread 0 only
	SS           ScaledSum
	Gross        []int // the gross entries, in the order of the values
}

// chunkCount is the number of chunks Pass splits the data into.
const chunkCount = 64

// Pass makes the pass of analyze over the observed values with
// ch = c/2, locH = c'/2 and sH = σ̂/2: the largest deviation and
// magnitude, the gross entries (robust only), and the sum of squares of
// (y/2 − locH)/sH with a gross entry counted at the median. With robust,
// every other term is below (2^20 + 1)², so plain sums per chunk cannot
// overflow; without, a second pass sums the squares scaled by a power of
// two near the largest magnitude. Chunks are combined in order. With
// spread 0 (sH = 1, from the constant-sample case) it also returns devSS.
func Pass(vals Values, ch, locH, sH float64, robust bool) Stats {
	type part struct {
		maxH, maxAbs, ss float64
		gross            []int
	}
	n := vals.Len()
	parts := make([]part, chunkCount)
	inv := 1 / sH
	gH := (ch - locH) * inv
	chunks := func(fn func(t, base int, vals []float64)) {
		switch raw := vals.Dense; {
		case vals.Flat == nil:
			kernels.ForEach(chunkCount, 0, func(t int) {
				for i := t * raw.Rows / chunkCount; i < (t+1)*raw.Rows/chunkCount; i++ {
					fn(t, i*raw.Cols, raw.Data[i*raw.Stride:i*raw.Stride+raw.Cols])
				}
			})
		default:
			val := vals.Flat
			kernels.ForEach(chunkCount, 0, func(t int) {
				lo, hi := t*n/chunkCount, (t+1)*n/chunkCount
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
	var st Stats
	for _, pt := range parts {
		st.MaxH = max(st.MaxH, pt.maxH)
		st.MaxAbs = max(st.MaxAbs, pt.maxAbs)
		st.SS.Add(math.Sqrt(pt.ss))
		st.Gross = append(st.Gross, pt.gross...)
	}
	if !robust && st.MaxAbs > 0 {
		// Sums of squares of y/(2·sH) scaled by a power of two near the
		// largest, in the same chunks.
		_, e := math.Frexp(st.MaxAbs * 0.5 * inv)
		f := math.Ldexp(1, -e)
		chunks(func(t, _ int, vals []float64) {
			ss := 0.0
			for _, x := range vals {
				v := (x*0.5 - locH) * inv * f
				ss += v * v
			}
			parts[t].ss = ss
		})
		st.SS = ScaledSum{}
		for _, pt := range parts {
			st.SS.Add(math.Sqrt(pt.ss) / f)
		}
		if sH == 1 && st.MaxH > 0 {
			// The constant-sample case: the deviations' sum of squares,
			// scaled by their largest.
			g := 1 / st.MaxH
			chunks(func(t, _ int, vals []float64) {
				ss := 0.0
				for _, x := range vals {
					v := math.Abs(x*0.5-ch) * g
					ss += v * v
				}
				parts[t].ss = ss
			})
			for _, pt := range parts {
				st.DevSS += pt.ss
			}
		}
	}
	return st
}

// ScaledSum is a sum of squares kept as scale²·sumsq, as LAPACK's dnrm2
// does, so that it neither overflows nor underflows.
type ScaledSum struct{ scale, sumsq float64 }

func (s *ScaledSum) Add(x float64) {
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

func (s *ScaledSum) Merge(o ScaledSum) {
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
func (s ScaledSum) Norm() float64 { return s.scale * math.Sqrt(s.sumsq) }

// value returns Σx² (for sums that cannot overflow).
func (s ScaledSum) Value() float64 { return s.scale * s.scale * s.sumsq }

// Half returns the median c of x and half its robust spread (which
// cannot overflow): the spread is 1.4826 times the median absolute
// deviation from c (the standard deviation of Gaussian data, unmoved by
// outliers on fewer than half of the values); when more than half of the
// values equal c, a higher quantile of the deviations over the
// Gaussian's (75%, 90%, 99%), or their root mean square. It overwrites x
// with the half deviations |x/2 − c/2|.
func Half(x []float64) (c, sH float64) {
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
		sH = rms(x)
	}
	return c, sH
}

// rms returns the root mean square of x without overflow.
func rms(x []float64) float64 {
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

// SumSq returns the sum of squares of the values.
func (v Values) SumSq() float64 {
	ss := 0.0
	if v.Flat != nil {
		for _, x := range v.Flat {
			ss += x * x
		}
		return ss
	}
	for i := range v.Dense.Rows {
		for _, x := range v.Dense.Data[i*v.Dense.Stride : i*v.Dense.Stride+v.Dense.Cols] {
			ss += x * x
		}
	}
	return ss
}
