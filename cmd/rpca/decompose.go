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
  sparse.mtx     the nonzero entries of S, Matrix Market coordinate, 1-based
  summary.json   method, input, size, parameters, iterations, time, stop reason

With --p < 1 (--method gd) the method sees only a random fraction p of the
entries (the paper's subsampling, Section 4.2): less memory and time. With
--truth DIR (as written by 'rpca synth --save DIR') the true relative error
‖M − M*‖_F/‖M*‖_F is reported.

Example:
  rpca decompose --in Y.npy --rank 10 --alpha 0.1 --out result`)
	f.solveFlags.register(fs, 0, 0.1)
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
	Rank          int                `json:"rank"`
	Alpha         float64            `json:"alpha"`
	P             float64            `json:"p"`
	Seed          uint64             `json:"seed"`
	Params        map[string]float64 `json:"params"`
	Iterations    int                `json:"iterations"`
	Seconds       float64            `json:"seconds"`
	StopReason    string             `json:"stop_reason"`
	Residual      any                `json:"residual"`
	SparseEntries int                `json:"sparse_entries"`
	RelError      any                `json:"rel_error,omitempty"`
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
	if err := f.outFlags.checkTarget(); err != nil {
		return err
	}
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
		if g, ok := method.(*rpca.GD); ok {
			g.SampleRate = 0 // the data are already partial
		} else {
			return fmt.Errorf("--method %s needs a fully observed matrix, but %s is partially observed; use --method gd: %w", f.method, f.in, errUsage)
		}
	}
	s := f.settings()
	prog := newProgress(e, &f.solveFlags)
	s.Callback = prog.callback
	res, err := rpca.Solve(ctx, p, s, method)
	prog.done()
	if err != nil {
		return err
	}
	sum := &decomposeSummary{
		Command: "decompose", Method: res.Method, Input: f.in, InputFormat: in.format,
		D1: in.d1, D2: in.d2, Partial: in.obs != nil || f.p < 1,
		Rank: f.rank, Alpha: f.alpha, P: f.p, Seed: f.seed, Params: res.Params,
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
		if in.obs == nil {
			obs = fmt.Sprintf(", subsampled at p=%g", f.p)
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
// before the data are read where the format allows.
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
		if err := f.checkSize(in.d1, in.d2); err != nil {
			return nil, err
		}
		if in.dense, err = nf.ReadDense(); err != nil {
			return nil, err
		}
	case "csv", "tsv", "txt":
		if est, ok := estimateTextEntries(f.in); ok {
			if err := f.checkMemory(est, fmt.Sprintf("%s holds about %.3g numbers; ", f.in, est)); err != nil {
				return nil, err
			}
		}
		opt := formats.TextOptions{Delimiter: textDelimiter[format], Header: f.header, AllowNonFinite: f.missingNaN}
		if in.dense, err = formats.ReadDelimitedFile(f.in, opt); err != nil {
			return nil, err
		}
		in.d1, in.d2 = in.dense.Dims()
		if err := f.checkSize(in.d1, in.d2); err != nil {
			return nil, err
		}
	case "mtx":
		if err := f.loadMatrixMarket(in); err != nil {
			return nil, err
		}
	}
	if in.dense != nil {
		if err := f.checkFinite(in); err != nil {
			return nil, err
		}
	}
	return in, nil
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
		if err := f.checkMemory(float64(d1)*float64(d2), ""); err != nil {
			return err
		}
	} else {
		// Triplets (24 bytes an entry while reading) and the observed
		// matrix with the method's work arrays.
		if need := 96 * float64(nnz); need > availableMemory() {
			return fmt.Errorf("%s: %d entries need about %.1f GB, more than this machine has free", f.in, nnz, need/1e9)
		}
	}
	mm, err := formats.ReadMatrixMarketFile(f.in)
	if err != nil {
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

// checkFinite rejects NaN and Inf in a dense input, or with --missing-nan
// turns the NaN entries into missing ones.
func (f *decomposeFlags) checkFinite(in *input) error {
	raw := in.dense.RawMatrix()
	nans := 0
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			switch {
			case math.IsInf(v, 0) || (math.IsNaN(v) && !f.missingNaN):
				hint := ""
				if math.IsNaN(v) {
					hint = "; use --missing-nan if NaN marks a missing entry"
				}
				return fmt.Errorf("%s: non-finite value %v at row %d, column %d (NaN and Inf are not allowed%s)", f.in, v, i+1, j+1, hint)
			case math.IsNaN(v):
				nans++
			}
		}
	}
	if nans == 0 {
		return nil
	}
	if f.p < 1 {
		return fmt.Errorf("--p cannot be combined with missing (NaN) entries; %s is already partially observed: %w", f.in, errUsage)
	}
	n := raw.Rows*raw.Cols - nans
	rows, cols, vals := make([]int, 0, n), make([]int, 0, n), make([]float64, 0, n)
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if !math.IsNaN(v) {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
			}
		}
	}
	obs, err := rpca.NewObserved(raw.Rows, raw.Cols, rows, cols, vals)
	if err != nil {
		return fmt.Errorf("%s: %v", f.in, strings.TrimPrefix(err.Error(), "rpca: "))
	}
	in.dense, in.obs = nil, obs
	return nil
}

// checkSize checks the rank against the size and the memory a dense
// d1×d2 problem needs.
func (f *decomposeFlags) checkSize(d1, d2 int) error {
	if err := f.checkRank(d1, d2); err != nil {
		return err
	}
	return f.checkMemory(float64(d1)*float64(d2), fmt.Sprintf("a dense %d×%d matrix ", d1, d2))
}

func (f *decomposeFlags) checkRank(d1, d2 int) error {
	if f.rank >= min(d1, d2) {
		return fmt.Errorf("--rank %d must be smaller than min(d1, d2) = %d for the %d×%d matrix in %s: %w", f.rank, min(d1, d2), d1, d2, f.in, errUsage)
	}
	return nil
}

// Bytes per entry of a dense d1×d2 problem, the matrix itself included:
// the data and the method's work matrices (residual, sparse estimate,
// multipliers), measured roughly from the methods' allocations.
var denseBytesPerEntry = map[string]float64{"gd": 4 * 8, "altproj": 5 * 8, "ialm": 7 * 8}

// checkMemory refuses a problem with the given number of dense entries
// that would not fit in the free memory. what starts the message.
func (f *decomposeFlags) checkMemory(entries float64, what string) error {
	per := denseBytesPerEntry[f.method]
	if per == 0 {
		per = denseBytesPerEntry["gd"]
	}
	if f.p < 1 {
		// The dense data, plus the sampled entries in compressed rows and
		// columns with the method's values on them.
		per = 8 + 64*f.p
	}
	need := per * entries
	avail := availableMemory()
	if need <= avail {
		return nil
	}
	hint := "use --p (e.g. --p 0.1) with --method gd to work on a random fraction of the entries"
	if f.p < 1 {
		hint = "the data alone need " + fmt.Sprintf("%.1f GB", 8*entries/1e9) + "; store them as a Matrix Market coordinate file of fewer entries"
	}
	if what == "" {
		what = "this matrix "
	}
	return fmt.Errorf("%sneeds about %.1f GB for --method %s, more than the %.1f GB free; %s (lowrank.npy is written row by row, --factors avoids the d1×d2 file)",
		what, need/1e9, f.method, avail/1e9, hint)
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
