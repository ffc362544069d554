package experiment

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/synth"
)

// DemoOptions configure Demo; zero fields take the defaults shown.
type DemoOptions struct {
	D       int     // size d of the d×d problem (2000)
	Rank    int     // rank r of M* (10)
	Alpha   float64 // fraction α of corrupted entries
	Seed    uint64
	Workers int
	// Stage, when set, is told each step; Callback gets every iteration.
	Stage    func(msg string)
	Callback func(rpca.Record)
}

// DemoRun is one method's run in Demo.
type DemoRun struct {
	What                string
	InitError, RelError float64 // ‖UVᵀ − M*‖_F/‖M*‖_F after initialization and at the end
	Iterations          int
	Elapsed             time.Duration
	Stop                rpca.StopReason
	Corruptions         int // entries of the sparse part found
}

// DemoReport is what Demo did.
type DemoReport struct {
	D, Rank, Corrupted int
	Magnitude          float64
	Generate           time.Duration
	Runs               []DemoRun
}

// Demo is the tool's main job on an embedded default: it generates the
// paper's model (Section 5.1) and solves it with AccAltProj (the default
// for a full matrix), Algorithm 1 and Algorithm 2 on 10% of the entries.
func Demo(ctx context.Context, o DemoOptions) (*DemoReport, error) {
	o.D, o.Rank = cmp.Or(o.D, 2000), cmp.Or(o.Rank, 10)
	stage := o.Stage
	if stage == nil {
		stage = func(string) {}
	}
	stage(fmt.Sprintf("generating a %d×%d instance…", o.D, o.D))
	t0 := time.Now()
	in, err := synth.Dense(synth.Config{D1: o.D, D2: o.D, Rank: o.Rank, Alpha: o.Alpha, Seed: o.Seed, Workers: o.Workers})
	if err != nil {
		return nil, err
	}
	rep := &DemoReport{D: o.D, Rank: o.Rank, Corrupted: in.S.NNZ(), Magnitude: 5 * float64(o.Rank) / float64(o.D), Generate: time.Since(t0)}
	runs := []struct {
		what   string
		m      rpca.Method
		sample float64 // the rate Y is subsampled at (0: all of it)
	}{
		{"AccAltProj (the default for a fully observed matrix)", &accaltproj.Method{}, 0},
		{"The paper's Algorithm 1 (all entries)", &gd.Method{}, 0},
		{"The paper's Algorithm 2 (random 10% of the entries)", &gd.Method{}, 0.1},
	}
	for _, r := range runs {
		stage(r.m.Name() + ": initializing…")
		t0 := time.Now()
		p := in.Problem()
		if r.sample > 0 { // the draw counts as part of the run's time
			obs, err := rpca.Sampling{P: r.sample, Seed: o.Seed}.Dense(p.Dense)
			if err != nil {
				return nil, err
			}
			p = &rpca.Problem{Observed: obs, Truth: p.Truth}
		}
		drawn := time.Since(t0)
		s := rpca.Settings{Rank: o.Rank, Alpha: o.Alpha, Seed: o.Seed, Workers: o.Workers, Callback: o.Callback}
		res, err := rpca.Solve(ctx, p, s, r.m)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, DemoRun{What: r.what, InitError: res.History[0].Error, RelError: metrics.RelError(res.U, res.V, in.A, in.B),
			Iterations: res.Iterations, Elapsed: res.Elapsed + drawn, Stop: res.Stop, Corruptions: res.S.NNZ()})
	}
	return rep, nil
}

// String explains the report in a few sentences.
func (r *DemoReport) String() string {
	var b strings.Builder
	d2 := float64(r.D) * float64(r.D)
	fmt.Fprintf(&b, "Generated Y = M* + S*: %d×%d, rank(M*) = %d, %d corrupted entries (%.1f%%), magnitudes up to 5r/d = %.3g, in %.2fs.\n",
		r.D, r.D, r.Rank, r.Corrupted, 100*float64(r.Corrupted)/d2, r.Magnitude, r.Generate.Seconds())
	for _, x := range r.Runs {
		fmt.Fprintf(&b, "%s: error %.2g after initialization, %.2g after %d iterations; %.2fs in all (stopped: %s); %d corruptions found.\n",
			x.What, x.InitError, x.RelError, x.Iterations, x.Elapsed.Seconds(), x.Stop, x.Corruptions)
	}
	b.WriteString("Errors are ‖UVᵀ − M*‖_F/‖M*‖_F. Try 'rpca synth -h' for other sizes, conditioning (--kappa) and methods.\n")
	return b.String()
}
