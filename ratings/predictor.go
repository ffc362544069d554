package ratings

import (
	"bufio"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/triples"
)

// Predictor is the part of a fitted model that predicts: the prediction
// for fitted row i and column j is U[i]·V[j], clipped to the clip range.
// A [Model] embeds one; [Load] reads one that [Model.Save] wrote, so that
// a model is used again without a refit.
type Predictor struct {
	// RowIDs and ColIDs are the ids of the fitted rows and columns, in
	// the order of the rows of U and V.
	RowIDs, ColIDs []string
	// U and V are the factors with the baseline folded in: for
	// BaselineMedian one more column each ([U, m·1] and [V, 1]), for
	// BaselineBiases two ([U, mean + b_row, 1] and [V, 1, b_col], with
	// the biases of the joint refit unless Options.FixedBiases), none
	// for BaselineNone.
	U, V *mat.Dense
	// Biases is the bias model of BaselineBiases (nil otherwise), as
	// fitted before the low-rank part: the baseline that Evaluate's
	// BiasRMSE scores and that predicts for unknown ids. The biases
	// refitted jointly with the factors are in U and V.
	Biases *Biases
	// Train holds the training ratings in fitted indices, in the order
	// of the input's ratings that are not held out. TopN leaves out the
	// columns a row has a training rating for.
	Train *formats.Triplets
	// TrainMean is the mean training rating.
	TrainMean float64

	rowIndex, colIndex map[string]int
	clip               *[2]float64
}

// Index returns the fitted row and column of a pair of ids, and whether
// each is known (has a training rating).
func (p *Predictor) Index(rowID, colID string) (i, j int, rowOK, colOK bool) {
	i, rowOK = p.rowIndex[rowID]
	j, colOK = p.colIndex[colID]
	return i, j, rowOK, colOK
}

// ClipRange returns the range predictions are clipped to, nil when they
// are not clipped.
func (p *Predictor) ClipRange() *[2]float64 { return p.clip }

// Clip bounds v to the clip range (NaN stays NaN).
func (p *Predictor) Clip(v float64) float64 {
	if p.clip == nil || math.IsNaN(v) {
		return v
	}
	return math.Min(math.Max(v, p.clip[0]), p.clip[1])
}

// Fitted returns U[i]·V[j], the fitted value of row i and column j
// without clipping.
func (p *Predictor) Fitted(i, j int) float64 {
	a, b := p.U.RawRowView(i), p.V.RawRowView(j)
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}

// Predict returns the clipped prediction for fitted row i and column j.
func (p *Predictor) Predict(i, j int) float64 { return p.Clip(p.Fitted(i, j)) }

// PredictBiases returns the bias model's clipped prediction, with no bias
// for an unknown row (i < 0) or column (j < 0); NaN without BaselineBiases.
func (p *Predictor) PredictBiases(i, j int) float64 {
	if p.Biases == nil {
		return math.NaN()
	}
	return p.Clip(p.Biases.Predict(i, j))
}

// ErrUnknownPolicy: UnknownBias asked of a model without biases, or an
// unknown policy.
var ErrUnknownPolicy = errors.New("ratings: unknown-id policy not available")

// PredictPairs predicts every pair of ps. Unknown ids follow the policy;
// fromBiases counts the pairs UnknownBias predicted from the biases alone.
func (p *Predictor) PredictPairs(ps *triples.Pairs, policy Unknown) (preds []float64, fromBiases int, err error) {
	switch {
	case policy == UnknownBias && p.Biases == nil:
		return nil, 0, fmt.Errorf("%w: %q needs a model fitted with BaselineBiases", ErrUnknownPolicy, policy)
	case policy != UnknownError && policy != UnknownNaN && policy != UnknownBias:
		return nil, 0, fmt.Errorf("%w: %q (want error, nan or bias)", ErrUnknownPolicy, policy)
	}
	preds = make([]float64, ps.Len())
	for k := range preds {
		i, j, okRow, okCol := p.Index(ps.Row[k], ps.Col[k])
		switch {
		case okRow && okCol:
			preds[k] = p.Predict(i, j)
		case policy == UnknownNaN:
			preds[k] = math.NaN()
		case policy == UnknownBias:
			if !okRow {
				i = -1 // no row bias
			}
			if !okCol {
				j = -1
			}
			preds[k] = p.PredictBiases(i, j)
			fromBiases++
		default:
			e := &UnknownIDError{Kind: "row", ID: ps.Row[k]}
			if k < len(ps.Line) {
				e.Line = ps.Line[k]
			}
			if okRow {
				e.Kind, e.ID = "column", ps.Col[k]
			}
			return nil, 0, e
		}
	}
	return preds, fromBiases, nil
}

// PredictAny returns the prediction for any pair of ids: the model's
// (known true) when both have training ratings, else the bias model's
// with the bias of the id it knows, or the clipped training mean without
// a bias model.
func (p *Predictor) PredictAny(rowID, colID string) (v float64, known bool) {
	i, j, okI, okJ := p.Index(rowID, colID)
	if okI && okJ {
		return p.Predict(i, j), true
	}
	if !okI {
		i = -1
	}
	if !okJ {
		j = -1
	}
	if v = p.PredictBiases(i, j); math.IsNaN(v) {
		v = p.Clip(p.TrainMean)
	}
	return v, false
}

// Recommendation is one entry of [Predictor.TopN]: the column (item)
// ColID at place Rank (1 for the best) for the row (user) RowID, with
// its clipped prediction.
type Recommendation struct {
	RowID      string  `json:"row"`
	Rank       int     `json:"rank"`
	ColID      string  `json:"col"`
	Prediction float64 `json:"prediction"`
}

// TopN returns, for each row id of rows in order (every fitted row when
// rows is nil), the n columns with the highest fitted values U[i]·V[j]
// among those the row has no training rating for, best first. The order
// is by the unclipped value, because clipping would tie every column
// above the top of the scale; values are compared as a blocked product
// U·Vᵀ computes them, and each Prediction is Predict's, to the last bit.
// Values equal in that product keep the column order of V. A row id
// without a training rating is an *UnknownIDError whose Line is its
// 1-based place in rows. A row that has rated all but k columns gets k
// recommendations. The rows are shared among workers goroutines (0: one
// per core).
func (p *Predictor) TopN(ctx context.Context, rows []string, n, workers int) ([]Recommendation, error) {
	if n <= 0 {
		return nil, fmt.Errorf("ratings: top-N needs N ≥ 1, got %d", n)
	}
	idx := make([]int, 0, len(p.RowIDs))
	if rows == nil {
		for i := range p.RowIDs {
			idx = append(idx, i)
		}
	} else {
		for k, id := range rows {
			i, ok := p.rowIndex[id]
			if !ok {
				return nil, &UnknownIDError{Line: k + 1, Kind: "row", ID: id}
			}
			idx = append(idx, i)
		}
	}
	rated := p.ratedByRow()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	per := make([][]Recommendation, len(idx))
	size := max(1, min(topBlock, topScores/len(p.ColIDs)))
	blocks := (len(idx) + size - 1) / size
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, blocks) {
		wg.Go(func() {
			w := newTopWorker(p, n, size)
			for ctx.Err() == nil {
				b := int(next.Add(1)) - 1
				if b >= blocks {
					return
				}
				lo, hi := b*size, min((b+1)*size, len(idx))
				w.block(idx[lo:hi], rated, per[lo:hi])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Recommendation
	for _, r := range per {
		out = append(out, r...)
	}
	return out, nil
}

// TopN scores up to topBlock rows in one product with Vᵀ, and fewer when
// more than topScores values (32 MB) would be held per worker.
const (
	topBlock  = 32
	topScores = 1 << 22
)

// topWorker holds one goroutine's buffers for TopN.
type topWorker struct {
	p      *Predictor
	n      int
	ub     *mat.Dense // the block's rows of U
	scores *mat.Dense // ub·Vᵀ
	skip   []bool
	best   topHeap
}

func newTopWorker(p *Predictor, n, size int) *topWorker {
	d2, c := p.V.Dims()
	return &topWorker{p: p, n: n, ub: mat.NewDense(size, c, nil), scores: mat.NewDense(size, d2, nil),
		skip: make([]bool, d2), best: make(topHeap, 0, min(n, d2))}
}

// block writes the recommendations of the fitted rows idx into out.
func (w *topWorker) block(idx []int, rated [][]int, out [][]Recommendation) {
	p := w.p
	ub := w.ub.Slice(0, len(idx), 0, w.ub.RawMatrix().Cols).(*mat.Dense)
	for k, i := range idx {
		copy(ub.RawRowView(k), p.U.RawRowView(i))
	}
	scores := w.scores.Slice(0, len(idx), 0, len(w.skip)).(*mat.Dense)
	scores.Mul(ub, p.V.T())
	for k, i := range idx {
		row := scores.RawRowView(k)
		for _, j := range rated[i] {
			w.skip[j] = true
		}
		best := w.best[:0]
		for j, v := range row {
			if w.skip[j] {
				continue
			}
			c := candidate{col: j, score: v}
			switch {
			case len(best) < w.n:
				heap.Push(&best, c)
			case best.less(best[0], c):
				best[0] = c
				heap.Fix(&best, 0)
			}
		}
		for _, j := range rated[i] {
			w.skip[j] = false
		}
		recs := make([]Recommendation, len(best))
		for r := len(best) - 1; r >= 0; r-- { // the worst comes out first
			c := heap.Pop(&best).(candidate)
			recs[r] = Recommendation{RowID: p.RowIDs[i], Rank: r + 1, ColID: p.ColIDs[c.col], Prediction: p.Predict(i, c.col)}
		}
		out[k], w.best = recs, best
	}
}

// ratedByRow returns, per fitted row, the columns of its training
// ratings.
func (p *Predictor) ratedByRow() [][]int {
	rated := make([][]int, len(p.RowIDs))
	if p.Train == nil {
		return rated
	}
	for k, i := range p.Train.Row {
		rated[i] = append(rated[i], p.Train.Col[k])
	}
	return rated
}

// candidate is a column and its fitted value, for TopN.
type candidate struct {
	col   int
	score float64
}

// topHeap is a min-heap of the best candidates so far: its root is the
// worst of them, the one a better candidate replaces.
type topHeap []candidate

// less orders candidates from worst to best: a lower value is worse, and
// of equal values the later column is worse.
func (topHeap) less(a, b candidate) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.col > b.col
}

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(a, b int) bool { return h.less(h[a], h[b]) }
func (h topHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *topHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *topHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// WriteRecommendations writes recs one a line: row id, rank, column id
// and prediction, separated by tabs.
func WriteRecommendations(w io.Writer, recs []Recommendation) error {
	bw := bufio.NewWriter(w)
	for _, r := range recs {
		bw.WriteString(r.RowID)
		bw.WriteByte('\t')
		bw.WriteString(strconv.Itoa(r.Rank))
		bw.WriteByte('\t')
		bw.WriteString(r.ColID)
		bw.WriteByte('\t')
		bw.WriteString(strconv.FormatFloat(r.Prediction, 'g', -1, 64))
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}
