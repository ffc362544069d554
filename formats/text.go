package formats

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// lineReader yields the lines of a text stream with their 1-based numbers,
// without the line terminator ("\n" or "\r\n"), and without a length limit.
type lineReader struct {
	br   *bufio.Reader
	name string
	line int
	buf  []byte
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), name: name}
}

// next returns the next line; ok is false at the end of input. The
// returned slice is valid until the next call.
func (lr *lineReader) next() (line []byte, ok bool, err error) {
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
		return nil, false, &Error{File: lr.name, Line: lr.line + 1, Msg: "reading: " + err.Error(), Err: err}
	}
	lr.line++
	b := bytes.TrimSuffix(lr.buf, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	}
	return b, true, nil
}

// isBlank reports whether a line holds only white space.
func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// splitFields splits a line at delim; delim " " splits at runs of white
// space (leading and trailing white space ignored).
func splitFields(line string, delim string) []string {
	if delim == " " {
		return strings.Fields(line)
	}
	return strings.Split(line, delim)
}
