package formats

import (
	"errors"
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
	Hint   Hint   // a reader option that would accept the input, if any
	// HintOption is how the message names the hint's option ("":
	// Hint.Option()); a command line sets its flag, e.g. "use --header".
	HintOption string
}

// Hint names a reader option that would have accepted an input that
// failed; callers with other names for the options (command-line flags)
// can reword it from the field instead of the message.
type Hint int

// The hints.
const (
	NoHint          Hint = iota
	HintHeader           // the first line may be a header: the header option skips it
	HintIgnoreExtra      // a line has more fields than needed: the ignore-extra option drops them
)

// Text returns how the hint reads in Error's message, naming the option
// as option.
func (h Hint) Text(option string) string {
	switch h {
	case HintHeader:
		return "if the first line is a header, " + option
	case HintIgnoreExtra:
		return "to ignore further fields, " + option
	}
	return ""
}

// Option returns the generic name of the option of the hint.
func (h Hint) Option() string {
	switch h {
	case HintHeader:
		return "enable the header option"
	case HintIgnoreExtra:
		return "enable the ignore-extra option"
	}
	return ""
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
	if e.Hint != NoHint {
		opt := e.HintOption
		if opt == "" {
			opt = e.Hint.Option()
		}
		fmt.Fprintf(&b, " (%s)", e.Hint.Text(opt))
	}
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

// ErrNonFinite is wrapped by the errors for NaN and ±Inf values where
// they are not allowed.
var ErrNonFinite = errors.New("non-finite value")

// Whitespace used as a delimiter splits fields at runs of spaces and tabs,
// ignoring leading and trailing white space (the format of numpy.savetxt's
// default and of many hand-written files).
const Whitespace = " "
