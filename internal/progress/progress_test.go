package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/rpca-gd/rpca"
)

var long = rpca.Record{Iter: 12345, Residual: 1.23456e-12, FactorChange: 1e-300, Error: 9.87e-5, Elapsed: 12345 * time.Second}

// TestFitsTerminal: the updating line never reaches the terminal's last
// column (which would wrap and leave a trail of lines), and a log line
// fits 80 columns.
func TestFitsTerminal(t *testing.T) {
	var b strings.Builder
	for _, w := range []int{20, 40, 80} {
		b.Reset()
		New(&b, Bar, w).Record(long)
		line := strings.TrimPrefix(b.String(), "\r\033[K")
		if n := len([]rune(line)); n > w-1 || n == 0 {
			t.Errorf("width %d: bar line of %d columns: %q", w, n, line)
		}
	}
	b.Reset()
	New(&b, Lines, 0).Record(long)
	if n := len([]rune(strings.TrimSpace(b.String()))); n > 79 || n == 0 {
		t.Errorf("log line of %d columns: %q", n, b.String())
	}
}

// TestModes: a stage clears the bar first; Off writes nothing.
func TestModes(t *testing.T) {
	var b strings.Builder
	p := New(&b, Bar, 80)
	p.Record(long)
	p.Stagef("writing %s", "out")
	p.Done()
	if s := b.String(); !strings.HasSuffix(s, "\r\033[Kwriting out\n") || strings.Count(s, "\r\033[K") != 2 {
		t.Errorf("bar: %q", s)
	}
	b.Reset()
	p = New(&b, Off, 80)
	p.Record(long)
	p.Stage("x")
	p.Done()
	if b.Len() != 0 {
		t.Errorf("Off wrote %q", b.String())
	}
}
