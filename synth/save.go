package synth

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/mtx"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/load"
	"github.com/rpca-gd/rpca/outdir"
)

// The files of a saved instance. A directory with A.npy and B.npy is a
// truth for ReadTruth (rpca decompose --truth).
const (
	FileY        = "Y.npy"         // the dense data ([Dense])
	FileObserved = "Y.mtx"         // the observed entries, Matrix Market coordinate ([Observed])
	FileA        = "A.npy"         // M* = A·Bᵀ, A d1×r
	FileB        = "B.npy"         // B d2×r
	FileS        = "S.mtx"         // the corruptions, Matrix Market coordinate
	FileInfo     = "instance.json" // an InstanceInfo
)

// InstanceInfo is instance.json: the Config and what was generated.
type InstanceInfo struct {
	Generator  string  `json:"generator"`
	D1         int     `json:"d1"`
	D2         int     `json:"d2"`
	Rank       int     `json:"rank"`
	Alpha      float64 `json:"alpha"`
	Corruption string  `json:"corruption"`
	// Magnitude is Config.Magnitude (0: the default 5r/√(d1·d2));
	// MagnitudeUsed is the corruption scale c actually used.
	Magnitude     float64 `json:"magnitude"`
	MagnitudeUsed float64 `json:"magnitude_used"`
	// Kappa is Config.Kappa: the condition number of M* (0: the paper's
	// model).
	Kappa     float64  `json:"kappa"`
	P         float64  `json:"p"`
	Seed      uint64   `json:"seed"`
	Observed  int      `json:"observed_entries"`
	Corrupted int      `json:"corrupted_entries"`
	Files     []string `json:"files"`
	Command   string   `json:"command,omitempty"`
}

// Info describes the instance for instance.json.
func (in *Instance) Info() *InstanceInfo {
	cfg := in.Config
	inf := &InstanceInfo{
		Generator: "package synth, the paper's Section 5.1 model",
		D1:        cfg.D1, D2: cfg.D2, Rank: cfg.Rank, Alpha: cfg.Alpha, Corruption: cfg.Corruption.String(),
		Magnitude: cfg.Magnitude, MagnitudeUsed: cfg.magnitude(), Kappa: cfg.Kappa, P: cfg.P, Seed: cfg.Seed,
		Corrupted: in.S.NNZ(), Observed: cfg.D1 * cfg.D2,
	}
	inf.P = cmp.Or(inf.P, 1)
	if in.Obs != nil {
		inf.Observed = in.Obs.Len()
	}
	return inf
}

// Save writes the instance into the directory dir, which must exist: the
// data (FileY or FileObserved), the truth (FileA, FileB, FileS) and info
// as FileInfo (in.Info() when nil). It returns the names of the files
// written. Each file is written atomically.
func (in *Instance) Save(dir string, info *InstanceInfo) ([]string, error) {
	if info == nil {
		info = in.Info()
	}
	join := func(name string) string { return filepath.Join(dir, name) }
	var files []string
	if in.Obs != nil {
		if err := mtx.WriteFile(join(FileObserved), in.Obs); err != nil {
			return nil, err
		}
		files = append(files, FileObserved)
	} else {
		if err := npy.WriteFile(join(FileY), in.Y); err != nil {
			return nil, err
		}
		files = append(files, FileY)
	}
	if err := npy.WriteFile(join(FileA), in.A); err != nil {
		return nil, err
	}
	if err := npy.WriteFile(join(FileB), in.B); err != nil {
		return nil, err
	}
	if err := mtx.WriteFile(join(FileS), in.S); err != nil {
		return nil, err
	}
	files = append(files, FileA, FileB, FileS, FileInfo)
	info.Files = files
	if err := outdir.WriteJSON(join(FileInfo), info); err != nil {
		return nil, err
	}
	return files, nil
}

// ErrTruthSize: the truth factors do not fit the data.
var ErrTruthSize = errors.New("synth: truth of the wrong size")

// ReadTruth reads the truth factors FileA and FileB of a saved instance
// in dir and checks that they fit a d1×d2 matrix. A missing file's error
// wraps os.ErrNotExist (see load.CheckReadable).
func ReadTruth(dir string, d1, d2 int) (*rpca.Truth, error) {
	var fs [2]*mat.Dense
	for k, name := range []string{FileA, FileB} {
		if err := load.CheckReadable(filepath.Join(dir, name)); err != nil {
			return nil, err
		}
		m, err := npy.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		fs[k] = m
	}
	a, b := fs[0], fs[1]
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != d1 || br != d2 || ac != bc {
		return nil, fmt.Errorf("%w: %s is %d×%d and %s %d×%d, want %d×r and %d×r for a %d×%d matrix", ErrTruthSize, FileA, ar, ac, FileB, br, bc, d1, d2, d1, d2)
	}
	return &rpca.Truth{A: a, B: b}, nil
}
