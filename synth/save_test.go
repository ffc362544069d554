package synth

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
)

// TestSaveReadTruth saves a dense and an observed instance and reads them
// back: the files hold exactly the generated matrices, instance.json
// describes them, and ReadTruth returns A and B or refuses a wrong size.
func TestSaveReadTruth(t *testing.T) {
	cfg := Config{D1: 30, D2: 20, Rank: 2, Alpha: 0.1, Kappa: 3, Seed: 5}
	dense, err := Dense(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := dense.Save(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{FileY, FileA, FileB, FileS, FileInfo}; !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	y, err := npy.ReadFile(filepath.Join(dir, FileY))
	if err != nil || !mat.Equal(y, dense.Y) {
		t.Fatalf("Y.npy differs from Y (%v)", err)
	}
	truth, err := ReadTruth(dir, 30, 20)
	if err != nil || !mat.Equal(truth.A, dense.A) || !mat.Equal(truth.B, dense.B) {
		t.Fatalf("ReadTruth: %v", err)
	}
	if _, err := ReadTruth(dir, 20, 30); !errors.Is(err, ErrTruthSize) {
		t.Errorf("transposed size: %v, want ErrTruthSize", err)
	}
	var info InstanceInfo
	raw, _ := os.ReadFile(filepath.Join(dir, FileInfo))
	if err := json.Unmarshal(raw, &info); err != nil || info.D1 != 30 || info.Corrupted != dense.S.NNZ() || info.Observed != 600 || info.P != 1 || info.Kappa != cfg.Kappa {
		t.Errorf("instance.json %+v (%v)", info, err)
	}

	cfg.P = 0.5
	obs, err := Observed(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if _, err := obs.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	m, err := mtx.ReadFile(filepath.Join(dir, FileObserved))
	if err != nil || m.Coord == nil || m.Coord.Len() != obs.Obs.Len() {
		t.Fatalf("Y.mtx: %v", err)
	}
	k := 0
	obs.Obs.Do(func(i, j int, v float64) {
		c := m.Coord
		if c.Row[k] != i || c.Col[k] != j || c.Val[k] != v {
			t.Fatalf("entry %d: (%d, %d, %v) in the file, (%d, %d, %v) generated", k, c.Row[k], c.Col[k], c.Val[k], i, j, v)
		}
		k++
	})
}
