package ratings

import (
	"strings"
	"testing"

	"github.com/rpca-gd/rpca"
)

// A fit that stopped at its cap is named in the warnings; a converged one
// is not.
func TestModelWarnings(t *testing.T) {
	m := &Model{Result: &rpca.Result{Method: "als", Stop: rpca.StopMaxIter, Iterations: 7, Residual: 0.25}}
	w := m.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "als stopped (max-iter) after 7 iterations without converging (residual 0.25)") {
		t.Errorf("capped: %q", w)
	}
	m.Result.Stop = rpca.StopFactorTol
	if w := m.Warnings(); w != nil {
		t.Errorf("converged: %q", w)
	}
}
