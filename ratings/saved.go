package ratings

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/formats/triples"
)

// The files of a saved model besides the factors, FileRows and FileCols.
const (
	FileModel = "model.json" // what Load needs besides the other files: see savedModel
	FileTrain = "train.tsv"  // the training ratings: row id, column id, rating
)

// savedFormat and savedVersion identify FileModel.
const (
	savedFormat  = "rpca ratings model"
	savedVersion = 1
)

// savedModel is FileModel: what a Predictor holds besides its factors,
// its ids and its training ratings.
type savedModel struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Factors is the format of the factor files: "npy" (U.npy, V.npy)
	// or "csv" (U.csv, V.csv).
	Factors string `json:"factors"`
	// Columns is the number of columns of U and V (the rank plus the
	// baseline's columns).
	Columns  int      `json:"columns"`
	Method   string   `json:"method"`
	Rank     int      `json:"rank"`
	Baseline Baseline `json:"baseline"`
	// Clip is the clip range, null when predictions are not clipped;
	// an end that is null is unbounded.
	Clip      *[2]*float64 `json:"clip"`
	TrainMean float64      `json:"train_mean"`
	// Biases is the bias model for unknown ids (BaselineBiases only).
	Biases *savedBiases `json:"biases,omitempty"`
}

// savedBiases is Biases in FileModel, the row and column biases in the
// order of FileRows and FileCols.
type savedBiases struct {
	Mean float64   `json:"mean"`
	Row  []float64 `json:"row"`
	Col  []float64 `json:"col"`
}

// finitePtr returns &x, or nil when x is not finite.
func finitePtr(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// describe returns the FileModel of m, with factors in the given format.
func (m *Model) describe(factors string) *savedModel {
	s := &savedModel{Format: savedFormat, Version: savedVersion, Factors: factors, Columns: m.U.RawMatrix().Cols,
		Rank: m.Options.Rank, Baseline: m.Options.Baseline, TrainMean: m.TrainMean}
	if m.Result != nil {
		s.Method = m.Result.Method
	}
	if c := m.clip; c != nil {
		s.Clip = &[2]*float64{finitePtr(c[0]), finitePtr(c[1])}
		if c[0] == math.Inf(1) || c[1] == math.Inf(-1) || math.IsNaN(c[0]) || math.IsNaN(c[1]) {
			s.Clip = nil // Fit refuses an empty range; nothing useful to keep
		}
	}
	if b := m.Biases; b != nil {
		s.Biases = &savedBiases{Mean: b.Mean, Row: b.Row, Col: b.Col}
	}
	return s
}

// writeTrain writes the training ratings, one a line: row id, column id
// and rating, separated by tabs.
func (p *Predictor) writeTrain(w io.Writer) error {
	tr := p.Train
	rows, cols := make([]string, tr.Len()), make([]string, tr.Len())
	for k := range tr.Val {
		rows[k], cols[k] = p.RowIDs[tr.Row[k]], p.ColIDs[tr.Col[k]]
	}
	return triples.Write(w, "\t", rows, cols, tr.Val)
}

// ErrNotModel is wrapped by Load's errors: the directory does not hold a
// model that Model.Save wrote, or one of its files is damaged.
var ErrNotModel = errors.New("not a saved ratings model")

// Load reads the model that [Model.Save] wrote into dir (the output
// directory of rpca complete) and returns its predictor: the same
// predictions as the fitted model, without a refit. Every file is
// checked against the others (sizes, ids, finite values); a problem is an
// error wrapping ErrNotModel that names the file.
func Load(dir string) (*Predictor, error) {
	s, err := readSavedModel(dir)
	if err != nil {
		return nil, err
	}
	p := &Predictor{TrainMean: s.TrainMean, rowIndex: map[string]int{}, colIndex: map[string]int{}}
	if p.clip, err = s.clipRange(dir); err != nil {
		return nil, err
	}
	if p.RowIDs, err = readIDs(dir, FileRows, p.rowIndex); err != nil {
		return nil, err
	}
	if p.ColIDs, err = readIDs(dir, FileCols, p.colIndex); err != nil {
		return nil, err
	}
	if p.U, err = readFactor(dir, "U", s, len(p.RowIDs), FileRows); err != nil {
		return nil, err
	}
	if p.V, err = readFactor(dir, "V", s, len(p.ColIDs), FileCols); err != nil {
		return nil, err
	}
	if b := s.Biases; b != nil {
		switch {
		case len(b.Row) != len(p.RowIDs) || len(b.Col) != len(p.ColIDs):
			return nil, badFile(dir, FileModel, "%d row and %d column biases for %d rows and %d columns", len(b.Row), len(b.Col), len(p.RowIDs), len(p.ColIDs))
		case !allFinite(b.Row) || !allFinite(b.Col) || !allFinite([]float64{b.Mean}):
			return nil, badFile(dir, FileModel, "a bias is not finite")
		}
		p.Biases = &Biases{Mean: b.Mean, Row: b.Row, Col: b.Col}
	}
	if p.Train, err = readTrain(dir, p); err != nil {
		return nil, err
	}
	return p, nil
}

// badFile is the error of a damaged or foreign file of a saved model in
// dir.
func badFile(dir, file, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrNotModel, filepath.Join(dir, file), fmt.Sprintf(format, a...))
}

// readSavedModel reads and checks FileModel in dir.
func readSavedModel(dir string) (*savedModel, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileModel))
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		return nil, badFile(dir, FileModel, "missing: the directory was not written by rpca complete, or by a version before models were saved; fit again")
	}
	if err != nil {
		return nil, err
	}
	var s savedModel
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, badFile(dir, FileModel, "%v", err)
	}
	switch {
	case s.Format != savedFormat:
		return nil, badFile(dir, FileModel, "format %q, want %q", s.Format, savedFormat)
	case s.Version != savedVersion:
		return nil, badFile(dir, FileModel, "version %d; this rpca reads version %d", s.Version, savedVersion)
	case s.Factors != "npy" && s.Factors != "csv":
		return nil, badFile(dir, FileModel, "factors %q, want npy or csv", s.Factors)
	case math.IsNaN(s.TrainMean) || math.IsInf(s.TrainMean, 0):
		return nil, badFile(dir, FileModel, "train_mean %v", s.TrainMean)
	}
	return &s, nil
}

// clipRange returns the saved clip range (a missing end is unbounded), or
// nil when predictions are not clipped.
func (s *savedModel) clipRange(dir string) (*[2]float64, error) {
	if s.Clip == nil {
		return nil, nil
	}
	c := [2]float64{math.Inf(-1), math.Inf(1)}
	for k, e := range s.Clip {
		if e != nil {
			c[k] = *e
		}
	}
	if !(c[0] <= c[1]) {
		return nil, badFile(dir, FileModel, "clip range [%v, %v] is empty", c[0], c[1])
	}
	return &c, nil
}

// readFactor reads the factor name (U or V) in s's format from dir and
// checks it: one row for each of the rows ids of ids, s.Columns columns,
// finite values.
func readFactor(dir, name string, s *savedModel, rows int, ids string) (*mat.Dense, error) {
	file := name + "." + s.Factors
	path := filepath.Join(dir, file)
	var m *mat.Dense
	var err error
	if s.Factors == "npy" {
		m, err = npy.ReadFile(path)
	} else {
		m, err = delim.ReadFile(path, delim.Options{Delimiter: ","})
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotModel, err)
	}
	r, c := m.Dims()
	switch {
	case r != rows:
		return nil, badFile(dir, file, "%d rows for the %d ids of %s", r, rows, ids)
	case c != s.Columns:
		return nil, badFile(dir, file, "%d columns, and %s says %d", c, FileModel, s.Columns)
	case !allFinite(m.RawMatrix().Data):
		return nil, badFile(dir, file, "holds a value that is not finite")
	}
	return m, nil
}

// readIDs reads the ids of file in dir, one a line, into index; an empty
// or repeated id is an error.
func readIDs(dir, file string, index map[string]int) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotModel, err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		id := strings.TrimSuffix(sc.Text(), "\r")
		if _, dup := index[id]; dup || id == "" {
			return nil, fmt.Errorf("%w: %s: line %d: id %q is empty or repeated", ErrNotModel, f.Name(), len(ids)+1, id)
		}
		index[id] = len(ids)
		ids = append(ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotModel, f.Name(), err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: %s: no ids", ErrNotModel, f.Name())
	}
	return ids, nil
}

// readTrain reads FileTrain into fitted indices of p.
func readTrain(dir string, p *Predictor) (*formats.Triplets, error) {
	r, err := triples.ReadFile(filepath.Join(dir, FileTrain), triples.Options{Delimiter: "\t"})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotModel, err)
	}
	tr := &formats.Triplets{D1: len(p.RowIDs), D2: len(p.ColIDs), Row: make([]int, r.Len()), Col: make([]int, r.Len()), Val: r.Val}
	for k := range r.Val {
		i, j, okRow, okCol := p.Index(r.RowIDs[r.Row[k]], r.ColIDs[r.Col[k]])
		if !okRow || !okCol {
			return nil, fmt.Errorf("%w: %s: rating %d: an id that %s or %s does not list", ErrNotModel, filepath.Join(dir, FileTrain), k+1, FileRows, FileCols)
		}
		tr.Row[k], tr.Col[k] = i, j
	}
	return tr, nil
}

// allFinite reports whether every value of x is finite.
func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
