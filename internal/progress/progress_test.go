package progress

import (
	"math"
	"strings"
	"sync"
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

// TestPeriodic: off a terminal, the first record is written at once and
// then one line per Interval, whatever the iteration rate; with a goal,
// the lines say "of N" and estimate the time left from the residual's
// rate of decrease (here ×0.1 per iteration at 1 s an iteration, from
// 1e-5 at iteration 5 to the goal 1e-8: 3 iterations, 3 s).
func TestPeriodic(t *testing.T) {
	var b strings.Builder
	p := New(&b, Periodic, 0)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	p.SetGoal(100, 1e-8)
	res := 1.0
	for it := 0; it <= 20; it++ {
		p.Record(rpca.Record{Iter: it, Residual: res, FactorChange: math.NaN(), Error: math.NaN(), Validation: math.NaN(), Elapsed: time.Duration(it) * time.Second})
		res /= 10
		clock = clock.Add(time.Second)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// Records at 0 s, 5 s, 10 s, 15 s, 20 s.
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "iter    0/100 res 1.000e+00") || !strings.HasPrefix(lines[1], "iter    5/100") {
		t.Fatalf("lines %q", lines)
	}
	if !strings.HasSuffix(lines[1], "~3s left") {
		t.Errorf("at iteration 5 (residual 1e-5, falling ×0.1 an iteration, 1 s each) want ~3s left (1e-5 → 1e-8 is 3 iterations of 1 s): %q", lines[1])
	}
	// Gibbs sampling has no residual: its validation RMSE is shown.
	b.Reset()
	New(&b, Lines, 0).Record(rpca.Record{Iter: 3, Residual: math.NaN(), Validation: 0.8712, FactorChange: math.NaN(), Error: math.NaN(), Elapsed: time.Second})
	if s := b.String(); strings.Contains(s, "NaN") || !strings.Contains(s, "val 0.8712") {
		t.Errorf("no residual: %q", s)
	}
}

// syncBuffer is a strings.Builder safe for the heartbeat's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHeartbeat: in Periodic mode a stage that writes nothing for the
// interval gets a line naming it, and again after each further interval
// of silence; after Done nothing more is written; the other modes have no
// heartbeat.
func TestHeartbeat(t *testing.T) {
	var b syncBuffer
	p := New(&b, Periodic, 0)
	p.interval = 20 * time.Millisecond
	p.Stage("initializing")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(b.String(), "… still initializing") < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := strings.Count(b.String(), "… still initializing"); n < 2 {
		t.Fatalf("%d heartbeat lines in 5 s: %q", n, b.String())
	}
	p.Done()
	done := b.String()
	time.Sleep(100 * time.Millisecond) // five intervals
	if b.String() != done {
		t.Errorf("wrote after Done: %q", strings.TrimPrefix(b.String(), done))
	}
	var l syncBuffer
	q := New(&l, Lines, 0)
	q.interval = 20 * time.Millisecond
	q.Stage("initializing")
	time.Sleep(100 * time.Millisecond)
	q.Done()
	if s := l.String(); s != "initializing\n" {
		t.Errorf("Lines mode wrote %q", s)
	}
}
