// Package observed stores the set Φ of observed entries of a partially
// observed matrix, with their values, in both row-major (CSR) and
// column-major (CSC, as a permutation of the CSR arrays) order, so that
// per-row and per-column work both run over contiguous index ranges.
package observed

import (
	"errors"
	"fmt"
	"github.com/rpca-gd/rpca/internal/parallel"
	"math"

	"runtime"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/rpca-gd/rpca/internal/sample"
)

// MaxEntries is the largest |Φ| representable with int32 permutation indices.
const MaxEntries = math.MaxInt32

// Matrix is a d1×d2 matrix of which only the entries in Φ are known.
//
// CSR: the entries of row i are k ∈ [RowPtr[i], RowPtr[i+1]), with column
// ColIdx[k] (strictly increasing within a row) and value Val[k].
//
// CSC pattern: the entries of column j occupy the CSC slots q ∈
// [ColPtr[j], ColPtr[j+1]), in increasing row order, with RowIdx[q] the row
// of the entry in slot q. (Values are kept in CSR order only; users that
// need them by column copy them, as internal/sparsify does.)
type Matrix struct {
	Rows, Cols int
	RowPtr     []int
	ColIdx     []int32
	Val        []float64
	ColPtr     []int
	RowIdx     []int32
}

// NNZ returns |Φ|.
func (m *Matrix) NNZ() int { return len(m.Val) }

// Rate returns |Φ|/(d1·d2).
func (m *Matrix) Rate() float64 { return float64(len(m.Val)) / (float64(m.Rows) * float64(m.Cols)) }

// Row returns the column indices and values of the observed entries of row i.
func (m *Matrix) Row(i int) ([]int32, []float64) {
	lo, hi := m.RowPtr[i], m.RowPtr[i+1]
	return m.ColIdx[lo:hi], m.Val[lo:hi]
}

// checkDims validates a matrix size for int32 indices.
func checkDims(d1, d2 int) error {
	if d1 <= 0 || d2 <= 0 {
		return fmt.Errorf("observed: matrix size %d×%d must be positive", d1, d2)
	}
	if d1 > math.MaxInt32 || d2 > math.MaxInt32 {
		return fmt.Errorf("observed: matrix size %d×%d exceeds the int32 index range", d1, d2)
	}
	return nil
}

// FromTriplets builds a Matrix from (rows[k], cols[k], vals[k]) in any
// order. Duplicates, out-of-range indices, non-finite values and slices of
// different lengths are errors. The input slices are not retained.
func FromTriplets(d1, d2 int, rows, cols []int, vals []float64) (*Matrix, error) {
	if err := checkDims(d1, d2); err != nil {
		return nil, err
	}
	n := len(vals)
	if len(rows) != n || len(cols) != n {
		return nil, fmt.Errorf("observed: %d rows, %d cols and %d values given; want equal lengths", len(rows), len(cols), n)
	}
	if n > MaxEntries {
		return nil, fmt.Errorf("observed: %d entries exceed the supported %d", n, MaxEntries)
	}
	rowCount := make([]int, d1+1)
	for k := 0; k < n; k++ {
		i, j, v := rows[k], cols[k], vals[k]
		if i < 0 || i >= d1 || j < 0 || j >= d2 {
			return nil, fmt.Errorf("observed: entry %d at (%d, %d) is outside the %d×%d matrix", k, i, j, d1, d2)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("observed: entry %d at (%d, %d) has non-finite value %v", k, i, j, v)
		}
		rowCount[i+1]++
	}
	m := &Matrix{Rows: d1, Cols: d2, RowPtr: rowCount, ColIdx: make([]int32, n), Val: make([]float64, n)}
	for i := 0; i < d1; i++ {
		m.RowPtr[i+1] += m.RowPtr[i]
	}
	// Scatter by row (counting sort), then sort each row by column.
	next := slices.Clone(m.RowPtr[:d1])
	for k := 0; k < n; k++ {
		q := next[rows[k]]
		next[rows[k]]++
		m.ColIdx[q] = int32(cols[k])
		m.Val[q] = vals[k]
	}
	for i := 0; i < d1; i++ {
		lo, hi := m.RowPtr[i], m.RowPtr[i+1]
		sortRow(m.ColIdx[lo:hi], m.Val[lo:hi])
		for q := lo + 1; q < hi; q++ {
			if m.ColIdx[q] == m.ColIdx[q-1] {
				return nil, fmt.Errorf("observed: entry (%d, %d) is given more than once", i, m.ColIdx[q])
			}
		}
	}
	m.buildCSC(cscBlocks(len(m.Val)))
	return m, nil
}

// FromCSR builds a Matrix from CSR arrays that the caller guarantees to be
// sorted by row and, within a row, strictly increasing by column, with
// finite values; it verifies these properties in O(|Φ|) and takes
// ownership of the slices.
func FromCSR(d1, d2 int, rowPtr []int, colIdx []int32, val []float64) (*Matrix, error) {
	if err := checkDims(d1, d2); err != nil {
		return nil, err
	}
	if len(rowPtr) != d1+1 || rowPtr[0] != 0 || rowPtr[d1] != len(colIdx) || len(colIdx) != len(val) {
		return nil, errors.New("observed: malformed CSR arrays")
	}
	if len(val) > MaxEntries {
		return nil, fmt.Errorf("observed: %d entries exceed the supported %d", len(val), MaxEntries)
	}
	for i := 0; i < d1; i++ {
		lo, hi := rowPtr[i], rowPtr[i+1]
		if hi < lo {
			return nil, errors.New("observed: malformed CSR row pointers")
		}
		for q := lo; q < hi; q++ {
			c := colIdx[q]
			if c < 0 || int(c) >= d2 {
				return nil, fmt.Errorf("observed: entry (%d, %d) is outside the %d×%d matrix", i, c, d1, d2)
			}
			if q > lo && c <= colIdx[q-1] {
				return nil, fmt.Errorf("observed: row %d is unsorted or has a duplicate at column %d", i, c)
			}
			if v := val[q]; math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("observed: entry (%d, %d) has non-finite value %v", i, c, v)
			}
		}
	}
	m := &Matrix{Rows: d1, Cols: d2, RowPtr: rowPtr, ColIdx: colIdx, Val: val}
	m.buildCSC(cscBlocks(len(m.Val)))
	return m, nil
}

// SampleDense keeps each entry of y independently with probability p, at
// the positions of the project's sampler (internal/sample) for p and
// seed; with cover, every row and column left empty gets one entry
// (sample.Cover).
func SampleDense(y blas64.General, p float64, seed uint64, cover bool) (*Matrix, error) {
	if !(p > 0 && p <= 1) {
		return nil, fmt.Errorf("observed: sampling rate p = %v must be in (0, 1]", p)
	}
	if err := checkDims(y.Rows, y.Cols); err != nil {
		return nil, err
	}
	rowPtr, colIdx := sample.Bernoulli{P: p, Seed: seed}.Positions(y.Rows, y.Cols, 0)
	if cover {
		rowPtr, colIdx, _ = sample.Cover(y.Rows, y.Cols, rowPtr, colIdx, seed)
	}
	val := make([]float64, len(colIdx))
	for i := 0; i < y.Rows; i++ {
		row := y.Data[i*y.Stride : i*y.Stride+y.Cols]
		for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
			val[q] = row[colIdx[q]]
		}
	}
	return FromCSR(y.Rows, y.Cols, rowPtr, colIdx, val)
}

// buildCSC fills ColPtr and RowIdx from the CSR arrays, in parallel
// over blocks of rows: each block counts its entries per column, the counts
// give every block its first slot in each column, and the blocks then
// scatter their entries independently (rows in order within a block, so
// each column's entries come out sorted by row).
// nb is the number of blocks (see cscBlocks); the result does not depend
// on it.
func (m *Matrix) buildCSC(nb int) {
	n := len(m.Val)
	m.ColPtr = make([]int, m.Cols+1)
	m.RowIdx = make([]int32, n)
	bounds := make([]int, nb+1)
	for b := 1; b < nb; b++ { // rows cut so blocks hold about n/nb entries
		bounds[b], _ = slices.BinarySearch(m.RowPtr, n*b/nb)
		bounds[b] = max(bounds[b], bounds[b-1])
	}
	bounds[nb] = m.Rows
	next := make([][]int32, nb)
	parallelBlocks(nb, func(b int) {
		cnt := make([]int32, m.Cols)
		for _, c := range m.ColIdx[m.RowPtr[bounds[b]]:m.RowPtr[bounds[b+1]]] {
			cnt[c]++
		}
		next[b] = cnt
	})
	// Prefix sums: slot of block b in column j = ColPtr[j] + counts of
	// blocks before b in column j.
	total := 0
	for j := 0; j < m.Cols; j++ {
		m.ColPtr[j] = total
		for b := 0; b < nb; b++ {
			c := next[b][j]
			next[b][j] = int32(total)
			total += int(c)
		}
	}
	m.ColPtr[m.Cols] = total
	parallelBlocks(nb, func(b int) {
		nx := next[b]
		for i := bounds[b]; i < bounds[b+1]; i++ {
			for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
				c := m.ColIdx[k]
				q := nx[c]
				nx[c] = q + 1
				m.RowIdx[q] = int32(i)
			}
		}
	})
}

// cscBlocks is the number of blocks of buildCSC: one per processor, each
// holding at least 64k entries (a block's column counters cost 4·d2 bytes).
func cscBlocks(n int) int { return min(runtime.GOMAXPROCS(0), max(1, n/(1<<16))) }

// parallelBlocks runs fn(0), …, fn(n−1) on n goroutines and waits.
func parallelBlocks(n int, fn func(b int)) { parallel.Strided(n, n, func(_, b int) { fn(b) }) }

// sortRow sorts the parallel slices cols, vals by column index.
func sortRow(cols []int32, vals []float64) {
	if slices.IsSorted(cols) {
		return
	}
	idx := make([]int, len(cols))
	for k := range idx {
		idx[k] = k
	}
	slices.SortFunc(idx, func(a, b int) int { return int(cols[a]) - int(cols[b]) })
	c2 := make([]int32, len(cols))
	v2 := make([]float64, len(vals))
	for k, q := range idx {
		c2[k], v2[k] = cols[q], vals[q]
	}
	copy(cols, c2)
	copy(vals, v2)
}

// EmptyLines returns the number of rows and columns that hold no observed entry.
func (m *Matrix) EmptyLines() (rows, cols int) {
	for i := 0; i < m.Rows; i++ {
		if m.RowPtr[i] == m.RowPtr[i+1] {
			rows++
		}
	}
	for j := 0; j < m.Cols; j++ {
		if m.ColPtr[j] == m.ColPtr[j+1] {
			cols++
		}
	}
	return rows, cols
}
