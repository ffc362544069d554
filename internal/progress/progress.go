// Package progress reports the stages and iterations of a long run on a
// stream: an updating line on a terminal, one line per iteration in a log,
// or nothing.
package progress

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rpca-gd/rpca"
)

// Mode is how a Printer shows progress.
type Mode int

// The modes.
const (
	Off   Mode = iota // nothing
	Lines             // one line per stage and per iteration (a log)
	Bar               // stages on lines of their own, iterations on one updating line
)

// Printer writes progress to w. Its methods are not safe for concurrent
// use; rpca.Solve calls its callback from one goroutine.
type Printer struct {
	w       io.Writer
	mode    Mode
	width   int // columns of the terminal (the bar is cut to width−1)
	last    time.Time
	printed bool // the bar line is on the screen
}

// New returns a Printer on w. width is the terminal's number of columns
// for Bar (≤ 0: 80).
func New(w io.Writer, mode Mode, width int) *Printer {
	if width <= 0 {
		width = 80
	}
	return &Printer{w: w, mode: mode, width: width}
}

// Stage announces a step of the work ("reading Y.npy", "solving") on a
// line of its own, at once, so that no long step is silent.
func (p *Printer) Stage(msg string) {
	if p.mode == Off {
		return
	}
	p.clear()
	fmt.Fprintln(p.w, msg)
}

// Stagef is Stage with a format.
func (p *Printer) Stagef(format string, args ...any) { p.Stage(fmt.Sprintf(format, args...)) }

// Record shows one iteration; it is an rpca.Settings.Callback. The bar is
// redrawn at most every 100 ms.
func (p *Printer) Record(r rpca.Record) {
	if p.mode == Off {
		return
	}
	// At most 72 columns: "iter 1234 res 1.234e-05 chg 1.23e-07 err 1.234e-05 123.45s 12.3it/s".
	line := fmt.Sprintf("iter %4d res %.3e", r.Iter, r.Residual)
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
	if p.mode == Lines {
		fmt.Fprintln(p.w, line)
		return
	}
	if now := time.Now(); now.Sub(p.last) > 100*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K%s", p.fit(line))
		p.printed = true
	}
}

// Done clears the bar line.
func (p *Printer) Done() { p.clear() }

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
