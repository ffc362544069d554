package npy

import (
	"fmt"
	"strconv"
	"strings"
)

// This file parses the small subset of Python literal syntax that appears
// in .npy headers: dicts, tuples, lists, strings, integers, True, False and
// None. Values are returned as
//
//	map[string]any  dict (keys must be strings)
//	[]any           tuple or list
//	string, int64, bool, nil

// maxLiteralDepth bounds the nesting of containers, so that a hostile
// header cannot exhaust the stack.
const maxLiteralDepth = 32

type pyParser struct {
	s   string
	pos int
}

// parsePyLiteral parses s as a single Python literal followed only by
// white space.
func parsePyLiteral(s string) (any, error) {
	p := &pyParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("unexpected %s after the header dict", p.near())
	}
	return v, nil
}

func (p *pyParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

// near describes the input at the current position for error messages.
func (p *pyParser) near() string {
	if p.pos >= len(p.s) {
		return "end of header"
	}
	rest := p.s[p.pos:]
	if len(rest) > 12 {
		rest = rest[:12]
	}
	return fmt.Sprintf("%q at offset %d", rest, p.pos)
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > maxLiteralDepth {
		return nil, fmt.Errorf("header nests deeper than %d levels", maxLiteralDepth)
	}
	p.skipSpace()
	if p.pos >= len(p.s) {
		return nil, fmt.Errorf("unexpected end of header")
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		return p.dict(depth)
	case c == '(':
		return p.sequence(depth, ')')
	case c == '[':
		return p.sequence(depth, ']')
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.integer()
	case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		start := p.pos
		for p.pos < len(p.s) && isIdentByte(p.s[p.pos]) {
			p.pos++
		}
		switch id := p.s[start:p.pos]; id {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		default:
			return nil, fmt.Errorf("unexpected name %q in header", id)
		}
	default:
		return nil, fmt.Errorf("unexpected %s", p.near())
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *pyParser) dict(depth int) (any, error) {
	p.pos++ // '{'
	d := map[string]any{}
	for {
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return d, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("header dict key %v is not a string", k)
		}
		p.skipSpace()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return nil, fmt.Errorf("expected ':' after key %q, found %s", key, p.near())
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if _, dup := d[key]; dup {
			return nil, fmt.Errorf("header dict repeats key %q", key)
		}
		d[key] = v
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, fmt.Errorf("header dict is not closed")
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
		default:
			return nil, fmt.Errorf("expected ',' or '}' in header dict, found %s", p.near())
		}
	}
}

func (p *pyParser) sequence(depth int, closer byte) (any, error) {
	p.pos++ // '(' or '['
	var items []any
	for {
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == closer {
			p.pos++
			if items == nil {
				items = []any{}
			}
			return items, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, fmt.Errorf("%q is not closed", closer)
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case closer:
		default:
			return nil, fmt.Errorf("expected ',' or %q, found %s", closer, p.near())
		}
	}
}

func (p *pyParser) str() (any, error) {
	quote := p.s[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == quote:
			p.pos++
			return b.String(), nil
		case c == '\\' && p.pos+1 < len(p.s):
			// Only the escapes that can matter in a dtype string.
			e := p.s[p.pos+1]
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			p.pos += 2
		case c == '\n':
			return nil, fmt.Errorf("line break inside a string in header")
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return nil, fmt.Errorf("unterminated string in header")
}

func (p *pyParser) integer() (any, error) {
	start := p.pos
	if c := p.s[p.pos]; c == '-' || c == '+' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits {
		return nil, fmt.Errorf("expected a number at offset %d", start)
	}
	text := p.s[start:p.pos]
	// Python 2 long suffix, as written by old NumPy versions: (3L, 4L).
	if p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'l') {
		p.pos++
	}
	if p.pos < len(p.s) && (p.s[p.pos] == '.' || p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		return nil, fmt.Errorf("non-integer number at offset %d in header", start)
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s in header is out of range", text)
	}
	return n, nil
}
