package formats_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/testmat"
	"gonum.org/v1/gonum/mat"
)

func TestWriteRowsMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := testmat.Normal(rng, 7, 5)
	row := func(i int, dst []float64) error { copy(dst, m.RawRowView(i)); return nil }
	var a, b bytes.Buffer
	if err := npy.WriteRows(&a, 7, 5, row); err != nil {
		t.Fatal(err)
	}
	got, err := npy.Read(bytes.NewReader(a.Bytes()), "a")
	if err != nil || !mat.Equal(got, m) {
		t.Fatalf("npy rows round trip: %v", err)
	}
	if err := delim.WriteRows(&b, 7, 5, ",", row); err != nil {
		t.Fatal(err)
	}
	got, err = delim.Read(bytes.NewReader(b.Bytes()), "b", delim.Options{})
	if err != nil || !mat.Equal(got, m) {
		t.Fatalf("csv rows round trip: %v", err)
	}
	stop := errors.New("stop")
	if err := npy.WriteRows(&a, 7, 5, func(i int, dst []float64) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("row error not returned: %v", err)
	}
}

func TestErrNonFinite(t *testing.T) {
	_, err := delim.Read(strings.NewReader("NaN,1\n"), "a.csv", delim.Options{})
	if !errors.Is(err, formats.ErrNonFinite) || !strings.Contains(err.Error(), "a.csv: line 1, column 1: non-finite value \"NaN\"") || strings.Contains(err.Error(), "header") {
		t.Errorf("csv: %v", err)
	}
	_, err = mtx.Read(strings.NewReader("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 inf\n"), "b.mtx")
	if !errors.Is(err, formats.ErrNonFinite) || !strings.Contains(err.Error(), "b.mtx: line 3, column 3") {
		t.Errorf("mtx: %v", err)
	}
	_, err = triples.Read(strings.NewReader("u i nan\n"), "c.tsv", triples.Options{})
	if !errors.Is(err, formats.ErrNonFinite) || !strings.Contains(err.Error(), "c.tsv: line 1, column 3") || strings.Contains(err.Error(), "header") {
		t.Errorf("ratings: %v", err)
	}
	if _, err = delim.Read(strings.NewReader("1,x\n"), "d.csv", delim.Options{}); errors.Is(err, formats.ErrNonFinite) {
		t.Errorf("malformed number reported as non-finite: %v", err)
	}
}

// TestHint: a header line gives HintHeader, and HintOption rewords how the
// message names the option without touching the rest of it.
func TestHint(t *testing.T) {
	_, err := delim.Read(strings.NewReader("a,b\n1,2\n"), "h.csv", delim.Options{})
	var fe *formats.Error
	if !errors.As(err, &fe) || fe.Hint != formats.HintHeader || !strings.HasSuffix(err.Error(), "(if the first line is a header, enable the header option)") {
		t.Fatalf("header line: %v", err)
	}
	fe.HintOption = "use --header"
	if !strings.HasSuffix(err.Error(), "(if the first line is a header, use --header)") || fe.Line != 1 {
		t.Errorf("reworded: %v", err)
	}
}
