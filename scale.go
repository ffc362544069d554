package rpca

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Data whose largest magnitude lies within [2^−safeExp, 2^safeExp] are
// solved as they are. Outside that range sums of squares of the entries
// (norms, residuals, Gram matrices) would underflow or overflow for some
// d1·d2 below 2^62, so [Solve] works on a copy scaled by a power of two.
const safeExp = 64

// dataScale returns the power of two 2^e by which Solve divides Y, or 1
// when Y's largest magnitude m is within the safe range (or Y is zero).
// With e = ⌊log₂ m⌋ the scaled data have largest magnitude in [1, 2).
func dataScale(p *Problem) float64 {
	m := 0.0
	switch {
	case p.Dense != nil:
		raw := p.Dense.RawMatrix()
		for i := 0; i < raw.Rows; i++ {
			for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
				m = math.Max(m, math.Abs(v))
			}
		}
	case p.Observed != nil:
		for _, v := range p.Observed.m.Val {
			m = math.Max(m, math.Abs(v))
		}
	}
	if m == 0 {
		return 1
	}
	_, e := math.Frexp(m) // m = f·2^e with f ∈ [½, 1)
	if e-1 >= -safeExp && e-1 <= safeExp {
		return 1
	}
	return math.Ldexp(1, e-1)
}

// scaled returns a copy of p with Y and the truth divided by c, a power
// of two, so that no value is rounded (unless it falls below the normal
// range, 2^−1022 of the largest).
func (p *Problem) scaled(c float64) *Problem {
	inv := 1 / c
	q := &Problem{}
	switch {
	case p.Dense != nil:
		q.Dense = mat.DenseCopyOf(p.Dense)
		q.Dense.Scale(inv, q.Dense)
	case p.Observed != nil:
		m := *p.Observed.m
		m.Val = make([]float64, len(m.Val))
		for k, v := range p.Observed.m.Val {
			m.Val[k] = v * inv
		}
		q.Observed = &Observed{m: &m}
	}
	if t := p.Truth; t != nil {
		var a mat.Dense
		a.Scale(inv, t.A)
		q.Truth = &Truth{A: &a, B: t.B}
	}
	return q
}

// unscale maps a result on data divided by c back to the caller's units:
// M = (c·U)·Vᵀ and S = c·S. Relative quantities (residuals, errors,
// factor changes) are unchanged.
func (r *Result) unscale(c float64) {
	if r.U != nil {
		r.U.Scale(c, r.U)
	}
	if r.S != nil {
		for k := range r.S.Val {
			r.S.Val[k] *= c
		}
	}
	if r.Params == nil {
		r.Params = map[string]float64{}
	}
	r.Params["data_scale"] = c
}
