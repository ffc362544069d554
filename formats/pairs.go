package formats

import (
	"io"
	"os"
	"strings"
)

// Pairs is a list of (row id, column id) pairs, for example the entries
// whose values a completed matrix should predict.
type Pairs struct {
	Row, Col []string
	Line     []int // 1-based line of each pair
}

// Len returns the number of pairs.
func (p *Pairs) Len() int { return len(p.Row) }

// ReadPairs reads "row col" lines with the conventions of [ReadRatings]
// (delimiter, comments, blank lines, header). A line may have a third
// field, which is ignored, so that a ratings file (for example a test
// set) can be used as is; with opt.IgnoreExtra any further fields are
// ignored too. An empty input is allowed and gives no pairs.
func ReadPairs(r io.Reader, name string, opt RatingOptions) (*Pairs, error) {
	lr := newLineReader(r, name)
	out := &Pairs{}
	delim := opt.Delimiter
	header := opt.Header
	for {
		b, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if isBlank(b) {
			continue
		}
		line := string(b)
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if header {
			header = false
			continue
		}
		if delim == "" {
			delim = guessDelimiter(line)
		}
		f := splitFields(line, delim)
		if len(f) < 2 || (len(f) > 3 && !opt.IgnoreExtra) {
			return nil, errAt(name, lr.line, 0, "%d fields, want 2 (row col) or 3 (row col value) separated by %s", len(f), delimName(delim))
		}
		rowID, colID := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
		if rowID == "" {
			return nil, errAt(name, lr.line, 1, "empty row id")
		}
		if colID == "" {
			return nil, errAt(name, lr.line, 2, "empty column id")
		}
		out.Row = append(out.Row, rowID)
		out.Col = append(out.Col, colID)
		out.Line = append(out.Line, lr.line)
	}
	return out, nil
}

// ReadPairsFile reads a pairs file; see [ReadPairs].
func ReadPairsFile(path string, opt RatingOptions) (*Pairs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadPairs(f, path, opt)
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
	return Whitespace
}
