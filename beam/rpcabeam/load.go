package rpcabeam

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/rpca-gd/rpca/formats/mtx"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*batch)(nil)).Elem())
	register.DoFn4x1[context.Context, string, func(int, batch), func(int, batch), error](&readFn{})
	register.DoFn3x1[context.Context, int, func(*batch) bool, error](&writeShardFn{})
	register.Emitter2[int, batch]()
	register.Iter1[batch]()
}

// batch is the entries of one input file that fall in one block of lines:
// Line and Other are the 0-based indices (row and column for a row block).
type batch struct {
	Line, Other []int32
	Val         []float64
}

// readFn reads one Matrix Market file with the project's reader (its
// checks and error messages), and emits its entries grouped by row block
// and by column block.
type readFn struct {
	D1, D2           int
	RowsPer, ColsPer int // lines per block
}

func (f *readFn) ProcessElement(ctx context.Context, file string, byRow, byCol func(int, batch)) error {
	b, err := readFile(ctx, file)
	if err != nil {
		return err
	}
	m, err := mtx.Read(bytes.NewReader(b), file)
	if err != nil {
		return err
	}
	t := m.Coord
	if t == nil {
		return fmt.Errorf("%s: an array (dense) Matrix Market file; rpca-beam reads coordinate files", file)
	}
	if t.D1 != f.D1 || t.D2 != f.D2 {
		return fmt.Errorf("%w: %s is %d×%d, the first file %d×%d", ErrInput, file, t.D1, t.D2, f.D1, f.D2)
	}
	rows, cols := map[int]*batch{}, map[int]*batch{}
	add := func(m map[int]*batch, block int, line, other int, v float64) {
		bt := m[block]
		if bt == nil {
			bt = &batch{}
			m[block] = bt
		}
		bt.Line, bt.Other, bt.Val = append(bt.Line, int32(line)), append(bt.Other, int32(other)), append(bt.Val, v)
	}
	for k := range t.Val {
		i, j, v := t.Row[k], t.Col[k], t.Val[k]
		add(rows, i/f.RowsPer, i, j, v)
		add(cols, j/f.ColsPer, j, i, v)
	}
	for blk, bt := range rows {
		byRow(blk, *bt)
	}
	for blk, bt := range cols {
		byCol(blk, *bt)
	}
	return nil
}

// writeShardFn sorts the entries of one block, refuses duplicates and
// writes the shard file.
type writeShardFn struct {
	Dir   string
	ID    string // the load's, in the file names
	Col   bool
	N     int // lines of Y on this side (d1 for rows)
	Per   int // lines per block
	Other int // size of the other side
}

func (f *writeShardFn) ProcessElement(ctx context.Context, block int, batches func(*batch) bool) error {
	var all batch
	var b batch
	for batches(&b) {
		all.Line, all.Other, all.Val = append(all.Line, b.Line...), append(all.Other, b.Other...), append(all.Val, b.Val...)
	}
	order := make([]int, len(all.Val))
	for k := range order {
		order[k] = k
	}
	key := func(k int) int64 { return int64(all.Line[k])*int64(f.Other) + int64(all.Other[k]) }
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(key(a), key(b)) })
	first := block * f.Per
	s := &shard{Col: f.Col, First: first, Lines: min(f.Per, f.N-first)}
	s.Ptr = make([]int64, s.Lines+1)
	for n, k := range order {
		if n > 0 && key(k) == key(order[n-1]) {
			i, j := int(all.Line[k]), int(all.Other[k])
			if f.Col {
				i, j = j, i
			}
			return fmt.Errorf("%w: duplicate entry at row %d, column %d (1-based)", ErrInput, i+1, j+1)
		}
		s.Ptr[int(all.Line[k])-first+1]++
		s.Idx = append(s.Idx, all.Other[k])
		s.Val = append(s.Val, all.Val[k])
		s.SumSq += all.Val[k] * all.Val[k]
	}
	for l := 0; l < s.Lines; l++ {
		if s.Ptr[l+1] == 0 {
			s.Empty++
		}
		s.Ptr[l+1] += s.Ptr[l]
	}
	return s.write(ctx, shardName(f.Dir, f.ID, f.Col, block))
}

// shardName is the file of a block of load id; block −1 gives the glob of
// all of that side's.
func shardName(dir, id string, col bool, block int) string {
	side := "rows"
	if col {
		side = "cols"
	}
	if block < 0 {
		return fmt.Sprintf("%s/%s-%s-*", dir, side, id)
	}
	return fmt.Sprintf("%s/%s-%s-%05d", dir, side, id, block)
}

// ErrInput is wrapped by the errors of input that cannot be loaded.
var ErrInput = errors.New("rpcabeam: bad input")

// readSize returns the size line of the Matrix Market file name: d1, d2
// and the number of entries. Only the file's first lines are read.
func readSize(ctx context.Context, name string) (d1, d2, n int, err error) {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return 0, 0, 0, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return 0, 0, 0, err
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "%") {
			continue
		}
		var extra string
		k, _ := fmt.Sscan(line+" end", &d1, &d2, &n, &extra) // four fields exactly: the size and "end"
		if k != 4 || extra != "end" || d1 < 1 || d2 < 1 || n < 0 {
			return 0, 0, 0, fmt.Errorf("%w: %s: the size line %q is not \"rows columns entries\" of a coordinate file", ErrInput, name, line)
		}
		return d1, d2, n, nil
	}
	return 0, 0, 0, fmt.Errorf("%w: %s has no size line", ErrInput, path.Base(name))
}
