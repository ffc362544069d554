// Package formattest holds the test helpers shared by the format packages.
package formattest

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats"
	"gonum.org/v1/gonum/mat"
)

// CheckMatrix fails t unless got equals want entry by entry (NaN equal to
// NaN).
func CheckMatrix(t *testing.T, what string, got *mat.Dense, want [][]float64) {
	t.Helper()
	r, c := got.Dims()
	if r != len(want) || c != len(want[0]) {
		t.Fatalf("%s: got %d×%d, want %d×%d", what, r, c, len(want), len(want[0]))
	}
	for i := range want {
		for j := range want[i] {
			g, w := got.At(i, j), want[i][j]
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Fatalf("%s: (%d,%d) = %v, want %v", what, i, j, g, w)
			}
		}
	}
}

// ErrorCase is a bad input for a reader with options O, and where the
// *formats.Error it gives must point: Line and Col (0: none) and a
// fragment of its message.
type ErrorCase[O any] struct {
	Name, Text string
	Opt        O
	Line, Col  int
	Contains   string
}

// Bad builds an ErrorCase from its fields in order.
func Bad[O any](name, text string, opt O, line, col int, contains string) ErrorCase[O] {
	return ErrorCase[O]{Name: name, Text: text, Opt: opt, Line: line, Col: col, Contains: contains}
}

// CheckErrors reads each case's text with read, under the file name file,
// and fails t unless the error is a *formats.Error naming file at the
// case's line and column and containing its fragment.
func CheckErrors[O any](t *testing.T, file string, cases []ErrorCase[O], read func(r io.Reader, name string, opt O) error) {
	t.Helper()
	for _, c := range cases {
		err := read(strings.NewReader(c.Text), file, c.Opt)
		var fe *formats.Error
		if !errors.As(err, &fe) {
			t.Fatalf("%s: error %v is not a *formats.Error", c.Name, err)
		}
		if fe.File != file || fe.Line != c.Line || fe.Column != c.Col || !strings.Contains(err.Error(), c.Contains) {
			t.Errorf("%s: error %q at %s line %d column %d, want line %d column %d containing %q", c.Name, err, fe.File, fe.Line, fe.Column, c.Line, c.Col, c.Contains)
		}
	}
}
