package mtx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMatrixMarketLinesAndDuplicates(t *testing.T) {
	text := "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 3\n1 1 1\n2 1 2\n\n1 2 5\n"
	mm, err := Read(strings.NewReader(text), "s.mtx")
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
		h, d1, d2, n, err := ReadSize(p)
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
