package ratings

import (
	"errors"
	"slices"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, c := range []struct {
		name     string
		r        Request
		model    string
		chosenBy []string
		baseline Baseline
	}{
		{"defaults", Request{}, ModelGibbs, nil, BaselineBiases},
		{"gibbs at a rank", Request{Rank: 5}, ModelGibbs, nil, BaselineBiases},
		{"center chooses als", Request{Given: []string{"center"}, Center: true}, ModelALS, []string{"center"}, BaselineMedian},
		{"center=false", Request{Given: []string{"center"}}, ModelALS, []string{"center"}, BaselineNone},
		{"a setting of als", Request{Given: []string{"ridge", "in"}}, ModelALS, []string{"ridge"}, BaselineBiases},
		{"a stopping rule", Request{Given: []string{"max-iter"}}, ModelALS, []string{"max-iter"}, BaselineBiases},
		{"als at a rank", Request{Model: ModelALS, Rank: 5}, ModelALS, nil, BaselineMedian},
		{"als with biases", Request{Model: ModelALS, Rank: 5, Given: []string{"biases"}, Biases: true}, ModelALS, nil, BaselineBiases},
		{"scaled steps", Request{Model: ModelScaledGD, Rank: 3}, ModelScaledGD, nil, BaselineMedian},
		{"gibbs with its tail", Request{Model: ModelGibbs, Alpha: 0.1, Given: []string{"tail"}, Tail: 3}, ModelGibbs, nil, BaselineBiases},
	} {
		got, err := Choose(c.r)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		o := got.Options
		if got.Model != c.model || !slices.Equal(got.ChosenBy, c.chosenBy) || o.Baseline != c.baseline || o.Model == nil || o.Model.Name() != c.model {
			t.Errorf("%s: model %s chosen by %v, baseline %s, estimator %v; want %s by %v, %s", c.name, got.Model, got.ChosenBy, o.Baseline, o.Model, c.model, c.chosenBy, c.baseline)
		}
		if o.Rank != c.r.Rank || o.Alpha != c.r.Alpha {
			t.Errorf("%s: rank %d α %g, want %d %g", c.name, o.Rank, o.Alpha, c.r.Rank, c.r.Alpha)
		}
	}
	g, err := Choose(Request{Model: ModelGibbs, Alpha: 0.1, Given: []string{"tail"}, Tail: 3})
	if gibbs, ok := g.Options.Model.(*Gibbs); err != nil || !ok || gibbs.Tail != 3 {
		t.Errorf("the tail is not Gibbs's: %v, %v", g.Options.Model, err)
	}
	a, err := Choose(Request{Model: ModelALS, Given: []string{"ridge"}, Params: map[string]string{"ridge": "0.25"}})
	if als, ok := a.Options.Model.(*ALS); err != nil || !ok || als.Ridge != 0.25 {
		t.Errorf("the ridge is not ALS's: %v, %v", a.Options.Model, err)
	}
}

func TestChooseRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Request
		want error
	}{
		{"a dense-only method", Request{Model: "accaltproj"}, ErrUnknownModel},
		{"gibbs with a stopping rule", Request{Model: ModelGibbs, Given: []string{"tol"}}, ErrNotTaken},
		{"a setting of gd alone chooses nothing", Request{Given: []string{"step"}}, ErrNotTaken},
		{"gibbs without biases", Request{Model: ModelGibbs, Given: []string{"biases"}}, ErrGibbsBaseline},
		{"gibbs centred", Request{Model: ModelGibbs, Given: []string{"center"}, Center: true}, ErrGibbsBaseline},
		{"the tail at α = 0", Request{Model: ModelGibbs, Given: []string{"tail"}, Tail: 3}, ErrTail},
		{"the tail of als", Request{Model: ModelALS, Alpha: 0.1, Given: []string{"tail"}, Tail: 3}, ErrTail},
	} {
		_, err := Choose(c.r)
		var re *RequestError
		if !errors.Is(err, c.want) || !errors.As(err, &re) {
			t.Errorf("%s: error %v, want a RequestError wrapping %v", c.name, err, c.want)
		}
	}
	if _, err := Choose(Request{Model: ModelGD, Params: map[string]string{"huber": "3"}}); err == nil {
		t.Error("gd took als's --huber")
	}
}
