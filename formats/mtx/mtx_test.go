package mtx

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/internal/formattest"
	"gonum.org/v1/gonum/mat"
)

// csr is a minimal compressed-sparse-row matrix for the writer tests.
type csr struct {
	rows, cols int
	ptr        []int
	idx        []int
	val        []float64
}

func (s *csr) Dims() (int, int) { return s.rows, s.cols }
func (s *csr) NNZ() int         { return len(s.val) }
func (s *csr) Do(fn func(i, j int, v float64)) {
	for i := 0; i < s.rows; i++ {
		for k := s.ptr[i]; k < s.ptr[i+1]; k++ {
			fn(i, s.idx[k], s.val[k])
		}
	}
}

// randomCSR returns a random sparse matrix and its dense form.
func randomCSR(rng *rand.Rand, rows, cols int, p float64) (*csr, *mat.Dense) {
	s := &csr{rows: rows, cols: cols, ptr: []int{0}}
	d := mat.NewDense(rows, cols, nil)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if rng.Float64() < p {
				v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
				s.idx = append(s.idx, j)
				s.val = append(s.val, v)
				d.Set(i, j, v)
			}
		}
		s.ptr = append(s.ptr, len(s.val))
	}
	return s, d
}

// tripletsDense accumulates triplets into a dense matrix, failing on
// duplicates.
func tripletsDense(t *testing.T, tr *formats.Triplets) *mat.Dense {
	t.Helper()
	d := mat.NewDense(tr.D1, tr.D2, nil)
	seen := map[[2]int]bool{}
	for k, v := range tr.Val {
		p := [2]int{tr.Row[k], tr.Col[k]}
		if seen[p] {
			t.Fatalf("duplicate entry %v", p)
		}
		seen[p] = true
		d.Set(p[0], p[1], v)
	}
	return d
}

func TestMatrixMarketRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	for _, sz := range [][2]int{{1, 1}, {7, 3}, {50, 80}} {
		s, want := randomCSR(rng, sz[0], sz[1], 0.2)
		path := filepath.Join(dir, "s.mtx")
		if err := WriteFile(path, s); err != nil {
			t.Fatal(err)
		}
		mm, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if mm.Header != (Header{"matrix", "coordinate", "real", "general"}) || mm.Dense != nil {
			t.Fatalf("header %+v", mm.Header)
		}
		if mm.Coord.D1 != sz[0] || mm.Coord.D2 != sz[1] || mm.Coord.Len() != s.NNZ() {
			t.Fatalf("read %d×%d with %d entries, want %v with %d", mm.Coord.D1, mm.Coord.D2, mm.Coord.Len(), sz, s.NNZ())
		}
		if !mat.Equal(tripletsDense(t, mm.Coord), want) {
			t.Fatal("coordinate round trip differs")
		}
		// formats.Triplets written back give the same file contents.
		var a, b bytes.Buffer
		WriteSparse(&a, s)
		if err := WriteTriplets(&b, mm.Coord); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatal("triplet writer output differs from sparse writer output")
		}
		// Dense array format.
		var arr bytes.Buffer
		if err := WriteDense(&arr, want); err != nil {
			t.Fatal(err)
		}
		mm, err = Read(&arr, "a.mtx")
		if err != nil {
			t.Fatal(err)
		}
		if mm.Coord != nil || !mat.Equal(mm.Dense, want) {
			t.Fatal("array round trip differs")
		}
	}
}

func TestMatrixMarketVariants(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       [][]float64
	}{
		{"general", "%%MatrixMarket matrix coordinate real general\n% comment\n%\n\n  2 3 2\n% mid comment\n1 3 -1.5\n\n2 1 4e2\n", [][]float64{{0, 0, -1.5}, {400, 0, 0}}},
		{"symmetric", "%%MatrixMarket Matrix Coordinate Integer Symmetric\n3 3 3\n1 1 5\n3 1 -2\n2 3 7\n", [][]float64{{5, 0, -2}, {0, 0, 7}, {-2, 7, 0}}},
		{"skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n", [][]float64{{0, -3}, {3, 0}}},
		{"array", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3 4\n5\n6\n", [][]float64{{1, 3, 5}, {2, 4, 6}}},
		{"array symmetric", "%%MatrixMarket matrix array integer symmetric\n2 2\n1\n2\n3\n", [][]float64{{1, 2}, {2, 3}}},
		{"array skew", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n", [][]float64{{0, -1, -2}, {1, 0, -3}, {2, 3, 0}}},
	} {
		mm, err := Read(strings.NewReader(c.text), "v.mtx")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := mm.Dense
		if mm.Coord != nil {
			got = tripletsDense(t, mm.Coord)
		}
		formattest.CheckMatrix(t, c.name, got, c.want)
	}
}

func TestMatrixMarketErrors(t *testing.T) {
	const hdr = "%%MatrixMarket matrix coordinate real general\n"
	cases := []struct {
		name, text string
		line, col  int
		contains   string
	}{
		{"empty", "", 0, 0, "empty file"},
		{"no banner", "3 3 1\n1 1 1\n", 1, 0, "not a Matrix Market file"},
		{"pattern", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n", 1, 0, "pattern matrices have no values"},
		{"complex", "%%MatrixMarket matrix coordinate complex general\n", 1, 0, "complex"},
		{"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", 1, 0, "hermitian"},
		{"vector", "%%MatrixMarket vector coordinate real general\n", 1, 0, "object"},
		{"short banner", "%%MatrixMarket matrix coordinate real\n", 1, 0, "banner has 4 words"},
		{"no size", hdr + "% only comments\n", 0, 0, "no size line"},
		{"size fields", hdr + "2 2\n", 2, 0, "want 3 (rows cols entries); is this an array file"},
		{"size fields 4", hdr + "2 2 1 1\n", 2, 0, "4 fields, want 3 (rows cols entries)\n"},
		{"size text", hdr + "% c\n2 x 1\n", 3, 2, `size "x"`},
		{"zero size", hdr + "0 3 0\n", 2, 0, "empty"},
		{"too many declared", hdr + "2 2 5\n", 2, 3, "5 entries declared"},
		{"non-square symmetric", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", 2, 0, "square"},
		{"row range", hdr + "2 2 2\n1 1 1\n3 1 1\n", 4, 1, "index 3 is out of range 1..2"},
		{"col zero", hdr + "2 2 1\n1 0 1\n", 3, 2, "index 0 is out of range"},
		{"bad index", hdr + "2 2 1\n1.5 1 1\n", 3, 1, "not an integer"},
		{"bad value", hdr + "2 2 1\n1 1 abc\n", 3, 3, `invalid number "abc"`},
		{"nan value", hdr + "2 2 1\n1 1 NaN\n", 3, 3, "non-finite"},
		{"integer field", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, 3, "invalid integer"},
		{"fields", hdr + "2 2 1\n1 1\n", 3, 0, "2 fields, want 3"},
		{"too few", hdr + "2 2 3\n1 1 1\n2 2 2\n", 0, 0, "declares 3 entries, but the file has 2"},
		{"too many", hdr + "2 2 1\n1 1 1\n2 2 2\n", 4, 0, "more entries than the 1 declared"},
		{"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", 3, 0, "diagonal"},
		{"array short", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 0, 0, "holds 4 values, but the file has 3"},
		{"array long", "%%MatrixMarket matrix array real general\n1 2\n1\n2 3\n", 4, 2, "more values"},
		{"array coord size", "%%MatrixMarket matrix array real general\n2 2 4\n", 2, 0, "coordinate file"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.text), "bad.mtx")
		var fe *formats.Error
		if !errors.As(err, &fe) {
			t.Fatalf("%s: error %v is not a *formats.Error", c.name, err)
		}
		if fe.Line != c.line || fe.Column != c.col {
			t.Errorf("%s: error %q at line %d column %d, want line %d column %d", c.name, err, fe.Line, fe.Column, c.line, c.col)
		}
		if !strings.Contains(err.Error()+"\n", c.contains) || !strings.HasPrefix(err.Error(), "bad.mtx: ") {
			t.Errorf("%s: error %q does not contain %q", c.name, err, c.contains)
		}
	}
}

func TestMatrixMarketWriterChecks(t *testing.T) {
	var buf bytes.Buffer
	bad := &formats.Triplets{D1: 2, D2: 2, Row: []int{0, 2}, Col: []int{0, 0}, Val: []float64{1, 2}}
	if err := WriteTriplets(&buf, bad); err == nil {
		t.Error("out-of-range triplet written without error")
	}
	ragged := &formats.Triplets{D1: 2, D2: 2, Row: []int{0}, Col: []int{0, 1}, Val: []float64{1, 2}}
	if err := WriteTriplets(&buf, ragged); err == nil {
		t.Error("ragged triplets written without error")
	}
	lying := &csr{rows: 1, cols: 1, ptr: []int{0, 1}, idx: []int{0}, val: []float64{1}}
	lying.val = append(lying.val, 9) // NNZ 2 but Do lists 1
	if err := WriteSparse(&buf, lying); err == nil {
		t.Error("entry count mismatch not reported")
	}
}

func FuzzReadMatrixMarket(f *testing.F) {
	f.Add("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n")
	f.Add("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n")
	f.Add("%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n3 1 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		mm, err := Read(strings.NewReader(text), "f.mtx")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if tr := mm.Coord; tr != nil {
			for k := range tr.Val {
				if tr.Row[k] < 0 || tr.Row[k] >= tr.D1 || tr.Col[k] < 0 || tr.Col[k] >= tr.D2 {
					t.Fatalf("entry %d out of range", k)
				}
			}
		}
	})
}
