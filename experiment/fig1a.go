package experiment

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/synth"
)

// Figure 1(a) settings: the true error is followed down to fig1aTarget,
// and the contraction factor is fitted where the error lies in
// [fig1aFitLo, fig1aFitHi] (past the initial transient, above the target).
const (
	fig1aTarget = 1e-8
	fig1aFitLo  = 1e-7
	fig1aFitHi  = 1e-2
	fig1aAlpha  = 0.1
)

// fig1aRun is one curve of Figure 1(a).
type fig1aRun struct {
	runSummary
	p         float64
	entries   int
	rate      float64
	fitPoints int
}

// runFig1a runs the gradient method on one synthetic instance (d×d, rank
// r, α = 0.1, the paper's Section 5.1 model) at each sampling rate p: the
// full matrix with Algorithm 1 for p = 1, an observed subset Φ generated
// at rate p with Algorithm 2 otherwise. A, B and S* are the same for all
// p (same seed). Files: fig1a.csv (every iteration), fig1a_rates.csv
// (one row per p with the fitted contraction factor), fig1a.png.
func runFig1a(ctx context.Context, w *writer, o *Options) error {
	d := pick(o.D, o.Quick, 400, 5000)
	r := pick(o.Rank, o.Quick, 5, 10)
	rates := o.Rates
	if len(rates) == 0 {
		rates = []float64{1, 0.5, 0.2, 0.1}
		if o.Quick {
			rates = []float64{1, 0.5, 0.3}
		}
	}
	maxIter := pick(o.MaxIter, o.Quick, 500, 1000)
	w.logf("fig1a: d=%d r=%d alpha=%g rates=%v, to error %g (at most %d iterations)", d, r, fig1aAlpha, rates, fig1aTarget, maxIter)
	var runs []*fig1aRun
	for _, p := range rates {
		if err := ctx.Err(); err != nil {
			return err
		}
		cfg := synth.Config{D1: d, D2: d, Rank: r, Alpha: fig1aAlpha, P: p, Seed: o.Seed, Workers: o.Workers}
		var in *synth.Instance
		var err error
		if p == 1 {
			in, err = synth.Dense(cfg)
		} else {
			in, err = synth.Observed(cfg)
		}
		if err != nil {
			return err
		}
		prob := in.Problem()
		s := rpca.Settings{Rank: r, Alpha: fig1aAlpha, Seed: o.Seed, Workers: o.Workers,
			Stop: rpca.Stop{MaxIter: maxIter, TargetError: fig1aTarget, ResidualTol: -1, FactorTol: -1}}
		label := fmt.Sprintf("GD p=%g", p)
		w.logf("fig1a: %s", label)
		t := newTrace(w, label)
		res, _, err := solveCapped(ctx, 0, prob, s, &gd.Method{Step: gd.StepFixed, Gamma: o.Gamma, StepConst: o.Step}, t)
		if err != nil {
			return fmt.Errorf("fig1a: %s: %w", label, err)
		}
		run := &fig1aRun{runSummary: t.summary(res, false), p: p}
		if prob.Observed != nil {
			run.entries = prob.Observed.Len()
		} else {
			run.entries = d * d
		}
		run.rate, run.fitPoints = fitRate(run.recs, fig1aFitLo, fig1aFitHi)
		w.logf("fig1a: %s: %d iterations, %.2fs, error %.3g, contraction %.4f per iteration", label, run.iterations, run.seconds, lastError(run.recs), run.rate)
		runs = append(runs, run)
	}

	var rows [][]string
	for _, run := range runs {
		for _, rec := range run.recs {
			rows = append(rows, []string{num(run.p), itoa(rec.Iter), num(rec.Elapsed.Seconds()), num(rec.Error), num(math.Log10(rec.Error))})
		}
	}
	if err := w.writeCSV("fig1a.csv", []string{"p", "iter", "seconds", "rel_error", "log10_error"}, rows); err != nil {
		return err
	}
	rows = rows[:0]
	w.sumf("fig1a: GD on d=%d, r=%d, alpha=%g, %s; contraction factor fitted where %g <= error <= %g", d, r, fig1aAlpha, gammaText(o), fig1aFitLo, fig1aFitHi)
	w.sumf("%6s %10s %6s %9s %11s %11s  %s", "p", "entries", "iters", "seconds", "final_err", "contraction", "stop")
	for _, run := range runs {
		fe := lastError(run.recs)
		rows = append(rows, []string{num(run.p), itoa(run.entries), itoa(run.iterations), num(run.seconds), num(fe), num(run.rate), itoa(run.fitPoints), run.stop})
		w.sumf("%6g %10d %6d %9.2f %11.3g %11.4f  %s", run.p, run.entries, run.iterations, run.seconds, fe, run.rate, run.stop)
	}
	if err := w.writeCSV("fig1a_rates.csv", []string{"p", "observed_entries", "iterations", "seconds", "final_error", "contraction", "fit_points", "stop"}, rows); err != nil {
		return err
	}
	c := &chart{
		title:  fmt.Sprintf("Fig. 1(a): GD, d=%d, r=%d, alpha=%g\n%s", d, r, fig1aAlpha, gammaText(o)),
		xlabel: "iteration", ylabel: "log10 relative error ||UV'-M*||_F/||M*||_F",
	}
	for _, run := range runs {
		s := series{name: fmt.Sprintf("p=%g (contraction %.3f/iter)", run.p, run.rate)}
		for _, rec := range run.recs {
			s.xs = append(s.xs, float64(rec.Iter))
			s.ys = append(s.ys, math.Log10(rec.Error))
		}
		c.series = append(c.series, s)
	}
	return w.writeFile("fig1a.png", func(f io.Writer) error { return c.writePNG(f) })
}
