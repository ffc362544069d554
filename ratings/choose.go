package ratings

import (
	"errors"
	"slices"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/internal/request"
	"github.com/rpca-gd/rpca/methods"
)

// The models a Request can name: the Gibbs fit and the three methods
// fitted by rpca.Solve.
const (
	ModelGibbs    = "gibbs"
	ModelALS      = "als"
	ModelGD       = "gd"
	ModelScaledGD = "scaledgd"
)

// solveModels are the models fitted by rpca.Solve, whose settings
// (methods.Params) a Request may give.
var solveModels = []string{ModelGD, ModelScaledGD, ModelALS}

// Request is what a caller asks of the rating model, in the names of rpca
// complete's options (without the dashes). Choose turns it into Options.
type Request struct {
	// Model is gibbs, als, gd or scaledgd; "" lets the options given
	// choose (Choose).
	Model string
	// Rank is the rank asked for; 0 chooses it (DefaultGibbsRank for
	// Gibbs, validation for the others). Alpha is α (Options.Alpha).
	Rank  int
	Alpha float64
	// Given names the options set by the caller: "center", "biases",
	// "tail", the stopping rules ("tol", "factor-tol", "max-iter") and
	// the methods' settings (methods.Params).
	Given []string
	// Center and Biases are the baselines asked for, read only when
	// "center" or "biases" is in Given (center is on otherwise).
	Center, Biases bool
	// Params are the methods' settings by name, as methods.Configure
	// takes them.
	Params map[string]string
	// Tail is Gibbs's ν (Gibbs.Tail).
	Tail float64
}

// ModelChoice is the model Choose picked and the options it fits with.
type ModelChoice struct {
	// Model is the model that runs, and ChosenBy the given options that
	// chose it when the Request named none.
	Model    string
	ChosenBy []string
	// Options hold the estimator, the baseline, the rank and α; the
	// caller adds the settings and the clipping.
	Options Options
}

// The rules a Request can break, wrapped by its RequestError.
var (
	// ErrUnknownModel: the model is none of gibbs, als, gd and scaledgd.
	ErrUnknownModel = errors.New("rating completion fits gibbs, als, gd or scaledgd")
	// ErrNotTaken: options of the models fitted by rpca.Solve given to
	// the Gibbs fit (GibbsIgnores).
	ErrNotTaken = errors.New("they tune als, gd and scaledgd")
	// ErrGibbsBaseline: the Gibbs fit asked to fit without the biases.
	ErrGibbsBaseline = errors.New("the Gibbs fit fits the biases with the factors")
	// ErrTail: the tail given to a model other than Gibbs, or at α = 0.
	ErrTail = errors.New("the tail sets the noise of the Gibbs fit with α > 0")
)

// RequestError is a Request that breaks a rule (Err), naming the
// model and the options at fault.
type RequestError = request.Error

// GibbsIgnores are the options of a Request that the Gibbs fit does not
// take: the stopping rules and the settings of the models fitted by
// rpca.Solve.
func GibbsIgnores() []string {
	names := []string{"factor-tol", "max-iter", "tol"}
	for _, d := range methods.Params() {
		if slices.ContainsFunc(d.Methods, func(m string) bool { return slices.Contains(solveModels, m) }) {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Choose picks the model and its baseline for r. Without a model named,
// the Gibbs fit runs (the most accurate, docs/cli.md), unless an option
// that only the least-squares fit takes is given ("center", "biases",
// a stopping rule or a setting of als): then ALS runs, and ChosenBy
// names those options. The biases baseline is on when the rank is chosen
// (0) or the model is Gibbs, unless "biases" or "center" is given; else
// the median is removed ("center", the default) or nothing.
func Choose(r Request) (ModelChoice, error) {
	c := ModelChoice{Model: r.Model}
	if c.Model == "" {
		c.Model, c.ChosenBy = r.chooseModel()
	}
	biases := r.Biases
	if (r.Rank == 0 || c.Model == ModelGibbs) && !r.given("biases") && !r.given("center") {
		biases = true
	}
	if err := r.check(c.Model, biases); err != nil {
		return c, err
	}
	o := &c.Options
	o.Rank, o.Alpha = r.Rank, r.Alpha
	switch {
	case biases:
		o.Baseline = BaselineBiases
	case r.Center || !r.given("center"):
		o.Baseline = BaselineMedian
	default:
		o.Baseline = BaselineNone
	}
	var m rpca.Method
	switch c.Model {
	case ModelGibbs:
		o.Model = &Gibbs{Tail: r.Tail}
		return c, nil
	case ModelALS:
		a := &ALS{}
		o.Model, m = a, &a.Method
	default:
		g := &Gradient{Method: gd.Method{Scaled: c.Model == ModelScaledGD}}
		o.Model, m = g, &g.Method
	}
	return c, methods.Configure(m, r.Params)
}

// given reports whether the option name was given.
func (r *Request) given(name string) bool { return slices.Contains(r.Given, name) }

// chooseModel is the model when none is named: ALS when an option only
// it takes was given (those options), Gibbs otherwise.
func (r *Request) chooseModel() (string, []string) {
	var by []string
	for _, n := range append([]string{"center", "biases"}, GibbsIgnores()...) {
		if r.given(n) && (!isParam(n) || methods.Takes(ModelALS, n)) {
			by = append(by, n)
		}
	}
	if len(by) > 0 {
		return ModelALS, by
	}
	return ModelGibbs, nil
}

// check returns the RequestError of a request whose options the model
// cannot take.
func (r *Request) check(model string, biases bool) error {
	var ignored []string
	for _, n := range GibbsIgnores() {
		if r.given(n) {
			ignored = append(ignored, n)
		}
	}
	switch {
	case model != ModelGibbs && !slices.Contains(solveModels, model):
		return &RequestError{Scope: "ratings: model", Model: model, Err: ErrUnknownModel}
	case model == ModelGibbs && len(ignored) > 0:
		return &RequestError{Scope: "ratings: model", Model: model, Options: ignored, Err: ErrNotTaken}
	case model == ModelGibbs && !biases:
		return &RequestError{Scope: "ratings: model", Model: model, Options: []string{"biases=false", "center"}, Err: ErrGibbsBaseline}
	case r.given("tail") && (model != ModelGibbs || r.Alpha == 0):
		return &RequestError{Scope: "ratings: model", Model: model, Options: []string{"tail"}, Err: ErrTail}
	}
	return nil
}

// isParam reports whether name is a setting of some method.
func isParam(name string) bool {
	return slices.ContainsFunc(methods.Params(), func(d methods.ParamDoc) bool { return d.Name == name })
}
