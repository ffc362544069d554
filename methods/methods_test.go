package methods

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/als"
	"github.com/rpca-gd/rpca/gd"
	"github.com/rpca-gd/rpca/ialm"
	"github.com/rpca-gd/rpca/internal/param"
)

// TestNew checks that each name builds the method of that name with the
// settings passed through, that auto picks by the data and hands each
// method of its chain the settings it has, and the errors.
func TestNew(t *testing.T) {
	for _, name := range Names() {
		m, err := New(name, false, nil)
		if err != nil || m.Name() != name {
			t.Errorf("New(%q): %v, %v", name, m, err)
		}
	}
	g, err := New("scaledgd", true, map[string]string{"gamma": "1.5", "step": "0.25", "mu": "3", "ridge": "0.1", "step-rule": "fixed", "no-projection": "true"})
	if m, ok := g.(*gd.Method); err != nil || !ok || !m.Scaled || m.Gamma != 1.5 || m.StepConst != 0.25 || m.Mu != 3 || m.Ridge != 0.1 || m.Step != gd.StepFixed || !m.NoProjection {
		t.Errorf("scaledgd: %+v (%v)", g, err)
	}
	l, err := New("ialm", false, map[string]string{"lambda": "0.01"})
	if m, ok := l.(*ialm.Method); err != nil || !ok || m.Lambda != 0.01 {
		t.Errorf("ialm: %+v (%v)", l, err)
	}
	values := map[string]string{"gamma": "1.5", "huber": "3"}
	for _, c := range []struct {
		partial bool
		values  map[string]string
		want    []string
	}{{false, map[string]string{"gamma": "1.5"}, []string{"accaltproj", "scaledgd", "ialm"}}, {true, values, []string{"als", "gd", "scaledgd"}}} {
		m, err := New("auto", c.partial, c.values)
		if err != nil || m.Name() != AutoName {
			t.Fatalf("auto, partial %v: %v (%v)", c.partial, m, err)
		}
		p := &rpca.Problem{Dense: mat.NewDense(3, 3, nil)}
		if c.partial {
			obs, err := rpca.NewObserved(3, 3, []int{0}, []int{0}, []float64{1})
			if err != nil {
				t.Fatal(err)
			}
			p = &rpca.Problem{Observed: obs}
		}
		first, rest := m.(rpca.Resolver).Resolve(p, rpca.Settings{})
		got := []string{first.Name()}
		for _, f := range rest {
			got = append(got, f.Name())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("auto, partial %v resolves to %v, want %v", c.partial, got, c.want)
		}
		if g, ok := first.(*gd.Method); ok && g.Gamma != 1.5 {
			t.Errorf("auto, partial %v: gamma not passed on: %+v", c.partial, g)
		}
		if a, ok := rest[len(rest)-1].(*als.Method); ok && (a.Huber != 3 || a.Gamma != 1.5) {
			t.Errorf("auto, partial %v: huber and gamma not passed on to als: %+v", c.partial, a)
		}
	}
	if _, err := New("ialm", true, nil); !errors.Is(err, rpca.ErrDenseOnly) {
		t.Errorf("ialm on partial data: %v", err)
	}
	if _, err := New("pcp", false, nil); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v", err)
	}
}

// TestUnusedParam: a setting the method does not have is an
// UnusedParamError naming the methods that have it; for auto, a setting
// none of the chain's methods has (huber on dense data, where no ALS
// runs); a name no method has is one with no TakenBy.
func TestUnusedParam(t *testing.T) {
	for _, c := range []struct {
		method  string
		partial bool
		param   string
		takenBy []string
	}{
		{"gd", false, "huber", []string{"als"}},
		{"scaledgd", false, "ridge-decay", []string{"als"}},
		{"accaltproj", false, "lambda", []string{"ialm"}},
		{"auto", false, "huber", []string{"als"}},
		{"als", true, "colour", nil},
	} {
		_, err := New(c.method, c.partial, map[string]string{c.param: "3"})
		var u *UnusedParamError
		if !errors.As(err, &u) || !errors.Is(err, ErrUnusedParam) || u.Param != c.param || !slices.Equal(u.TakenBy, c.takenBy) {
			t.Errorf("--method %s with %s: %v (%+v), want it taken by %v", c.method, c.param, err, u, c.takenBy)
		}
	}
	if _, err := New("auto", true, map[string]string{"huber": "3"}); err != nil {
		t.Errorf("auto on partial data takes huber (its als does): %v", err)
	}
}

// TestParamValues: what a setting cannot hold is a ParamError saying what
// it must be, and leaves the method as it was.
func TestParamValues(t *testing.T) {
	for _, c := range []struct{ method, param, value, want string }{
		{"gd", "step", "-1", "non-negative"},
		{"gd", "step", "NaN", "non-negative"},
		{"gd", "mu", "inf", "finite"},
		{"als", "ridge-decay", "1.5", "[0, 1]"},
		{"gd", "step-rule", "newton", "fixed, backtracking"},
		{"gd", "no-projection", "maybe", "true or false"},
	} {
		err := Check(c.method, c.param, c.value)
		var pe *ParamError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s=%s: %v, want a ParamError saying %q", c.method, c.param, c.value, err, c.want)
		}
	}
	m := &gd.Method{}
	if err := Configure(m, map[string]string{"step": "-1"}); err == nil || m.StepConst != 0 {
		t.Errorf("a refused value changed the field: %v, %+v", err, m)
	}
}

// TestParams: the help table lists each setting once with the methods
// that have it, groups methods with one text, and marks switches.
func TestParams(t *testing.T) {
	docs := Params()
	find := func(name string) ParamDoc {
		k := slices.IndexFunc(docs, func(d ParamDoc) bool { return d.Name == name })
		if k < 0 {
			t.Fatalf("no setting %q in %+v", name, docs)
		}
		return docs[k]
	}
	if d := find("ridge"); !slices.Equal(d.Methods, []string{"gd", "scaledgd", "als"}) || !strings.HasPrefix(d.Usage, "gd, scaledgd, als: ridge") {
		t.Errorf("ridge: %+v", d)
	}
	if d := find("mu"); !slices.Equal(d.Methods, []string{"accaltproj", "gd", "scaledgd", "altproj"}) || strings.Count(d.Usage, ";") != 2 {
		t.Errorf("mu: %+v, want three texts (accaltproj's β, gd's row norms, altproj's β)", d)
	}
	if !find("no-projection").Bool || find("mu").Bool {
		t.Error("switches not marked")
	}
	if !slices.IsSortedFunc(docs, func(a, b ParamDoc) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("not sorted")
	}
}

// tiny is a method written outside the table's packages: the mean of Y
// as a rank-one answer, with one setting.
type tiny struct{ Shrink float64 }

func (*tiny) Name() string                    { return "tiny" }
func (*tiny) Capabilities() rpca.Capabilities { return rpca.Capabilities{DenseOnly: true} }
func (m *tiny) Params() []rpca.Param {
	return []rpca.Param{param.Float(&m.Shrink, "shrink", "shrink the answer", param.Unit)}
}
func (m *tiny) Solve(context.Context, *rpca.Problem, rpca.Settings) (*rpca.Result, error) {
	return nil, errors.New("not run")
}

// TestRegister: a method added to the table is built by name, its
// setting is configured, listed and refused to the other methods, with
// no other change.
func TestRegister(t *testing.T) {
	saved := Table
	t.Cleanup(func() { Table = saved })
	Table = append(slices.Clone(Table), Entry{"tiny", "a test method", func() rpca.Configurable { return &tiny{} }})
	m, err := New("tiny", false, map[string]string{"shrink": "0.5"})
	if tm, ok := m.(*tiny); err != nil || !ok || tm.Shrink != 0.5 {
		t.Errorf("tiny: %+v (%v)", m, err)
	}
	if !slices.ContainsFunc(Params(), func(d ParamDoc) bool { return d.Name == "shrink" && d.Usage == "tiny: shrink the answer" }) {
		t.Error("shrink not listed")
	}
	var u *UnusedParamError
	if _, err := New("gd", false, map[string]string{"shrink": "0.5"}); !errors.As(err, &u) || !slices.Equal(u.TakenBy, []string{"tiny"}) {
		t.Errorf("gd with shrink: %v", err)
	}
	if _, err := New("tiny", true, nil); !errors.Is(err, rpca.ErrDenseOnly) {
		t.Errorf("tiny on partial data: %v", err)
	}
}

// TestNilContext: every method of the table, run directly (not through
// rpca.Solve) with a nil context, solves as with context.Background():
// the tracker stands in for the missing context, no method panics.
func TestNilContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	a, b := mat.NewDense(40, 2, nil), mat.NewDense(30, 2, nil)
	for _, m := range []*mat.Dense{a, b} {
		r, c := m.Dims()
		for i := range r {
			for j := range c {
				m.Set(i, j, rng.NormFloat64())
			}
		}
	}
	var y mat.Dense
	y.Mul(a, b.T())
	p := &rpca.Problem{Dense: &y}
	s := rpca.Settings{Rank: 2, Alpha: 0.1, Seed: 1}
	for _, name := range Names() {
		m, err := New(name, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		var res *rpca.Result
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic with a nil context: %v", name, r)
				}
			}()
			//lint:ignore SA1012 the nil context is what is tested
			res, err = m.Solve(nil, p, s) //nolint:staticcheck
		}()
		if err != nil || res == nil || res.U == nil {
			t.Errorf("%s with a nil context: %v", name, err)
		}
	}
}
