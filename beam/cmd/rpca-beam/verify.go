package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/gdcore"
	"github.com/rpca-gd/rpca/load"
)

// verifyOnLauncher checks the answer res as rpca.Solve checks its own
// ([rpca.Verify]), on the launcher. The observed entries of in are read
// again, and S is the sparse estimator T of the last iteration (the
// counts k_row and k_col of the result's parameters, see
// [distributed.Store]) on the residual Y − U·Vᵀ. It returns nil and the
// reason when it cannot check: an input on a file system of the runner's
// or a pattern of files rather than one local file, or entries that do
// not fit in the launcher's memory.
func verifyOnLauncher(in string, res *rpca.Result, s rpca.Settings) (*rpca.Verification, string) {
	switch {
	case strings.Contains(in, "://"):
		return nil, fmt.Sprintf("the input %s is not a local file, so the launcher cannot read it again to check the answer", in)
	case strings.ContainsAny(in, "*?["):
		return nil, fmt.Sprintf("the input %s is a pattern of files, which the launcher does not read again to check the answer", in)
	}
	kRow, kCol, ok := counts(res.Params)
	if !ok {
		return nil, fmt.Sprintf("the result's parameters (%T) do not give T's counts", res.Params)
	}
	m, err := load.File(in, load.Options{Format: load.MatrixMarket, BytesPerEntry: 1})
	var mem *load.MemoryError
	switch {
	case errors.As(err, &mem):
		return nil, fmt.Sprintf("the launcher has not the memory to read the entries again and check the answer (%v)", err)
	case err != nil:
		return nil, fmt.Sprintf("reading %s again to check the answer: %v", in, err)
	}
	p := m.Problem()
	sp, err := sparseAt(p.Observed, res, kRow, kCol)
	if err != nil {
		return nil, err.Error()
	}
	r := *res
	r.S = sp
	v, err := rpca.Verify(p, &r, s)
	if err != nil {
		return nil, fmt.Sprintf("checking the answer: %v", err)
	}
	return v, ""
}

// counts returns T's per-row and per-column counts from a result's
// parameters (gd.Params or als.Params).
func counts(params any) (kRow, kCol int, ok bool) {
	switch q := params.(type) {
	case *gd.Params:
		return q.KRow, q.KCol, q != nil
	case gd.Params:
		return q.KRow, q.KCol, true
	case *als.Params:
		return q.KRow, q.KCol, q != nil
	case als.Params:
		return q.KRow, q.KCol, true
	}
	return 0, 0, false
}

// sparseAt returns T(Π_Φ(Y − U·Vᵀ)) with counts kRow and kCol: an
// observed entry is in S when its residual's magnitude is at least the
// kRow-th largest of its row's and the kCol-th largest of its column's
// ([gdcore.LineThreshold], [gdcore.InSparse]), with the residual as its
// value.
func sparseAt(obs *rpca.Observed, res *rpca.Result, kRow, kCol int) (*rpca.Sparse, error) {
	if obs == nil {
		return nil, errors.New("the input holds a dense matrix, which rpca-beam does not read")
	}
	d1, d2 := obs.Dims()
	u, v := res.U.RawMatrix(), res.V.RawMatrix()
	if u.Rows != d1 || v.Rows != d2 || u.Cols != v.Cols {
		return nil, fmt.Errorf("factors of %d×%d and %d×%d for a %d×%d matrix", u.Rows, u.Cols, v.Rows, v.Cols, d1, d2)
	}
	rowPtr, colIdx, vals := obs.CSR()
	resid := make([]float64, len(vals))
	for i := range d1 {
		ui := u.Data[i*u.Stride : i*u.Stride+u.Cols]
		for e := rowPtr[i]; e < rowPtr[i+1]; e++ {
			j := int(colIdx[e])
			vj := v.Data[j*v.Stride : j*v.Stride+v.Cols]
			m := 0.0
			for c, x := range ui {
				m += x * vj[c]
			}
			resid[e] = vals[e] - m
		}
	}
	rowT := make([]float64, d1)
	var buf []float64
	for i := range d1 {
		buf = buf[:0]
		for _, r := range resid[rowPtr[i]:rowPtr[i+1]] {
			buf = append(buf, math.Abs(r))
		}
		rowT[i] = gdcore.LineThreshold(buf, kRow)
	}
	byCol := make([][]float64, d2)
	for e, j := range colIdx {
		byCol[j] = append(byCol[j], math.Abs(resid[e]))
	}
	colT := make([]float64, d2)
	for j, mags := range byCol {
		colT[j] = gdcore.LineThreshold(mags, kCol)
	}
	sp := &rpca.Sparse{Rows: d1, Cols: d2, RowPtr: make([]int, d1+1)}
	for i := range d1 {
		for e := rowPtr[i]; e < rowPtr[i+1]; e++ {
			j := colIdx[e]
			if gdcore.InSparse(math.Abs(resid[e]), rowT[i], colT[j]) {
				sp.ColIdx = append(sp.ColIdx, j)
				sp.Val = append(sp.Val, resid[e])
			}
		}
		sp.RowPtr[i+1] = len(sp.Val)
	}
	return sp, nil
}
