package formats

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Whitespace used as a delimiter splits fields at runs of spaces and tabs,
// ignoring leading and trailing white space (the format of numpy.savetxt's
// default and of many hand-written files).
const Whitespace = " "

// TextOptions configures the reading of delimited numeric text.
type TextOptions struct {
	// Delimiter separates fields: ",", "\t", [Whitespace] or any other
	// string. Empty means: from the file extension in
	// [ReadDelimitedFile] (see [DelimiterFor]), comma in [ReadDelimited].
	Delimiter string

	// Header skips the first line that is not a comment.
	Header bool

	// AllowNonFinite accepts NaN and ±Inf values; by default they are
	// errors naming their position.
	AllowNonFinite bool
}

// DelimiterFor returns the delimiter implied by a file name's extension:
// "," for .csv, "\t" for .tsv and .tab, [Whitespace] for .txt and .dat
// (case-insensitive). Other extensions are an error.
func DelimiterFor(path string) (string, error) {
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

// ReadDelimited reads a matrix of numbers, one row per line, from r.
//
// Fields may be surrounded by white space. Lines whose first non-blank
// character is '#' are comments and are skipped anywhere; blank lines are
// allowed only after the last row. Every row must have the same number of
// fields. Errors name the 1-based line and field (column), and the
// offending text. name is used in error messages.
func ReadDelimited(r io.Reader, name string, opt TextOptions) (*mat.Dense, error) {
	delim := opt.Delimiter
	if delim == "" {
		delim = ","
	}
	lr := newLineReader(r, name)
	var (
		data      []float64
		cols      int
		rows      int
		firstLine int // line of the first data row
		blankLine int // first blank line after data, if any
		header    = opt.Header
	)
	for {
		b, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if isBlank(b) {
			if blankLine == 0 {
				blankLine = lr.line
			}
			continue
		}
		line := string(b)
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if blankLine != 0 {
			return nil, errAt(name, blankLine, 0, "blank line inside the data (blank lines are allowed only at the end)")
		}
		if header {
			header = false
			continue
		}
		fields := splitFields(line, delim)
		if rows == 0 {
			cols = len(fields)
			firstLine = lr.line
		} else if len(fields) != cols {
			return nil, errAt(name, lr.line, 0, "%d fields, but the first row (line %d) has %d", len(fields), firstLine, cols)
		}
		for j, f := range fields {
			v, err := parseNumber(f, opt.AllowNonFinite)
			if err != nil {
				e := wrapAt(name, lr.line, j+1, err)
				if rows == 0 && !opt.Header && !isNumberLike(f) && !errors.Is(err, ErrNonFinite) {
					e.Msg += " (if the first line is a header, enable the header option)"
				}
				return nil, e
			}
			data = append(data, v)
		}
		rows++
	}
	if rows == 0 {
		return nil, errf(name, "no data rows")
	}
	return mat.NewDense(rows, cols, data), nil
}

// ErrNonFinite is wrapped by the errors for NaN and ±Inf values where
// they are not allowed.
var ErrNonFinite = errors.New("non-finite value")

// parseNumber parses one trimmed field.
func parseNumber(field string, allowNonFinite bool) (float64, error) {
	f := strings.TrimSpace(field)
	if f == "" {
		return 0, errors.New("empty field")
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("number %s is out of the float64 range", quoteField(f))
		}
		return 0, fmt.Errorf("invalid number %s", quoteField(f))
	}
	if !allowNonFinite && (math.IsNaN(v) || math.IsInf(v, 0)) {
		return 0, fmt.Errorf("%w %s (NaN and Inf are not allowed)", ErrNonFinite, quoteField(f))
	}
	return v, nil
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

// ReadDelimitedFile reads a delimited numeric text file; see
// [ReadDelimited]. An empty opt.Delimiter is taken from the extension
// ([DelimiterFor]).
func ReadDelimitedFile(path string, opt TextOptions) (*mat.Dense, error) {
	if opt.Delimiter == "" {
		d, err := DelimiterFor(path)
		if err != nil {
			return nil, err
		}
		opt.Delimiter = d
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadDelimited(f, path, opt)
}

// WriteDelimited writes m, one row per line, with fields separated by
// delim ("" means comma; [Whitespace] writes a single space). Numbers are
// written with the shortest representation that reads back exactly
// (strconv 'g', -1).
func WriteDelimited(w io.Writer, m mat.Matrix, delim string) error {
	rows, cols := m.Dims()
	return WriteDelimitedRows(w, rows, cols, delim, func(i int, dst []float64) error {
		for j := range dst {
			dst[j] = m.At(i, j)
		}
		return nil
	})
}

// WriteDelimitedRows writes a rows×cols matrix like [WriteDelimited],
// asking row(i, dst) for the values of row i in turn (see [WriteNpyRows]).
func WriteDelimitedRows(w io.Writer, rows, cols int, delim string, row func(i int, dst []float64) error) error {
	if delim == "" {
		delim = ","
	}
	var buf []byte
	vals := make([]float64, cols)
	for i := 0; i < rows; i++ {
		if err := row(i, vals); err != nil {
			return err
		}
		buf = buf[:0]
		for j, v := range vals {
			if j > 0 {
				buf = append(buf, delim...)
			}
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// WriteDelimitedFile writes m to path atomically; an empty delim is taken
// from the extension ([DelimiterFor]).
func WriteDelimitedFile(path string, m mat.Matrix, delim string) error {
	if delim == "" {
		d, err := DelimiterFor(path)
		if err != nil {
			return err
		}
		delim = d
	}
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteDelimited(w, m, delim) })
}
