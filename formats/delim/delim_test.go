package delim

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats/internal/formattest"
	"gonum.org/v1/gonum/mat"
)

func TestDelimitedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := mat.NewDense(40, 9, nil)
	for i := 0; i < 40; i++ {
		for j := 0; j < 9; j++ {
			// Values across many magnitudes, including exact integers and
			// numbers needing all 17 significant digits.
			v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(600)-300))
			if j == 0 {
				v = float64(rng.IntN(1000) - 500)
			}
			m.Set(i, j, v)
		}
	}
	m.Set(0, 1, math.SmallestNonzeroFloat64)
	m.Set(0, 2, math.MaxFloat64)
	m.Set(0, 3, math.Copysign(0, -1))
	dir := t.TempDir()
	for _, name := range []string{"a.csv", "a.tsv", "a.txt", "a.CSV"} {
		path := filepath.Join(dir, name)
		if err := WriteFile(path, m, ""); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !mat.Equal(got, m) {
			t.Fatalf("%s: round trip differs", name)
		}
		if math.Signbit(got.At(0, 3)) != true {
			t.Fatalf("%s: -0 lost its sign", name)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "a.tsv"))
	if first := strings.SplitN(string(raw), "\n", 2)[0]; len(strings.Split(first, "\t")) != 9 {
		t.Fatalf("tsv line %q is not tab-separated", first)
	}
}

func TestDelimitedVariants(t *testing.T) {
	want := [][]float64{{1, 2.5, -3}, {4e-3, 0, 6}}
	cases := []struct {
		name, text string
		opt        Options
	}{
		{"plain", "1,2.5,-3\n4e-3,0,6\n", Options{}},
		{"no final newline", "1,2.5,-3\n4e-3,0,6", Options{}},
		{"crlf and bom", "\xef\xbb\xbf1,2.5,-3\r\n4e-3,0,6\r\n", Options{}},
		{"spaces around fields", " 1 , 2.5,\t-3 \n4e-3 ,0, 6\n", Options{}},
		{"trailing blank lines", "1,2.5,-3\n4e-3,0,6\n\n  \n\n", Options{}},
		{"header", "a,b,c\n1,2.5,-3\n4e-3,0,6\n", Options{Header: true}},
		{"comments", "# written by numpy\n1,2.5,-3\n  # mid\n4e-3,0,6\n", Options{}},
		{"comment then header", "# c\nx,y,z\n1,2.5,-3\n4e-3,0,6\n", Options{Header: true}},
		{"tab", "1\t2.5\t-3\n4e-3\t0\t6\n", Options{Delimiter: "\t"}},
		{"whitespace", "  1   2.5\t-3\n4e-3 0 6  \n", Options{Delimiter: Whitespace}},
		{"semicolon", "1;2.5;-3\n4e-3;0;6\n", Options{Delimiter: ";"}},
	}
	for _, c := range cases {
		got, err := Read(strings.NewReader(c.text), c.name, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		formattest.CheckMatrix(t, c.name, got, want)
	}
	got, err := Read(strings.NewReader("1,NaN\n-Inf,+inf\n"), "x", Options{AllowNonFinite: true})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(got.At(0, 1)) || !math.IsInf(got.At(1, 0), -1) || !math.IsInf(got.At(1, 1), 1) {
		t.Fatalf("non-finite values not read: %v", mat.Formatted(got))
	}
	// A very long line (beyond the bufio buffer) is read whole.
	long := strings.Repeat("1.25,", 50000) + "2\n"
	got, err = Read(strings.NewReader(long+long), "long", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := got.Dims(); r != 2 || c != 50001 || got.At(1, 50000) != 2 || got.At(1, 49999) != 1.25 {
		t.Fatalf("long lines: %d×%d", r, c)
	}
}

func TestDelimitedErrors(t *testing.T) {
	bad := formattest.Bad[Options]
	cases := []formattest.ErrorCase[Options]{
		bad("malformed", "1,2,3\n4,x5,6\n", Options{}, 2, 2, `invalid number "x5"`),
		bad("semicolons", "1;2;3\n4;5;6\n", Options{}, 1, 1, `invalid number "1;2;3" (fields are separated by commas, tabs or white space, not by ; or |)`),
		bad("malformed after comment", "# c\n1,2,3\n4,5,1.2.3\n", Options{}, 3, 3, `"1.2.3"`),
		bad("header hint", "a,b\n1,2\n", Options{}, 1, 1, "header option"),
		bad("empty field", "1,,3\n", Options{}, 1, 2, "empty field"),
		bad("trailing comma", "1,2,\n", Options{}, 1, 3, "empty field"),
		bad("field count", "1,2,3\n4,5,6\n7,8\n", Options{}, 3, 0, "2 fields, but the first row (line 1) has 3"),
		bad("nan", "1,2\n3,nan\n", Options{}, 2, 2, "non-finite"),
		bad("inf", "1,-Inf\n", Options{}, 1, 2, "non-finite"),
		bad("range", "1e999,1\n", Options{}, 1, 1, "out of the float64 range"),
		bad("interior blank", "1,2\n\n3,4\n", Options{}, 2, 0, "blank line inside"),
		bad("wrong delimiter", "1\t2\n", Options{}, 1, 1, `"1\t2"`),
	}
	formattest.CheckErrors(t, "in.csv", cases, func(r io.Reader, name string, opt Options) error {
		_, err := Read(r, name, opt)
		return err
	})
	_, err := Read(strings.NewReader("1,2\n4,x\n"), "in.csv", Options{})
	if want := `in.csv: line 2, column 2: invalid number "x"`; err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	for _, text := range []string{"", "\n\n", "# only a comment\n", "h1,h2\n"} {
		_, err := Read(strings.NewReader(text), "e.csv", Options{Header: true})
		if err == nil || !strings.Contains(err.Error(), "no data rows") {
			t.Errorf("%q: error %v, want no data rows", text, err)
		}
	}
	if _, err := ReadFile("x.json", Options{}); err == nil || !strings.Contains(err.Error(), "delimiter") {
		t.Errorf("unknown extension: %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.csv"), Options{}); err == nil {
		t.Error("missing file: no error")
	}
}

func TestWriteDelimitedFormat(t *testing.T) {
	var buf bytes.Buffer
	m := mat.NewDense(2, 2, []float64{0.1, 1e21, -2, 1.0 / 3})
	if err := Write(&buf, m, ""); err != nil {
		t.Fatal(err)
	}
	if want := "0.1,1e+21\n-2,0.3333333333333333\n"; buf.String() != want {
		t.Fatalf("got %q, want %q", buf.String(), want)
	}
}

func FuzzReadDelimited(f *testing.F) {
	f.Add("1,2\n3,4\n", false)
	f.Add("a,b\n1,2\n\n", true)
	f.Add("1,\"2\"\r\n#x\n", false)
	f.Fuzz(func(t *testing.T, text string, header bool) {
		m, err := Read(strings.NewReader(text), "f.csv", Options{Header: header})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		r, c := m.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if v := m.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite value accepted")
				}
			}
		}
	})
}
