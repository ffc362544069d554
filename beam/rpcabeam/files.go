package rpcabeam

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"gonum.org/v1/gonum/mat"
)

// The files of a work directory. Every file is written by one writer (the
// driver, or the one worker that owns a shard) and read by any number of
// workers, through Beam's filesystem API, so the directory may be local
// (Prism) or on a shared store (gs://, s3://) for a cluster.
const (
	shardMagic  = "RPCAB-S2" // a shard of Φ
	matrixMagic = "RPCAB-M1" // a dense matrix (factors, products, thresholds)
)

// shard is a block of complete lines of Φ: rows [First, First+Lines) of Y
// in CSR order (a row shard) or columns in CSC order (a column shard).
// Idx holds the other index (global, 0-based), Ptr the line offsets.
type shard struct {
	Col    bool // a column shard
	First  int
	Lines  int
	Mean   float64 // the mean of its values
	DevMax float64 // the largest |y − Mean|
	DevSS  float64 // Σ ((y − Mean)/DevMax)² over the shard
	Empty  int     // lines without an entry
	Ptr    []int64
	Idx    []int32
	Val    []float64
}

// line returns the other indices and values of local line l.
func (s *shard) line(l int) ([]int32, []float64) {
	lo, hi := s.Ptr[l], s.Ptr[l+1]
	return s.Idx[lo:hi], s.Val[lo:hi]
}

func (s *shard) nnz() int { return len(s.Val) }

func writeFile(ctx context.Context, path string, data []byte) error {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	return filesystem.Write(ctx, fs, path, data)
}

func readFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return filesystem.Read(ctx, fs, path)
}

// list returns the files that match glob.
func list(ctx context.Context, glob string) ([]string, error) {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return fs.List(ctx, glob)
}

func encode(parts ...any) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		if err := binary.Write(&b, binary.LittleEndian, p); err != nil {
			panic(err) // only fixed-size values and slices of them are written
		}
	}
	return b.Bytes()
}

// errCorrupt is wrapped by the errors of files that do not decode.
var errCorrupt = errors.New("rpcabeam: corrupt work file")

func decode(r io.Reader, path string, parts ...any) error {
	for _, p := range parts {
		if err := binary.Read(r, binary.LittleEndian, p); err != nil {
			return fmt.Errorf("%w %s: %v", errCorrupt, path, err)
		}
	}
	return nil
}

func (s *shard) write(ctx context.Context, path string) error {
	col := int64(0)
	if s.Col {
		col = 1
	}
	head := []int64{col, int64(s.First), int64(s.Lines), int64(len(s.Val)), int64(s.Empty)}
	return writeFile(ctx, path, encode([]byte(shardMagic), head, s.Mean, s.DevMax, s.DevSS, s.Ptr, s.Idx, s.Val))
}

const shardHeaderSize = 8 + 5*8 + 3*8

// readShardHeader reads a shard's header only: the shard without its
// arrays, and its number of entries.
func readShardHeader(ctx context.Context, path string) (*shard, int, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	b := make([]byte, shardHeaderSize)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, 0, fmt.Errorf("%w %s: %v", errCorrupt, path, err)
	}
	s, nnz, err := decodeShardHeader(bytes.NewReader(b), path)
	return s, int(nnz), err
}

// decodeShardHeader decodes the header and returns the shard without its
// arrays, and the number of entries.
func decodeShardHeader(r io.Reader, path string) (*shard, int64, error) {
	magic := make([]byte, len(shardMagic))
	head := make([]int64, 5)
	s := &shard{}
	if err := decode(r, path, magic, head, &s.Mean, &s.DevMax, &s.DevSS); err != nil {
		return nil, 0, err
	}
	if string(magic) != shardMagic || head[2] < 0 || head[3] < 0 {
		return nil, 0, fmt.Errorf("%w %s: bad header", errCorrupt, path)
	}
	s.Col, s.First, s.Lines, s.Empty = head[0] == 1, int(head[1]), int(head[2]), int(head[4])
	return s, head[3], nil
}

func readShard(ctx context.Context, path string) (*shard, error) {
	b, err := readFile(ctx, path)
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(b)
	s, nnz, err := decodeShardHeader(r, path)
	if err != nil {
		return nil, err
	}
	if int64(r.Len()) != 8*int64(s.Lines+1)+12*nnz {
		return nil, fmt.Errorf("%w %s: %d bytes of arrays for %d lines and %d entries", errCorrupt, path, r.Len(), s.Lines, nnz)
	}
	s.Ptr, s.Idx, s.Val = make([]int64, s.Lines+1), make([]int32, nnz), make([]float64, nnz)
	return s, decode(r, path, s.Ptr, s.Idx, s.Val)
}

// writeMatrix writes m (nil: a 0×0 matrix).
func writeMatrix(ctx context.Context, path string, m *mat.Dense) error {
	var rows, cols int
	if m != nil {
		rows, cols = m.Dims()
	}
	b := make([]byte, 0, len(matrixMagic)+16+8*rows*cols)
	b = append(b, matrixMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(rows))
	b = binary.LittleEndian.AppendUint64(b, uint64(cols))
	for i := range rows {
		for _, v := range m.RawRowView(i) {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return writeFile(ctx, path, b)
}

// readMatrix reads a matrix written by writeMatrix; want (rows, cols) is
// checked when not negative.
func readMatrix(ctx context.Context, path string, rows, cols int) (*mat.Dense, error) {
	b, err := readFile(ctx, path)
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(b)
	magic := make([]byte, len(matrixMagic))
	head := make([]int64, 2)
	if err := decode(r, path, magic, head); err != nil {
		return nil, err
	}
	if string(magic) != matrixMagic || head[0] < 0 || head[1] < 0 || int64(r.Len()) != 8*head[0]*head[1] ||
		(rows >= 0 && int64(rows) != head[0]) || (cols >= 0 && int64(cols) != head[1]) {
		return nil, fmt.Errorf("%w %s: bad header %v (want %d×%d)", errCorrupt, path, head, rows, cols)
	}
	if head[0] == 0 || head[1] == 0 {
		return &mat.Dense{}, nil
	}
	data := make([]float64, head[0]*head[1])
	body := b[len(b)-r.Len():]
	for i := range data {
		data[i] = math.Float64frombits(binary.LittleEndian.Uint64(body[8*i:]))
	}
	return mat.NewDense(int(head[0]), int(head[1]), data), nil
}

// vector reads a column vector file of n entries.
func readVector(ctx context.Context, path string, n int) ([]float64, error) {
	m, err := readMatrix(ctx, path, n, 1)
	if err != nil {
		return nil, err
	}
	return m.RawMatrix().Data, nil
}

func vectorMatrix(v []float64) *mat.Dense {
	if len(v) == 0 {
		return nil
	}
	return mat.NewDense(len(v), 1, v)
}

// finite reports whether x is a finite number.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
