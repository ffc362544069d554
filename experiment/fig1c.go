package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/altproj"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/synth"
)

// Figure 1(c) settings: every method runs until the true relative error
// is fig1cTarget, its own iteration cap, or the time cap.
const (
	fig1cTarget = 1e-7
	fig1cAlpha  = 0.1
)

// fig1cLevels are the accuracies at which the time to reach them is
// tabulated.
var fig1cLevels = []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7}

// fig1cRun is one curve of Figure 1(c).
type fig1cRun struct {
	runSummary
	label string
}

// runFig1c solves one dense d×d instance with GD (p = 1), GD on a
// subsample (the paper's Section 4.2 trick; sampling time included),
// AltProj and IALM, recording the true error and the elapsed time at
// every iteration. Residual and factor-change rules are switched off
// (AltProj's accuracy parameter ε is set to the target so that its stage
// schedule aims at it); each run ends at the target error, its iteration
// cap or the time cap. AltProj runs twice: with the early end of a stage
// when an iteration lowers the residual by less than 10% (the authors'
// code, which the paper used) and with Algorithm 1's full stage schedule. Files: fig1c.csv (every iteration),
// fig1c_summary.csv (time to each accuracy level), fig1c.png.
func runFig1c(ctx context.Context, w *writer, o *Options) error {
	d := pick(o.D, o.Quick, 300, 5000)
	r := pick(o.Rank, o.Quick, 5, 10)
	q := o.subRate()
	tcap := o.timeCap()
	in, err := synth.Dense(synth.Config{D1: d, D2: d, Rank: r, Alpha: fig1cAlpha, Seed: o.Seed, Workers: o.Workers})
	if err != nil {
		return err
	}
	prob := in.Problem()
	type method struct {
		label   string
		m       rpca.Method
		maxIter int
		sample  float64 // the rate Y is subsampled at for the run (0: all of it)
	}
	methods := []method{
		{"GD p=1", &gd.Method{Step: gd.StepFixed, Gamma: o.Gamma, StepConst: o.Step}, 1000, 0},
		{fmt.Sprintf("GD p=%g", q), &gd.Method{Step: gd.StepFixed, Gamma: o.Gamma, StepConst: o.Step}, 2000, q},
		{"AltProj", &altproj.Method{Eps: fig1cTarget, StallTol: altprojStallTol}, altproj.DefaultMaxIter, 0},
		{"AltProj (no stall exit)", &altproj.Method{Eps: fig1cTarget, StallTol: -1}, altproj.DefaultMaxIter, 0},
		{"IALM", &ialm.Method{}, ialm.DefaultMaxIter, 0},
	}
	w.logf("fig1c: d=%d r=%d alpha=%g, to error %g, time cap %v per method", d, r, fig1cAlpha, fig1cTarget, tcap)
	var runs []*fig1cRun
	for _, me := range methods {
		if err := ctx.Err(); err != nil {
			return err
		}
		maxIter := me.maxIter
		if o.MaxIter > 0 {
			maxIter = o.MaxIter
		}
		s := rpca.Settings{Rank: r, Alpha: fig1cAlpha, Seed: o.Seed, Workers: o.Workers,
			Stop: rpca.Stop{MaxIter: maxIter, TargetError: fig1cTarget, ResidualTol: -1, FactorTol: -1}}
		w.logf("fig1c: %s", me.label)
		t := newTrace(w, me.label)
		problem := prob
		if me.sample > 0 {
			// Algorithm 2 on a random fraction of Y (Section 4.2); the
			// draw counts as part of the run's time.
			t0 := time.Now()
			obs, err := rpca.Sampling{P: me.sample, Seed: o.Seed}.Dense(prob.Dense)
			if err != nil {
				return fmt.Errorf("fig1c: %s: %w", me.label, err)
			}
			problem, t.offset = &rpca.Problem{Observed: obs, Truth: prob.Truth}, time.Since(t0)
		}
		res, capped, err := solveCapped(ctx, tcap, problem, s, me.m, t)
		if err != nil {
			return fmt.Errorf("fig1c: %s: %w", me.label, err)
		}
		run := &fig1cRun{runSummary: t.summary(res, capped), label: me.label}
		w.logf("fig1c: %s: %d iterations, %.2fs, error %.3g (%s)", me.label, run.iterations, run.seconds, lastError(run.recs), run.stop)
		runs = append(runs, run)
	}

	var rows [][]string
	for _, run := range runs {
		for _, rec := range run.recs {
			rows = append(rows, []string{run.label, itoa(rec.Iter), num(rec.Elapsed.Seconds()), num(rec.Error), num(math.Log10(rec.Error))})
		}
	}
	if err := w.writeCSV("fig1c.csv", []string{"method", "iter", "seconds", "rel_error", "log10_error"}, rows); err != nil {
		return err
	}
	header := []string{"method", "iterations", "seconds", "final_error", "stop"}
	for _, l := range fig1cLevels {
		header = append(header, "seconds_to_"+num(l))
	}
	rows = rows[:0]
	w.sumf("fig1c: d=%d, r=%d, alpha=%g, GD %s; seconds to reach each relative error (time cap %v per method)", d, r, fig1cAlpha, gammaText(o), tcap)
	line := fmt.Sprintf("%-24s %6s %8s %10s", "method", "iters", "seconds", "final_err")
	for _, l := range fig1cLevels {
		line += fmt.Sprintf(" %7s", num(l))
	}
	w.sumf("%s  stop", line)
	for _, run := range runs {
		fe := lastError(run.recs)
		row := []string{run.label, itoa(run.iterations), num(run.seconds), num(fe), run.stop}
		line := fmt.Sprintf("%-24s %6d %8.2f %10.3g", run.label, run.iterations, run.seconds, fe)
		for _, l := range fig1cLevels {
			t := timeTo(run.recs, l)
			row = append(row, num(t))
			line += fmt.Sprintf(" %7.2f", t)
		}
		rows = append(rows, row)
		w.sumf("%s  %s", line, run.stop)
	}
	if err := w.writeCSV("fig1c_summary.csv", header, rows); err != nil {
		return err
	}
	c := &chart{
		title:  fmt.Sprintf("Fig. 1(c): d=%d, r=%d, alpha=%g\nGD %s", d, r, fig1cAlpha, gammaText(o)),
		xlabel: "seconds, log scale (true-error evaluation excluded)", ylabel: "log10 relative error",
		// A log time axis keeps the fast methods apart when a slow one
		// (AltProj's full schedule) takes ten times longer.
		logX: true,
	}
	for _, run := range runs {
		s := series{name: run.label}
		for _, rec := range run.recs {
			s.xs = append(s.xs, rec.Elapsed.Seconds())
			s.ys = append(s.ys, math.Log10(rec.Error))
		}
		c.series = append(c.series, s)
	}
	return w.writeFile("fig1c.png", func(f io.Writer) error { return c.writePNG(f) })
}

// timeTo returns the elapsed seconds of the first record with error at
// most level, NaN if none.
func timeTo(recs []rpca.Record, level float64) float64 {
	for _, r := range recs {
		if r.Error <= level {
			return r.Elapsed.Seconds()
		}
	}
	return math.NaN()
}
