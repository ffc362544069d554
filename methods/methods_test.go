package methods

import (
	"errors"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
)

// TestNew checks that each name builds the method of that name with the
// options passed through, that auto picks by the data, and the errors.
func TestNew(t *testing.T) {
	o := Options{Mu: 3, Gamma: 1.5, StepConst: 0.25, Step: rpca.StepFixed, Ridge: 0.1, Lambda: 0.01}
	for _, name := range Names() {
		m, err := New(name, false, o)
		if err != nil || m.Name() != name {
			t.Errorf("New(%q): %v, %v", name, m, err)
		}
	}
	g, _ := New("scaledgd", true, o)
	if gd, ok := g.(*rpca.GD); !ok || gd.Update != rpca.UpdateScaled || gd.Gamma != 1.5 || gd.StepConst != 0.25 || gd.Mu != 3 || gd.Ridge != 0.1 || gd.Step != rpca.StepFixed {
		t.Errorf("scaledgd: %+v", g)
	}
	for _, c := range []struct {
		partial bool
		want    []string
	}{{false, []string{"accaltproj", "scaledgd", "ialm"}}, {true, []string{"gd", "scaledgd", "als"}}} {
		m, err := New("auto", c.partial, o)
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
		if g, ok := first.(*rpca.GD); ok && (g.Gamma != 1.5 || g.StepConst != 0.25) {
			t.Errorf("auto, partial %v: options not passed on: %+v", c.partial, g)
		}
	}
	if _, err := New("ialm", true, o); !errors.Is(err, ErrNeedsFull) {
		t.Errorf("ialm on partial data: %v", err)
	}
	if _, err := New("pcp", false, o); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v", err)
	}
}
