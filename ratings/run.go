package ratings

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats/delim"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/outdir"
)

// Unknown says how to predict a pair with an id that has no training
// rating.
type Unknown string

// The policies for unknown ids.
const (
	UnknownError Unknown = "error" // an *UnknownIDError
	UnknownNaN   Unknown = "nan"   // predict NaN
	UnknownBias  Unknown = "bias"  // the bias model: the mean plus the known id's bias (BaselineBiases only)
)

// UnknownIDError is a pair to predict whose row or column id has no
// training rating.
type UnknownIDError struct {
	Line int    // 1-based line of the pair in its file
	Kind string // "row" or "column"
	ID   string
}

func (e *UnknownIDError) Error() string {
	return fmt.Sprintf("line %d: unknown %s id %q: it has no training rating, so it cannot be predicted", e.Line, e.Kind, e.ID)
}

// unknownPair returns an *UnknownIDError for the first pair of p whose row
// or column id has no rating outside held, nil when there is none.
func unknownPair(r *triples.Ratings, held []bool, p *triples.Pairs) error {
	rowSeen, colSeen := make([]bool, r.D1), make([]bool, r.D2)
	for k := range r.Val {
		if held == nil || !held[k] {
			rowSeen[r.Row[k]], colSeen[r.Col[k]] = true, true
		}
	}
	for k := range p.Row {
		i, okRow := r.RowIndex[p.Row[k]]
		j, okCol := r.ColIndex[p.Col[k]]
		line := 0
		if k < len(p.Line) {
			line = p.Line[k]
		}
		switch {
		case !okRow || !rowSeen[i]:
			return &UnknownIDError{Line: line, Kind: "row", ID: p.Row[k]}
		case !okCol || !colSeen[j]:
			return &UnknownIDError{Line: line, Kind: "column", ID: p.Col[k]}
		}
	}
	return nil
}

// WriteOutliers writes the training ratings the model set aside as
// outliers, one a line: row id, column id, rating and fitted value
// U[i]·V[j], separated by tabs, after a comment line naming the columns.
func (m *Model) WriteOutliers(w io.Writer) error {
	if _, err := io.WriteString(w, "# row\tcol\trating\tfitted\n"); err != nil {
		return err
	}
	tr := m.Train
	for k, v := range tr.Val {
		if !m.IsOutlier(k) {
			continue
		}
		i, j := tr.Row[k], tr.Col[k]
		line := m.RowIDs[i] + "\t" + m.ColIDs[j] + "\t" + strconv.FormatFloat(v, 'g', -1, 64) + "\t" +
			strconv.FormatFloat(m.Fitted(i, j), 'g', -1, 64) + "\n"
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}

// The files Save writes.
const (
	FileRows        = "rows.txt"        // the row ids, one a line, in the order of U's rows
	FileCols        = "cols.txt"        // the column ids in the order of V's rows
	FilePredictions = "predictions.tsv" // row id, column id, prediction
	FileOutliers    = "outliers.tsv"    // see WriteOutliers
)

// Save writes the model into the directory dir, which must exist: U and V
// as U.npy and V.npy (U.csv and V.csv with csv), FileRows and FileCols,
// FileModel and FileTrain (with which [Load] reads the model back),
// FileOutliers when there are outliers, and FilePredictions when pairs is
// not nil (preds from PredictPairs). It returns the names of the files.
// Each file is written atomically.
func (m *Model) Save(ctx context.Context, dir string, csv bool, pairs *triples.Pairs, preds []float64) ([]string, error) {
	var files []string
	write := func(name string, fn func(w io.Writer) error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		files = append(files, name)
		return outdir.WriteFile(filepath.Join(dir, name), fn)
	}
	for _, f := range []struct {
		base string
		m    *mat.Dense
	}{{"U", m.U}, {"V", m.V}} {
		name, fn := f.base+".npy", func(w io.Writer) error { return npy.Write(w, f.m) }
		if csv {
			name, fn = f.base+".csv", func(w io.Writer) error { return delim.Write(w, f.m, ",") }
		}
		if err := write(name, fn); err != nil {
			return nil, err
		}
	}
	for _, l := range []struct {
		name string
		ids  []string
	}{{FileRows, m.RowIDs}, {FileCols, m.ColIDs}} {
		if err := write(l.name, func(w io.Writer) error { return writeLines(w, l.ids) }); err != nil {
			return nil, err
		}
	}
	factors := "npy"
	if csv {
		factors = "csv"
	}
	if err := write(FileModel, func(w io.Writer) error {
		b, err := json.MarshalIndent(m.describe(factors), "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return nil, err
	}
	if err := write(FileTrain, m.writeTrain); err != nil {
		return nil, err
	}
	if pairs != nil {
		if err := write(FilePredictions, func(w io.Writer) error { return triples.Write(w, "\t", pairs.Row, pairs.Col, preds) }); err != nil {
			return nil, err
		}
	}
	if m.Result.S.NNZ() > 0 {
		if err := write(FileOutliers, m.WriteOutliers); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// writeLines writes one string a line.
func writeLines(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}
