package video

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// rowSource is a frame matrix (pixels × frames) that the fits read a row
// at a time: a [*mat.Dense] (denseRows) or a stream's history.
type rowSource interface {
	mat.Matrix
	// row returns row i: either a view of the matrix's own storage or
	// dst (of length frames) filled with it. The caller does not modify
	// the result.
	row(dst []float64, i int) []float64
}

// denseRows reads a *mat.Dense as a rowSource, without copies.
type denseRows struct{ *mat.Dense }

func (d denseRows) row(_ []float64, i int) []float64 { return d.RawRowView(i) }

// toDense returns y as a *mat.Dense: its own matrix for denseRows, a copy
// otherwise.
func toDense(y rowSource) *mat.Dense {
	if d, ok := y.(denseRows); ok {
		return d.Dense
	}
	d1, d2 := y.Dims()
	out := mat.NewDense(d1, d2, nil)
	for i := range d1 {
		dst := out.RawRowView(i)
		copy(dst, y.row(dst, i))
	}
	return out
}

// levelScale is the denominator of a stored level: a frame value v is
// kept as the level l when v = l/levelScale exactly.
const levelScale = 65535

// levelValue[l] is float64(l)/levelScale, the value of level l, computed
// as the frame decoders compute a 16-bit sample (and, since c/255 and
// 257c/65535 are the same rational, an 8-bit one), to the bit.
var levelValue = sync.OnceValue(func() *[levelScale + 1]float64 {
	var t [levelScale + 1]float64
	for l := range t {
		t[l] = float64(l) / levelScale
	}
	return &t
})

// level returns the level whose value is v, bit for bit (so not −0),
// when there is one, with t = levelValue().
func level(t *[levelScale + 1]float64, v float64) (uint16, bool) {
	x := v*levelScale + 0.5 // the nearest level, when v is one
	if !(x >= 0 && x < levelScale+1) {
		return 0, false
	}
	l := uint16(x)
	return l, math.Float64bits(t[l]) == math.Float64bits(v)
}

// history is a Subtractor's ring of its last frames, rows × size. Decoded
// frames hold 8- or 16-bit samples scaled to [0, 1], so it stores them as
// 16-bit levels, a quarter of the memory of float64, while every value
// stored is a level's value to the bit; the first frame that holds
// another value turns the store into float64 for good. Either way, what
// is read back is what was stored.
type history struct {
	rows, size int
	levels     []uint16   // rows × size, row-major; nil once wide is used
	wide       *mat.Dense // rows × size; nil while levels holds the frames
}

func newHistory(rows, size int) *history {
	return &history{rows: rows, size: size, levels: make([]uint16, rows*size)}
}

// set stores frame (of length rows) as column j.
func (h *history) set(j int, frame []float64) {
	if h.wide == nil {
		t := levelValue()
		for i, v := range frame {
			l, ok := level(t, v)
			if !ok {
				h.widen()
				break
			}
			h.levels[i*h.size+j] = l
		}
	}
	if h.wide != nil {
		h.wide.SetCol(j, frame)
	}
}

// widen moves the frames from levels to float64 storage.
func (h *history) widen() {
	wide := mat.NewDense(h.rows, h.size, nil)
	for i := range h.rows {
		h.row(wide.RawRowView(i), i) // from the levels
	}
	h.wide, h.levels = wide, nil
}

// row returns the first len(dst) entries of row i (dst filled, or a view
// of the float64 store).
func (h *history) row(dst []float64, i int) []float64 {
	if h.wide != nil {
		return h.wide.RawRowView(i)[:len(dst)]
	}
	t := levelValue()
	for j, l := range h.levels[i*h.size : i*h.size+len(dst)] {
		dst[j] = t[l]
	}
	return dst
}

// col writes column j into dst (of length rows, allocated when nil) and
// returns it.
func (h *history) col(dst []float64, j int) []float64 {
	if h.wide != nil {
		return mat.Col(dst, j, h.wide)
	}
	if dst == nil {
		dst = make([]float64, h.rows)
	}
	t := levelValue()
	for i := range dst {
		dst[i] = t[h.levels[i*h.size+j]]
	}
	return dst
}

// first returns the first n columns as a rowSource (and a [mat.Matrix]),
// without a copy.
func (h *history) first(n int) historyView { return historyView{h, n} }

// historyView is the first n columns of a history.
type historyView struct {
	h *history
	n int
}

func (v historyView) Dims() (int, int) { return v.h.rows, v.n }

func (v historyView) row(dst []float64, i int) []float64 { return v.h.row(dst[:v.n], i) }

// At returns entry (i, j), for [mat.Matrix].
func (v historyView) At(i, j int) float64 {
	if j >= v.n {
		panic(mat.ErrColAccess)
	}
	if v.h.wide != nil {
		return v.h.wide.At(i, j)
	}
	return levelValue()[v.h.levels[i*v.h.size+j]]
}

// T returns the transpose, for [mat.Matrix].
func (v historyView) T() mat.Matrix { return mat.Transpose{Matrix: v} }
