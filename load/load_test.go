package load

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/internal/testfile"
	"github.com/rpca-gd/rpca/internal/testmat"
)

func randomMatrix(seed uint64, r, c int) *mat.Dense {
	return testmat.Normal(rand.New(rand.NewPCG(seed, 1)), r, c)
}

func writeNpy(t *testing.T, path string, m *mat.Dense, opt npy.Options) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := npy.WriteWith(f, m, opt); err != nil {
		t.Fatal(err)
	}
	return path
}

// sameEntries fails unless a and b observe the same positions with the
// same values.
func sameEntries(t *testing.T, what string, a, b *rpca.Observed) {
	t.Helper()
	pa, ca, va := a.CSR()
	pb, cb, vb := b.CSR()
	if len(va) != len(vb) {
		t.Fatalf("%s: %d entries, want %d", what, len(va), len(vb))
	}
	for i := range pa {
		if pa[i] != pb[i] {
			t.Fatalf("%s: row pointers differ at %d", what, i)
		}
	}
	for q := range va {
		if ca[q] != cb[q] || va[q] != vb[q] {
			t.Fatalf("%s: entry %d is (col %d, %v), want (col %d, %v)", what, q, ca[q], va[q], cb[q], vb[q])
		}
	}
}

func TestFormatOf(t *testing.T) {
	for _, c := range []struct {
		path     string
		override Format
		want     Format
	}{
		{"a.NPY", "", NPY}, {"a.csv", "", CSV}, {"a.tab", "", TSV}, {"a.dat", "", Text},
		{"a.mm", "", MatrixMarket}, {"a.xyz", "txt", Text}, {"a", "MTX", MatrixMarket},
	} {
		if got, err := FormatOf(c.path, c.override); err != nil || got != c.want {
			t.Errorf("FormatOf(%q, %q) = %q, %v; want %q", c.path, c.override, got, err, c.want)
		}
	}
	for _, c := range [][2]string{{"a.xyz", ""}, {"noext", ""}, {"a.npy", "json"}} {
		if _, err := FormatOf(c[0], Format(c[1])); !errors.Is(err, ErrFormat) {
			t.Errorf("FormatOf(%q, %q): %v, want ErrFormat", c[0], c[1], err)
		}
	}
}

// TestSampledLikeEverywhere checks the sampler's contract through the
// loader: an .npy file sampled while it streams (C and Fortran order) and
// a CSV file sampled after reading observe the same entries, with the
// same values, as rpca.Sampling on the matrix in memory.
func TestSampledLikeEverywhere(t *testing.T) {
	dir := t.TempDir()
	y := randomMatrix(3, 37, 23)
	s := rpca.Sampling{P: 0.3, Seed: 11, Cover: true}
	want, err := s.Dense(y)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	if err := delim.Write(&csv, y, ","); err != nil {
		t.Fatal(err)
	}
	files := []string{
		writeNpy(t, filepath.Join(dir, "c.npy"), y, npy.Options{}),
		writeNpy(t, filepath.Join(dir, "f.npy"), y, npy.Options{FortranOrder: true}),
		testfile.Write(t, dir, "y.csv", csv.String()),
	}
	for _, f := range files {
		m, err := File(f, Options{Sample: s})
		if err != nil {
			t.Fatal(err)
		}
		if m.Observed == nil || m.Dense != nil || !m.Sampled || m.D1 != 37 || m.D2 != 23 {
			t.Fatalf("%s: %+v", f, m)
		}
		sameEntries(t, f, m.Observed, want)
	}
	// Without sampling the same files load dense and equal.
	for _, f := range files {
		m, err := File(f, Options{})
		if err != nil || m.Dense == nil || !mat.EqualApprox(m.Dense, y, 1e-15) {
			t.Fatalf("%s dense: %v", f, err)
		}
	}
}

// TestMissingNaN: NaN entries are errors naming their position, or
// missing entries with MissingNaN; Inf is always an error.
func TestMissingNaN(t *testing.T) {
	dir := t.TempDir()
	path := testfile.Write(t, dir, "y.csv", "1,2,NaN\n4,NaN,6\n7,8,9\n")
	_, err := File(path, Options{})
	if !errors.Is(err, formats.ErrNonFinite) {
		t.Fatalf("NaN without MissingNaN: %v", err)
	}
	m, err := File(path, Options{MissingNaN: true})
	if err != nil || m.Observed == nil || m.Observed.Len() != 7 {
		t.Fatalf("MissingNaN: %v %+v", err, m)
	}
	m.Observed.Do(func(i, j int, v float64) {
		if v != float64(3*i+j+1) {
			t.Errorf("entry (%d, %d) = %v", i, j, v)
		}
	})
	y := mat.NewDense(2, 2, []float64{1, 2, math.Inf(1), 4})
	_, err = File(writeNpy(t, filepath.Join(dir, "inf.npy"), y, npy.Options{}), Options{MissingNaN: true})
	var nf *NonFiniteError
	if !errors.As(err, &nf) || nf.Row != 2 || nf.Col != 1 || !errors.Is(err, formats.ErrNonFinite) {
		t.Fatalf("Inf: %v", err)
	}
	// Streamed and sampled, an Inf is refused even where it is not sampled.
	big := randomMatrix(5, 30, 30)
	big.Set(29, 28, math.Inf(-1))
	_, err = File(writeNpy(t, filepath.Join(dir, "infs.npy"), big, npy.Options{}), Options{Sample: rpca.Sampling{P: 0.001, Seed: 1}})
	if !errors.As(err, &nf) || nf.Row != 30 || nf.Col != 29 {
		t.Fatalf("Inf outside the sample: %v", err)
	}
}

// TestMatrixMarket: a coordinate file with some entries is partial, with
// all entries dense; sampling a partial file is refused.
func TestMatrixMarket(t *testing.T) {
	dir := t.TempDir()
	const hdr = "%%MatrixMarket matrix coordinate real general\n"
	part := testfile.Write(t, dir, "p.mtx", hdr+"2 3 4\n1 1 5\n2 2 6\n1 3 7\n2 1 8\n")
	m, err := File(part, Options{})
	if err != nil || m.Observed == nil || m.Observed.Len() != 4 {
		t.Fatalf("partial: %v", err)
	}
	full := testfile.Write(t, dir, "f.mtx", hdr+"1 2 2\n1 2 3\n1 1 4\n")
	m, err = File(full, Options{})
	if err != nil || m.Dense == nil || m.Dense.At(0, 0) != 4 || m.Dense.At(0, 1) != 3 {
		t.Fatalf("full: %v", err)
	}
	if _, err := File(part, Options{Sample: rpca.Sampling{P: 0.5}}); !errors.Is(err, ErrPartialSample) {
		t.Errorf("sampling a partial file: %v", err)
	}
}

// TestChecksBeforeReading: CheckDims and the memory check run on the size
// in the header, before the data (here missing) are read.
func TestChecksBeforeReading(t *testing.T) {
	dir := t.TempDir()
	// A Matrix Market array header for 100000×100000 with one value.
	path := testfile.Write(t, dir, "big.mtx", "%%MatrixMarket matrix array real general\n100000 100000\n1\n")
	sentinel := errors.New("dims seen")
	_, err := File(path, Options{CheckDims: func(d1, d2 int) error {
		if d1 != 100000 || d2 != 100000 {
			t.Errorf("CheckDims(%d, %d)", d1, d2)
		}
		return sentinel
	}})
	if !errors.Is(err, sentinel) {
		t.Fatalf("CheckDims error not returned: %v", err)
	}
	_, err = File(path, Options{Available: 1e9})
	var mem *MemoryError
	if !errors.As(err, &mem) || mem.Need != 1e10*DenseBytesPerEntry || mem.Streamed || mem.MaxRate <= 0 {
		t.Fatalf("memory: %v %+v", err, mem)
	}
	_, err = File(path, Options{Available: 1e9, Sample: rpca.Sampling{P: 0.5}})
	if !errors.As(err, &mem) || mem.Rate != 0.5 || mem.Need != (0.5*SampledBytesPerEntry+8)*1e10 {
		t.Fatalf("sampled memory: %v %+v", err, mem)
	}
}

func TestReadable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckReadable(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if err := CheckReadable(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
}

// TestFiniteHugeValues: a row whose squares overflow (±MaxFloat64) takes
// kernels.AllFinite's value-by-value path: it loads unchanged; an
// infinity beside such values is reported at its position.
func TestFiniteHugeValues(t *testing.T) {
	dir := t.TempDir()
	y := mat.NewDense(3, 4, []float64{1, 2, 3, 4, math.MaxFloat64, -math.MaxFloat64, 5, 6, 7, 8, 9, 10})
	m, err := File(writeNpy(t, filepath.Join(dir, "huge.npy"), y, npy.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m.Dense, y) {
		t.Error("huge values changed on loading")
	}
	y.Set(1, 3, math.Inf(1))
	_, err = File(writeNpy(t, filepath.Join(dir, "inf.npy"), y, npy.Options{}), Options{})
	var nf *NonFiniteError
	if !errors.As(err, &nf) || nf.Row != 2 || nf.Col != 4 {
		t.Errorf("an infinity at row 2, column 4: %v", err)
	}
}
