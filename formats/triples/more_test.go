package triples

import (
	"strings"
	"testing"
)

func TestCheckDuplicates(t *testing.T) {
	cases := []struct {
		name, text string
		err        string // "" means no duplicate
	}{
		{"none", "a b 1\na c 2\nb b 3\n", ""},
		{"adjacent", "a b 1\na b 2\n", "line 2: duplicate rating for row \"a\", column \"b\" (first given on line 1)"},
		// Two duplicated pairs: the one repeated first in the file is reported.
		{"earliest repetition", "# c\nx y 1\na b 1\nq r 1\nx y 2\na b 3\na b 4\n", "line 5: duplicate rating for row \"x\", column \"y\" (first given on line 2)"},
		{"triple", "a b 1\nc d 1\na b 2\na b 3\n", "line 3: duplicate rating for row \"a\", column \"b\" (first given on line 1)"},
	}
	for _, c := range cases {
		r, err := Read(strings.NewReader(c.text), "r.txt", Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = r.CheckDuplicates("r.txt")
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: unexpected %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.err)
		}
	}
}

func TestReadPairs(t *testing.T) {
	p, err := ReadPairs(strings.NewReader("user,item\n# c\nu1,m1\n\nu2, m2 ,4.5\n"), "p.csv", Options{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 2 || p.Row[1] != "u2" || p.Col[1] != "m2" || p.Line[0] != 3 || p.Line[1] != 5 {
		t.Fatalf("got %+v", p)
	}
	for _, c := range []struct{ text, want string }{
		{"u1\n", "line 1: 1 fields, want 2"},
		{"a\tb\tc\td\n", "line 1: 4 fields"},
		{"a\t\n", "line 1, column 2: empty column id"},
	} {
		_, err := ReadPairs(strings.NewReader(c.text), "p", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.text, err, c.want)
		}
	}
	if p, err := ReadPairs(strings.NewReader("a b 1 2\n"), "p", Options{IgnoreExtra: true}); err != nil || p.Len() != 1 {
		t.Errorf("IgnoreExtra: %v", err)
	}
}
