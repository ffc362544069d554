package altproj

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/npy"
)

// TestPeerInstance times AltProj on an instance written by the peers'
// drivers/make_instance.m (Y.npy, and A.npy, B.npy with M* = A·Bᵀ), for
// the side-by-side with the authors' ncrpca.m; an experiment rather than
// a unit test, it runs only with RPCA_PEER_INSTANCE set to the instance's
// directory:
//
//	RPCA_PEER_INSTANCE=INSTANCE_DIR RPCA_PEER_RANK=10 go test -run TestPeerInstance -v ./altproj
//
// It solves to the true relative error RPCA_PEER_TARGET (default 1e-4)
// with the published schedule alone (StallTol −1) and with the stall rule
// of the authors' code (the default, StallTol 0.1), and prints iterations and seconds
// (Result.Elapsed, the true-error evaluations excluded).
func TestPeerInstance(t *testing.T) {
	dir := os.Getenv("RPCA_PEER_INSTANCE")
	if dir == "" {
		t.Skip("set RPCA_PEER_INSTANCE to an instance directory of the peers' make_instance.m")
	}
	rank, target := 10, 1e-4
	if s := os.Getenv("RPCA_PEER_RANK"); s != "" {
		var err error
		if rank, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	if s := os.Getenv("RPCA_PEER_TARGET"); s != "" {
		var err error
		if target, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) *mat.Dense {
		m, err := npy.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	p := &rpca.Problem{Dense: read("Y.npy"), Truth: &rpca.Truth{A: read("A.npy"), B: read("B.npy")}}
	for _, stall := range []float64{-1, 0} {
		start := time.Now()
		res, err := rpca.Solve(context.Background(), p, rpca.Settings{Rank: rank, Alpha: 0.1,
			Stop: rpca.Stop{TargetError: target, ResidualTol: -1, MaxIter: 5000}}, &Method{StallTol: stall})
		if err != nil {
			t.Fatal(err)
		}
		last := res.History[len(res.History)-1]
		t.Logf("StallTol %g: %s after %d iterations, error %.3g, %.2f s (wall %.2f s)", stall, res.Stop, res.Iterations,
			last.Error, res.Elapsed.Seconds(), time.Since(start).Seconds())
		if res.Stop != rpca.StopTargetError {
			t.Errorf("StallTol %g: stopped by %s at error %.3g, not the target %g", stall, res.Stop, last.Error, target)
		}
	}
}
