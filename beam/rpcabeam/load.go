package rpcabeam

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/rpca-gd/rpca/formats/mtx"
)

func init() {
	register.DoFn2x1[context.Context, string, error](&readFn{})
	register.DoFn2x1[context.Context, string, error](&writeShardFn{})
}

// The load is two pipelines, and Φ goes from the first to the second
// through part files in the work directory rather than through the
// runner's shuffle, which an in-process runner holds in memory whole
// (2.5 GB for 8·10⁶ entries, measured): each reader writes the entries of
// its file that fall in a block of lines into a part file of that block,
// then each writer merges the parts of one block into its shard and
// removes them. A worker holds one input file, or one block, at a time.

// batch is the entries of one input file that fall in one block of lines:
// Line and Other are the 0-based indices (row and column for a row block).
type batch struct {
	Line, Other []int32
	Val         []float64
}

const partMagic = "RPCAB-P1" // a part file: the entries of one input file in one block

// partName is the part file of input file number file in block of one
// side of load id; file −1 gives the glob of the block's parts.
func partName(dir, id string, col bool, block, file int) string {
	side := "rows"
	if col {
		side = "cols"
	}
	if file < 0 {
		return fmt.Sprintf("%s/part-%s-%s-%05d-*", dir, side, id, block)
	}
	return fmt.Sprintf("%s/part-%s-%s-%05d-%05d", dir, side, id, block, file)
}

// readFn reads one Matrix Market file with the project's reader (its
// checks and error messages), and writes its entries grouped by row block
// and by column block into part files. Its elements are "N path", N the
// file's number in the sorted input.
type readFn struct {
	Dir              string
	ID               string
	D1, D2           int
	RowsPer, ColsPer int // lines per block
}

func (f *readFn) ProcessElement(ctx context.Context, elem string) error {
	var number int
	var file string
	if _, err := fmt.Sscanf(elem, "%d", &number); err != nil {
		return fmt.Errorf("rpcabeam: bad read element %q", elem)
	}
	file = elem[strings.IndexByte(elem, ' ')+1:]
	fs, err := filesystem.New(ctx, file)
	if err != nil {
		return err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, file)
	if err != nil {
		return err
	}
	defer rc.Close()
	// Read as a stream: the file's text is never held whole beside its
	// entries.
	m, err := mtx.Read(bufio.NewReaderSize(rc, 1<<20), file)
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
	t.Line = nil // the line numbers served the reader's messages only
	if err := f.writeParts(ctx, t.Row, t.Col, t.Val, f.RowsPer, false, number); err != nil {
		return err
	}
	return f.writeParts(ctx, t.Col, t.Row, t.Val, f.ColsPer, true, number)
}

// writeParts writes the entries (line[k], other[k], val[k]) of input
// file number into the part files of their blocks of per lines on one
// side, each block's batch allocated at its exact size and dropped once
// written: one side's batches are in memory at a time.
func (f *readFn) writeParts(ctx context.Context, line, other []int, val []float64, per int, col bool, number int) error {
	var counts []int
	for _, i := range line {
		blk := i / per
		if blk >= len(counts) {
			counts = append(counts, make([]int, blk+1-len(counts))...)
		}
		counts[blk]++
	}
	batches := make([]*batch, len(counts))
	for blk, n := range counts {
		if n > 0 {
			batches[blk] = &batch{Line: make([]int32, 0, n), Other: make([]int32, 0, n), Val: make([]float64, 0, n)}
		}
	}
	for k, i := range line {
		bt := batches[i/per]
		bt.Line, bt.Other, bt.Val = append(bt.Line, int32(i)), append(bt.Other, int32(other[k])), append(bt.Val, val[k])
	}
	for blk, bt := range batches {
		if bt == nil {
			continue
		}
		if err := writeFile(ctx, partName(f.Dir, f.ID, col, blk, number), bt.encode()); err != nil {
			return err
		}
		batches[blk] = nil
	}
	return nil
}

// encode returns the part file of bt: the magic, the count, then the
// lines, the other indices and the values, little-endian.
func (bt *batch) encode() []byte {
	b := make([]byte, 0, len(partMagic)+8+16*len(bt.Val))
	b = append(b, partMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(bt.Val)))
	for _, x := range bt.Line {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	for _, x := range bt.Other {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	for _, v := range bt.Val {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// readPart reads a part file.
func readPart(ctx context.Context, name string) (*batch, error) {
	b, err := readFile(ctx, name)
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(b)
	magic := make([]byte, len(partMagic))
	var n int64
	if err := decode(r, name, magic, &n); err != nil {
		return nil, err
	}
	if string(magic) != partMagic || n < 0 || int64(r.Len()) != 16*n {
		return nil, fmt.Errorf("%w %s: bad part file", errCorrupt, name)
	}
	bt := &batch{Line: make([]int32, n), Other: make([]int32, n), Val: make([]float64, n)}
	return bt, decode(r, name, bt.Line, bt.Other, bt.Val)
}

// writeShardFn merges the part files of one block, sorts its entries,
// refuses duplicates, writes the shard file and removes the parts. Its
// elements are "rows N" or "cols N", N the block.
type writeShardFn struct {
	Dir              string
	ID               string // the load's, in the file names
	D1, D2           int
	RowsPer, ColsPer int // lines per block
}

func (f *writeShardFn) ProcessElement(ctx context.Context, elem string) error {
	var side string
	var block int
	if _, err := fmt.Sscanf(elem, "%s %d", &side, &block); err != nil {
		return fmt.Errorf("rpcabeam: bad write element %q", elem)
	}
	w := writeBlock{col: side == "cols", n: f.D1, per: f.RowsPer, other: f.D2}
	if w.col {
		w.n, w.per, w.other = f.D2, f.ColsPer, f.D1
	}
	parts, err := list(ctx, partName(f.Dir, f.ID, w.col, block, -1))
	if err != nil {
		return err
	}
	var all batch
	for _, name := range parts {
		b, err := readPart(ctx, name)
		if err != nil {
			return err
		}
		all.Line, all.Other, all.Val = append(all.Line, b.Line...), append(all.Other, b.Other...), append(all.Val, b.Val...)
	}
	if err := w.write(ctx, f.Dir, f.ID, block, &all); err != nil {
		return err
	}
	for _, name := range parts {
		if err := remove(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// writeBlock is one side's block layout: whether it is a column block,
// the lines of Y on this side (d1 for rows), the lines per block and the
// size of the other side.
type writeBlock struct {
	col           bool
	n, per, other int
}

// write sorts the entries of block, refuses duplicates and writes the
// shard file.
func (f writeBlock) write(ctx context.Context, dir, id string, block int, all *batch) error {
	order := make([]int, len(all.Val))
	for k := range order {
		order[k] = k
	}
	key := func(k int) int64 { return int64(all.Line[k])*int64(f.other) + int64(all.Other[k]) }
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(key(a), key(b)) })
	first := block * f.per
	s := &shard{Col: f.col, First: first, Lines: min(f.per, f.n-first)}
	s.Ptr = make([]int64, s.Lines+1)
	for n, k := range order {
		if n > 0 && key(k) == key(order[n-1]) {
			i, j := int(all.Line[k]), int(all.Other[k])
			if f.col {
				i, j = j, i
			}
			return fmt.Errorf("%w: duplicate entry at row %d, column %d (1-based)", ErrInput, i+1, j+1)
		}
		s.Ptr[int(all.Line[k])-first+1]++
		s.Idx = append(s.Idx, all.Other[k])
		s.Val = append(s.Val, all.Val[k])
	}
	s.Mean, s.DevMax, s.DevSS = meanDev(s.Val)
	for l := 0; l < s.Lines; l++ {
		if s.Ptr[l+1] == 0 {
			s.Empty++
		}
		s.Ptr[l+1] += s.Ptr[l]
	}
	return s.write(ctx, shardName(dir, id, f.col, block))
}

// meanDev returns the mean of x (a running mean, which cannot overflow),
// the largest deviation from it, and the sum of the squared deviations in
// units of the largest, from which ‖(x − c)/σ‖² = (devMax/σ)²·devSS +
// n·((mean − c)/σ)² follows for any location c and scale σ without the
// cancellation of Σx² − 2cΣx + nc² and without overflow.
func meanDev(x []float64) (mean, devMax, devSS float64) {
	for k, v := range x {
		mean += (v - mean) / float64(k+1)
	}
	for _, v := range x {
		devMax = max(devMax, math.Abs(v/2-mean/2))
	}
	if devMax == 0 {
		return mean, 0, 0
	}
	for _, v := range x {
		d := (v/2 - mean/2) / devMax
		devSS += d * d
	}
	return mean, 2 * devMax, devSS
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
