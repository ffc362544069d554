package synth

import (
	"context"
	"errors"
	"github.com/rpca-gd/rpca/gd"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/metrics"
)

// TestRunSavesAndSolves checks that Run's saved instance is the one it
// solved (the truth read back gives the reported error) and that the
// report counts what was generated.
func TestRunSavesAndSolves(t *testing.T) {
	out := filepath.Join(t.TempDir(), "inst")
	cfg := Config{D1: 80, D2: 60, Rank: 2, Alpha: 0.05, Seed: 3, P: 0.5}
	rep, err := Run(context.Background(), Job{Config: cfg, Method: &gd.Method{}, Settings: rpca.Settings{Rank: 2, Alpha: 0.1}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SolveReport == nil || rep.Saved != out || rep.Method != "gd" {
		t.Fatalf("report %+v", rep)
	}
	truth, err := ReadTruth(out, cfg.D1, cfg.D2)
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Result
	if got := metrics.CentredRelError(res.U, res.V, truth.A, truth.B); rep.RelError == nil || got != *rep.RelError {
		t.Errorf("error against the saved truth %g, reported %v", got, rep.RelError)
	}
	in, err := Observed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Observed != in.Obs.Len() || rep.Corrupted != in.S.NNZ() {
		t.Errorf("report: %d observed, %d corrupted; generated %d, %d", rep.Observed, rep.Corrupted, in.Obs.Len(), in.S.NNZ())
	}
	if _, err := Run(context.Background(), Job{Config: cfg, Out: out}); err == nil {
		t.Error("Run replaced a non-empty directory without Force")
	}
}

// TestRunCancelledLeavesNothing checks that a cancelled solve leaves no
// output directory.
func TestRunCancelledLeavesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "inst")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Job{Config: Config{D1: 50, D2: 50, Rank: 2, Alpha: 0.1, Seed: 1}, Method: &gd.Method{}, Settings: rpca.Settings{Rank: 2, Alpha: 0.1}, Out: out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory after cancelling: %v", err)
	}
}

// TestCheckMemory checks the budget against sizes computed by hand.
func TestCheckMemory(t *testing.T) {
	// Dense 1000×1000, rank 10: 4 matrices of 8 MB and 4 factors of
	// 2000×10 doubles = 32.64 MB.
	cfg := Config{D1: 1000, D2: 1000, Rank: 10, Alpha: 0.1}
	if err := CheckMemory(cfg, true, 32.64e6); err != nil {
		t.Errorf("exactly enough memory: %v", err)
	}
	var mem *MemoryError
	if err := CheckMemory(cfg, true, 32.6e6); !errors.As(err, &mem) || mem.FactorsOnly || mem.Need != 32.64e6 {
		t.Errorf("too little memory: %v", err)
	} else if want := 0.5 * (32.6e6 - 0.64e6) / (80 * 1e6); mem.MaxRate != min(want, PaperRate(1000, 10)) {
		t.Errorf("MaxRate %g, want %g", mem.MaxRate, want)
	}
	if err := CheckMemory(cfg, false, 16.64e6); err != nil {
		t.Errorf("saving only needs 2 matrices: %v", err)
	}
	if err := CheckMemory(cfg, true, 1e6); !errors.As(err, &mem) || !mem.FactorsOnly {
		t.Errorf("factors alone too large: %v", err)
	}
	cfg.P = 0.5
	if err := CheckMemory(cfg, true, 40.64e6); err != nil {
		t.Errorf("partial, exactly enough: %v", err)
	}
}
