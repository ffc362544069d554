package triples

import (
	"io"
	"strings"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/internal/textio"
)

// Pairs is a list of (row id, column id) pairs, for example the entries
// whose values a completed matrix should predict.
type Pairs struct {
	Row, Col []string
	Line     []int // 1-based line of each pair
}

// Len returns the number of pairs.
func (p *Pairs) Len() int { return len(p.Row) }

// ReadPairs reads "row col" lines with the conventions of [Read]
// (delimiter, comments, blank lines, header). A line may have a third
// field, which is ignored, so that a ratings file (for example a test
// set) can be used as is; with opt.IgnoreExtra any further fields are
// ignored too. An empty input is allowed and gives no pairs.
func ReadPairs(r io.Reader, name string, opt Options) (*Pairs, error) {
	out := &Pairs{}
	err := newIDLines(r, name, opt).each(2, opt.IgnoreExtra, "2 (row col) or 3 (row col value)", func(l *idLines, _ []string, rowID, colID string) error {
		out.Row = append(out.Row, rowID)
		out.Col = append(out.Col, colID)
		out.Line = append(out.Line, l.lr.Line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadPairsFile reads a pairs file; see [ReadPairs].
func ReadPairsFile(path string, opt Options) (*Pairs, error) {
	return textio.FromFile(path, func(r io.Reader, name string) (*Pairs, error) { return ReadPairs(r, name, opt) })
}

// idLines reads the data lines of a "row col [value]" file for
// [Read] and [ReadPairs]: blank lines and lines whose first
// non-blank character is '#' are skipped, and so is the first data line
// when header is set; an empty delim is guessed from the first data line.
type idLines struct {
	lr     *textio.LineReader
	name   string
	delim  string
	header bool
}

func newIDLines(r io.Reader, name string, opt Options) *idLines {
	return &idLines{lr: textio.NewLineReader(r, name), name: name, delim: opt.Delimiter, header: opt.Header}
}

// each calls fn with the fields and the ids of every data line, after
// checking that it has at least least fields (at most 3 without
// ignoreExtra; want says what they should be) and non-empty ids. It stops
// at the first error.
func (l *idLines) each(least int, ignoreExtra bool, want string, fn func(l *idLines, fields []string, row, col string) error) error {
	for {
		f, ok, err := l.next()
		if err != nil || !ok {
			return err
		}
		if err := l.checkFields(len(f), least, ignoreExtra, want); err != nil {
			return err
		}
		row, col, err := l.ids(f)
		if err != nil {
			return err
		}
		if err := fn(l, f, row, col); err != nil {
			return err
		}
	}
}

// next returns the fields of the next data line; ok is false at the end.
func (l *idLines) next() (fields []string, ok bool, err error) {
	for {
		b, ok, err := l.lr.Next()
		if err != nil || !ok {
			return nil, false, err
		}
		if textio.IsBlank(b) {
			continue
		}
		line := string(b)
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if l.header {
			l.header = false
			continue
		}
		if l.delim == "" {
			l.delim = guessDelimiter(line)
		}
		return textio.SplitFields(line, l.delim), true, nil
	}
}

// errAt returns an error at field (1-based, 0 for none) of the current line.
func (l *idLines) errAt(field int, format string, args ...any) *formats.Error {
	return textio.ErrAt(l.name, l.lr.Line, field, format, args...)
}

// checkFields returns an error unless a line of n fields has at least
// least of them and, without ignoreExtra, at most 3; want says what the
// fields should be. Extra fields get the hint of the ignore-extra option.
func (l *idLines) checkFields(n, least int, ignoreExtra bool, want string) error {
	if n >= least && (n <= 3 || ignoreExtra) {
		return nil
	}
	e := l.errAt(0, "%d fields, want %s separated by %s", n, want, delimName(l.delim))
	if n > 3 {
		e.Hint = formats.HintIgnoreExtra
	}
	return e
}

// ids returns the trimmed, non-empty row and column ids of fields (at
// least two).
func (l *idLines) ids(fields []string) (row, col string, err error) {
	row, col = strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])
	if row == "" {
		return "", "", l.errAt(1, "empty row id")
	}
	if col == "" {
		return "", "", l.errAt(2, "empty column id")
	}
	return row, col, nil
}

// guessDelimiter picks tab if line has one, else comma if it has one,
// else white space.
func guessDelimiter(line string) string {
	switch {
	case strings.Contains(line, "\t"):
		return "\t"
	case strings.Contains(line, ","):
		return ","
	}
	return textio.Whitespace
}
