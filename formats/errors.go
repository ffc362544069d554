package formats

import (
	"fmt"
	"strings"
)

// Error is a problem with the contents of an input file. Its message is one
// line: the file name, then the 1-based line and column when known, then
// what is wrong, e.g.
//
//	data.csv: line 4, column 3: invalid number "1.2.3"
//
// For delimited text the column is the 1-based field number.
type Error struct {
	File   string // file name as given by the caller
	Line   int    // 1-based line number; 0 when not applicable
	Column int    // 1-based column (field) number; 0 when not applicable
	Msg    string // what is wrong
	Err    error  // underlying error, if any
}

// Error formats the error as a single line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(displayName(e.File))
	b.WriteString(": ")
	switch {
	case e.Line > 0 && e.Column > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(oneLine(e.Msg))
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// displayName returns the name used for an unnamed input.
func displayName(name string) string {
	if name == "" {
		return "<input>"
	}
	return name
}

// oneLine replaces line breaks so that an error message stays on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// errf returns an *Error without position.
func errf(file, format string, args ...any) *Error {
	return &Error{File: file, Msg: fmt.Sprintf(format, args...)}
}

// errAt returns an *Error at a line and column (column 0: none).
func errAt(file string, line, col int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// wrapAt returns an *Error at a line and column wrapping err, whose text
// is the message.
func wrapAt(file string, line, col int, err error) *Error {
	return &Error{File: file, Line: line, Column: col, Msg: err.Error(), Err: err}
}

// quoteField quotes offending input text for an error message, shortening
// very long fields.
func quoteField(s string) string {
	const max = 40
	if len(s) > max {
		r := []rune(s)
		if len(r) > max {
			s = string(r[:max]) + "…"
		}
	}
	return fmt.Sprintf("%q", s)
}
