// Package load reads a data matrix from a file for rpca.Solve: NumPy .npy,
// delimited text (CSV, TSV, white space) and Matrix Market (array or
// coordinate). It picks the format from the extension, checks the size and
// the memory a solve would need before it allocates, can sample the
// entries while a file is read (the paper's subsampling, Section 4.2, with
// the project's one sampler), and can treat NaN as a missing entry.
//
// A dense file gives a dense problem; a coordinate file with fewer entries
// than d1·d2, a dense file with NaN entries under Options.MissingNaN, or
// sampling gives a partially observed one (Algorithm 2).
package load

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/sample"
)

// Format is a file format of data matrices.
type Format string

// The formats File reads.
const (
	NPY          Format = "npy" // NumPy array, float or integer, C or Fortran order
	CSV          Format = "csv" // numbers separated by commas, one row per line
	TSV          Format = "tsv" // numbers separated by tabs
	Text         Format = "txt" // numbers separated by white space
	MatrixMarket Format = "mtx" // Matrix Market array (dense) or coordinate (observed entries)
)

// Formats lists the formats in the order of the help texts.
var Formats = []Format{NPY, CSV, TSV, Text, MatrixMarket}

// Errors for callers to tell apart with errors.Is.
var (
	// ErrFormat: the format is unknown or cannot be told from the name.
	ErrFormat = errors.New("unknown input format")
	// ErrPartialSample: sampling was asked of data that are already
	// partially observed.
	ErrPartialSample = errors.New("cannot sample a partially observed matrix")
	// ErrNoEntries: nothing was observed (all NaN, or the rate too small).
	ErrNoEntries = errors.New("no entries observed")
)

// FormatOf returns the format given by override, when not empty, or by the
// extension of path.
func FormatOf(path string, override Format) (Format, error) {
	if override != "" {
		o := Format(strings.ToLower(string(override)))
		for _, f := range Formats {
			if f == o {
				return o, nil
			}
		}
		return "", fmt.Errorf("%w %q (want npy, csv, tsv, txt or mtx)", ErrFormat, override)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".npy":
		return NPY, nil
	case ".csv":
		return CSV, nil
	case ".tsv", ".tab":
		return TSV, nil
	case ".txt", ".dat":
		return Text, nil
	case ".mtx", ".mm":
		return MatrixMarket, nil
	case "":
		return "", fmt.Errorf("%w: %s has no extension to tell its format", ErrFormat, path)
	default:
		return "", fmt.Errorf("%w %q of %s (want .npy, .csv, .tsv, .txt or .mtx)", ErrFormat, ext, path)
	}
}

// Options control File.
type Options struct {
	// Format overrides the extension ("" = by extension).
	Format Format
	// Header skips the first line of a delimited text file.
	Header bool
	// MissingNaN makes NaN entries of a dense file missing entries
	// instead of errors.
	MissingNaN bool
	// Sample, with P in (0, 1), observes each entry of a dense file with
	// probability P (an .npy file is sampled while read, so that it never
	// needs to fit in memory). P = 0 or 1 keeps every entry.
	Sample rpca.Sampling
	// CheckDims, when set, is called with the size as soon as it is known,
	// before the data are read; its error is returned as it is.
	CheckDims func(d1, d2 int) error
	// BytesPerEntry is the memory per entry a solve of a dense problem
	// needs, the matrix included (0: DenseBytesPerEntry); see
	// rpca.Capabilities.BytesPerEntry.
	BytesPerEntry float64
	// Available is the free memory in bytes (0: AvailableMemory()).
	// A load that would not fit returns a *MemoryError.
	Available float64
}

// Matrix is a loaded data matrix: exactly one of Dense and Observed is set.
type Matrix struct {
	Dense    *mat.Dense
	Observed *rpca.Observed
	D1, D2   int
	Format   Format
	// Sampled says whether the entries were sampled (Options.Sample).
	Sampled bool
}

// Problem returns the problem of solving for m (without a truth).
func (m *Matrix) Problem() *rpca.Problem {
	return &rpca.Problem{Dense: m.Dense, Observed: m.Observed}
}

// NonFiniteError is a NaN or ±Inf entry of a dense file. It wraps
// formats.ErrNonFinite.
type NonFiniteError struct {
	File     string
	Row, Col int // 1-based
	Value    float64
}

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("%s: non-finite value %v at row %d, column %d (NaN and Inf are not allowed)", e.File, e.Value, e.Row, e.Col)
}

// Unwrap returns formats.ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return formats.ErrNonFinite }

// loader carries one File call.
type loader struct {
	path string
	opt  Options
	m    *Matrix
}

// File reads the data matrix in path.
func File(path string, opt Options) (*Matrix, error) {
	format, err := FormatOf(path, opt.Format)
	if err != nil {
		return nil, err
	}
	if err := CheckReadable(path); err != nil {
		return nil, err
	}
	opt.BytesPerEntry = cmp.Or(opt.BytesPerEntry, DenseBytesPerEntry)
	if opt.Available == 0 {
		opt.Available = AvailableMemory()
	}
	if opt.Sample.P >= 1 {
		opt.Sample.P = 0
	}
	l := &loader{path: path, opt: opt, m: &Matrix{Format: format}}
	switch format {
	case NPY:
		err = l.npy()
	case MatrixMarket:
		err = l.matrixMarket()
	default:
		err = l.text(format)
	}
	if err != nil {
		return nil, err
	}
	if l.m.Dense != nil {
		err = l.finishDense()
	}
	if err != nil {
		return nil, err
	}
	return l.m, nil
}

// sampling reports whether entries are sampled.
func (l *loader) sampling() bool { return l.opt.Sample.P > 0 }

// setDims records the size and runs the caller's check.
func (l *loader) setDims(d1, d2 int) error {
	l.m.D1, l.m.D2 = d1, d2
	if l.opt.CheckDims != nil {
		return l.opt.CheckDims(d1, d2)
	}
	return nil
}

func (l *loader) npy() error {
	nf, err := npy.Open(l.path)
	if err != nil {
		return err
	}
	defer nf.Close()
	d1, d2 := nf.Header.Dims()
	if err := l.setDims(d1, d2); err != nil {
		return err
	}
	if err := l.checkDense(true); err != nil {
		return err
	}
	if !l.sampling() {
		l.m.Dense, err = nf.ReadDense()
		return err
	}
	// Sample while reading: Φ first (the sampler is keyed by position),
	// then the values of its entries as the file streams past, in either
	// storage order (each row's columns arrive in increasing order).
	rowPtr, colIdx := l.positions(d1, d2)
	next := make([]int, d1) // next position of each row
	copy(next, rowPtr[:d1])
	val := make([]float64, len(colIdx))
	err = nf.Scan(func(i, j int, v float64) error {
		// Every value is checked, sampled or not, as for a file read whole.
		if err := l.checkValue(i, j, v); err != nil {
			return err
		}
		if q := next[i]; q < rowPtr[i+1] && int(colIdx[q]) == j {
			next[i]++
			val[q] = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.m.Sampled = true
	return l.observe(rowPtr, colIdx, val)
}

// positions returns the positions to observe: those the sampler draws
// for Options.Sample (covered when asked), or every position.
func (l *loader) positions(d1, d2 int) ([]int, []int32) {
	s := l.opt.Sample
	if !l.sampling() {
		return sample.Bernoulli{P: 1}.Positions(d1, d2, 0)
	}
	rowPtr, colIdx := sample.Bernoulli{P: s.P, Seed: s.Seed}.Positions(d1, d2, 0)
	if s.Cover {
		rowPtr, colIdx, _ = sample.Cover(d1, d2, rowPtr, colIdx, s.Seed)
	}
	return rowPtr, colIdx
}

// observe builds the observed matrix from Φ and its values, dropping NaN
// entries (missing, with MissingNaN).
func (l *loader) observe(rowPtr []int, colIdx []int32, val []float64) error {
	if l.opt.MissingNaN {
		w := 0
		for i := 0; i < l.m.D1; i++ {
			lo := rowPtr[i]
			rowPtr[i] = w
			for q := lo; q < rowPtr[i+1]; q++ {
				if !math.IsNaN(val[q]) {
					colIdx[w], val[w] = colIdx[q], val[q]
					w++
				}
			}
		}
		rowPtr[l.m.D1] = w
		colIdx, val = colIdx[:w], val[:w]
	}
	if len(val) == 0 {
		return fmt.Errorf("%w in %s (all NaN, or the sampling rate too small)", ErrNoEntries, l.path)
	}
	obs, err := rpca.NewObservedCSR(l.m.D1, l.m.D2, rowPtr, colIdx, val)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.m.Observed = obs
	return nil
}

func (l *loader) text(format Format) error {
	if est, ok := estimateTextEntries(l.path); ok {
		if err := l.checkMemory(est, fmt.Sprintf("a file of about %.3g numbers", est), false); err != nil {
			return err
		}
	}
	sep := map[Format]string{CSV: ",", TSV: "\t", Text: delim.Whitespace}[format]
	y, err := delim.ReadFile(l.path, delim.Options{Delimiter: sep, Header: l.opt.Header, AllowNonFinite: l.opt.MissingNaN})
	if err != nil {
		return err
	}
	if err := l.setDims(y.Dims()); err != nil {
		return err
	}
	l.m.Dense = y
	return l.checkDense(false)
}

// checkDense checks the memory of a dense problem of the loaded size;
// streamed says the file is sampled while read.
func (l *loader) checkDense(streamed bool) error {
	return l.checkMemory(float64(l.m.D1)*float64(l.m.D2), fmt.Sprintf("a dense %d×%d matrix", l.m.D1, l.m.D2), streamed)
}

// checkMemory refuses a problem of the given number of entries that would
// not fit in the free memory.
func (l *loader) checkMemory(entries float64, what string, streamed bool) error {
	per := l.opt.BytesPerEntry
	if p := l.opt.Sample.P; p > 0 {
		per = SampledBytesPerEntry * p
		if !streamed {
			per += 8 // the whole matrix is read first
		}
	}
	need := per * entries
	if need <= l.opt.Available {
		return nil
	}
	return &MemoryError{File: l.path, What: what, Need: need, Available: l.opt.Available, Rate: l.opt.Sample.P,
		MaxRate: 0.5 * l.opt.Available / (SampledBytesPerEntry * entries), Streamed: l.m.Format == NPY}
}

// checkValue rejects NaN (unless missing) and ±Inf; i and j are 0-based.
func (l *loader) checkValue(i, j int, v float64) error {
	if math.IsInf(v, 0) || (math.IsNaN(v) && !l.opt.MissingNaN) {
		return &NonFiniteError{File: l.path, Row: i + 1, Col: j + 1, Value: v}
	}
	return nil
}

// finishDense checks every value of a dense matrix and turns it into
// observed entries when NaN marks missing ones or entries are sampled.
func (l *loader) finishDense() error {
	raw := l.m.Dense.RawMatrix()
	nans := 0
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		if kernels.AllFinite(row) {
			continue
		}
		for j, v := range row {
			if err := l.checkValue(i, j, v); err != nil {
				return err
			}
			if math.IsNaN(v) {
				nans++
			}
		}
	}
	if nans == 0 && !l.sampling() {
		return nil
	}
	l.m.Sampled = l.sampling()
	rowPtr, colIdx := l.positions(raw.Rows, raw.Cols)
	val := make([]float64, len(colIdx))
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride:]
		for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
			val[q] = row[colIdx[q]]
		}
	}
	l.m.Dense = nil
	return l.observe(rowPtr, colIdx, val)
}

// matrixMarket reads an array (dense) or coordinate (partial) file.
func (l *loader) matrixMarket() error {
	h, d1, d2, nnz, err := mtx.ReadSize(l.path)
	if err != nil {
		return err
	}
	if err := l.setDims(d1, d2); err != nil {
		return err
	}
	if h.Format == "array" {
		if err := l.checkDense(false); err != nil {
			return err
		}
	} else if err := l.checkCoordinate(nnz); err != nil {
		return err
	}
	mm, err := mtx.ReadFile(l.path)
	if err != nil {
		return err
	}
	if mm.Dense != nil {
		l.m.Dense = mm.Dense
		return nil
	}
	t := mm.Coord
	if err := t.CheckDuplicates(l.path); err != nil {
		return err
	}
	if l.sampling() {
		return fmt.Errorf("%w: %s holds %d of the %d entries", ErrPartialSample, l.path, t.Len(), d1*d2)
	}
	if t.Len() == d1*d2 {
		// Every entry is given: a dense matrix, for which every method works.
		l.m.Dense = mat.NewDense(d1, d2, nil)
		for k, v := range t.Val {
			l.m.Dense.Set(t.Row[k], t.Col[k], v)
		}
		return nil
	}
	l.m.Observed, err = rpca.NewObserved(d1, d2, t.Row, t.Col, t.Val)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	return nil
}

// checkCoordinate checks a coordinate file of nnz entries before reading.
func (l *loader) checkCoordinate(nnz int) error {
	d1, d2 := l.m.D1, l.m.D2
	// Algorithm 2 needs an observed entry in every row and column;
	// refusing fewer entries here also keeps a size line of huge
	// dimensions from allocating per-row and per-column arrays.
	if nnz < max(d1, d2) {
		// Report a bad entry (an index out of range, 0-based or negative)
		// before the count, when the file is small enough to read without
		// per-line arrays of a huge size.
		if max(d1, d2) <= 1<<24 {
			if _, err := mtx.ReadFile(l.path); err != nil {
				return err
			}
		}
		return fmt.Errorf("%s: %d entries cannot cover the %d rows and %d columns of a %d×%d matrix; every row and column needs an observed entry", l.path, nnz, d1, d2, d1, d2)
	}
	if need := CoordinateBytesPerEntry * float64(nnz); need > l.opt.Available {
		return &MemoryError{File: l.path, What: fmt.Sprintf("%d entries", nnz), Need: need, Available: l.opt.Available}
	}
	return nil
}

// CheckReadable returns a short error for a missing or unreadable file, a
// directory, or a file that is not regular (a named pipe, a device:
// reading one can block without end, out of reach of cancellation); nil
// for a readable regular file. The error wraps os.ErrNotExist when the
// file is missing, and formats.ErrNotRegular when it is not regular.
func CheckReadable(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return missingFile(path)
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot read input file %s: %w", path, err)
	case st.IsDir():
		return fmt.Errorf("input %s is a directory, not a file", path)
	case !st.Mode().IsRegular():
		_, err := formats.Open(path) // the error naming the kind of file
		return err
	}
	return nil
}

// missingFile is the error of CheckReadable for a file that does not
// exist; it wraps os.ErrNotExist without repeating its text.
type missingFile string

func (m missingFile) Error() string { return "input file " + string(m) + " does not exist" }
func (m missingFile) Unwrap() error { return os.ErrNotExist }

// estimateTextEntries estimates the number of values in a delimited text
// file from its size and its first lines, without reading it all.
func estimateTextEntries(path string) (float64, bool) {
	fh, err := formats.Open(path)
	if err != nil {
		return 0, false
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return 0, false
	}
	buf := make([]byte, 1<<20)
	n, _ := fh.Read(buf)
	buf = buf[:n]
	lines := strings.Split(string(buf), "\n")
	if len(lines) < 2 && int64(n) < st.Size() {
		// One line longer than the buffer: at least 2 bytes per value.
		return float64(st.Size()) / 2, true
	}
	if len(lines) > 1 && int64(n) < st.Size() {
		lines = lines[:len(lines)-1] // the last one may be cut
	}
	vals, bytes := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		vals += len(strings.FieldsFunc(l, func(r rune) bool { return r == ',' || r == '\t' || r == ' ' }))
		bytes += len(l) + 1
	}
	if bytes == 0 {
		return 0, false
	}
	return float64(vals) * float64(st.Size()) / float64(bytes), true
}
