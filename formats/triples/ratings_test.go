package triples

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/internal/formattest"
	"github.com/rpca-gd/rpca/outdir"
)

func TestReadRatings(t *testing.T) {
	type entry struct {
		row, col string
		v        float64
	}
	want := []entry{{"alice", "m1", 4}, {"bob", "m2", 3.5}, {"alice", "m3", -1}, {"carol", "m1", 5}}
	cases := []struct {
		name, text string
		opt        Options
	}{
		{"tabs", "alice\tm1\t4\nbob\tm2\t3.5\nalice\tm3\t-1\ncarol\tm1\t5\n", Options{}},
		{"tab ids with spaces trimmed", " alice \tm1\t4\nbob\t m2\t3.5\nalice\tm3\t-1\ncarol\tm1\t5", Options{}},
		{"commas with header", "user,item,rating\nalice,m1,4\nbob,m2,3.5\n\nalice,m3,-1\ncarol,m1,5\n\n", Options{Header: true}},
		{"whitespace", "# comment\nalice  m1 4\r\nbob m2\t 3.5\nalice m3 -1\ncarol m1 5\n", Options{}},
		{"movielens", "alice::m1::4::881250949\nbob::m2::3.5::1\nalice::m3::-1::2\ncarol::m1::5::3\n", Options{Delimiter: "::", IgnoreExtra: true}},
	}
	for _, c := range cases {
		r, err := Read(strings.NewReader(c.text), c.name, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if strings.Join(r.RowIDs, ",") != "alice,bob,carol" || strings.Join(r.ColIDs, ",") != "m1,m2,m3" {
			t.Fatalf("%s: ids %v %v", c.name, r.RowIDs, r.ColIDs)
		}
		if r.D1 != 3 || r.D2 != 3 || r.Len() != len(want) {
			t.Fatalf("%s: %d×%d with %d entries", c.name, r.D1, r.D2, r.Len())
		}
		for k, w := range want {
			i, j, ok := r.Lookup(w.row, w.col)
			if !ok || r.Row[k] != i || r.Col[k] != j || r.Val[k] != w.v || r.RowIDs[i] != w.row || r.ColIDs[j] != w.col {
				t.Fatalf("%s: entry %d = (%d,%d,%v), want %v", c.name, k, r.Row[k], r.Col[k], r.Val[k], w)
			}
		}
		if _, _, ok := r.Lookup("alice", "m9"); ok {
			t.Fatalf("%s: unknown id found", c.name)
		}
	}
}

func TestRatingsErrors(t *testing.T) {
	bad := formattest.Bad[Options]
	cases := []formattest.ErrorCase[Options]{
		bad("two fields", "a\tb\t1\nc\td\n", Options{}, 2, 0, "2 fields, want 3"),
		bad("four fields", "a,b,1,2\n", Options{}, 1, 0, "4 fields, want 3 (row col value) separated by commas (to ignore further fields, enable the ignore-extra option)"),
		bad("bad value", "a b 1\nc d five\n", Options{}, 2, 3, `invalid number "five"`),
		bad("header hint", "user\titem\trating\n", Options{}, 1, 3, "header option"),
		bad("empty row id", " ,b,1\n", Options{}, 1, 1, "empty row id"),
		bad("empty col id", "a,,1\n", Options{}, 1, 2, "empty column id"),
		bad("nan", "a,b,NaN\n", Options{}, 1, 3, "non-finite"),
		bad("no entries", "# nothing\n\n", Options{}, 0, 0, "no entries"),
	}
	formattest.CheckErrors(t, "r.tsv", cases, func(r io.Reader, name string, opt Options) error {
		_, err := Read(r, name, opt)
		return err
	})
	// Too few fields: the ignore-extra hint would be wrong.
	if _, err := Read(strings.NewReader("a\tb\n"), "r.tsv", Options{}); err == nil || strings.Contains(err.Error(), "ignore-extra") {
		t.Errorf("two fields: error %v", err)
	}
	if _, err := ReadPairs(strings.NewReader("a\tb\t1\t2\n"), "p.tsv", Options{}); err == nil || !strings.Contains(err.Error(), "enable the ignore-extra option") {
		t.Errorf("pairs with four fields: error %v", err)
	}
}

func TestRatingsWriteRoundTrip(t *testing.T) {
	in := "u1\tm1\t4\nu2\tm2\t0.1\nu1\tm2\t3\n"
	r, err := Read(strings.NewReader(in), "in.tsv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	pred := &formats.Triplets{D1: r.D1, D2: r.D2, Row: []int{1, 0}, Col: []int{0, 1}, Val: []float64{1.0 / 3, 2.5}}
	path := filepath.Join(t.TempDir(), "pred.tsv")
	err = outdir.WriteFile(path, func(w io.Writer) error { return r.WriteTriplets(w, "", pred) })
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if want := "u2\tm1\t0.3333333333333333\nu1\tm2\t2.5\n"; string(raw) != want {
		t.Fatalf("predictions %q, want %q", raw, want)
	}
	back, err := ReadFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Val[0] != 1.0/3 || back.RowIDs[0] != "u2" {
		t.Fatalf("read back %+v", back)
	}
	var buf bytes.Buffer
	if err := r.WriteTriplets(&buf, ",", &formats.Triplets{Row: []int{5}, Col: []int{0}, Val: []float64{1}}); err == nil {
		t.Error("index without id written without error")
	}
	if err := Write(&buf, ",", []string{"a"}, nil, []float64{1}); err == nil {
		t.Error("ragged input written without error")
	}
}

func FuzzReadRatings(f *testing.F) {
	f.Add("a\tb\t1\n")
	f.Add("x,y,2\nz,y,3\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := Read(strings.NewReader(text), "f.tsv", Options{})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for k := range r.Val {
			if r.Row[k] >= r.D1 || r.Col[k] >= r.D2 {
				t.Fatal("index out of range")
			}
		}
	})
}

func TestDelimiterNames(t *testing.T) {
	for name, want := range map[string]string{"tab": "\t", `\t`: "\t", "comma": ",", "space": formats.Whitespace, "whitespace": formats.Whitespace, "::": "::", "": ""} {
		if got := Delimiter(name); got != want {
			t.Errorf("Delimiter(%q) = %q, want %q", name, got, want)
		}
	}
}
