package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/synth"
)

// Figure 1(b) settings: time to a true relative error of fig1bTarget.
const (
	fig1bTarget = 1e-4
	fig1bAlpha  = 0.1
)

// fig1bRate is the sampling rate of Figure 1(b) for rank r: the paper's
// p = 0.15·r²·log(d)/d (synth.PaperRate). For the quick mode's small d and
// r it is raised to at least 20r/d (twenty observed entries per row and
// rank): with r = 5 and d ≤ 2000 the paper's rate leaves Algorithm 2 too
// few entries to reach 1e-4 in a few thousand iterations.
func fig1bRate(d, r int, quick bool) float64 {
	p := synth.PaperRate(d, r)
	if quick {
		p = max(p, math.Min(1, 20*float64(r)/float64(d)))
	}
	return p
}

// runFig1b times Algorithm 2 on d×d instances observed at rate p(d),
// generated directly on Φ (never as a dense matrix), until the true
// relative error is 1e-4. The time is rpca.Result.Elapsed:
// initialization included, the evaluation of the true error excluded;
// generation time is reported separately. Files: fig1b.csv and fig1b.png
// (log-log, with the least-squares slope of log time against log d).
func runFig1b(ctx context.Context, w *writer, o *Options) error {
	dims := o.Dims
	if len(dims) == 0 {
		dims = []int{10_000, 20_000, 50_000, 100_000, 200_000}
		if o.Quick {
			dims = []int{500, 1000, 2000}
		}
	}
	r := pick(o.Rank, o.Quick, 5, 10)
	maxIter := pick(o.MaxIter, o.Quick, 2000, 5000)
	tcap := o.timeCap()
	if !o.Quick && o.TimeCap == 0 {
		tcap = 0 // the paper's sizes: no cap unless asked for
	}
	w.logf("fig1b: dims=%v r=%d alpha=%g, time to error %g (at most %d iterations)", dims, r, fig1bAlpha, fig1bTarget, maxIter)
	header := []string{"d", "p", "observed_entries", "generate_seconds", "iterations", "seconds", "init_seconds", "final_error", "stop"}
	var rows [][]string
	var xs, ys []float64
	w.sumf("fig1b: Algorithm 2 (%s), r=%d, alpha=%g, p = %s, time to relative error %g", gammaText(o), r, fig1bAlpha, map[bool]string{true: "max(0.15 r^2 log(d)/d, 20r/d)", false: "0.15 r^2 log(d)/d"}[o.Quick], fig1bTarget)
	w.sumf("%8s %9s %11s %6s %9s %11s  %s", "d", "p", "entries", "iters", "seconds", "final_err", "stop")
	for _, d := range dims {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r >= d {
			return fmt.Errorf("fig1b: rank %d must be below d = %d", r, d)
		}
		runtime.GC()
		debug.FreeOSMemory()
		p := fig1bRate(d, r, o.Quick)
		t0 := time.Now()
		in, err := synth.Observed(synth.Config{D1: d, D2: d, Rank: r, Alpha: fig1bAlpha, P: p, Seed: o.Seed, Workers: o.Workers})
		if err != nil {
			return err
		}
		gen := time.Since(t0).Seconds()
		prob := in.Problem()
		entries := prob.Observed.Len()
		w.logf("fig1b: d=%d p=%.4g |Phi|=%d generated in %.1fs", d, p, entries, gen)
		s := rpca.Settings{Rank: r, Alpha: fig1bAlpha, Seed: o.Seed, Workers: o.Workers,
			Stop: rpca.Stop{MaxIter: maxIter, TargetError: fig1bTarget, ResidualTol: -1, FactorTol: -1}}
		t := newTrace(w, fmt.Sprintf("d=%d", d))
		res, capped, err := solveCapped(ctx, tcap, prob, s, &gd.Method{Step: gd.StepFixed, Gamma: o.Gamma, StepConst: o.Step}, t)
		if err != nil {
			return fmt.Errorf("fig1b: d=%d: %w", d, err)
		}
		var iters int
		var secs, initSecs float64
		var stop string
		if len(t.recs) > 0 {
			initSecs = t.recs[0].Elapsed.Seconds()
		}
		if capped {
			iters, stop = len(t.recs)-1, "time-cap"
			secs = t.recs[len(t.recs)-1].Elapsed.Seconds()
		} else {
			iters, secs, stop = res.Iterations, res.Elapsed.Seconds(), string(res.Stop)
		}
		fe := lastError(t.recs)
		w.logf("fig1b: d=%d: %d iterations, %.2fs (init %.2fs), error %.3g (%s)", d, iters, secs, initSecs, fe, stop)
		w.sumf("%8d %9.4g %11d %6d %9.2f %11.3g  %s", d, p, entries, iters, secs, fe, stop)
		rows = append(rows, []string{itoa(d), num(p), itoa(entries), num(gen), itoa(iters), num(secs), num(initSecs), num(fe), stop})
		if stop == string(rpca.StopTargetError) {
			xs = append(xs, math.Log10(float64(d)))
			ys = append(ys, math.Log10(secs))
		}
	}
	if err := w.writeCSV("fig1b.csv", header, rows); err != nil {
		return err
	}
	slope := math.NaN()
	if len(xs) >= 2 {
		_, slope = lineFit(xs, ys)
	}
	w.sumf("log-log slope of time vs d (runs that reached the target): %.3f", slope)
	c := &chart{
		title:  fmt.Sprintf("Fig. 1(b): Algorithm 2 time to error %g, r=%d", fig1bTarget, r),
		xlabel: "d", ylabel: "seconds", logX: true, logY: true,
	}
	s := series{name: fmt.Sprintf("Algorithm 2 (log-log slope %.2f)", slope), points: true}
	for i := range xs {
		s.xs = append(s.xs, math.Pow(10, xs[i]))
		s.ys = append(s.ys, math.Pow(10, ys[i]))
	}
	if len(xs) >= 2 {
		// The fitted line, for reference.
		a, b := lineFit(xs, ys)
		ref := series{name: "least-squares fit"}
		for _, x := range []float64{xs[0], xs[len(xs)-1]} {
			ref.xs = append(ref.xs, math.Pow(10, x))
			ref.ys = append(ref.ys, math.Pow(10, a+b*x))
		}
		c.series = append(c.series, s, ref)
	} else {
		c.series = append(c.series, s)
	}
	if len(xs) == 0 {
		w.sumf("no run reached the target; no plot")
		return nil
	}
	return w.writeFile("fig1b.png", func(f io.Writer) error { return c.writePNG(f) })
}
