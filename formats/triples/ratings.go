// Package triples reads and writes "row col value" rating triplets and
// "row col" pairs with arbitrary string ids, the input of rating
// completion.
package triples

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/internal/textio"
)

// Options configures [Read].
type Options struct {
	// Delimiter separates the fields: "\t", ",", [formats.Whitespace], "::" or any
	// other string. Empty means: chosen from the first data line — tab if
	// it contains one, else comma if it contains one, else white space.
	Delimiter string

	// Header skips the first line that is not a comment.
	Header bool

	// IgnoreExtra ignores fields after the third (for example MovieLens
	// timestamps); by default a line must have exactly three fields.
	IgnoreExtra bool

	// AllowNonFinite accepts NaN and ±Inf values.
	AllowNonFinite bool
}

// Ratings is a partially observed matrix read from "row col value" lines
// with arbitrary string ids. Row and column ids get indices 0, 1, … in
// order of first appearance. The embedded formats.Triplets hold the entries in
// file order, with D1 = len(RowIDs) and D2 = len(ColIDs), and the line of
// each entry; duplicate (row, col) pairs are not detected here (see
// [Ratings.CheckDuplicates]).
type Ratings struct {
	RowIDs, ColIDs     []string       // index → id
	RowIndex, ColIndex map[string]int // id → index
	formats.Triplets
}

// Lookup returns the indices of a (row id, column id) pair; ok is false if
// either id did not occur in the input.
func (r *Ratings) Lookup(rowID, colID string) (i, j int, ok bool) {
	i, ok1 := r.RowIndex[rowID]
	j, ok2 := r.ColIndex[colID]
	return i, j, ok1 && ok2
}

// Read reads "row col value" lines. Ids are any non-empty text
// without the delimiter (surrounding white space is trimmed); values are
// numbers. Lines whose first non-blank character is '#' and blank lines
// are skipped. Errors name the 1-based line and field. name is used in
// error messages.
func Read(r io.Reader, name string, opt Options) (*Ratings, error) {
	out := &Ratings{RowIndex: map[string]int{}, ColIndex: map[string]int{}}
	err := newIDLines(r, name, opt).each(3, opt.IgnoreExtra, "3 (row col value)", func(l *idLines, f []string, rowID, colID string) error {
		v, err := textio.ParseNumber(f[2], opt.AllowNonFinite)
		if err != nil {
			e := textio.WrapAt(name, l.lr.Line, 3, err)
			if len(out.Val) == 0 && !opt.Header && !errors.Is(err, formats.ErrNonFinite) {
				e.Hint = formats.HintHeader
			}
			return e
		}
		i, j := out.index(rowID, colID)
		out.Row, out.Col, out.Val = append(out.Row, i), append(out.Col, j), append(out.Val, v)
		out.Line = append(out.Line, l.lr.Line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out.Val) == 0 {
		return nil, textio.Errf(name, "no entries")
	}
	out.D1, out.D2 = len(out.RowIDs), len(out.ColIDs)
	return out, nil
}

func delimName(d string) string {
	switch d {
	case "\t":
		return "tabs"
	case ",":
		return "commas"
	case textio.Whitespace:
		return "white space"
	}
	return strconv.Quote(d)
}

// index returns the indices of the ids, giving each new id the next one.
func (r *Ratings) index(rowID, colID string) (i, j int) {
	i, ok := r.RowIndex[rowID]
	if !ok {
		i = len(r.RowIDs)
		r.RowIndex[rowID] = i
		r.RowIDs = append(r.RowIDs, rowID)
	}
	j, ok = r.ColIndex[colID]
	if !ok {
		j = len(r.ColIDs)
		r.ColIndex[colID] = j
		r.ColIDs = append(r.ColIDs, colID)
	}
	return i, j
}

// ReadFile reads a ratings file; see [Read].
func ReadFile(path string, opt Options) (*Ratings, error) {
	return textio.FromFile(path, func(r io.Reader, name string) (*Ratings, error) { return Read(r, name, opt) })
}

// Write writes "row col value" lines separated by delim ("" means
// tab; [formats.Whitespace] writes one space), values with full precision.
// rows, cols and vals must have equal lengths.
func Write(w io.Writer, delim string, rows, cols []string, vals []float64) error {
	if len(rows) != len(vals) || len(cols) != len(vals) {
		return fmt.Errorf("formats: %d row ids, %d column ids and %d values; want equal lengths", len(rows), len(cols), len(vals))
	}
	if delim == "" {
		delim = "\t"
	}
	var buf []byte
	for k, v := range vals {
		buf = append(buf, rows[k]...)
		buf = append(buf, delim...)
		buf = append(buf, cols[k]...)
		buf = append(buf, delim...)
		var err error
		if buf, err = textio.WriteLine(w, textio.AppendValue(buf, v)); err != nil {
			return err
		}
	}
	return nil
}

// WriteTriplets writes the entries of t, whose indices refer to r's ids,
// as "row col value" lines with the original ids (for example predictions
// of a completion). delim as in [Write].
func (r *Ratings) WriteTriplets(w io.Writer, delim string, t *formats.Triplets) error {
	if len(t.Row) != len(t.Val) || len(t.Col) != len(t.Val) {
		return fmt.Errorf("formats: triplets have %d rows, %d cols and %d values; want equal lengths", len(t.Row), len(t.Col), len(t.Val))
	}
	rows := make([]string, len(t.Val))
	cols := make([]string, len(t.Val))
	for k := range t.Val {
		i, j := t.Row[k], t.Col[k]
		if i < 0 || i >= len(r.RowIDs) || j < 0 || j >= len(r.ColIDs) {
			return fmt.Errorf("formats: entry %d at (%d, %d) has no id (%d row ids, %d column ids)", k, i, j, len(r.RowIDs), len(r.ColIDs))
		}
		rows[k], cols[k] = r.RowIDs[i], r.ColIDs[j]
	}
	return Write(w, delim, rows, cols, t.Val)
}

// CheckDuplicates returns an error naming the line of the first rating
// (in file order) whose (row id, column id) pair occurred before, and the
// line of the earlier rating; nil when every pair occurs once.
func (r *Ratings) CheckDuplicates(name string) error {
	a, b, ok := r.FindDuplicate()
	if !ok {
		return nil
	}
	return textio.ErrAt(name, r.LineOf(b), 0, "duplicate rating for row %s, column %s (first given%s)",
		textio.Quote(r.RowIDs[r.Row[b]]), textio.Quote(r.ColIDs[r.Col[b]]), onLine(r.LineOf(a)))
}

func onLine(line int) string {
	if line > 0 {
		return fmt.Sprintf(" on line %d", line)
	}
	return " earlier"
}

// Delimiter returns the delimiter a name stands for: "tab" (or `\t`),
// "comma", "space" or "whitespace" ([formats.Whitespace]); any other
// string is itself (empty: detected, see Options).
func Delimiter(name string) string {
	switch name {
	case "tab", `\t`:
		return "\t"
	case "comma":
		return ","
	case "space", "whitespace":
		return textio.Whitespace
	}
	return name
}
