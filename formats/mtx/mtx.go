// Package mtx reads and writes Matrix Market files: coordinate (the
// entries of a sparse or partially observed matrix) and array (dense).
package mtx

import (
	"fmt"
	"io"
	"iter"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/internal/textio"
	"github.com/rpca-gd/rpca/outdir"
	"gonum.org/v1/gonum/mat"
)

// Header is the banner of a Matrix Market file, lower-cased.
type Header struct {
	Object   string // "matrix"
	Format   string // "coordinate" or "array"
	Field    string // "real" or "integer" (others are rejected)
	Symmetry string // "general", "symmetric" or "skew-symmetric"
}

// Matrix is the content of a Matrix Market file: Coord for the
// coordinate format, Dense for the array format.
type Matrix struct {
	Header Header
	Coord  *formats.Triplets
	Dense  *mat.Dense
}

// initialCap bounds preallocation from counts declared in headers: larger
// inputs grow by appending, so memory follows the data actually present.
const initialCap = 1 << 20

// Read reads a Matrix Market "matrix" file in coordinate or
// array format with real or integer values (integers are converted to
// float64).
//
// Coordinate entries are returned as 0-based [formats.Triplets] in file order. For
// symmetric (skew-symmetric) files each off-diagonal entry (i, j, v) is
// also returned mirrored as (j, i, v) (resp. (j, i, −v)); entries from
// either triangle are accepted. Duplicate positions are not detected here.
// Pattern matrices are rejected because they carry no values; complex and
// Hermitian ones are not supported.
//
// Array files (column-major values; for symmetric files the lower
// triangle) are returned as a dense matrix.
//
// Errors name the line: a malformed banner or size line, indices out of
// range, too few or too many entries, malformed or non-finite values.
// name is used in error messages.
func Read(r io.Reader, name string) (*Matrix, error) {
	lr := textio.NewLineReader(r, name)
	h, size, err := readMMHead(lr)
	if err != nil {
		return nil, err
	}
	mm := &Matrix{Header: h}
	if h.Format == "coordinate" {
		mm.Coord, err = readMMCoordinate(lr, h, size)
	} else {
		mm.Dense, err = readMMArray(lr, h, size)
	}
	if err != nil {
		return nil, err
	}
	return mm, nil
}

// readMMHead reads the banner and the fields of the size line.
func readMMHead(lr *textio.LineReader) (Header, []string, error) {
	name := lr.Name
	first, ok, err := lr.Next()
	if err != nil {
		return Header{}, nil, err
	}
	if !ok {
		return Header{}, nil, textio.Errf(name, "empty file, not a Matrix Market file")
	}
	h, err := parseMMBanner(string(first))
	if err != nil {
		return h, nil, textio.ErrAt(name, 1, 0, "%v", err)
	}
	// Size line: first line that is neither a comment nor blank.
	s, ok, err := nextMMLine(lr)
	if err != nil {
		return h, nil, err
	}
	if !ok {
		return h, nil, textio.Errf(name, "no size line after the banner")
	}
	return h, strings.Fields(s), nil
}

// nextMMLine returns the next Matrix Market line that is neither blank nor
// a '%' comment, trimmed; ok is false at the end of input.
func nextMMLine(lr *textio.LineReader) (s string, ok bool, err error) {
	for {
		b, ok, err := lr.Next()
		if err != nil || !ok {
			return "", false, err
		}
		if s := strings.TrimSpace(string(b)); s != "" && s[0] != '%' {
			return s, true, nil
		}
	}
}

// mmLines yields the remaining data lines of lr as nextMMLine returns
// them, or a read error, after which it stops.
func mmLines(lr *textio.LineReader) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for {
			s, ok, err := nextMMLine(lr)
			if err != nil {
				yield("", err)
				return
			}
			if !ok || !yield(s, nil) {
				return
			}
		}
	}
}

// ReadSize reads only the banner and the size line of a
// Matrix Market file, so that a caller can check the matrix size d1×d2
// and the number of stored entries (declared entries for coordinate
// files, d1·d2 for array files) before reading the data. The entries are
// not checked; [Read] does that.
func ReadSize(path string) (h Header, d1, d2, entries int, err error) {
	f, err := formats.Open(path)
	if err != nil {
		return h, 0, 0, 0, err
	}
	defer f.Close()
	lr := textio.NewLineReader(f, path)
	h, size, err := readMMHead(lr)
	if err != nil {
		return h, 0, 0, 0, err
	}
	if h.Format == "coordinate" {
		if len(size) == 2 {
			return h, 0, 0, 0, textio.ErrAt(path, lr.Line, 0, "size line has 2 fields, want 3 (rows cols entries); is this an array file with a coordinate banner?")
		}
		d1, d2, err = parseDims(lr, h, size, 3)
		if err != nil {
			return h, 0, 0, 0, err
		}
		entries, _ = strconv.Atoi(size[2])
		return h, d1, d2, entries, nil
	}
	if len(size) == 3 {
		return h, 0, 0, 0, textio.ErrAt(path, lr.Line, 0, "size line has 3 fields, want 2 (rows cols); is this a coordinate file with an array banner?")
	}
	d1, d2, err = parseDims(lr, h, size, 2)
	if err != nil {
		return h, 0, 0, 0, err
	}
	return h, d1, d2, d1 * d2, nil
}

// ReadFile reads a Matrix Market file; see [Read].
func ReadFile(path string) (*Matrix, error) {
	return textio.FromFile(path, Read)
}

func parseMMBanner(line string) (Header, error) {
	f := strings.Fields(strings.ToLower(line))
	if len(f) == 0 || f[0] != "%%matrixmarket" {
		return Header{}, fmt.Errorf("not a Matrix Market file (first line must start with %%%%MatrixMarket)")
	}
	if len(f) != 5 {
		return Header{}, fmt.Errorf("banner has %d words, want \"%%%%MatrixMarket matrix coordinate|array real|integer general|symmetric|skew-symmetric\"", len(f))
	}
	h := Header{Object: f[1], Format: f[2], Field: f[3], Symmetry: f[4]}
	if h.Object != "matrix" {
		return h, fmt.Errorf("unsupported object %q (want matrix)", h.Object)
	}
	if h.Format != "coordinate" && h.Format != "array" {
		return h, fmt.Errorf("unsupported format %q (want coordinate or array)", h.Format)
	}
	switch h.Field {
	case "real", "double", "integer":
		if h.Field == "double" {
			h.Field = "real"
		}
	case "pattern":
		return h, fmt.Errorf("pattern matrices have no values and cannot be used as data (want real or integer)")
	case "complex":
		return h, fmt.Errorf("complex matrices are not supported (want real or integer)")
	default:
		return h, fmt.Errorf("unsupported field %q (want real or integer)", h.Field)
	}
	switch h.Symmetry {
	case "general", "symmetric", "skew-symmetric":
	case "hermitian":
		return h, fmt.Errorf("hermitian matrices are not supported")
	default:
		return h, fmt.Errorf("unsupported symmetry %q (want general, symmetric or skew-symmetric)", h.Symmetry)
	}
	return h, nil
}

// parseDims parses positive matrix dimensions from the size line.
func parseDims(lr *textio.LineReader, h Header, size []string, want int) (d1, d2 int, err error) {
	name := lr.Name
	if len(size) != want {
		form, hint := "rows cols entries", "; is this an array file with a coordinate banner?"
		if want == 2 {
			form, hint = "rows cols", "; is this a coordinate file with an array banner?"
		}
		if len(size) != 5-want { // 2 for 3 or 3 for 2: the other format's size line
			hint = ""
		}
		return 0, 0, textio.ErrAt(name, lr.Line, 0, "size line has %d fields, want %d (%s)%s", len(size), want, form, hint)
	}
	d := make([]int, want)
	for k, s := range size {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return 0, 0, textio.ErrAt(name, lr.Line, k+1, "size %s is not a non-negative integer", textio.Quote(s))
		}
		d[k] = v
	}
	if d[0] == 0 || d[1] == 0 {
		return 0, 0, textio.ErrAt(name, lr.Line, 0, "matrix size %d×%d is empty", d[0], d[1])
	}
	if h.Symmetry != "general" && d[0] != d[1] {
		return 0, 0, textio.ErrAt(name, lr.Line, 0, "%s matrix must be square, size line says %d×%d", h.Symmetry, d[0], d[1])
	}
	if d[0] > math.MaxInt/d[1] {
		return 0, 0, textio.ErrAt(name, lr.Line, 0, "matrix size %d×%d overflows", d[0], d[1])
	}
	return d[0], d[1], nil
}

// parseMMValue parses a real or integer value.
func parseMMValue(s, field string) (float64, error) {
	if field == "integer" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid integer %s", textio.Quote(s))
		}
		return float64(v), nil
	}
	return textio.ParseNumber(s, false)
}

func readMMCoordinate(lr *textio.LineReader, h Header, size []string) (*formats.Triplets, error) {
	name := lr.Name
	d1, d2, err := parseDims(lr, h, size, 3)
	if err != nil {
		return nil, err
	}
	nnz, _ := strconv.Atoi(size[2])
	if nnz > d1*d2 {
		return nil, textio.ErrAt(name, lr.Line, 3, "%d entries declared for a %d×%d matrix", nnz, d1, d2)
	}
	mirror := h.Symmetry != "general"
	c := min(nnz, initialCap)
	if mirror {
		c = min(2*nnz, initialCap)
	}
	t := &formats.Triplets{D1: d1, D2: d2, Row: make([]int, 0, c), Col: make([]int, 0, c), Val: make([]float64, 0, c), Line: make([]int, 0, c)}
	read := 0
	for s, err := range mmLines(lr) {
		if err != nil {
			return nil, err
		}
		if read == nnz {
			return nil, textio.ErrAt(name, lr.Line, 0, "more entries than the %d declared on the size line", nnz)
		}
		f := strings.Fields(s)
		if len(f) != 3 {
			return nil, textio.ErrAt(name, lr.Line, 0, "entry has %d fields, want 3 (row col value)", len(f))
		}
		i, err := parseIndex(f[0], d1)
		if err != nil {
			return nil, textio.ErrAt(name, lr.Line, 1, "row %v", err)
		}
		j, err := parseIndex(f[1], d2)
		if err != nil {
			return nil, textio.ErrAt(name, lr.Line, 2, "column %v", err)
		}
		v, err := parseMMValue(f[2], h.Field)
		if err != nil {
			return nil, textio.WrapAt(name, lr.Line, 3, err)
		}
		if h.Symmetry == "skew-symmetric" && i == j {
			return nil, textio.ErrAt(name, lr.Line, 0, "skew-symmetric matrix stores a diagonal entry")
		}
		t.Row, t.Col, t.Val = append(t.Row, i), append(t.Col, j), append(t.Val, v)
		t.Line = append(t.Line, lr.Line)
		if mirror && i != j {
			if h.Symmetry == "skew-symmetric" {
				v = -v
			}
			t.Row, t.Col, t.Val = append(t.Row, j), append(t.Col, i), append(t.Val, v)
			t.Line = append(t.Line, lr.Line)
		}
		read++
	}
	if read != nnz {
		return nil, textio.Errf(name, "size line declares %d entries, but the file has %d", nnz, read)
	}
	return t, nil
}

// parseIndex parses a 1-based index in [1, n] and returns it 0-based.
func parseIndex(s string, n int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("index %s is not an integer", textio.Quote(s))
	}
	if v < 1 || v > n {
		return 0, fmt.Errorf("index %d is out of range 1..%d", v, n)
	}
	return v - 1, nil
}

func readMMArray(lr *textio.LineReader, h Header, size []string) (*mat.Dense, error) {
	name := lr.Name
	d1, d2, err := parseDims(lr, h, size, 2)
	if err != nil {
		return nil, err
	}
	want := d1 * d2
	switch h.Symmetry {
	case "symmetric":
		want = d1 * (d1 + 1) / 2
	case "skew-symmetric":
		want = d1 * (d1 - 1) / 2
	}
	vals := make([]float64, 0, min(want, initialCap))
	for s, err := range mmLines(lr) {
		if err != nil {
			return nil, err
		}
		for k, f := range strings.Fields(s) {
			if len(vals) == want {
				return nil, textio.ErrAt(name, lr.Line, k+1, "more values than the %d a %s %d×%d array holds", want, h.Symmetry, d1, d2)
			}
			v, err := parseMMValue(f, h.Field)
			if err != nil {
				return nil, textio.WrapAt(name, lr.Line, k+1, err)
			}
			vals = append(vals, v)
		}
	}
	if len(vals) != want {
		return nil, textio.Errf(name, "a %s %d×%d array holds %d values, but the file has %d", h.Symmetry, d1, d2, want, len(vals))
	}
	m := mat.NewDense(d1, d2, nil)
	k := 0
	for j := 0; j < d2; j++ {
		switch h.Symmetry {
		case "general":
			for i := 0; i < d1; i++ {
				m.Set(i, j, vals[k])
				k++
			}
		case "symmetric":
			for i := j; i < d1; i++ {
				m.Set(i, j, vals[k])
				m.Set(j, i, vals[k])
				k++
			}
		default: // skew-symmetric
			for i := j + 1; i < d1; i++ {
				m.Set(i, j, vals[k])
				m.Set(j, i, -vals[k])
				k++
			}
		}
	}
	return m, nil
}

// Sparse is a sparse matrix that can list its stored entries, such
// as *rpca.Sparse.
type Sparse interface {
	Dims() (rows, cols int)
	NNZ() int
	// Do calls fn for every stored entry.
	Do(fn func(i, j int, v float64))
}

// RowSparse is a Sparse that lists the entries of a range of rows on its
// own. WriteSparse formats such a matrix by blocks of rows on every core,
// and writes the blocks in order.
type RowSparse interface {
	Sparse
	// DoRows calls fn for every stored entry of rows lo, …, hi−1, in the
	// order Do lists them.
	DoRows(lo, hi int, fn func(i, j int, v float64))
}

// WriteSparse writes s in coordinate real general format with
// 1-based indices, entries in the order s.Do lists them.
func WriteSparse(w io.Writer, s Sparse) error {
	rows, cols := s.Dims()
	nnz := s.NNZ()
	if _, err := fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", rows, cols, nnz); err != nil {
		return err
	}
	if rs, ok := s.(RowSparse); ok && nnz >= 2*blockEntries && runtime.GOMAXPROCS(0) > 1 {
		return writeRowBlocks(w, rs, rows, cols, nnz, runtime.GOMAXPROCS(0))
	}
	var (
		buf  = make([]byte, 0, 64<<10)
		werr error
		n    int
	)
	s.Do(func(i, j int, v float64) {
		if werr != nil {
			return
		}
		n++
		if i < 0 || i >= rows || j < 0 || j >= cols {
			werr = fmt.Errorf("formats: sparse entry (%d, %d) outside the %d×%d matrix", i, j, rows, cols)
			return
		}
		buf = appendEntry(buf, i, j, v)
		if len(buf) > cap(buf)-64 {
			_, werr = w.Write(buf)
			buf = buf[:0]
		}
	})
	if werr != nil {
		return werr
	}
	if n != nnz {
		return fmt.Errorf("formats: sparse matrix reports %d entries but lists %d", nnz, n)
	}
	_, err := w.Write(buf)
	return err
}

// blockEntries is about the number of entries writeRowBlocks formats in
// one block (about 2 MB of text).
const blockEntries = 1 << 16

// writeRowBlocks writes the entries of s, after the header, by blocks of
// rows of about blockEntries entries: workers goroutines format blocks
// into buffers while the caller writes them in order. A block is started
// only with one of 2·workers tokens, which the caller gives back once it
// has written a block, so memory stays bounded whatever the size of s;
// after an error no new block is started.
func writeRowBlocks(w io.Writer, s RowSparse, rows, cols, nnz, workers int) error {
	per := max(1, int(int64(rows)*blockEntries/int64(nnz)))
	nb := (rows + per - 1) / per
	type block struct {
		buf []byte
		n   int
		err error
	}
	done := make([]chan block, nb)
	for k := range done {
		done[k] = make(chan block, 1)
	}
	tokens := make(chan struct{}, 2*workers)
	for range cap(tokens) {
		tokens <- struct{}{}
	}
	// The buffers go round: one per token, taken with it and given back
	// once written.
	free := make(chan []byte, cap(tokens))
	quit := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, nb) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-tokens:
				case <-quit:
					return
				}
				// A token before an index, so that the blocks in
				// progress are always the first ones not yet written.
				k := int(next.Add(1)) - 1
				if k >= nb {
					return
				}
				var b block
				select {
				case b.buf = <-free:
				default:
					b.buf = make([]byte, 0, blockEntries*32)
				}
				s.DoRows(k*per, min((k+1)*per, rows), func(i, j int, v float64) {
					b.n++
					if b.err != nil {
						return
					}
					if i < 0 || i >= rows || j < 0 || j >= cols {
						b.err = fmt.Errorf("formats: sparse entry (%d, %d) outside the %d×%d matrix", i, j, rows, cols)
						return
					}
					b.buf = appendEntry(b.buf, i, j, v)
				})
				done[k] <- b
			}
		}()
	}
	var err error
	n := 0
	for k := 0; k < nb; k++ {
		b := <-done[k]
		n += b.n
		if err = b.err; err == nil {
			_, err = w.Write(b.buf)
		}
		if err != nil {
			break
		}
		free <- b.buf[:0]
		tokens <- struct{}{}
	}
	close(quit)
	wg.Wait()
	if err != nil {
		return err
	}
	if n != nnz {
		return fmt.Errorf("formats: sparse matrix reports %d entries but lists %d", nnz, n)
	}
	return nil
}

func appendEntry(buf []byte, i, j int, v float64) []byte {
	buf = strconv.AppendInt(buf, int64(i)+1, 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, int64(j)+1, 10)
	buf = append(buf, ' ')
	buf = textio.AppendValue(buf, v)
	return append(buf, '\n')
}

// tripletSparse adapts formats.Triplets to Sparse.
type tripletSparse struct{ t *formats.Triplets }

func (s tripletSparse) Dims() (int, int) { return s.t.D1, s.t.D2 }
func (s tripletSparse) NNZ() int         { return len(s.t.Val) }
func (s tripletSparse) Do(fn func(i, j int, v float64)) {
	for k, v := range s.t.Val {
		fn(s.t.Row[k], s.t.Col[k], v)
	}
}

// WriteTriplets writes t in coordinate real general format,
// entries in the given order.
func WriteTriplets(w io.Writer, t *formats.Triplets) error {
	if len(t.Row) != len(t.Val) || len(t.Col) != len(t.Val) {
		return fmt.Errorf("formats: triplets have %d rows, %d cols and %d values; want equal lengths", len(t.Row), len(t.Col), len(t.Val))
	}
	return WriteSparse(w, tripletSparse{t})
}

// WriteDense writes m in array real general format (values in
// column-major order, one per line).
func WriteDense(w io.Writer, m mat.Matrix) error {
	rows, cols := m.Dims()
	if _, err := fmt.Fprintf(w, "%%%%MatrixMarket matrix array real general\n%d %d\n", rows, cols); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			buf = textio.AppendValue(buf, m.At(i, j))
			buf = append(buf, '\n')
			if len(buf) > cap(buf)-32 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// WriteFile writes s to path atomically in coordinate real
// general format; see [WriteSparse] and [outdir.WriteFile].
func WriteFile(path string, s Sparse) error {
	return outdir.WriteFile(path, func(w io.Writer) error { return WriteSparse(w, s) })
}
