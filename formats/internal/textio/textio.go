// Package textio holds the line reading, number parsing and error
// helpers shared by the text formats.
package textio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rpca-gd/rpca/formats"
)

// LineReader yields the lines of a text stream with their 1-based numbers,
// without the line terminator ("\n" or "\r\n"), and without a length limit.
type LineReader struct {
	br   *bufio.Reader
	Name string // file name for errors
	Line int    // number of the last line returned, 1-based
	buf  []byte
}

func NewLineReader(r io.Reader, name string) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), Name: name}
}

// next returns the next line; ok is false at the end of input. The
// returned slice is valid until the next call.
func (lr *LineReader) Next() (line []byte, ok bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.br.ReadSlice('\n')
		lr.buf = append(lr.buf, chunk...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(lr.buf) == 0 {
				return nil, false, nil
			}
			break
		}
		return nil, false, &formats.Error{File: lr.Name, Line: lr.Line + 1, Msg: "reading: " + err.Error(), Err: err}
	}
	lr.Line++
	b := bytes.TrimSuffix(lr.buf, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if lr.Line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	}
	return b, true, nil
}

// IsBlank reports whether a line holds only white space.
func IsBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// SplitFields splits a line at delim; delim " " splits at runs of white
// space (leading and trailing white space ignored).
func SplitFields(line string, delim string) []string {
	if delim == " " {
		return strings.Fields(line)
	}
	return strings.Split(line, delim)
}

// Errf returns an *formats.Error without position.
func Errf(file, format string, args ...any) *formats.Error {
	return &formats.Error{File: file, Msg: fmt.Sprintf(format, args...)}
}

// ErrAt returns an *formats.Error at a line and column (column 0: none).
func ErrAt(file string, line, col int, format string, args ...any) *formats.Error {
	return &formats.Error{File: file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// WrapAt returns an *formats.Error at a line and column wrapping err, whose text
// is the message.
func WrapAt(file string, line, col int, err error) *formats.Error {
	return &formats.Error{File: file, Line: line, Column: col, Msg: err.Error(), Err: err}
}

// Quote quotes offending input text for an error message, shortening
// very long fields.
func Quote(s string) string {
	const max = 40
	if len(s) > max {
		r := []rune(s)
		if len(r) > max {
			s = string(r[:max]) + "…"
		}
	}
	return fmt.Sprintf("%q", s)
}

// ParseNumber parses one trimmed field.
func ParseNumber(field string, allowNonFinite bool) (float64, error) {
	f := strings.TrimSpace(field)
	if f == "" {
		return 0, errors.New("empty field")
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("number %s is out of the float64 range", Quote(f))
		}
		if strings.ContainsAny(f, ";|") {
			return 0, fmt.Errorf("invalid number %s (fields are separated by commas, tabs or white space, not by ; or |)", Quote(f))
		}
		return 0, fmt.Errorf("invalid number %s", Quote(f))
	}
	if !allowNonFinite && (math.IsNaN(v) || math.IsInf(v, 0)) {
		return 0, fmt.Errorf("%w %s (NaN and Inf are not allowed)", formats.ErrNonFinite, Quote(f))
	}
	return v, nil
}

// Whitespace is formats.Whitespace.
const Whitespace = formats.Whitespace

// AppendValue appends v to buf in the shortest form that reads back as
// the same float64, the number format of every text writer.
func AppendValue(buf []byte, v float64) []byte {
	return strconv.AppendFloat(buf, v, 'g', -1, 64)
}

// WriteLine ends the line in buf with a newline and writes it to w,
// returning buf emptied for the next line.
func WriteLine(w io.Writer, buf []byte) ([]byte, error) {
	buf = append(buf, '\n')
	_, err := w.Write(buf)
	return buf[:0], err
}

// FromFile opens path and reads it with read, which names the path in its
// errors. It is the ReadFile of the text formats (delim, mtx, triples).
func FromFile[T any](path string, read func(r io.Reader, name string) (T, error)) (T, error) {
	f, err := formats.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, path)
}
