// Command rpca-beam runs Algorithm 2 (robust PCA from partially observed
// entries, Yi, Park, Chen, Caramanis, NeurIPS 2016) on Apache Beam, for
// matrices beyond one machine:
//
//	rpca-beam --in Y.mtx --rank R --alpha A --out DIR [--method gd|als] [--runner prism|flink|spark|dataflow] [Beam's runner flags]
//
// --in is one Matrix Market coordinate file or a glob of them (each a file
// of the same size holding some of the entries). It writes U.npy, V.npy
// (M = U·Vᵀ) and summary.json into DIR, which appears complete or not at
// all, as "rpca decompose --factors" does. The launcher then checks the
// answer as rpca.Solve checks its own (rpca.Verify, on the entries read
// again, when --in is one local file that fits in its memory); summary.json
// and the last line say "verified", "not verified" (with the reason on
// stderr) or "not checked". With a cluster runner, --work
// must be a directory every worker can read and write (gs://…, or a
// shared file system). After each iteration a checkpoint goes to --work;
// a run that stopped (a lost runner, an interruption) goes on from the
// last one with --resume and the same --work. Exit codes: 0 success, 1
// failure, 2 bad usage, 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx" // registers the runners and file systems
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/beam/rpcabeam"
	"github.com/rpca-gd/rpca/distributed"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/cliflag"
	"github.com/rpca-gd/rpca/internal/gcpolicy"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
)

// options are the command's flags; Beam's own flags (--endpoint,
// --environment_type, --project, …) are registered on the same flag set by
// the Beam packages.
type options struct {
	in, out, work, runner string
	method                string
	rank                  int
	alpha, tol            float64
	ridge, ridgeDecay     float64
	shards, maxIter       int
	cacheMB               int
	seed                  uint64
	force, verbose        bool
	resume, keepWork      bool
	verify                bool
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go onInterrupts(sigs, cancel, os.Stderr, os.Exit)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// onInterrupts cancels the run on the first signal from sigs (the
// pipeline under way finishes: rpcabeam.Prism) and, on a second, ends the
// process at once with exit 130.
func onInterrupts(sigs <-chan os.Signal, cancel func(), stderr io.Writer, exit func(int)) {
	<-sigs
	fmt.Fprintln(stderr, "rpca-beam: interrupting after the pass under way (interrupt again to stop at once)")
	cancel()
	<-sigs
	fmt.Fprintln(stderr, "rpca-beam: stopped at once; no output was written")
	exit(130)
}

// beamInit is beam.Init; a test replaces it.
var beamInit = beam.Init

// errWorker is parse's answer when the binary ran as a Beam worker: the
// SDK's harness ran (and normally ended the process) in beam.Init.
var errWorker = errors.New("rpca-beam: ran as a Beam worker")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err == nil {
		err = solve(ctx, o, stdout, stderr)
	}
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp) || errors.Is(err, errWorker):
		return 0
	case errors.Is(err, cliflag.ErrUsage), errors.Is(err, rpca.ErrBadSettings): // the method's settings come from the flags
		fmt.Fprintf(stderr, "rpca-beam: %v (run 'rpca-beam -h' for help)\n", err)
		return 2
	case errors.Is(err, context.Canceled):
		hint := ""
		if o != nil && o.work != "" {
			hint = fmt.Sprintf("; --resume goes on from the last checkpoint in --work %s", o.work)
		}
		fmt.Fprintf(stderr, "rpca-beam: interrupted; no output was written%s\n", hint)
		return 130
	}
	fmt.Fprintf(stderr, "rpca-beam: %v\n", err)
	return 1
}

// usage prints the help: rpca-beam's own flags in full, then the names of
// Beam's SDK flags, which the binary passes on (their meanings are in
// Beam's documentation), so that the few flags a user needs are not lost
// among Beam's many.
func usage(w io.Writer, fs *flag.FlagSet, beamFlags []string) {
	fmt.Fprintln(w, "Usage: rpca-beam --in FILE --rank R --out DIR [--runner NAME --work DIR] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, cliflag.Wrap("Solves a partially observed Y = M + S with the paper's Algorithm 2 (or with alternating least squares, --method als) as Apache Beam pipelines (docs/distributed.md).", cliflag.Width, 0))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	own := flag.NewFlagSet("rpca-beam", flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(beamFlags, f.Name) {
			own.Var(f.Value, f.Name, f.Usage)
			own.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	cliflag.PrintDefaults(w, own)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Apache Beam's flags, passed to the SDK (see Beam's documentation):")
	names := make([]string, len(beamFlags))
	for i, n := range beamFlags {
		names[i] = "--" + n
	}
	fmt.Fprintln(w, cliflag.Wrap(strings.Join(names, " "), cliflag.Width, 2))
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("rpca-beam", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var beamFlags []string
	flag.CommandLine.VisitAll(func(f *flag.Flag) { // Beam's runner flags, but --runner, which is ours
		if f.Name != "runner" {
			fs.Var(f.Value, f.Name, f.Usage)
			beamFlags = append(beamFlags, f.Name)
		}
	})
	fs.Usage = func() { usage(stderr, fs, beamFlags) }
	fs.StringVar(&o.in, "in", "", "Matrix Market coordinate file, or a glob of such files holding parts of the entries (required)")
	fs.StringVar(&o.out, "out", "", "output directory: U.npy, V.npy, summary.json (required)")
	fs.StringVar(&o.work, "work", "", "work directory for the shards of Φ, the exchanged factors and the checkpoints; on a cluster one that every worker reaches, e.g. gs://bucket/tmp; its files are removed after a success (default: a temporary local directory, removed at the end)")
	fs.BoolVar(&o.resume, "resume", false, "go on from the last checkpoint in --work of a run that stopped (a killed worker, an interruption), without loading --in again")
	fs.BoolVar(&o.keepWork, "keep-work", false, "keep the files of --work after a success")
	fs.BoolVar(&o.verify, "verify", true, "check the answer on the launcher as rpca.Solve does, reading --in again (one local file; its entries must fit in the launcher's memory)")
	fs.StringVar(&o.runner, "runner", "prism", "Beam runner: prism (in-process), flink, spark, dataflow, universal")
	fs.StringVar(&o.method, "method", "gd", "gd (the paper's Algorithm 2, gradient steps) or als (alternating least squares: tens of sweeps where gd takes hundreds of steps)")
	cliflag.Var(fs, &o.ridge, "ridge", 0, cliflag.Finite, "a finite number ≥ 0", "λ of the ridge penalty of every line's fit (--method als)")
	cliflag.Var(fs, &o.ridgeDecay, "ridge-decay", 0, cliflag.Finite, "in [0, 1]", "ρ: sweep t solves with λ·ρᵗ (0: a fixed λ; --method als)")
	cliflag.Var(fs, &o.rank, "rank", 0, cliflag.AtLeast(1), "a positive integer", "rank r of the low-rank part (required)")
	cliflag.Var(fs, &o.alpha, "alpha", 0.1, cliflag.Fraction, "in [0, 1)", "α, the largest fraction of corrupted entries per row/column, in [0, 1)")
	cliflag.Var(fs, &o.tol, "tol", 0, cliflag.Finite, "a finite number", "relative residual tolerance (0: the single-machine default; <0: off)")
	cliflag.Var(fs, &o.shards, "shards", 8, cliflag.AtLeast(1), "a positive integer", "row blocks and column blocks of Φ: the units of work of every pass, which the runner spreads over its workers (a worker splits a shard's lines over its cores)")
	cliflag.Var(fs, &o.cacheMB, "cache-mb", rpcabeam.DefaultCacheBytes>>20, cliflag.AtLeast(0), "non-negative", "MiB of shards a worker keeps in memory between passes (0: none; each pass reads its shards again)")
	cliflag.Var(fs, &o.maxIter, "max-iter", 0, cliflag.AtLeast(0), "non-negative (0: the default)", "iteration cap (0: the single-machine default)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed of the initial SVD")
	fs.BoolVar(&o.force, "force", false, "replace --out if rpca wrote it")
	fs.BoolVar(&o.verbose, "verbose", false, "Beam's log and one line per iteration on stderr")
	if err := cliflag.Parse(fs, args); err != nil {
		return nil, err
	}
	// A runner starts the binary as a worker with the SDK's flags alone
	// (--worker=true --id=… and the endpoints): beam.Init runs the
	// worker's harness then, before any flag of the command is checked.
	if f := flag.CommandLine.Lookup("worker"); f != nil && f.Value.String() == "true" {
		go exitWithParent(os.Getppid(), time.Second)
		beamInit()
		return nil, errWorker
	}
	switch {
	case o.in == "" || o.out == "":
		return nil, cliflag.Usagef("--in and --out are required")
	case o.rank < 1:
		return nil, cliflag.Usagef("--rank is required")
	case o.runner != "prism" && o.work == "":
		return nil, cliflag.Usagef("--runner %s needs --work, a directory every worker reaches (gs://…, or a shared file system): a temporary directory on this machine is not", o.runner)
	case o.method != "gd" && o.method != "als":
		return nil, cliflag.Usagef("--method %q: want gd or als", o.method)
	case o.method == "gd" && (o.ridge != 0 || o.ridgeDecay != 0):
		return nil, cliflag.Usagef("--ridge and --ridge-decay apply to --method als")
	case (o.resume || o.keepWork) && o.work == "":
		return nil, cliflag.Usagef("--resume and --keep-work need --work (the default work directory is removed at the end)")
	}
	if err := flag.CommandLine.Set("runner", o.runner); err != nil {
		return nil, err
	}
	if err := defaultWorkerBinary(o.runner); err != nil {
		return nil, err
	}
	beamInit()
	level := "error"
	if o.verbose {
		level = "info"
	}
	beamlog.SetupLogging(level, "text")
	return o, nil
}

// exitWithParent ends a worker whose parent has gone. The SDK's boot
// loader starts the worker as its child and a runner stops the boot
// loader when the job ends; Prism (v2.77) does so without the worker,
// which then runs on, one process per job. Every interval the worker
// compares its parent with ppid, the one it started with; when they
// differ it removes the copy of itself that the boot loader made to run
// it (stagedCopy) and exits.
func exitWithParent(ppid int, interval time.Duration) {
	for range time.Tick(interval) {
		if os.Getppid() != ppid {
			if dir, ok := stagedCopy(); ok {
				os.RemoveAll(dir)
			}
			os.Exit(0)
		}
	}
}

// stagedCopy returns the directory of the running binary when it is the
// copy the Go SDK's boot loader makes for one worker (/tmp/bin…/worker,
// a directory of its own holding that file alone), so that an orphaned
// worker does not leave it behind.
func stagedCopy() (string, bool) {
	self, err := os.Executable()
	if err != nil {
		return "", false
	}
	dir := filepath.Dir(self)
	if filepath.Base(self) != "worker" || filepath.Dir(dir) != "/tmp" || !strings.HasPrefix(filepath.Base(dir), "bin") {
		return "", false
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		return "", false
	}
	return dir, true
}

// defaultWorkerBinary makes this binary the workers' (Beam's
// --worker_binary) for a runner that starts workers of its own, unless
// --worker_binary names one: it is a Go binary for this machine's system,
// so the cluster's workers must run the same system. Without it the SDK
// compiles the command's source again, which a built binary does not
// have.
func defaultWorkerBinary(runner string) error {
	f := flag.CommandLine.Lookup("worker_binary")
	if runner == "prism" || f == nil || f.Value.String() != "" {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("rpca-beam: cannot find this binary to give the workers (pass --worker_binary): %w", err)
	}
	return f.Value.Set(self)
}

// summary is summary.json.
type summary struct {
	Command    string   `json:"command"`
	Input      string   `json:"input"`
	Runner     string   `json:"runner"`
	D1         int      `json:"d1"`
	D2         int      `json:"d2"`
	Observed   int      `json:"observed"`
	Rank       int      `json:"rank"`
	Alpha      float64  `json:"alpha"`
	Shards     int      `json:"shards"`
	Iterations int      `json:"iterations"`
	Resumed    *int     `json:"resumed_from"` // the iteration of the checkpoint --resume went on from
	Pipelines  int      `json:"pipelines"`
	Seconds    float64  `json:"seconds"`
	StopReason string   `json:"stop_reason"`
	Residual   *float64 `json:"residual"`
	// Location is the constant removed from the values during the solve
	// and added back to M = U·Vᵀ, as rpca.Solve does (0 when none).
	Location float64         `json:"location"`
	Method   string          `json:"method"`
	Params   any             `json:"params"` // gd.Params or als.Params
	History  []historyRecord `json:"history"`
	// IO are the bytes the workers read and wrote, per pass, from the
	// runner's counters (docs/distributed.md, "Bytes moved per
	// iteration").
	IO map[string]rpcabeam.IOStats `json:"io"`
	// Verified and Verification are the check of the answer on the
	// launcher (rpca.Verify); NotChecked says why there was none.
	Verified     bool               `json:"verified"`
	Verification *rpca.Verification `json:"verification"`
	NotChecked   string             `json:"not_checked,omitempty"`
}

type historyRecord struct {
	Iter     int      `json:"iter"`
	Seconds  float64  `json:"seconds"`
	Residual *float64 `json:"residual"`
}

func solve(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	if err := outdir.Try(o.out, o.force, o.in); err != nil {
		return err
	}
	work := o.work
	if work == "" {
		dir, err := os.MkdirTemp("", "rpca-beam-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		work = filepath.Join(dir, "work")
	}
	if fi, err := os.Stat(o.in); err == nil {
		// The collector's target as rpca decompose sets it for a file of
		// this size: the launcher (and in-process Prism's workers) hold
		// the data's size several times over otherwise.
		gcpolicy.Tighten(float64(fi.Size()))
	}
	st, start, err := open(ctx, o, work)
	if err != nil {
		return err
	}
	save := func(c *gd.Checkpoint) error { return rpcabeam.SaveCheckpoint(ctx, work, c) }
	var m distributed.Solver = &gd.Method{Resume: start, OnCheckpoint: save}
	if o.method == "als" {
		m = &als.Method{Ridge: o.ridge, RidgeDecay: o.ridgeDecay, Resume: start, OnCheckpoint: save}
	}
	s := rpca.Settings{Rank: o.rank, Alpha: o.alpha, Seed: o.seed, Stop: rpca.Stop{MaxIter: o.maxIter, ResidualTol: o.tol}}
	if o.verbose {
		s.Callback = func(r rpca.Record) {
			fmt.Fprintf(os.Stderr, "iteration %d: residual %.3g (%.1fs)\n", r.Iter, r.Residual, r.Elapsed.Seconds())
		}
	}
	res, err := m.SolveDistributed(ctx, st, s)
	if err != nil {
		if o.work != "" && !errors.Is(err, rpca.ErrBadInput) && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w (the checkpoint in --work %s is kept: run again with --resume to go on)", err, o.work)
		}
		return err
	}
	d1, d2, nnz := st.Dims()
	sum := summary{Command: "rpca-beam", Input: o.in, Runner: o.runner, D1: d1, D2: d2, Observed: nnz, Rank: o.rank,
		Alpha: o.alpha, Shards: o.shards, Iterations: res.Iterations, Pipelines: st.Pipelines(),
		Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop), Residual: metrics.Finite(res.Residual)}
	sum.Method, sum.Params, sum.IO, sum.Location = o.method, res.Params, st.IO(), res.Location
	if start != nil {
		sum.Resumed = &start.Iteration
	}
	for _, h := range res.History {
		sum.History = append(sum.History, historyRecord{h.Iter, h.Elapsed.Seconds(), metrics.Finite(h.Residual)})
	}
	sum.NotChecked = "--verify=false"
	if o.verify {
		rpcabeam.ReleaseShards() // in-process Prism's workers are this process
		sum.Verification, sum.NotChecked = verifyOnLauncher(o.in, res, s)
	}
	if own := res.Verification; own != nil && own.Failed != "" && (sum.Verification == nil || sum.Verification.Verified) {
		// The method's own finding (the location does not fit the
		// rank): not verified, whatever the check on the launcher found.
		sum.Verification, sum.NotChecked = own, ""
	}
	sum.Verified = sum.Verification != nil && sum.Verification.Verified
	if err := write(o, res.U, res.V, &sum); err != nil {
		return err
	}
	if o.work != "" && !o.keepWork {
		if err := st.Remove(ctx); err != nil {
			return fmt.Errorf("wrote %s, but could not remove the files of --work: %w", o.out, err)
		}
	}
	status := sum.Verification.Status()
	if sum.Verification == nil {
		status = "not checked"
	}
	_, err = fmt.Fprintf(stdout, "%d×%d, %d observed entries, rank %d: %d iterations (%d pipelines on %s) in %.1fs, %s, %s, residual %.3g; wrote %s\n",
		d1, d2, nnz, o.rank, res.Iterations, st.Pipelines(), o.runner, res.Elapsed.Seconds(), res.Stop, status, res.Residual, o.out)
	switch {
	case sum.Verification == nil:
		fmt.Fprintf(stderr, "rpca-beam: note: the answer is not verified: %s\n", sum.NotChecked)
	case !sum.Verified:
		fmt.Fprintf(stderr, "rpca-beam: note: the answer is %s\n", sum.Verification)
	}
	return err
}

// open loads --in into the work directory, or, with --resume, takes up
// the load and the newest checkpoint found there (nil when the run
// stopped before its first). A run without --resume refuses a work
// directory that holds an earlier run's state, which it would otherwise
// lose.
func open(ctx context.Context, o *options, work string) (*rpcabeam.Store, *gd.Checkpoint, error) {
	opts := rpcabeam.Options{Shards: o.shards, Runner: rpcabeam.Named(o.runner), CacheBytes: int64(o.cacheMB) << 20}
	if o.cacheMB == 0 {
		opts.CacheBytes = -1
	}
	if !o.resume {
		if held, err := rpcabeam.Holds(ctx, work); err != nil || held {
			if err == nil {
				err = cliflag.Usagef("--work %s holds the state of an earlier run: pass --resume to go on with it, or choose another --work", work)
			}
			return nil, nil, err
		}
		st, err := rpcabeam.Load(ctx, o.in, work, opts)
		return st, nil, err
	}
	st, err := rpcabeam.Open(ctx, o.in, work, opts)
	if errors.Is(err, rpcabeam.ErrNoStore) {
		err = cliflag.Usagef("--resume: --work %s holds no completed load (%v); run without --resume", work, err)
	} else if errors.Is(err, rpcabeam.ErrOtherInput) {
		err = cliflag.Usagef("--resume: %v", err)
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := rpcabeam.LatestCheckpoint(ctx, work)
	return st, c, err
}

// write writes the factors and the summary into --out, atomically.
func write(o *options, u, v *mat.Dense, sum *summary) error {
	d, err := outdir.New(o.out, o.force, o.in)
	if err != nil {
		return err
	}
	defer d.Abort()
	for name, m := range map[string]*mat.Dense{"U.npy": u, "V.npy": v} {
		if err := npy.WriteFile(d.Join(name), m); err != nil {
			return err
		}
	}
	if err := outdir.WriteJSON(d.Join("summary.json"), sum); err != nil {
		return err
	}
	return d.Commit()
}
