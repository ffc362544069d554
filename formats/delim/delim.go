// Package delim reads and writes matrices of numbers as delimited text:
// CSV, TSV, or fields separated by white space.
package delim

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/internal/textio"
	"github.com/rpca-gd/rpca/outdir"
	"gonum.org/v1/gonum/mat"
)

// Options configures the reading of delimited numeric text.
type Options struct {
	// Delimiter separates fields: ",", "\t", [Whitespace] or any other
	// string. Empty means: from the file extension in
	// [ReadFile] (see [For]), comma in [Read].
	Delimiter string

	// Header skips the first line that is not a comment.
	Header bool

	// AllowNonFinite accepts NaN and ±Inf values; by default they are
	// errors naming their position.
	AllowNonFinite bool
}

// For returns the delimiter implied by a file name's extension:
// "," for .csv, "\t" for .tsv and .tab, [Whitespace] for .txt and .dat
// (case-insensitive). Other extensions are an error.
func For(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return ",", nil
	case ".tsv", ".tab":
		return "\t", nil
	case ".txt", ".dat":
		return Whitespace, nil
	}
	return "", fmt.Errorf("%s: cannot tell the delimiter from the extension (want .csv, .tsv, .tab, .txt or .dat); give it explicitly", path)
}

// Read reads a matrix of numbers, one row per line, from r.
//
// Fields may be surrounded by white space. Lines whose first non-blank
// character is '#' are comments and are skipped anywhere; blank lines are
// allowed only after the last row. Every row must have the same number of
// fields. Errors name the 1-based line and field (column), and the
// offending text. name is used in error messages.
func Read(r io.Reader, name string, opt Options) (*mat.Dense, error) {
	delim := opt.Delimiter
	if delim == "" {
		delim = ","
	}
	lr := textio.NewLineReader(r, name)
	var (
		data      []float64
		cols      int
		rows      int
		firstLine int // line of the first data row
		blankLine int // first blank line after data, if any
		header    = opt.Header
	)
	for {
		b, ok, err := lr.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if textio.IsBlank(b) {
			blankLine = cmp.Or(blankLine, lr.Line)
			continue
		}
		line := string(b)
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if blankLine != 0 {
			return nil, textio.ErrAt(name, blankLine, 0, "blank line inside the data (blank lines are allowed only at the end)")
		}
		if header {
			header = false
			continue
		}
		fields := textio.SplitFields(line, delim)
		if rows == 0 {
			cols = len(fields)
			firstLine = lr.Line
		} else if len(fields) != cols {
			return nil, textio.ErrAt(name, lr.Line, 0, "%d fields, but the first row (line %d) has %d", len(fields), firstLine, cols)
		}
		for j, f := range fields {
			v, err := textio.ParseNumber(f, opt.AllowNonFinite)
			if err != nil {
				e := textio.WrapAt(name, lr.Line, j+1, err)
				if rows == 0 && !opt.Header && !isNumberLike(f) && !errors.Is(err, formats.ErrNonFinite) {
					e.Hint = formats.HintHeader
				}
				return nil, e
			}
			data = append(data, v)
		}
		rows++
	}
	if rows == 0 {
		return nil, textio.Errf(name, "no data rows")
	}
	return mat.NewDense(rows, cols, data), nil
}

// isNumberLike reports whether s starts like a number, to decide whether
// a failure on the first line hints at a header.
func isNumberLike(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return true
	}
	c := s[0]
	return c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9')
}

// ReadFile reads a delimited numeric text file; see
// [Read]. An empty opt.Delimiter is taken from the extension
// ([For]).
func ReadFile(path string, opt Options) (*mat.Dense, error) {
	if opt.Delimiter == "" {
		d, err := For(path)
		if err != nil {
			return nil, err
		}
		opt.Delimiter = d
	}
	return textio.FromFile(path, func(r io.Reader, name string) (*mat.Dense, error) { return Read(r, name, opt) })
}

// Write writes m, one row per line, with fields separated by
// delim ("" means comma; [Whitespace] writes a single space). Numbers are
// written with the shortest representation that reads back exactly
// (strconv 'g', -1).
func Write(w io.Writer, m mat.Matrix, delim string) error {
	rows, cols := m.Dims()
	return WriteRows(w, rows, cols, delim, func(i int, dst []float64) error {
		for j := range dst {
			dst[j] = m.At(i, j)
		}
		return nil
	})
}

// WriteRows writes a rows×cols matrix like [Write],
// asking row(i, dst) for the values of row i in turn (see [WriteNpyRows]).
func WriteRows(w io.Writer, rows, cols int, delim string, row func(i int, dst []float64) error) error {
	if delim == "" {
		delim = ","
	}
	var buf []byte
	vals := make([]float64, cols)
	for i := 0; i < rows; i++ {
		if err := row(i, vals); err != nil {
			return err
		}
		for j, v := range vals {
			if j > 0 {
				buf = append(buf, delim...)
			}
			buf = textio.AppendValue(buf, v)
		}
		var err error
		if buf, err = textio.WriteLine(w, buf); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes m to path atomically; an empty delim is taken
// from the extension ([For]).
func WriteFile(path string, m mat.Matrix, delim string) error {
	if delim == "" {
		d, err := For(path)
		if err != nil {
			return err
		}
		delim = d
	}
	return outdir.WriteFile(path, func(w io.Writer) error { return Write(w, m, delim) })
}

// Whitespace used as a delimiter splits fields at runs of spaces and tabs,
// ignoring leading and trailing white space (the format of numpy.savetxt's
// default and of many hand-written files).
const Whitespace = formats.Whitespace
