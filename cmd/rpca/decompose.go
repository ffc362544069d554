package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/metrics"
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
	fs := newFlagSet(e, "decompose", "--in FILE --rank R --out DIR [flags]", `
Splits Y = M + S, with M of rank r and S sparse (at most a fraction α of
corrupted entries per row and column), and writes the result into DIR.

Input (--in), by extension or --in-format:
  .npy                   NumPy array, float64/float32/integer, C or Fortran order
  .csv, .tsv/.tab,       numbers only, one row per line, separated by commas,
  .txt/.dat              tabs or white space; --header skips a first line
  .mtx                   Matrix Market: "array" is a dense matrix; "coordinate"
                         lists the observed entries of a partially observed
                         matrix (missing entries are unknown, not zero) and
                         runs the paper's Algorithm 2 (--method gd only)
NaN and Inf values are errors, unless --missing-nan marks NaN entries of a
dense input as missing.

Output in DIR (written to a temporary directory and renamed into place, so
DIR appears complete or not at all; an existing non-empty DIR needs --force):
  lowrank.npy    M = U·Vᵀ, d1×d2 (lowrank.csv with --format csv)
  U.npy, V.npy   instead of lowrank.npy with --factors: M = U·Vᵀ, U d1×k, V d2×k
  sparse.mtx     the entries of S (the corruptions found), Matrix Market
                 coordinate, 1-based
  summary.json   method, input, size, parameters, iterations, time, stop reason

With --p < 1 (--method gd) the method sees only a random fraction p of the
entries (the paper's subsampling, Section 4.2): less memory and time. With
--truth DIR (as written by 'rpca synth --out DIR') the true relative error
‖M − M*‖_F/‖M*‖_F is reported.

A common offset of all entries (a mean far from 0 compared with their
spread) is one more dimension of the low-rank part: count it in --rank.
It also makes the problem ill-conditioned, so the method converges more
slowly (watch for stop reason max-iter).

Examples:
  rpca decompose --in Y.npy --rank 10 --alpha 0.1 --out result
  rpca decompose --in scores.csv --header --rank 5 --out res --format csv
  rpca decompose --in huge.npy --rank 20 --p 0.05 --factors --out res

See docs/cli.md for details.`)
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
	Command       string             `json:"command"`
	Method        string             `json:"method"`
	Input         string             `json:"input"`
	InputFormat   string             `json:"input_format"`
	D1            int                `json:"d1"`
	D2            int                `json:"d2"`
	Observed      int                `json:"observed_entries"`
	Partial       bool               `json:"partial"`
	Rank          int                `json:"rank"`           // rank of the result (IALM finds its own)
	RankRequested int                `json:"rank_requested"` // --rank
	Alpha         float64            `json:"alpha"`
	P             float64            `json:"p"`
	Seed          uint64             `json:"seed"`
	Params        map[string]float64 `json:"params"`
	Iterations    int                `json:"iterations"`
	Seconds       float64            `json:"seconds"`
	StopReason    string             `json:"stop_reason"`
	Residual      *number            `json:"residual"`
	SparseEntries int                `json:"sparse_entries"`
	RelError      *number            `json:"rel_error,omitempty"`
	Output        string             `json:"output"`
	Files         []string           `json:"files"`
}

// input is a loaded data matrix: exactly one of dense and obs is set.
type input struct {
	dense  *mat.Dense
	obs    *rpca.Observed
	d1, d2 int
	format string
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
	in, err := f.load()
	if err != nil {
		return err
	}
	var truth *rpca.Truth
	if f.truth != "" {
		if truth, err = readTruth(f.truth, in.d1, in.d2); err != nil {
			return err
		}
	}
	p := &rpca.Problem{Dense: in.dense, Observed: in.obs, Truth: truth}
	if in.obs != nil {
		if method, err = f.newMethod(true); err != nil {
			return fmt.Errorf("%s is partially observed: %w", f.in, err)
		}
		if g, ok := method.(*rpca.GD); ok {
			g.SampleRate = 0 // the data are already partial
		}
	}
	s := f.settings()
	s.Callback = prog.callback
	prog.stage("solving %d×%d at rank %d with %s (initialization, then iterations)", in.d1, in.d2, f.rank, method.Name())
	res, err := rpca.Solve(ctx, p, s, method)
	prog.done()
	if err != nil {
		return err
	}
	prog.warnUnconverged(res)
	sum := &decomposeSummary{
		Command: "decompose", Method: res.Method, Input: f.in, InputFormat: in.format,
		D1: in.d1, D2: in.d2, Partial: in.obs != nil || f.p < 1,
		Rank: res.U.RawMatrix().Cols, RankRequested: f.rank, Alpha: f.alpha, P: f.p, Seed: f.seed, Params: res.Params,
		Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop),
		Residual: finite(res.Residual), SparseEntries: res.S.NNZ(), Output: f.out,
	}
	if in.obs != nil {
		sum.Observed = in.obs.Len()
	} else {
		sum.Observed = in.d1 * in.d2
	}
	if truth != nil {
		sum.RelError = finite(metrics.RelError(res.U, res.V, truth.A, truth.B))
	}
	prog.stage("writing %s", f.out)
	err = f.outFlags.write(ctx, func(d *formats.AtomicDir) ([]string, error) {
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
		if err := formats.WriteMatrixMarketFile(d.Join("sparse.mtx"), res.S); err != nil {
			return nil, err
		}
		files = append(files, "sparse.mtx", "summary.json")
		sum.Files = files
		return files, writeJSONFile(d.Join("summary.json"), sum)
	})
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

// load reads the input matrix named by --in, checking sizes and memory
// before the data are read where the format allows. With --p < 1 the
// result is a random subset of the entries (an .npy file is sampled while
// it is read, so it never needs to fit in memory as a whole).
func (f *decomposeFlags) load() (*input, error) {
	format, err := inputFormat(f.in, f.inFormat)
	if err != nil {
		return nil, err
	}
	if err := checkReadable(f.in); err != nil {
		return nil, err
	}
	in := &input{format: format}
	switch format {
	case "npy":
		nf, err := formats.OpenNpy(f.in)
		if err != nil {
			return nil, err
		}
		defer nf.Close()
		in.d1, in.d2 = nf.Header.Dims()
		if err := f.checkRank(in.d1, in.d2); err != nil {
			return nil, err
		}
		if err := f.checkMemory(float64(in.d1)*float64(in.d2), fmt.Sprintf("a dense %d×%d matrix ", in.d1, in.d2), f.p < 1); err != nil {
			return nil, err
		}
		if f.p < 1 {
			smp := f.newSampler(in.d1, in.d2)
			if err := nf.Scan(smp.add); err != nil {
				return nil, err
			}
			return in, smp.finish(in)
		}
		if in.dense, err = nf.ReadDense(); err != nil {
			return nil, err
		}
	case "csv", "tsv", "txt":
		if est, ok := estimateTextEntries(f.in); ok {
			if err := f.checkMemory(est, fmt.Sprintf("%s holds about %.3g numbers and ", f.in, est), false); err != nil {
				return nil, err
			}
		}
		opt := formats.TextOptions{Delimiter: textDelimiter[format], Header: f.header, AllowNonFinite: f.missingNaN}
		if in.dense, err = formats.ReadDelimitedFile(f.in, opt); err != nil {
			if errors.Is(err, formats.ErrNonFinite) {
				err = fmt.Errorf("%w; use --missing-nan if NaN marks a missing entry", err)
			}
			return nil, headerHint(err)
		}
		in.d1, in.d2 = in.dense.Dims()
		if err := f.checkRank(in.d1, in.d2); err != nil {
			return nil, err
		}
		if err := f.checkMemory(float64(in.d1)*float64(in.d2), fmt.Sprintf("a dense %d×%d matrix ", in.d1, in.d2), false); err != nil {
			return nil, err
		}
	case "mtx":
		if err := f.loadMatrixMarket(in); err != nil {
			return nil, err
		}
	}
	if in.dense == nil {
		return in, nil
	}
	// A dense matrix: check every value, and turn it into observed entries
	// when NaN marks missing ones or --p subsamples it.
	raw := in.dense.RawMatrix()
	nans := 0
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) && f.missingNaN {
				nans++
			} else if err := f.checkValue(i, j, v); err != nil {
				return nil, err
			}
		}
	}
	if nans == 0 && f.p == 1 {
		return in, nil
	}
	smp := f.newSampler(in.d1, in.d2)
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			smp.add(i, j, v)
		}
	}
	in.dense = nil
	return in, smp.finish(in)
}

// checkValue rejects NaN and Inf (NaN is accepted by the callers with
// --missing-nan) naming the 1-based position.
func (f *decomposeFlags) checkValue(i, j int, v float64) error {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		return nil
	}
	hint := ""
	if math.IsNaN(v) {
		hint = "; use --missing-nan if NaN marks a missing entry"
	}
	return fmt.Errorf("%s: non-finite value %v at row %d, column %d (NaN and Inf are not allowed%s)", f.in, v, i+1, j+1, hint)
}

// sampler collects the observed entries of a dense input: all finite ones
// (NaN is missing with --missing-nan), or with --p < 1 each independently
// with probability p. Whether (i, j) is kept depends only on --seed and
// (i, j), not on the order of the file, so the same matrix stored in C or
// Fortran order, as .npy or CSV, gives the same sample.
type sampler struct {
	f          *decomposeFlags
	d2         uint64
	all        bool
	threshold  uint64 // keep when hash < threshold
	rows, cols []int
	vals       []float64
}

func (f *decomposeFlags) newSampler(d1, d2 int) *sampler {
	s := &sampler{f: f, d2: uint64(d2), all: f.p >= 1}
	if !s.all {
		s.threshold = uint64(math.Ldexp(f.p, 64))
		c := int(min(f.p*float64(d1)*float64(d2)*1.01+1000, float64(1<<24)))
		s.rows, s.cols, s.vals = make([]int, 0, c), make([]int, 0, c), make([]float64, 0, c)
	}
	return s
}

// add is called for every entry of the matrix.
func (s *sampler) add(i, j int, v float64) error {
	if math.IsNaN(v) && s.f.missingNaN {
		return nil
	}
	if err := s.f.checkValue(i, j, v); err != nil {
		return err
	}
	if !s.all && splitmix(s.f.seed^0x5a3b1e5eed, uint64(i)*s.d2+uint64(j)) >= s.threshold {
		return nil
	}
	s.rows, s.cols, s.vals = append(s.rows, i), append(s.cols, j), append(s.vals, v)
	return nil
}

// finish builds the observed matrix of in.
func (s *sampler) finish(in *input) error {
	if len(s.vals) == 0 {
		return fmt.Errorf("%s: no entries observed (all NaN, or --p too small)", s.f.in)
	}
	obs, err := rpca.NewObserved(in.d1, in.d2, s.rows, s.cols, s.vals)
	if err != nil {
		return fmt.Errorf("%s: %v", s.f.in, strings.TrimPrefix(err.Error(), "rpca: "))
	}
	in.obs = obs
	return nil
}

// splitmix returns a 64-bit hash of (seed, k) (the SplitMix64 finalizer),
// a counter-based random number.
func splitmix(seed, k uint64) uint64 {
	z := seed + (k+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// loadMatrixMarket reads an array (dense) or coordinate (partial) file.
func (f *decomposeFlags) loadMatrixMarket(in *input) error {
	h, d1, d2, nnz, err := formats.ReadMatrixMarketSize(f.in)
	if err != nil {
		return err
	}
	in.d1, in.d2 = d1, d2
	if err := f.checkRank(d1, d2); err != nil {
		return err
	}
	if h.Format == "array" {
		if err := f.checkMemory(float64(d1)*float64(d2), fmt.Sprintf("a dense %d×%d matrix ", d1, d2), false); err != nil {
			return err
		}
	} else {
		// The gradient method needs an observed entry in every row and
		// column; refusing fewer entries here also keeps a size line of
		// huge dimensions from allocating per-row and per-column arrays.
		if nnz < max(d1, d2) {
			// Report a bad entry (an index out of range, 0-based or
			// negative) before the count, when the file is small enough
			// to read without per-line arrays of a huge size.
			if max(d1, d2) <= 1<<24 {
				if _, err := formats.ReadMatrixMarketFile(f.in); err != nil {
					return err
				}
			}
			return fmt.Errorf("%s: %d entries cannot cover the %d rows and %d columns of a %d×%d matrix; every row and column needs an observed entry", f.in, nnz, d1, d2, d1, d2)
		}
		// Triplets (24 bytes an entry while reading, plus the line) and
		// the observed matrix with the method's work arrays.
		if need := 96 * float64(nnz); need > availableMemory() {
			return fmt.Errorf("%s: %d entries need about %.1f GB, more than this machine has free", f.in, nnz, need/1e9)
		}
	}
	mm, err := formats.ReadMatrixMarketFile(f.in)
	if err != nil {
		if errors.Is(err, formats.ErrNonFinite) && h.Format == "coordinate" {
			err = fmt.Errorf("%w; leave missing entries out of a coordinate file", err)
		}
		return err
	}
	if mm.Dense != nil {
		in.dense = mm.Dense
		return nil
	}
	t := mm.Coord
	if err := t.CheckDuplicates(f.in); err != nil {
		return err
	}
	if f.p < 1 {
		return fmt.Errorf("--p subsamples a dense matrix; %s is already partially observed (%d of %d entries): %w", f.in, t.Len(), d1*d2, errUsage)
	}
	if t.Len() == d1*d2 {
		// Every entry is given: a dense matrix, for which every method works.
		in.dense = mat.NewDense(d1, d2, nil)
		for k, v := range t.Val {
			in.dense.Set(t.Row[k], t.Col[k], v)
		}
		return nil
	}
	in.obs, err = rpca.NewObserved(d1, d2, t.Row, t.Col, t.Val)
	if err != nil {
		return fmt.Errorf("%s: %v", f.in, strings.TrimPrefix(err.Error(), "rpca: "))
	}
	return nil
}

func (f *decomposeFlags) checkRank(d1, d2 int) error {
	if f.rank >= min(d1, d2) {
		return fmt.Errorf("--rank %d must be smaller than min(d1, d2) = %d for the %d×%d matrix in %s: %w", f.rank, min(d1, d2), d1, d2, f.in, errUsage)
	}
	return nil
}

// Bytes per entry of a dense d1×d2 problem, the matrix itself included:
// the data and the method's work matrices (residual, sparse estimate,
// multipliers). Measured peak RSS of 'rpca decompose' on a 3000×3000
// .npy (72 MB): gd 4.0×, altproj 4.0×, ialm 7.9× the matrix (4.7× for gd
// with --truth); rounded up.
var denseBytesPerEntry = map[string]float64{"gd": 5 * 8, "scaledgd": 5 * 8, "altproj": 5 * 8, "accaltproj": 5 * 8, "ialm": 8 * 8}

// sampledBytesPerEntry is the memory per observed entry of Algorithm 2:
// the triplets while building, the compressed rows and columns, and the
// method's values on Φ. Measured: peak RSS grows by 68 bytes per entry
// from --p 0.1 to 0.3 on a 3000×3000 .npy; rounded up.
const sampledBytesPerEntry = 80

// checkMemory refuses a dense problem of the given number of entries that
// would not fit in the free memory; streaming says the data are sampled
// while read (--p < 1 on .npy), so that only the sample is held. what
// starts the message.
func (f *decomposeFlags) checkMemory(entries float64, what string, streaming bool) error {
	per := denseBytesPerEntry[f.method]
	if per == 0 {
		per = denseBytesPerEntry["gd"]
	}
	if f.p < 1 {
		per = sampledBytesPerEntry * f.p
		if !streaming {
			per += 8 // the whole matrix is read first
		}
	}
	need := per * entries
	avail := availableMemory()
	if need <= avail {
		return nil
	}
	var hint string
	switch {
	case f.p == 1 && (f.inFmt() == "npy" || sampledBytesPerEntry*0.1*entries < avail):
		p := math.Min(0.1, 0.5*avail/(sampledBytesPerEntry*entries))
		hint = fmt.Sprintf("use --p (e.g. --p %.2g) with --method gd to work on a random fraction of the entries", p)
		if f.inFmt() != "npy" {
			hint += "; --p reads the whole matrix first unless it is an .npy file"
		}
	case f.p == 1:
		hint = "convert it to .npy, which --p samples while reading"
	default:
		hint = fmt.Sprintf("use a smaller --p (at most about %.2g)", 0.5*avail/(sampledBytesPerEntry*entries))
		if !streaming {
			hint += ", or convert it to .npy, which --p samples while reading"
		}
	}
	return fmt.Errorf("%sneeds about %.1f GB for --method %s, more than the %.1f GB free; %s",
		what, need/1e9, f.method, avail/1e9, hint)
}

// inFmt returns the input format, "" when unknown.
func (f *decomposeFlags) inFmt() string {
	fm, _ := inputFormat(f.in, f.inFormat)
	return fm
}

// textDelimiter maps the text formats to their delimiters.
var textDelimiter = map[string]string{"csv": ",", "tsv": "\t", "txt": formats.Whitespace}

// inputFormat returns npy, csv, tsv, txt or mtx from --in-format or the
// file extension.
func inputFormat(path, override string) (string, error) {
	if override != "" {
		switch o := strings.ToLower(override); o {
		case "npy", "csv", "tsv", "txt", "mtx":
			return o, nil
		}
		return "", fmt.Errorf("unknown --in-format %q (want npy, csv, tsv, txt or mtx): %w", override, errUsage)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".npy":
		return "npy", nil
	case ".csv":
		return "csv", nil
	case ".tsv", ".tab":
		return "tsv", nil
	case ".txt", ".dat":
		return "txt", nil
	case ".mtx", ".mm":
		return "mtx", nil
	case "":
		return "", fmt.Errorf("%s has no extension to tell its format; give --in-format npy, csv, tsv, txt or mtx: %w", path, errUsage)
	default:
		return "", fmt.Errorf("unknown input format %q of %s (want .npy, .csv, .tsv, .txt or .mtx); give --in-format to override: %w", ext, path, errUsage)
	}
}

// checkReadable turns a missing or unreadable input into a short message.
func checkReadable(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("input file %s does not exist", path)
	case err != nil:
		return fmt.Errorf("cannot read input file %s: %v", path, unwrapPathError(err))
	case st.IsDir():
		return fmt.Errorf("input %s is a directory, not a file", path)
	}
	return nil
}

// unwrapPathError drops the "op path:" prefix of an *os.PathError.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// estimateTextEntries estimates the number of values in a delimited text
// file from its size and its first lines, without reading it all.
func estimateTextEntries(path string) (float64, bool) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return 0, false
	}
	buf := make([]byte, 1<<20)
	n, _ := fh.Read(buf)
	buf = buf[:n]
	lines := strings.Split(string(buf), "\n")
	if len(lines) < 2 && int64(n) < st.Size() {
		// One line longer than the buffer: at least 2 bytes per value.
		return float64(st.Size()) / 2, true
	}
	if len(lines) > 1 && int64(n) < st.Size() {
		lines = lines[:len(lines)-1] // the last one may be cut
	}
	vals, bytes := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		vals += len(strings.FieldsFunc(l, func(r rune) bool { return r == ',' || r == '\t' || r == ' ' }))
		bytes += len(l) + 1
	}
	if bytes == 0 {
		return 0, false
	}
	return float64(vals) * float64(st.Size()) / float64(bytes), true
}

// writeLowRank writes M = U·Vᵀ row by row, never holding it in memory.
func (f *decomposeFlags) writeLowRank(ctx context.Context, d *formats.AtomicDir, u, v *mat.Dense) (string, error) {
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

// readTruth reads A.npy and B.npy from dir and checks their sizes.
func readTruth(dir string, d1, d2 int) (*rpca.Truth, error) {
	var fs [2]*mat.Dense
	for k, name := range []string{"A.npy", "B.npy"} {
		path := filepath.Join(dir, name)
		if err := checkReadable(path); err != nil {
			return nil, fmt.Errorf("--truth: %v", err)
		}
		m, err := formats.ReadNpyFile(path)
		if err != nil {
			return nil, fmt.Errorf("--truth: %v", err)
		}
		fs[k] = m
	}
	a, b := fs[0], fs[1]
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != d1 || br != d2 || ac != bc {
		return nil, fmt.Errorf("--truth: A.npy is %d×%d and B.npy %d×%d, want %d×r and %d×r for the %d×%d input", ar, ac, br, bc, d1, d2, d1, d2)
	}
	return &rpca.Truth{A: a, B: b}, nil
}
