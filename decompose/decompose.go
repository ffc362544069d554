// Package decompose is the workflow of rpca decompose: solve a matrix read
// by package load and write the low-rank part (or its factors), the sparse
// part and a summary into an output directory, atomically.
package decompose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/autorank"
	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/outdir"
	"github.com/rpca-gd/rpca/synth"
)

// The files Run writes.
const (
	FileLowRank = "lowrank" // M = U·Vᵀ, d1×d2, with the Format's extension
	FileU       = "U"       // the factor U, d1×r (Job.Factors)
	FileV       = "V"       // the factor V, d2×r (Job.Factors)
	FileSparse  = "sparse.mtx"
	FileSummary = "summary.json"
)

// Format is the file format of the matrices written.
type Format string

// The matrix formats.
const (
	NPY Format = "npy" // NumPy float64, the default
	CSV Format = "csv" // comma-separated text
)

// Job is one decomposition.
type Job struct {
	// Input names the file Data came from, for the summary.
	Input string
	Data  *load.Matrix
	// Method is the solver, suited to the data (a dense-only method
	// cannot take partial data; rpca.Solve says so).
	Method   rpca.Method
	Settings rpca.Settings
	// AutoRank, when set, chooses the rank from the data (package
	// autorank, with these options) and Settings.Rank is ignored.
	AutoRank *autorank.Options
	// Sampling is the rate Data were subsampled at by the loader
	// (0 or 1: not subsampled), for the summary.
	Sampling float64
	// Truth, when set, is a directory holding the true factors
	// (synth.FileA, synth.FileB) to report the true error against.
	Truth string
	// Out is the output directory, created atomically (package outdir);
	// Force replaces one that rpca wrote; Inputs are the files read, which
	// Out may neither be nor contain.
	Out    string
	Force  bool
	Inputs []string
	// Factors writes U and V instead of the d1×d2 low-rank part.
	Factors bool
	// Format of the matrices written ("": NPY).
	Format Format
}

// TruthError is a truth directory that cannot be used.
type TruthError struct {
	Dir string
	Err error
}

func (e *TruthError) Error() string { return fmt.Sprintf("truth %s: %v", e.Dir, e.Err) }
func (e *TruthError) Unwrap() error { return e.Err }

// Summary is summary.json of a decomposition.
type Summary struct {
	Command       string `json:"command"`
	Method        string `json:"method"`
	Input         string `json:"input"`
	InputFormat   string `json:"input_format"`
	D1            int    `json:"d1"`
	D2            int    `json:"d2"`
	Observed      int    `json:"observed_entries"`
	Partial       bool   `json:"partial"`
	Rank          int    `json:"rank"`           // rank of the result (IALM finds its own)
	RankRequested int    `json:"rank_requested"` // Settings.Rank (0: --rank auto)
	// RankChoice says how --rank auto chose the rank (nil for a given
	// rank).
	RankChoice *autorank.Choice `json:"rank_choice,omitempty"`
	Alpha      float64          `json:"alpha"`
	P          float64          `json:"p"`
	Seed       uint64           `json:"seed"`
	Params     any              `json:"params"`
	DataScale  float64          `json:"data_scale,omitempty"` // set only when Solve scaled the data
	Iterations int              `json:"iterations"`
	Seconds    float64          `json:"seconds"`
	StopReason string           `json:"stop_reason"`
	Converged  bool             `json:"converged"` // rpca.StopReason.Converged of StopReason: the method's own rule, not a check of the answer
	// Verified and Verification are rpca.Solve's check of the answer
	// against the data (rpca.Verify); Attempts lists the methods tried
	// when the first answer was not verified (--method auto).
	Verified     bool               `json:"verified"`
	Verification *rpca.Verification `json:"verification"`
	Attempts     []rpca.Attempt     `json:"attempts,omitempty"`
	// Location is the constant rpca.Solve removed before the method ran
	// and added back to M (rpca.Result.Location).
	Location      float64  `json:"location,omitempty"`
	Residual      *float64 `json:"residual"`
	SparseEntries int      `json:"sparse_entries"`
	RelError      *float64 `json:"rel_error,omitempty"`
	Output        string   `json:"output"`
	Files         []string `json:"files"`
	// Result is the solver's result.
	Result *rpca.Result `json:"-"`
}

// SpaceError is a low-rank part that would not fit on the file system of
// the output directory, found before the solve: a d1×d2 matrix of a
// large, partially observed problem can take far more room than its
// input and its factors (Job.Factors).
type SpaceError struct {
	File       string // the file that would not fit
	Need, Free int64  // its size and the free bytes, estimated
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("%s would take about %s, and the output's file system has %s free", e.File, bytesText(e.Need), bytesText(e.Free))
}

// bytesText writes n bytes in GB, MB or bytes.
func bytesText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d bytes", n)
}

// freeBytes is outdir.FreeBytes; a test replaces it.
var freeBytes = outdir.FreeBytes

// LargeLowRank is the size from which LowRankSize calls the low-rank
// part large: 1 GiB.
const LargeLowRank = 1 << 30

// LowRankSize returns the file the job writes the d1×d2 low-rank part
// into and its estimated size in bytes (8 an entry as .npy, about 25 as
// CSV), and whether it is at least LargeLowRank; with Factors, the name
// is "" and the size 0.
func (j *Job) LowRankSize(d1, d2 int) (name string, bytes int64, large bool) {
	if j.Factors {
		return "", 0, false
	}
	name, per := FileLowRank+".npy", int64(8)
	if j.Format == CSV {
		name, per = FileLowRank+".csv", 25
	}
	bytes = int64(d1) * int64(d2) * per
	return name, bytes, bytes >= LargeLowRank
}

// checkSpace returns a *SpaceError when the d1×d2 low-rank part (not
// written with Factors) would not fit on the file system of dir: 8 bytes
// an entry as .npy, about 25 as CSV.
func (j *Job) checkSpace(dir string, d1, d2 int) error {
	name, need, _ := j.LowRankSize(d1, d2)
	if name == "" {
		return nil
	}
	if free, ok := freeBytes(dir); ok && need > free {
		return &SpaceError{File: name, Need: need, Free: free}
	}
	return nil
}

// ErrFormat is an output format other than NPY and CSV.
var ErrFormat = errors.New("decompose: the output format must be npy or csv")

// Check fails early, before any long work, when the job's output cannot
// be written: a bad format, or an Out that exists and may not be
// replaced or cannot be created (outdir.Try).
func (j *Job) Check() error {
	if err := j.checkFormat(); err != nil {
		return err
	}
	return outdir.Try(j.Out, j.Force, j.Inputs...)
}

func (j *Job) checkFormat() error {
	if j.Format != "" && j.Format != NPY && j.Format != CSV {
		return fmt.Errorf("%w, got %q", ErrFormat, j.Format)
	}
	return nil
}

// Run solves the job's problem and writes Out. On an error, or when ctx
// is cancelled, Out is not created.
func Run(ctx context.Context, j Job) (*Summary, error) {
	if err := j.checkFormat(); err != nil {
		return nil, err
	}
	// The directory first, so that an output that cannot be written fails
	// before the solve.
	d, err := outdir.New(j.Out, j.Force, j.Inputs...)
	if err != nil {
		return nil, err
	}
	defer d.Abort()
	in := j.Data
	if err := j.checkSpace(d.Path(), in.D1, in.D2); err != nil {
		return nil, err
	}
	p := in.Problem()
	if j.Truth != "" {
		t, err := synth.ReadTruth(j.Truth, in.D1, in.D2)
		if err != nil {
			return nil, &TruthError{j.Truth, err}
		}
		p.Truth = t
	}
	var res *rpca.Result
	var choice *autorank.Choice
	if j.AutoRank != nil {
		res, choice, err = autorank.Solve(ctx, p, j.Settings, j.Method, *j.AutoRank)
	} else {
		res, err = rpca.Solve(ctx, p, j.Settings, j.Method)
	}
	if err != nil {
		return nil, err
	}
	sum := &Summary{RankChoice: choice,
		Command: "decompose", Method: res.Method, Input: j.Input, InputFormat: string(in.Format),
		D1: in.D1, D2: in.D2, Partial: in.Observed != nil, Observed: in.D1 * in.D2,
		Rank: res.U.RawMatrix().Cols, RankRequested: j.Settings.Rank, Alpha: j.Settings.Alpha, P: 1, Seed: j.Settings.Seed,
		Params: res.Params, Iterations: res.Iterations, Seconds: res.Elapsed.Seconds(), StopReason: string(res.Stop), Converged: res.Stop.Converged(),
		Verified: res.Verification.Verified, Verification: res.Verification, Attempts: res.Attempts, Location: res.Location,
		Residual: metrics.Finite(res.Residual), SparseEntries: res.S.NNZ(), Output: j.Out, Result: res,
	}
	if j.Sampling > 0 {
		sum.P = j.Sampling
	}
	if res.DataScale != 1 {
		sum.DataScale = res.DataScale
	}
	if in.Observed != nil {
		sum.Observed = in.Observed.Len()
	}
	if t := p.Truth; t != nil {
		sum.RelError = metrics.Finite(metrics.CentredRelError(res.U, res.V, t.A, t.B))
	}
	if err := j.write(ctx, d, sum); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return sum, d.Commit()
}

// write writes the low-rank part (or its factors), the sparse part and
// the summary into d.
func (j *Job) write(ctx context.Context, d *outdir.Dir, sum *Summary) error {
	res := sum.Result
	// The sparse part is written beside the low-rank part, on another
	// core: both are passes of their own over the output (formatting S's
	// entries as text, forming U·Vᵀ row by row).
	sparseErr := make(chan error, 1)
	go func() { sparseErr <- mtx.WriteFile(d.Join(FileSparse), res.S) }()
	var files []string
	if j.Factors {
		for _, f := range []struct {
			name string
			m    *mat.Dense
		}{{FileU, res.U}, {FileV, res.V}} {
			name, err := j.writeMatrix(d, f.name, f.m)
			if err != nil {
				<-sparseErr
				return err
			}
			files = append(files, name)
		}
	} else {
		name, err := j.writeLowRank(ctx, d, res.U, res.V)
		if err != nil {
			<-sparseErr
			return err
		}
		files = append(files, name)
	}
	if err := <-sparseErr; err != nil {
		return err
	}
	sum.Files = append(files, FileSparse, FileSummary)
	return outdir.WriteJSON(d.Join(FileSummary), sum)
}

// lowRankBlock is the number of rows of M = U·Vᵀ formed at once.
const lowRankBlock = 64

// writeLowRank writes M = U·Vᵀ by blocks of rows, never holding it in
// memory.
func (j *Job) writeLowRank(ctx context.Context, d *outdir.Dir, u, v *mat.Dense) (string, error) {
	d1, _ := u.Dims()
	d2, _ := v.Dims()
	ur, vr := u.RawMatrix(), v.RawMatrix()
	buf := kernels.NewGeneral(min(lowRankBlock, d1), d2)
	return j.writeRows(d, FileLowRank, d1, d2, func(i int, dst []float64) error {
		k := i % lowRankBlock // row i is row k of the block in buf
		if k == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(lowRankBlock, d1-i)
			kernels.MulABt(blas64.General{Rows: n, Cols: d2, Stride: buf.Stride, Data: buf.Data},
				blas64.General{Rows: n, Cols: ur.Cols, Stride: ur.Stride, Data: ur.Data[i*ur.Stride:]}, vr, 0)
		}
		copy(dst, buf.Data[k*buf.Stride:k*buf.Stride+d2])
		return nil
	})
}

// writeMatrix writes m as base.npy or base.csv into d.
func (j *Job) writeMatrix(d *outdir.Dir, base string, m *mat.Dense) (string, error) {
	r, c := m.Dims()
	return j.writeRows(d, base, r, c, func(i int, dst []float64) error {
		copy(dst, m.RawRowView(i))
		return nil
	})
}

// writeRows writes a rows×cols matrix given row by row as base.npy or
// base.csv into d and returns the file name.
func (j *Job) writeRows(d *outdir.Dir, base string, rows, cols int, row func(i int, dst []float64) error) (string, error) {
	f := j.Format
	if f == "" {
		f = NPY
	}
	name := base + "." + string(f)
	err := outdir.WriteFile(d.Join(name), func(w io.Writer) error {
		if f == CSV {
			return delim.WriteRows(w, rows, cols, ",", row)
		}
		return npy.WriteRows(w, rows, cols, row)
	})
	return name, err
}

// String is the one-line summary: method, size and observations, rank,
// iterations, stop reason, residual, true error, sparse entries, output.
func (s *Summary) String() string {
	obs := ""
	switch {
	case s.Partial && s.P < 1:
		obs = fmt.Sprintf(", subsampled at p=%g to %d entries", s.P, s.Observed)
	case s.Partial:
		obs = fmt.Sprintf(", %d observed entries (%.3g%%)", s.Observed, 100*float64(s.Observed)/(float64(s.D1)*float64(s.D2)))
	}
	trueErr := ""
	if s.RelError != nil {
		trueErr = fmt.Sprintf(", true relative error %.3g", *s.RelError)
	}
	rank := fmt.Sprintf("r=%d", s.Rank)
	if c := s.RankChoice; c != nil {
		rank = fmt.Sprintf("r=%d (chosen by --rank auto, rule %s)", s.Rank, c.Rule)
	}
	return fmt.Sprintf("%s on %d×%d%s, %s, α=%g: %d iterations in %.2fs (%s, %s), residual %s%s, %d sparse entries; wrote %s",
		s.Method, s.D1, s.D2, obs, rank, s.Alpha, s.Iterations, s.Seconds, s.StopReason, s.Verification.Status(),
		metrics.Format("%.3g", s.Residual), trueErr, s.SparseEntries, s.Output) + s.rankLine()
}

// rankLine is the second line of String when the rank was chosen: why.
func (s *Summary) rankLine() string {
	if s.RankChoice == nil {
		return ""
	}
	return "\nrank " + strconv.Itoa(s.Rank) + ": " + s.RankChoice.Reason
}
