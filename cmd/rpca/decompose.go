package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/synth"
)

func init() {
	register(&command{
		name:    "decompose",
		summary: "split a matrix from a file (.npy, CSV/TSV, Matrix Market) into low-rank and sparse parts",
		run:     runDecompose,
	})
}

// decomposeFlags are the flags of "rpca decompose".
type decomposeFlags struct {
	solveFlags
	outFlags
	in         string
	inFormat   string
	header     bool
	factors    bool
	truth      string
	missingNaN bool
}

func (f *decomposeFlags) register(e *env) *flag.FlagSet {
	fs := newFlagSet(e, "decompose", "--in FILE --rank R --out DIR [flags]")
	f.allowAuto = true
	f.solveFlags.register(fs, 0, 0.1)
	fs.Lookup("rank").Usage = "rank r of the low-rank part (required)"
	f.outFlags.register(fs)
	fs.StringVar(&f.in, "in", "", "input matrix file (required)")
	fs.StringVar(&f.inFormat, "in-format", "", "input format, overriding the extension: npy, csv, tsv, txt (white space) or mtx")
	fs.BoolVar(&f.header, "header", false, "CSV/TSV/TXT: skip the first line (column names)")
	fs.BoolVar(&f.factors, "factors", false, "write the factors U.npy and V.npy instead of the d1×d2 lowrank.npy")
	fs.StringVar(&f.truth, "truth", "", "directory with the true factors A.npy, B.npy (M* = A·Bᵀ) to report the true error")
	fs.BoolVar(&f.missingNaN, "missing-nan", false, "treat NaN entries of a dense input as missing (runs Algorithm 2 on the others)")
	return fs
}

// decomposeSummary is summary.json of "rpca decompose" and its --json output.
type decomposeSummary struct {
	Command       string   `json:"command"`
	Method        string   `json:"method"`
	Input         string   `json:"input"`
	InputFormat   string   `json:"input_format"`
	D1            int      `json:"d1"`
	D2            int      `json:"d2"`
	Observed      int      `json:"observed_entries"`
	Partial       bool     `json:"partial"`
	Rank          int      `json:"rank"`           // rank of the result (IALM finds its own)
	RankRequested int      `json:"rank_requested"` // --rank
	Alpha         float64  `json:"alpha"`
	P             float64  `json:"p"`
	Seed          uint64   `json:"seed"`
	Params        any      `json:"params"`
	DataScale     float64  `json:"data_scale,omitempty"` // set only when the data were scaled
	Iterations    int      `json:"iterations"`
	Seconds       float64  `json:"seconds"`
	StopReason    string   `json:"stop_reason"`
	Residual      *number  `json:"residual"`
	SparseEntries int      `json:"sparse_entries"`
	RelError      *number  `json:"rel_error,omitempty"`
	Output        string   `json:"output"`
	Files         []string `json:"files"`
}

func runDecompose(ctx context.Context, e *env, args []string) error {
	var f decomposeFlags
	fs := f.register(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.validate(fs); err != nil {
		return err
	}
	method, err := f.newMethod()
	if err != nil {
		return err
	}
	f.outFlags.inputs = []string{f.in, f.truth}
	if err := f.outFlags.checkTarget(); err != nil {
		return err
	}
	prog := newProgress(e, &f.solveFlags)
	prog.stage("reading %s", f.in)
	in, err := f.load(method)
	if err != nil {
		return err
	}
	p, method, err := f.problem(in, method)
	if err != nil {
		return err
	}
	s := f.settings()
	s.Callback = prog.callback
	prog.stage("solving %d×%d at rank %d with %s (initialization, then iterations)", in.D1, in.D2, f.rank, method.Name())
	res, err := rpca.Solve(ctx, p, s, method)
	prog.done()
	if err != nil {
		return err
	}
	prog.warnUnconverged(res)
	sum := &decomposeSummary{
		Command: "decompose", Method: res.Method, Input: f.in, InputFormat: string(in.Format),
		D1: in.D1, D2: in.D2, Partial: in.Observed != nil,
		Rank: res.U.RawMatrix().Cols, RankRequested: f.rank, Alpha: f.alpha, P: f.p, Seed: f.seed, Params: res.Params,
		Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop),
		Residual: finite(res.Residual), SparseEntries: res.S.NNZ(), Output: f.out, DataScale: scaledBy(res),
	}
	sum.Observed = in.D1 * in.D2
	if in.Observed != nil {
		sum.Observed = in.Observed.Len()
	}
	if t := p.Truth; t != nil {
		sum.RelError = finite(metrics.RelError(res.U, res.V, t.A, t.B))
	}
	prog.stage("writing %s", f.out)
	err = f.outFlags.write(ctx, func(d *outdir.Dir) ([]string, error) { return f.writeResult(ctx, d, res, sum) })
	if err != nil {
		return err
	}
	if f.jsonOut {
		return writeJSON(e.stdout, sum)
	}
	obs := ""
	if sum.Partial {
		obs = fmt.Sprintf(", %d observed entries (%.3g%%)", sum.Observed, 100*float64(sum.Observed)/(float64(sum.D1)*float64(sum.D2)))
		if f.p < 1 {
			obs = fmt.Sprintf(", subsampled at p=%g to %d entries", f.p, sum.Observed)
		}
	}
	trueErr := ""
	if sum.RelError != nil {
		trueErr = fmt.Sprintf(", true relative error %.3g", sum.RelError)
	}
	_, err = fmt.Fprintf(e.stdout, "%s on %d×%d%s, r=%d, α=%g: %d iterations in %.2fs (%s), residual %.3g%s, %d sparse entries; wrote %s\n",
		sum.Method, sum.D1, sum.D2, obs, sum.Rank, sum.Alpha, sum.Iterations, sum.Seconds, sum.StopReason,
		sum.Residual, trueErr, sum.SparseEntries, f.out)
	return err
}

// validate checks the flags that do not need the data.
func (f *decomposeFlags) validate(fs *flag.FlagSet) error {
	if f.in == "" {
		return fmt.Errorf("decompose: --in FILE is required (run 'rpca decompose -h' for help): %w", errUsage)
	}
	if err := f.outFlags.validate("decompose"); err != nil {
		return err
	}
	if !flagSet(fs, "rank") {
		return fmt.Errorf("decompose: --rank R is required, the rank of the low-rank part (run 'rpca decompose -h' for help): %w", errUsage)
	}
	return f.check()
}

// writeLowRank writes M = U·Vᵀ row by row, never holding it in memory.
func (f *decomposeFlags) writeLowRank(ctx context.Context, d *outdir.Dir, u, v *mat.Dense) (string, error) {
	d1, k := u.Dims()
	d2, _ := v.Dims()
	row := func(i int, dst []float64) error {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ui := mat.NewVecDense(k, u.RawRowView(i))
		mat.NewVecDense(d2, dst).MulVec(v, ui)
		return nil
	}
	return f.writeRows(d, "lowrank", d1, d2, row)
}

// load reads --in with the loader of package load and rewords its errors
// for the command line.
func (f *decomposeFlags) load(method rpca.Method) (*load.Matrix, error) {
	opt := load.Options{
		Format: load.Format(f.inFormat), Header: f.header, MissingNaN: f.missingNaN,
		Sample:        rpca.Sampling{P: f.p, Seed: f.seed},
		BytesPerEntry: method.Capabilities().BytesPerEntry,
		CheckDims: func(d1, d2 int) error {
			if f.rank >= min(d1, d2) {
				return fmt.Errorf("--rank %d must be smaller than min(d1, d2) = %d for the %d×%d matrix in %s: %w", f.rank, min(d1, d2), d1, d2, f.in, errUsage)
			}
			return nil
		},
	}
	in, err := load.File(f.in, opt)
	return in, f.loadError(err)
}

// loadError adds the command line's remedies to the loader's errors.
func (f *decomposeFlags) loadError(err error) error {
	var mem *load.MemoryError
	var nf *load.NonFiniteError
	const nanHint = "; use --missing-nan if NaN marks a missing entry"
	switch {
	case err == nil:
		return nil
	case errors.Is(err, load.ErrFormat):
		return fmt.Errorf("%v; give --in-format npy, csv, tsv, txt or mtx: %w", err, errUsage)
	case errors.Is(err, load.ErrPartialSample):
		return fmt.Errorf("%v: --p subsamples a dense matrix, and this one is already partially observed: %w", err, errUsage)
	case errors.As(err, &nf) && math.IsNaN(nf.Value):
		return fmt.Errorf("%w"+nanHint, err)
	case errors.As(err, &nf):
		return err // ±Inf: no flag makes it acceptable
	case errors.Is(err, formats.ErrNonFinite) && f.inFmt() == load.MatrixMarket:
		return fmt.Errorf("%w; leave missing entries out of a coordinate file", err)
	case errors.Is(err, formats.ErrNonFinite):
		return fmt.Errorf("%w"+nanHint, err)
	case errors.As(err, &mem):
		return fmt.Errorf("%w for --method %s; %s", err, f.method, memoryHint(mem))
	}
	return headerHint(err)
}

// inFmt is the input's format, "" when it cannot be told.
func (f *decomposeFlags) inFmt() load.Format {
	fm, _ := load.FormatOf(f.in, load.Format(f.inFormat))
	return fm
}

// memoryHint says what to do about a load that would not fit.
func memoryHint(e *load.MemoryError) string {
	var hint string
	switch {
	case e.MaxRate == 0:
		return "use a machine with more memory"
	case e.Rate == 0 && (e.Streamed || e.MaxRate > 0.05):
		hint = fmt.Sprintf("use --p (e.g. --p %.2g) with --method gd to work on a random fraction of the entries", min(0.1, e.MaxRate))
		if !e.Streamed {
			hint += "; --p reads the whole matrix first unless it is an .npy file"
		}
	case e.Rate == 0:
		hint = "convert it to .npy, which --p samples while reading"
	default:
		hint = fmt.Sprintf("use a smaller --p (at most about %.2g)", e.MaxRate)
		if !e.Streamed {
			hint += ", or convert it to .npy, which --p samples while reading"
		}
	}
	return hint
}

// problem is the problem of the loaded data with the truth of --truth,
// and the method for it (the partial-data one for partial data).
func (f *decomposeFlags) problem(in *load.Matrix, method rpca.Method) (*rpca.Problem, rpca.Method, error) {
	p := in.Problem()
	var err error
	if f.truth != "" {
		for _, name := range []string{synth.FileA, synth.FileB} {
			if err := load.CheckReadable(filepath.Join(f.truth, name)); err != nil {
				return nil, nil, fmt.Errorf("--truth: %w", err)
			}
		}
		if p.Truth, err = synth.ReadTruth(f.truth, in.D1, in.D2); err != nil {
			return nil, nil, fmt.Errorf("--truth: %w", err)
		}
	}
	if in.Observed == nil {
		return p, method, nil
	}
	if method, err = f.newMethod(true); err != nil {
		return nil, nil, fmt.Errorf("%s is partially observed: %w", f.in, err)
	}
	return p, method, nil
}

// writeResult writes the low-rank part (or its factors), sparse.mtx and
// summary.json into d.
func (f *decomposeFlags) writeResult(ctx context.Context, d *outdir.Dir, res *rpca.Result, sum *decomposeSummary) ([]string, error) {
	var files []string
	if f.factors {
		for _, m := range []struct {
			name string
			m    *mat.Dense
		}{{"U", res.U}, {"V", res.V}} {
			name, err := f.writeMatrix(d, m.name, m.m)
			if err != nil {
				return nil, err
			}
			files = append(files, name)
		}
	} else {
		name, err := f.writeLowRank(ctx, d, res.U, res.V)
		if err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	if err := mtx.WriteFile(d.Join("sparse.mtx"), res.S); err != nil {
		return nil, err
	}
	files = append(files, "sparse.mtx", "summary.json")
	sum.Files = files
	return files, writeJSONFile(d.Join("summary.json"), sum)
}

// scaledBy is the power of two Solve divided the data by, 0 when it did
// not (so that summary.json omits it).
func scaledBy(res *rpca.Result) float64 {
	if res.DataScale == 1 {
		return 0
	}
	return res.DataScale
}
