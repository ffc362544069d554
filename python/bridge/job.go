package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/methods"
	"github.com/rpca-gd/rpca/ratings"
	"github.com/rpca-gd/rpca/video"
)

// input is Y as the caller holds it.
type input struct {
	data    unsafe.Pointer
	float32 bool
	d1, d2  int
	s0, s1  int // strides in bytes
	mask    unsafe.Pointer
	m0, m1  int
}

// at returns Y[i, j].
func (in *input) at(i, j int) float64 {
	p := unsafe.Add(in.data, i*in.s0+j*in.s1)
	if in.float32 {
		return float64(*(*float32)(p))
	}
	return *(*float64)(p)
}

// observed reports whether entry (i, j) is observed by the mask.
func (in *input) observed(i, j int) bool {
	return in.mask == nil || *(*uint8)(unsafe.Add(in.mask, i*in.m0+j*in.m1)) != 0
}

// contiguous reports whether Y is C-ordered float64, usable in place.
func (in *input) contiguous() bool {
	return !in.float32 && in.s1 == 8 && in.s0 == 8*in.d2
}

// config is the JSON configuration of a solve.
type config struct {
	Rank      int               `json:"rank"`  // 0: chosen from the spectrum
	Alpha     *float64          `json:"alpha"` // nil: 0.1
	Method    string            `json:"method"`
	Params    map[string]string `json:"params"`
	MaxIter   int               `json:"max_iter"`
	Tol       float64           `json:"tol"`
	FactorTol float64           `json:"factor_tol"`
	Seed      uint64            `json:"seed"`
	Workers   int               `json:"workers"`
	MaxRank   int               `json:"max_rank"` // of the automatic rank (0: video.DefaultMaxRank)
}

var errBadConfig = errors.New("rpca: bad configuration")

// task is what Python waits for and may cancel: a solve, a rating fit or
// a separation.
type task struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// job is one solve.
type job struct {
	task
	mu   sync.Mutex
	last rpca.Record

	res    *rpca.Result
	model  *ratings.Model           // a rating fit
	cv     *ratings.CrossValidation // a rating cross-validation
	err    error
	d1, d2 int
	choice *video.RankChoice
}

// start builds the problem and the method and starts the solve.
func start(in input, text string) (*job, error) {
	var c config
	if err := jsonStrict(text, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadConfig, err)
	}
	if in.d1 <= 0 || in.d2 <= 0 {
		return nil, rpca.BadInput(fmt.Errorf("rpca: Y is %d×%d; it needs at least one row and one column", in.d1, in.d2))
	}
	p, err := problem(in)
	if err != nil {
		return nil, err
	}
	alpha := 0.1
	if c.Alpha != nil {
		alpha = *c.Alpha
	}
	j := &job{task: task{done: make(chan struct{})}, d1: in.d1, d2: in.d2}
	j.last = rpca.Record{Iter: -1, Residual: math.NaN()}
	s := rpca.Settings{Rank: c.Rank, Alpha: alpha, Seed: c.Seed, Workers: c.Workers,
		Stop: rpca.Stop{MaxIter: c.MaxIter, ResidualTol: c.Tol, FactorTol: c.FactorTol}}
	if s.Seed == 0 {
		s.Seed = 1
	}
	s.Callback = func(r rpca.Record) {
		j.mu.Lock()
		j.last = r
		j.mu.Unlock()
	}
	if s.Rank == 0 {
		if p.Dense == nil {
			return nil, fmt.Errorf("%w: rank=None chooses the rank from the spectrum of a fully observed Y; give the rank for partial observations", errBadConfig)
		}
		ch, err := video.ChooseRank(context.Background(), p.Dense, c.MaxRank, 0)
		if err != nil {
			return nil, rpca.BadInput(err)
		}
		j.choice = &ch
		s.Rank = ch.Rank
	}
	m, err := methods.New(c.Method, p.Observed != nil, c.Params)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadConfig, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel = cancel
	go func() {
		defer close(j.done)
		defer func() {
			if r := recover(); r != nil {
				j.err = fmt.Errorf("rpca: internal error: %v (please report this)\n%s", r, debug.Stack())
			}
		}()
		j.res, j.err = rpca.Solve(ctx, p, s, m)
	}()
	return j, nil
}

// problem reads Y: in place when it is C-ordered float64 with every entry
// observed, else copied once, as a dense matrix or as its observed
// entries (the mask's, or those that are not NaN).
func problem(in input) (*rpca.Problem, error) {
	missing := in.mask != nil
	if !missing && in.contiguous() {
		for _, v := range unsafe.Slice((*float64)(in.data), in.d1*in.d2) {
			if v != v { // NaN
				missing = true
				break
			}
		}
	}
	for i := 0; i < in.d1 && !missing && !in.contiguous(); i++ {
		for j := range in.d2 {
			if math.IsNaN(in.at(i, j)) {
				missing = true
				break
			}
		}
	}
	if !missing {
		if in.contiguous() {
			return &rpca.Problem{Dense: mat.NewDense(in.d1, in.d2, unsafe.Slice((*float64)(in.data), in.d1*in.d2))}, nil
		}
		y := mat.NewDense(in.d1, in.d2, nil)
		raw := y.RawMatrix()
		for i := range in.d1 {
			row := raw.Data[i*raw.Stride : i*raw.Stride+in.d2]
			for j := range row {
				row[j] = in.at(i, j)
			}
		}
		return &rpca.Problem{Dense: y}, nil
	}
	var rows, cols []int
	var vals []float64
	for i := range in.d1 {
		for j := range in.d2 {
			if v := in.at(i, j); in.observed(i, j) && !math.IsNaN(v) {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
			}
		}
	}
	obs, err := rpca.NewObserved(in.d1, in.d2, rows, cols, vals)
	if err != nil {
		return nil, err
	}
	return &rpca.Problem{Observed: obs}, nil
}

// wait waits up to ms milliseconds (< 0: for ever) and reports whether
// the task has ended.
func (t *task) wait(ms int) bool {
	if ms < 0 {
		<-t.done
		return true
	}
	select {
	case <-t.done:
		return true
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return false
	}
}

func (j *job) progress() rpca.Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last
}

// report is the result's description for Python.
type report struct {
	Method       string             `json:"method"`
	Iterations   int                `json:"iterations"`
	Stop         string             `json:"stop"`
	Converged    bool               `json:"converged"`
	Verified     bool               `json:"verified"`
	Verification *rpca.Verification `json:"verification"`
	Attempts     []rpca.Attempt     `json:"attempts,omitempty"`
	Residual     *float64           `json:"residual"`
	Seconds      float64            `json:"seconds"`
	Location     float64            `json:"location"`
	Params       any                `json:"params"`
	D1           int                `json:"d1"`
	D2           int                `json:"d2"`
	K            int                `json:"k"`
	NNZ          int                `json:"nnz"`
	Rank         int                `json:"rank"`
	RankChoice   *rankChoice        `json:"rank_choice,omitempty"`
}

// rankChoice is how rank=None chose the rank: the leading singular values
// and σ_r/σ_{r+1} (null when σ_{r+1} = 0).
type rankChoice struct {
	Sigma  []float64 `json:"sigma"`
	Gap    *float64  `json:"gap"`
	MinGap float64   `json:"min_gap"`
}

func (j *job) report() report {
	r := j.res
	_, k := r.U.Dims()
	rep := report{Method: r.Method, Iterations: r.Iterations, Stop: string(r.Stop), Converged: r.Stop.Converged(),
		Verification: r.Verification, Attempts: r.Attempts, Seconds: r.Elapsed.Seconds(), Location: r.Location,
		Params: r.Params, D1: j.d1, D2: j.d2, K: k, NNZ: r.S.NNZ(), Rank: k}
	if c := j.choice; c != nil {
		rep.RankChoice = &rankChoice{Sigma: c.Sigma, MinGap: c.MinGap}
		if !math.IsInf(c.Gap, 0) && !math.IsNaN(c.Gap) {
			rep.RankChoice.Gap = &c.Gap
		}
	}
	if r.Verification != nil {
		rep.Verified = r.Verification.Verified
	}
	if !math.IsNaN(r.Residual) && !math.IsInf(r.Residual, 0) {
		rep.Residual = &r.Residual
	}
	return rep
}

// copyDense copies m row by row into the row-major buffer at dst.
func copyDense(dst unsafe.Pointer, m *mat.Dense) {
	r, c := m.Dims()
	raw := m.RawMatrix()
	out := unsafe.Slice((*float64)(dst), r*c)
	for i := range r {
		copy(out[i*c:(i+1)*c], raw.Data[i*raw.Stride:i*raw.Stride+c])
	}
}
