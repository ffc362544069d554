package video

import (
	"errors"
	"reflect"
	"testing"

	"github.com/rpca-gd/rpca/methods"
)

// TestChoose: the method auto stands for, the preset applied to what the
// request left at its defaults and to the method's own settings, and what
// the request gave kept.
func TestChoose(t *testing.T) {
	want := func(name string, partial bool, params map[string]string) any {
		m, err := methods.New(name, partial, params)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		r       Request
		method  string
		m       any
		rank    int
		byPre   bool
		ftol    float64
		rtol    float64
		maxIter int
	}{
		{Request{}, "scaledgd", want("scaledgd", false, map[string]string{"gamma": "1"}), 0, false, 1e-7, 0, 500},
		{Request{SampleRate: 0.5}, "gd", want("gd", true, map[string]string{"gamma": "1"}), 0, false, 1e-7, 0, 500},
		{Request{Method: "gd", Params: map[string]string{"gamma": "2"}, MaxIter: 30}, "gd", want("gd", false, map[string]string{"gamma": "2"}), 0, false, 1e-7, 0, 30},
		{Request{Preset: "paper"}, "gd", want("gd", false, map[string]string{"gamma": "1", "mu": "10", "step": "0.5"}), 10, true, 4e-4, 0, 0},
		{Request{Preset: "paper", Rank: 3, Given: []string{"rank"}}, "gd", want("gd", false, map[string]string{"gamma": "1", "mu": "10", "step": "0.5"}), 3, false, 4e-4, 0, 0},
		{Request{Preset: "paper", Method: "altproj"}, "altproj", want("altproj", false, map[string]string{"mu": "10"}), 10, true, 0, 1e-3, 0},
		{Request{Method: "accaltproj"}, "accaltproj", want("accaltproj", false, nil), 0, false, 0, 0, 0},
		{Request{Method: MethodMedian}, MethodMedian, nil, 0, false, 0, 0, 0},
	}
	for _, c := range cases {
		ch, err := Choose(c.r)
		if err != nil {
			t.Fatalf("%+v: %v", c.r, err)
		}
		st := ch.Options.Settings.Stop
		var got any = ch.Options.Method
		if ch.Options.Method == nil {
			got = nil
		}
		if ch.Method != c.method || !reflect.DeepEqual(got, c.m) || ch.Options.Settings.Rank != c.rank || ch.RankByPreset != c.byPre ||
			st.FactorTol != c.ftol || st.ResidualTol != c.rtol || st.MaxIter != c.maxIter {
			t.Errorf("%+v: got %s %#v rank %d (preset %v) stop %+v, want %s %#v rank %d (preset %v) factor-tol %g tol %g max-iter %d",
				c.r, ch.Method, got, ch.Options.Settings.Rank, ch.RankByPreset, st, c.method, c.m, c.rank, c.byPre, c.ftol, c.rtol, c.maxIter)
		}
	}
	if ch, _ := Choose(Request{Alpha: 0, Given: []string{"alpha"}}); ch.Options.Settings.Alpha != 0 {
		t.Errorf("alpha 0 given: got %g", ch.Options.Settings.Alpha)
	}
	if ch, _ := Choose(Request{}); ch.Options.Settings.Alpha != Presets[""].Alpha {
		t.Errorf("alpha not given: got %g, want the preset's %g", ch.Options.Settings.Alpha, Presets[""].Alpha)
	}
}

// TestChooseErrors: each rule a request can break, as its sentinel.
func TestChooseErrors(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want error
	}{
		{Request{Preset: "fast"}, ErrUnknownPreset},
		{Request{Method: "nosuch"}, ErrUnknownMethod},
		{Request{Method: MethodMedian, SparseForeground: true}, ErrMedianOptions},
		{Request{Method: MethodMedian, Params: map[string]string{"mu": "3"}}, ErrMedianOptions},
		{Request{Method: "accaltproj", SampleRate: 0.3}, ErrSubsample},
	} {
		_, err := Choose(c.r)
		var re *RequestError
		if !errors.Is(err, c.want) || !errors.As(err, &re) {
			t.Errorf("%+v: got %v, want %v as a *RequestError", c.r, err, c.want)
		}
	}
	var unused *methods.UnusedParamError
	if _, err := Choose(Request{Method: "ialm", Params: map[string]string{"gamma": "2"}}); !errors.As(err, &unused) {
		t.Errorf("ialm with gamma: got %v, want a *methods.UnusedParamError", err)
	}
}
