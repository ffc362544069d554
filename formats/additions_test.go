package formats

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
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
		r, err := ReadRatings(strings.NewReader(c.text), "r.txt", RatingOptions{})
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

// TestFindDuplicateRandom compares FindDuplicate with a quadratic search.
func TestFindDuplicateRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(30)
		tr := &Triplets{D1: 6, D2: 6}
		for k := 0; k < n; k++ {
			tr.Row = append(tr.Row, rng.IntN(6))
			tr.Col = append(tr.Col, rng.IntN(6))
			tr.Val = append(tr.Val, 0)
		}
		wa, wb, wok := -1, -1, false
		for b := 0; b < n && !wok; b++ {
			for a := 0; a < b; a++ {
				if tr.Row[a] == tr.Row[b] && tr.Col[a] == tr.Col[b] {
					wa, wb, wok = a, b, true
					break
				}
			}
		}
		a, b, ok := tr.FindDuplicate()
		if ok != wok || (ok && (a != wa || b != wb)) {
			t.Fatalf("trial %d: got (%d, %d, %v), want (%d, %d, %v)", trial, a, b, ok, wa, wb, wok)
		}
	}
}

func TestMatrixMarketLinesAndDuplicates(t *testing.T) {
	text := "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 3\n1 1 1\n2 1 2\n\n1 2 5\n"
	mm, err := ReadMatrixMarket(strings.NewReader(text), "s.mtx")
	if err != nil {
		t.Fatal(err)
	}
	if got := mm.Coord.Line; len(got) != 5 || got[0] != 4 || got[1] != 5 || got[2] != 5 || got[3] != 7 || got[4] != 7 {
		t.Fatalf("lines %v", got)
	}
	// (1,2) on line 7 mirrors to (2,1), which line 5 gave already.
	err = mm.Coord.CheckDuplicates("s.mtx")
	if err == nil || !strings.Contains(err.Error(), "s.mtx: line 7: duplicate entry at row") || !strings.Contains(err.Error(), "first given on line 5") {
		t.Fatalf("got %v", err)
	}
}

func TestReadPairs(t *testing.T) {
	p, err := ReadPairs(strings.NewReader("user,item\n# c\nu1,m1\n\nu2, m2 ,4.5\n"), "p.csv", RatingOptions{Header: true})
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
		_, err := ReadPairs(strings.NewReader(c.text), "p", RatingOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.text, err, c.want)
		}
	}
	if p, err := ReadPairs(strings.NewReader("a b 1 2\n"), "p", RatingOptions{IgnoreExtra: true}); err != nil || p.Len() != 1 {
		t.Errorf("IgnoreExtra: %v", err)
	}
}

func randomDense(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(9)-4)))
		}
	}
	return m
}

func TestWriteRowsMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := randomDense(rng, 7, 5)
	row := func(i int, dst []float64) error { copy(dst, m.RawRowView(i)); return nil }
	var a, b bytes.Buffer
	if err := WriteNpyRows(&a, 7, 5, row); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNpy(bytes.NewReader(a.Bytes()), "a")
	if err != nil || !mat.Equal(got, m) {
		t.Fatalf("npy rows round trip: %v", err)
	}
	if err := WriteDelimitedRows(&b, 7, 5, ",", row); err != nil {
		t.Fatal(err)
	}
	got, err = ReadDelimited(bytes.NewReader(b.Bytes()), "b", TextOptions{})
	if err != nil || !mat.Equal(got, m) {
		t.Fatalf("csv rows round trip: %v", err)
	}
	stop := errors.New("stop")
	if err := WriteNpyRows(&a, 7, 5, func(i int, dst []float64) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("row error not returned: %v", err)
	}
}

func TestWriteNpyWith(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := randomDense(rng, 4, 3)
	for _, opt := range []NpyOptions{{}, {Float32: true}, {FortranOrder: true}, {Float32: true, FortranOrder: true}} {
		var buf bytes.Buffer
		if err := WriteNpyWith(&buf, m, opt); err != nil {
			t.Fatal(err)
		}
		h, err := ReadNpyHeader(bytes.NewReader(buf.Bytes()), "x")
		if err != nil {
			t.Fatal(err)
		}
		if h.FortranOrder != opt.FortranOrder || (h.Descr == "<f4") != opt.Float32 || h.DataOffset%64 != 0 {
			t.Fatalf("%+v: header %+v", opt, h)
		}
		got, err := ReadNpy(bytes.NewReader(buf.Bytes()), "x")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			for j := 0; j < 3; j++ {
				want := m.At(i, j)
				if opt.Float32 {
					want = float64(float32(want))
				}
				if got.At(i, j) != want {
					t.Fatalf("%+v: (%d,%d) = %v, want %v", opt, i, j, got.At(i, j), want)
				}
			}
		}
	}
}

func TestReadMatrixMarketSize(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text      string
		format    string
		d1, d2, n int
		err       string
	}{
		{"%%MatrixMarket matrix coordinate real general\n% c\n\n4 5 3\n1 1 1\n", "coordinate", 4, 5, 3, ""},
		{"%%MatrixMarket matrix array real general\n2 3\n1\n", "array", 2, 3, 6, ""},
		{"%%MatrixMarket matrix coordinate real general\n4 5\n", "", 0, 0, 0, "line 2: size line has 2 fields"},
		{"hello\n", "", 0, 0, 0, "line 1: not a Matrix Market file"},
	} {
		p := filepath.Join(dir, "m.mtx")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		h, d1, d2, n, err := ReadMatrixMarketSize(p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: got %v, want %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil || h.Format != c.format || d1 != c.d1 || d2 != c.d2 || n != c.n {
			t.Errorf("%q: got %v %d %d %d %v", c.text, h, d1, d2, n, err)
		}
	}
}

func TestCheckOutputDir(t *testing.T) {
	dir := t.TempDir()
	if err := CheckOutputDir(filepath.Join(dir, "new"), false); err != nil {
		t.Fatalf("missing dir: %v", err)
	}
	if err := CheckOutputDir(dir, false); err != nil {
		t.Fatalf("empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
	if err := CheckOutputDir(dir, false); !errors.Is(err, ErrDirExists) {
		t.Fatalf("non-empty dir: %v", err)
	}
	if err := CheckOutputDir(dir, true); !errors.Is(err, ErrNotOurOutput) {
		t.Fatalf("force on a directory rpca did not write: %v", err)
	}
	os.WriteFile(filepath.Join(dir, OwnerMarker), nil, 0o644)
	if err := CheckOutputDir(dir, true); err != nil {
		t.Fatalf("force: %v", err)
	}
	if err := CheckOutputDir(filepath.Join(dir, "f"), true); err == nil {
		t.Fatal("a file accepted as output directory")
	}
}

func TestErrNonFinite(t *testing.T) {
	_, err := ReadDelimited(strings.NewReader("NaN,1\n"), "a.csv", TextOptions{})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "a.csv: line 1, column 1: non-finite value \"NaN\"") || strings.Contains(err.Error(), "header") {
		t.Errorf("csv: %v", err)
	}
	_, err = ReadMatrixMarket(strings.NewReader("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 inf\n"), "b.mtx")
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "b.mtx: line 3, column 3") {
		t.Errorf("mtx: %v", err)
	}
	_, err = ReadRatings(strings.NewReader("u i nan\n"), "c.tsv", RatingOptions{})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "c.tsv: line 1, column 3") || strings.Contains(err.Error(), "header") {
		t.Errorf("ratings: %v", err)
	}
	if _, err = ReadDelimited(strings.NewReader("1,x\n"), "d.csv", TextOptions{}); errors.Is(err, ErrNonFinite) {
		t.Errorf("malformed number reported as non-finite: %v", err)
	}
}

func TestNpyScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := randomDense(rng, 5, 4)
	for _, opt := range []NpyOptions{{}, {FortranOrder: true}, {Float32: true}} {
		p := filepath.Join(t.TempDir(), "m.npy")
		if err := WriteFileAtomic(p, func(w io.Writer) error { return WriteNpyWith(w, m, opt) }); err != nil {
			t.Fatal(err)
		}
		nf, err := OpenNpy(p)
		if err != nil {
			t.Fatal(err)
		}
		got := mat.NewDense(5, 4, nil)
		seen := 0
		err = nf.Scan(func(i, j int, v float64) error {
			if got.At(i, j) != 0 {
				t.Fatalf("%+v: (%d,%d) twice", opt, i, j)
			}
			got.Set(i, j, v)
			seen++
			return nil
		})
		nf.Close()
		if err != nil || seen != 20 {
			t.Fatalf("%+v: %v, %d elements", opt, err, seen)
		}
		want := m
		if opt.Float32 {
			want = mat.NewDense(5, 4, nil)
			want.Apply(func(i, j int, v float64) float64 { return float64(float32(v)) }, m)
		}
		if !mat.Equal(got, want) {
			t.Fatalf("%+v: scan differs", opt)
		}
	}
}
