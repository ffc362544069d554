package methods

import (
	"errors"
	"testing"

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
		want    string
	}{{false, "accaltproj"}, {true, "gd"}} {
		if m, err := New("auto", c.partial, o); err != nil || m.Name() != c.want {
			t.Errorf("auto, partial %v: %v (%v), want %s", c.partial, m, err, c.want)
		}
	}
	if _, err := New("ialm", true, o); !errors.Is(err, ErrNeedsFull) {
		t.Errorf("ialm on partial data: %v", err)
	}
	if _, err := New("pcp", false, o); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v", err)
	}
}
