package main

import (
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/gd"
)

// TestVerifyNotChecked: an answer the launcher cannot check is reported
// with the reason, never as verified: an input on the runner's file
// system, a file that is gone, and parameters that do not give T's
// counts.
func TestVerifyNotChecked(t *testing.T) {
	res := &rpca.Result{U: mat.NewDense(3, 1, nil), V: mat.NewDense(2, 1, nil), Params: &gd.Params{KRow: 1, KCol: 1}}
	s := rpca.Settings{Rank: 1, Alpha: 0.1}
	for _, c := range []struct {
		in   string
		res  *rpca.Result
		want string
	}{
		{"gs://bucket/Y.mtx", res, "not a local file"},
		{"parts/Y-*.mtx", res, "pattern"},
		{filepath.Join(t.TempDir(), "gone.mtx"), res, "reading"},
		{"Y.mtx", &rpca.Result{U: res.U, V: res.V, Params: "other"}, "T's counts"},
	} {
		v, why := verifyOnLauncher(c.in, c.res, s)
		if v != nil || !strings.Contains(why, c.want) {
			t.Errorf("%s: %v, %q; want no verification and %q", c.in, v, why, c.want)
		}
	}
}
