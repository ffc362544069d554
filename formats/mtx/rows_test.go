package mtx

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// rowCSR is a csr that lists ranges of rows (RowSparse), so that
// WriteSparse takes the path that formats blocks of rows on every core.
type rowCSR struct{ *csr }

func (s rowCSR) DoRows(lo, hi int, fn func(i, j int, v float64)) {
	for i := lo; i < hi; i++ {
		for k := s.ptr[i]; k < s.ptr[i+1]; k++ {
			fn(i, s.idx[k], s.val[k])
		}
	}
}

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct {
	n   int
	err error
}

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteRowBlocks: the blocks formatted on several cores give the
// bytes of the sequential writer, for shapes with one row, few rows of
// many entries, and many rows of few (block boundaries inside and
// between rows); then the errors: an entry out of range in a late block,
// a count that Do does not match, and a writer that fails part of the
// way, each returned without a hang, whatever the number of cores.
func TestWriteRowBlocks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(1, 41))
	for _, procs := range []int{2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, sh := range []struct {
			rows, cols int
			p          float64
		}{{1, 300000, 0.5}, {7, 50000, 0.9}, {3000, 300, 0.2}, {40000, 20, 0.3}} {
			s, _ := randomCSR(rng, sh.rows, sh.cols, sh.p)
			if s.NNZ() < 2*blockEntries {
				t.Fatalf("%v: %d entries do not take the parallel path", sh, s.NNZ())
			}
			var seq, par bytes.Buffer
			if err := WriteSparse(&seq, s); err != nil {
				t.Fatal(err)
			}
			if err := WriteSparse(&par, rowCSR{s}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(seq.Bytes(), par.Bytes()) {
				t.Fatalf("procs %d %v: the blocks' bytes differ from the sequential writer's (%d and %d bytes)", procs, sh, par.Len(), seq.Len())
			}
			// A failing writer, part of the way.
			boom := errors.New("disk full")
			w := &failAfter{n: seq.Len() / 2, err: boom}
			if err := WriteSparse(w, rowCSR{s}); !errors.Is(err, boom) {
				t.Fatalf("procs %d %v: writer error %v, want %v", procs, sh, err, boom)
			}
			// An entry out of range in the last row.
			bad := *s
			bad.idx = append([]int(nil), s.idx...)
			bad.idx[len(bad.idx)-1] = sh.cols
			if err := WriteSparse(&bytes.Buffer{}, rowCSR{&bad}); err == nil || !strings.Contains(err.Error(), "outside") {
				t.Fatalf("procs %d %v: out-of-range entry: %v", procs, sh, err)
			}
			// NNZ above what the rows list.
			lying := *s
			lying.val = append(append([]float64(nil), s.val...), 1)
			if err := WriteSparse(&bytes.Buffer{}, rowCSR{&lying}); err == nil || !strings.Contains(err.Error(), "reports") {
				t.Fatalf("procs %d %v: count mismatch: %v", procs, sh, err)
			}
		}
	}
}

// BenchmarkWriteSparse formats 900,000 entries (the sparse part of a
// 3000×3000 problem at α = 0.1) to io.Discard, one row after the other
// and by blocks of rows on every core.
func BenchmarkWriteSparse(b *testing.B) {
	s, _ := randomCSR(rand.New(rand.NewPCG(1, 2)), 3000, 3000, 0.1)
	for _, c := range []struct {
		name string
		s    Sparse
	}{{"rows", s}, {"blocks", rowCSR{s}}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if err := WriteSparse(io.Discard, c.s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
