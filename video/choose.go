package video

import (
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/request"
	"github.com/rpca-gd/rpca/methods"
)

// MethodMedian is the method name of the per-pixel temporal median
// ([MedianBackground]), the baseline without a low-rank model.
const MethodMedian = "median"

// Request is what a caller asks of a separation, in the names of rpca
// video's options (without the dashes). [Choose] turns it into the
// method and settings of [SeparateOptions], so that the command line and
// the Python package give the same option the same meaning.
type Request struct {
	// Method is auto ("" too: [AutoMethod]), a name of methods.Table, or
	// median.
	Method string
	// Preset is "" (the defaults measured on real footage) or "paper".
	Preset string
	// Rank (0: from the data) and Alpha take the preset's value unless
	// "rank" or "alpha" is in Given, as 0 is a value of its own for both.
	Rank  int
	Alpha float64
	Given []string
	// FactorTol, ResidualTol ("tol") and MaxIter are the stopping rules;
	// 0 takes the preset's value for the methods it sets them for.
	FactorTol, ResidualTol float64
	MaxIter                int
	// Params are the methods' own settings by name (methods.Configure);
	// "mu", "gamma" and "step" left at 0 take the preset's.
	Params map[string]string
	// SampleRate p < 1 solves on a random fraction of the entries
	// (gd and scaledgd only); 0 or 1: all.
	SampleRate float64
	// SparseForeground takes the method's S as the foreground.
	SparseForeground bool
	Seed             uint64
	Workers          int
}

// Choice is what [Choose] made of a Request.
type Choice struct {
	// Method is the method that runs (auto resolved).
	Method string
	// Options hold the method (nil for median), the settings with the
	// preset applied, SampleRate and SparseForeground; the caller adds
	// the rank rule's bounds, the sketch and the foreground decision.
	Options SeparateOptions
	// RankByPreset says that the rank is the preset's.
	RankByPreset bool
}

// The rules a Request can break, wrapped by its *RequestError.
var (
	// ErrUnknownPreset: the preset is neither "" nor "paper".
	ErrUnknownPreset = errors.New("the presets are the default (empty) and paper")
	// ErrUnknownMethod: the method is not auto, median or one of
	// methods.Table.
	ErrUnknownMethod = errors.New("unknown method")
	// ErrMedianOptions: median given the sparse foreground or a method's
	// settings, which it does not have.
	ErrMedianOptions = errors.New("the temporal median has no sparse part and none of the robust-PCA methods' settings")
	// ErrSubsample: p < 1 with a method other than gd and scaledgd.
	ErrSubsample = errors.New("subsampling (p < 1) works with gd and scaledgd only")
)

// RequestError is a Request that breaks a rule (Err), naming the
// method and the options at fault.
type RequestError = request.Error

// Choose resolves r's method, applies its preset to the settings r left
// at their defaults ([Preset.Fill], and "mu", "gamma" and "step" where
// the method takes them) and builds the method with its settings.
// Errors are *RequestError, or methods.New's for a setting the method
// does not have or cannot take.
func Choose(r Request) (Choice, error) {
	preset, ok := Presets[r.Preset]
	if !ok {
		return Choice{}, &RequestError{Scope: "video: method", Model: r.Method, Options: []string{"preset"}, Err: ErrUnknownPreset}
	}
	subsample := r.SampleRate > 0 && r.SampleRate < 1
	c := Choice{Method: r.Method}
	if c.Method == "" || c.Method == methods.AutoName {
		c.Method = AutoMethod(subsample, r.Preset)
	}
	if err := r.check(c.Method, subsample); err != nil {
		return c, err
	}
	given := func(name string) bool { return slices.Contains(r.Given, name) }
	s := preset.Fill(Preset{Rank: r.Rank, Alpha: r.Alpha, FactorTol: r.FactorTol, ResidualTol: r.ResidualTol, MaxIter: r.MaxIter},
		c.Method, given("rank"), given("alpha"))
	c.RankByPreset = s.Rank != r.Rank
	c.Options = SeparateOptions{SparseForeground: r.SparseForeground, Settings: rpca.Settings{
		Rank: s.Rank, Alpha: s.Alpha, Seed: r.Seed, Workers: r.Workers,
		Stop: rpca.Stop{MaxIter: s.MaxIter, FactorTol: s.FactorTol, ResidualTol: s.ResidualTol},
	}}
	if c.Method == MethodMedian {
		return c, nil
	}
	params := maps.Clone(r.Params)
	if params == nil {
		params = map[string]string{}
	}
	for name, v := range map[string]float64{"mu": s.Mu, "gamma": s.Gamma, "step": s.StepConst} {
		if old, _ := strconv.ParseFloat(params[name], 64); v != 0 && old == 0 && methods.Takes(c.Method, name) {
			params[name] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	m, err := methods.New(c.Method, subsample, params)
	if err != nil {
		return c, err
	}
	c.Options.Method = m
	if subsample {
		c.Options.SampleRate = r.SampleRate
	}
	return c, nil
}

// check returns the RequestError of a request whose options method
// cannot take.
func (r *Request) check(method string, subsample bool) error {
	switch {
	case method == MethodMedian && r.SparseForeground:
		return &RequestError{Scope: "video: method", Model: method, Options: []string{"foreground sparse"}, Err: ErrMedianOptions}
	case method == MethodMedian && len(r.Params) > 0:
		return &RequestError{Scope: "video: method", Model: method, Options: slices.Sorted(maps.Keys(r.Params)), Err: ErrMedianOptions}
	case method != MethodMedian && !slices.Contains(methods.Names(), method):
		return &RequestError{Scope: "video: method", Model: method, Err: ErrUnknownMethod}
	case subsample && method != "gd" && method != "scaledgd":
		return &RequestError{Scope: "video: method", Model: method, Options: []string{"p"}, Err: ErrSubsample}
	}
	return nil
}
