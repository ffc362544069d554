package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/rpca-gd/rpca/experiment"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/solveflags"
)

func init() {
	register(&command{
		name:    "experiment",
		summary: "reproduce a figure of the paper's Section 5 (fig1a, fig1b, fig1c, video), or run scenes or ratings, as CSV tables and PNG plots",
		run:     runExperiment,
	})
}

// experimentFlags are the flags of "rpca experiment".
type experimentFlags struct {
	solveflags.Flags
	out       string
	force     bool
	quick     bool
	d         int
	dims      []int
	rates     []float64
	timeCap   time.Duration
	frames    string
	scale     float64
	maxFrames int
	ratings   string
}

func (f *experimentFlags) register(e *env) *flag.FlagSet {
	var list strings.Builder
	for _, x := range experiment.List() {
		fmt.Fprintf(&list, "  %-7s %s\n", x.Name, strings.TrimLeft(cliflag.Wrap(x.Summary, cliflag.Width, 10), " "))
	}
	fs := newFlagSet(e, "experiment", "NAME [flags]", map[string]string{"experiments": list.String()})
	f.Flags.Register(fs, solveflags.Rank|solveflags.Alpha|solveflags.Gamma|solveflags.Step|solveflags.FactorTol|solveflags.MaxIter|solveflags.Seed|solveflags.Workers|solveflags.Quiet)
	for name, usage := range map[string]string{
		"rank":       "rank `r` (default 10; fig1a-c with --quick 5)",
		"alpha":      "ratings: α of the robust fits, in [0, 1) (0: 0.05)",
		"gamma":      "γ of every GD run (0: GD's defaults, 2 for p = 1 and 3 for p < 1; video: the paper's 1)",
		"step":       "step constant c in η = c/σ̂₁ of every GD run (0: GD's defaults; video: the paper's 0.5)",
		"factor-tol": "video: GD's relative factor-change stop (0: the paper's 4e-4; <0: off)",
		"max-iter":   "iteration cap of every solver run (0: the experiment's default)",
		"seed":       "random seed of the data and the methods",
	} {
		fs.Lookup(name).Usage = usage
	}
	fs.StringVar(&f.out, "out", "", "output directory (default experiment-NAME)")
	fs.BoolVar(&f.force, "force", false, "replace an existing non-empty output directory")
	fs.BoolVar(&f.quick, "quick", false, "small sizes that run in seconds")
	cliflag.Var(fs, &f.d, "d", 0, cliflag.AtLeast(0), "non-negative", "fig1a, fig1c: matrix size d (0: 5000, quick 400/300)")
	fs.Var(cliflag.List(&f.dims, cliflag.AtLeast(2), "a size of at least 2"), "dims", "fig1b: comma-separated sizes d (default 10000,20000,50000,100000,200000)")
	fs.Var(cliflag.List(&f.rates, cliflag.Rate, "a rate in (0, 1]"), "rates", "comma-separated sampling rates: fig1a's curves (default 1,0.5,0.2,0.1); for fig1c and video the first below 1 is the subsampled GD (default 0.2)")
	fs.DurationVar(&f.timeCap, "time-cap", 0, "fig1b, fig1c: wall-clock cap per solver run (0: fig1c 300s, quick 30s; fig1b none; <0: none)")
	fs.StringVar(&f.frames, "clips", "", "video: frames directory, clips directory, or \"synthetic\"")
	cliflag.Var(fs, &f.scale, "scale", 0, cliflag.Rate, "in (0, 1]", "video: downscale frames by 1/n, e.g. 0.5 (default: full size, or 0.5 with --quick)")
	cliflag.Var(fs, &f.maxFrames, "max-frames", 0, cliflag.AtLeast(0), "non-negative", "video: use at most this many frames per clip (0: all, quick 30)")
	fs.StringVar(&f.ratings, "ratings", "", "ratings: file of user item rating lines, or \"synthetic\" for generated ratings (default: ../shared's MovieLens ml-latest-small; an error when it is absent)")
	return fs
}

func runExperiment(ctx context.Context, e *env, args []string) error {
	name := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	f, _, err := parseCommand[experimentFlags](e, args)
	if err != nil {
		return err
	}
	if name == "" {
		return cliflag.Usagef("experiment: missing NAME (run 'rpca experiment -h' for the list)")
	}
	if experiment.Lookup(name) == nil {
		return cliflag.Usagef("experiment: unknown experiment %q (run 'rpca experiment -h' for the list)", name)
	}
	o := experiment.Options{
		Out: f.out, Force: f.force, Quick: f.quick, Seed: f.Seed, Workers: f.Workers,
		D: f.d, Rank: f.Rank, Gamma: f.Gamma, Step: f.Step, FactorTol: f.FactorTol, MaxIter: f.MaxIter, TimeCap: f.timeCap,
		Frames: f.frames, Scale: f.scale, MaxFrames: f.maxFrames, Dims: f.dims, Rates: f.rates, Ratings: f.ratings, Alpha: f.Alpha,
	}
	if o.Out == "" {
		o.Out = "experiment-" + name
	}
	if !f.Quiet {
		o.Log = e.stderr
	}
	rep, err := experiment.Run(ctx, name, o)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%swrote %s: %s\n", rep.Summary, rep.Dir, strings.Join(rep.Files, ", "))
	return err
}
