// Package progress reports the stages and iterations of a long run on a
// stream: an updating line on a terminal, a line every few seconds in a
// log or a pipe, one line per iteration, or nothing.
package progress

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/rpca-gd/rpca"
)

// Mode is how a Printer shows progress.
type Mode int

// The modes.
const (
	Off      Mode = iota // nothing
	Lines                // one line per stage and per iteration (a log)
	Bar                  // stages on lines of their own, iterations on one updating line
	Periodic             // stages, the first iteration, then a line every Interval (a pipe, nohup, a notebook)
)

// Interval is the time between two iteration lines in Periodic mode, and
// the longest silence there: when a step writes nothing for Interval (a
// long initialization, a slow iteration), a line says which stage is
// still running.
const Interval = 5 * time.Second

// Printer writes progress to w. Its methods may be called from any
// goroutine.
type Printer struct {
	mu      sync.Mutex
	w       io.Writer
	mode    Mode
	width   int // columns of the terminal (the bar is cut to width−1)
	last    time.Time
	printed bool // the bar line is on the screen
	now     func() time.Time

	// Periodic mode's heartbeat: the time of the last line written, the
	// current stage and when it began, and the goroutine that writes a
	// line after interval of silence (running while stop is not nil).
	interval   time.Duration
	lastWrite  time.Time
	stage      string
	stageStart time.Time
	stop       chan struct{}

	maxIter int     // the iteration cap, for "of N" (0: not shown)
	tol     float64 // the residual the run stops at, for the estimate of the time left (0: none)
	lastRec rpca.Record
	haveRec bool
}

// New returns a Printer on w. width is the terminal's number of columns
// for Bar (≤ 0: 80).
func New(w io.Writer, mode Mode, width int) *Printer {
	if width <= 0 {
		width = 80
	}
	return &Printer{w: w, mode: mode, width: width, now: time.Now, interval: Interval}
}

// SetGoal gives the run's iteration cap and the residual it stops at, so
// that the lines say "of N" and how long the run may still take (an
// estimate from the residual's recent rate of decrease; none while the
// residual does not decrease). 0 leaves either out.
func (p *Printer) SetGoal(maxIter int, residualTol float64) {
	p.maxIter, p.tol = maxIter, residualTol
}

// Stage announces a step of the work ("reading Y.npy", "solving") on a
// line of its own, at once, so that no long step is silent.
func (p *Printer) Stage(msg string) {
	if p.mode == Off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintln(p.w, msg)
	now := p.now()
	p.lastWrite, p.stage, p.stageStart = now, msg, now
	if p.mode == Periodic && p.stop == nil {
		p.stop = make(chan struct{})
		go p.heartbeat(p.stop, p.interval)
	}
}

// heartbeat writes, in Periodic mode, a line whenever nothing was written
// for interval, until stop is closed.
func (p *Printer) heartbeat(stop chan struct{}, interval time.Duration) {
	tick := time.NewTicker(interval / 5)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		if p.stop == stop { // not stopped meanwhile
			if now := p.now(); now.Sub(p.lastWrite) >= interval {
				fmt.Fprintf(p.w, "… still %s (%.0fs)\n", p.stage, now.Sub(p.stageStart).Seconds())
				p.lastWrite = now
			}
		}
		p.mu.Unlock()
	}
}

// Stagef is Stage with a format.
func (p *Printer) Stagef(format string, args ...any) { p.Stage(fmt.Sprintf(format, args...)) }

// Record shows one iteration; it is an rpca.Settings.Callback. The bar is
// redrawn at most every 100 ms; in Periodic mode a line is written for the
// first record and then at most every Interval.
func (p *Printer) Record(r rpca.Record) {
	if p.mode == Off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	eta := p.remaining(r)
	p.lastRec, p.haveRec = r, true
	line := p.line(r, eta)
	now := p.now()
	switch p.mode {
	case Lines:
		fmt.Fprintln(p.w, line)
		p.lastWrite = now
	case Periodic:
		if p.last.IsZero() || now.Sub(p.last) >= p.interval || now.Sub(p.lastWrite) >= p.interval {
			p.last, p.lastWrite = now, now
			fmt.Fprintln(p.w, line)
		}
	default:
		if now.Sub(p.last) > 100*time.Millisecond {
			p.last = now
			fmt.Fprintf(p.w, "\r\033[K%s", p.fit(line))
			p.printed = true
		}
	}
}

// line formats one iteration, in at most 79 columns: "iter 1234/5000 res
// 1.234e-05 chg 1.23e-07 err 1.234e-05 123.45s 12.3it/s ~6s left".
func (p *Printer) line(r rpca.Record, eta float64) string {
	line := fmt.Sprintf("iter %4d", r.Iter)
	if p.maxIter > 0 && p.maxIter < math.MaxInt32 {
		line += fmt.Sprintf("/%d", p.maxIter)
	}
	switch {
	case !math.IsNaN(r.Residual):
		line += fmt.Sprintf(" res %.3e", r.Residual)
	case !math.IsNaN(r.Validation):
		line += fmt.Sprintf(" val %.4f", r.Validation)
	}
	if !math.IsNaN(r.FactorChange) {
		line += fmt.Sprintf(" chg %.2e", r.FactorChange)
	}
	if !math.IsNaN(r.Error) {
		line += fmt.Sprintf(" err %.3e", r.Error)
	}
	secs := r.Elapsed.Seconds()
	line += fmt.Sprintf(" %.2fs", secs)
	if r.Iter > 0 && secs > 0 {
		line += fmt.Sprintf(" %.1fit/s", float64(r.Iter)/secs)
	}
	if eta >= 0 {
		line += fmt.Sprintf(" ~%.0fs left", math.Ceil(eta))
	}
	return line
}

// remaining estimates the seconds until the residual reaches the goal, at
// the rate (per iteration) it fell since the previous record, and within
// the iteration cap; −1 when it cannot tell.
func (p *Printer) remaining(r rpca.Record) float64 {
	q := p.lastRec
	if p.tol <= 0 || !p.haveRec || r.Iter <= q.Iter || !(r.Residual > p.tol) || !(r.Residual < q.Residual) || r.Iter == 0 {
		return -1
	}
	perIter := r.Elapsed.Seconds() / float64(r.Iter)
	rate := math.Log(r.Residual/q.Residual) / float64(r.Iter-q.Iter) // < 0
	left := math.Log(p.tol/r.Residual) / rate
	if p.maxIter > 0 {
		left = min(left, float64(p.maxIter-r.Iter))
	}
	return left * perIter
}

// Done clears the bar line and stops Periodic mode's heartbeat (a later
// Stage starts it again).
func (p *Printer) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
}

func (p *Printer) clear() {
	if p.printed {
		fmt.Fprint(p.w, "\r\033[K")
		p.printed = false
	}
}

// fit cuts line to the terminal width minus one column, so that the
// updating bar never wraps.
func (p *Printer) fit(line string) string {
	if r := []rune(line); len(r) > p.width-1 {
		return string(r[:max(p.width-1, 0)])
	}
	return line
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// TermWidth returns the number of columns of the terminal w writes to, or
// 0 when w is not a terminal.
func TermWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !IsTerminal(f) {
		return 0
	}
	n, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return n
}
