// Package npy reads and writes NumPy .npy arrays: any numeric dtype, C or
// Fortran order, in; float64 or float32 out. Open streams a file entry by
// entry without holding it.
package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/internal/textio"
	"github.com/rpca-gd/rpca/outdir"
	"gonum.org/v1/gonum/mat"
)

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// maxNpyHeaderLen bounds the header length accepted from a file. NumPy's
// own headers are a few hundred bytes; the bound only stops a corrupt
// length field from causing a huge allocation.
const maxNpyHeaderLen = 1 << 20

// ErrUnsupportedDtype is wrapped by the error for .npy files whose element
// type cannot be converted to float64.
var ErrUnsupportedDtype = errors.New("unsupported dtype")

// Header describes the array stored in an .npy file.
type Header struct {
	Major, Minor int    // format version: 1.0, 2.0 or 3.0
	Descr        string // dtype descriptor, e.g. "<f8"
	FortranOrder bool   // data in column-major order
	Shape        []int  // array shape: one or two dimensions
	DataOffset   int64  // bytes before the data: magic, version, header

	dt dtype
}

// Dims returns the matrix size of the array. A 1-D array of length n is
// read as an n×1 column vector.
func (h *Header) Dims() (rows, cols int) {
	if len(h.Shape) == 1 {
		return h.Shape[0], 1
	}
	return h.Shape[0], h.Shape[1]
}

// Len returns the number of elements.
func (h *Header) Len() int {
	r, c := h.Dims()
	return r * c
}

// DataBytes returns the number of data bytes the header declares.
func (h *Header) DataBytes() int64 {
	return int64(h.Len()) * int64(h.dt.size)
}

// dtype is a decoded element type.
type dtype struct {
	kind  byte // 'f', 'i', 'u' or 'b'
	size  int  // bytes per element
	order binary.ByteOrder
}

// parseDescr decodes a dtype descriptor such as "<f8", ">i4" or "|u1".
// The byte order '=' (native) is taken as little-endian, the order of
// every platform NumPy files are commonly written on.
func parseDescr(descr string) (dtype, error) {
	bad := func(why string) (dtype, error) {
		return dtype{}, fmt.Errorf("%w %q (%s); supported: float16/32/64, int8–64, uint8–64, bool", ErrUnsupportedDtype, descr, why)
	}
	if len(descr) < 2 {
		return bad("too short")
	}
	var order binary.ByteOrder = binary.LittleEndian
	rest := descr
	oc := byte(0)
	switch descr[0] {
	case '<', '=':
		oc = descr[0]
		rest = descr[1:]
	case '>':
		oc = '>'
		order = binary.BigEndian
		rest = descr[1:]
	case '|':
		oc = '|'
		rest = descr[1:]
	}
	if len(rest) > 0 {
		switch rest[0] {
		case 'O':
			return bad("an array of Python objects, which holds no numbers to read; save it with a numeric dtype, e.g. a.astype(float)")
		case 'U', 'S', 'a':
			return bad("an array of strings; save the numbers with a numeric dtype")
		case 'V':
			return bad("a structured or raw-bytes array; save a plain numeric array")
		case 'M', 'm':
			return bad("an array of dates or time spans; convert them to numbers first")
		}
	}
	if len(rest) < 2 {
		return bad("too short")
	}
	kind := rest[0]
	size, err := strconv.Atoi(rest[1:])
	if err != nil {
		return bad("not a simple numeric type")
	}
	ok := false
	switch kind { // objects, strings, raw bytes and dates were refused above
	case 'f':
		ok = size == 2 || size == 4 || size == 8
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'b':
		ok = size == 1
	case 'c':
		return bad("complex")
	}
	if !ok {
		return bad(fmt.Sprintf("%d-byte %c", size, kind))
	}
	if oc == '|' && size > 1 {
		return bad("byte order '|' is only valid for 1-byte types")
	}
	return dtype{kind: kind, size: size, order: order}, nil
}

// decode converts one element to float64.
func (d dtype) decode(b []byte) float64 {
	switch d.kind {
	case 'f':
		switch d.size {
		case 8:
			return math.Float64frombits(d.order.Uint64(b))
		case 4:
			return float64(math.Float32frombits(d.order.Uint32(b)))
		default:
			return halfToFloat(d.order.Uint16(b))
		}
	case 'i':
		switch d.size {
		case 1:
			return float64(int8(b[0]))
		case 2:
			return float64(int16(d.order.Uint16(b)))
		case 4:
			return float64(int32(d.order.Uint32(b)))
		default:
			return float64(int64(d.order.Uint64(b)))
		}
	case 'u':
		switch d.size {
		case 1:
			return float64(b[0])
		case 2:
			return float64(d.order.Uint16(b))
		case 4:
			return float64(d.order.Uint32(b))
		default:
			return float64(d.order.Uint64(b))
		}
	default: // 'b'
		if b[0] != 0 {
			return 1
		}
		return 0
	}
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0: // zero or subnormal
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// ReadHeader reads and checks the magic string, version and header of
// an .npy stream, leaving r positioned at the first data byte. name is
// used in error messages.
func ReadHeader(r io.Reader, name string) (*Header, error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n == 0 && err == io.EOF {
			return nil, textio.Errf(name, "empty file, not a NumPy .npy file")
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, textio.Errf(name, "not a NumPy .npy file (only %d bytes)", n)
		}
		return nil, &formats.Error{File: name, Msg: err.Error(), Err: err}
	}
	if string(pre[:6]) != npyMagic {
		return nil, textio.Errf(name, "not a NumPy .npy file (bad magic %q, want \"\\x93NUMPY\")", pre[:6])
	}
	h := &Header{Major: int(pre[6]), Minor: int(pre[7])}
	var hlen int
	switch h.Major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, textio.Errf(name, "truncated .npy header")
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
		h.DataOffset = 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, textio.Errf(name, "truncated .npy header")
		}
		n := binary.LittleEndian.Uint32(b[:])
		if n > maxNpyHeaderLen {
			return nil, textio.Errf(name, ".npy header length %d is implausibly large (corrupt file?)", n)
		}
		hlen = int(n)
		h.DataOffset = 12
	default:
		return nil, textio.Errf(name, "unsupported .npy format version %d.%d (want 1.0, 2.0 or 3.0)", h.Major, h.Minor)
	}
	h.DataOffset += int64(hlen)
	text := make([]byte, hlen)
	if n, err := io.ReadFull(r, text); err != nil {
		return nil, textio.Errf(name, "truncated .npy header: %d of %d bytes", n, hlen)
	}
	if err := h.parseDict(string(text)); err != nil {
		return nil, &formats.Error{File: name, Msg: err.Error(), Err: err}
	}
	return h, nil
}

// parseDict fills h from the header dict text.
func (h *Header) parseDict(text string) error {
	v, err := parsePyLiteral(text)
	if err != nil {
		return fmt.Errorf("bad .npy header: %v", err)
	}
	d, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("bad .npy header: not a dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := d[k]; !ok {
			return fmt.Errorf("bad .npy header: no %q key", k)
		}
	}
	switch descr := d["descr"].(type) {
	case string:
		h.Descr = descr
	case []any:
		return fmt.Errorf("%w: structured arrays (record dtypes) cannot be read as a matrix", ErrUnsupportedDtype)
	default:
		return fmt.Errorf("bad .npy header: descr is %v, not a string", descr)
	}
	if h.dt, err = parseDescr(h.Descr); err != nil {
		return err
	}
	fo, ok := d["fortran_order"].(bool)
	if !ok {
		return fmt.Errorf("bad .npy header: fortran_order is %v, not True or False", d["fortran_order"])
	}
	h.FortranOrder = fo
	shape, ok := d["shape"].([]any)
	if !ok {
		return fmt.Errorf("bad .npy header: shape is %v, not a tuple", d["shape"])
	}
	h.Shape = make([]int, len(shape))
	for i, s := range shape {
		n, ok := s.(int64)
		if !ok || n < 0 {
			return fmt.Errorf("bad .npy header: shape entry %v is not a non-negative integer", s)
		}
		h.Shape[i] = int(n)
	}
	switch len(h.Shape) {
	case 1, 2:
	case 0:
		return fmt.Errorf("array is a 0-d scalar; want a 1-D or 2-D array")
	default:
		return fmt.Errorf("array has %d dimensions %s; want a 1-D or 2-D array", len(h.Shape), shapeString(shape))
	}
	rows, cols := h.Dims()
	if rows == 0 || cols == 0 {
		return fmt.Errorf("array is empty (shape %s)", shapeString(shape))
	}
	// Overflow: elements and bytes must fit in int and int64.
	if rows > math.MaxInt/cols || int64(rows*cols) > math.MaxInt64/int64(h.dt.size) {
		return fmt.Errorf("shape %s overflows", shapeString(shape))
	}
	return nil
}

// shapeString formats a shape as a Python tuple.
func shapeString(shape []any) string {
	parts := make([]string, len(shape))
	for i, s := range shape {
		parts[i] = fmt.Sprint(s)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// remainingBytes reports how many bytes remain in r when that can be
// learned without reading (files, bytes.Reader, other io.Seekers).
func remainingBytes(r io.Reader) (int64, bool) {
	if f, ok := r.(*os.File); ok {
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return 0, false
		}
		cur, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		return st.Size() - cur, true
	}
	if s, ok := r.(io.Seeker); ok {
		cur, err := s.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		end, err := s.Seek(0, io.SeekEnd)
		if err != nil {
			return 0, false
		}
		if _, err := s.Seek(cur, io.SeekStart); err != nil {
			return 0, false
		}
		return end - cur, true
	}
	return 0, false
}

// Read reads a 1-D or 2-D array of a numeric dtype from r and returns
// it as a float64 matrix (a 1-D array of length n becomes n×1). C and
// Fortran order and format versions 1.0–3.0 are supported; integer and
// bool elements are converted to float64.
//
// When the size of r is known (files, io.Seekers) the declared data size
// is checked against it before allocating; otherwise the data are
// buffered first, so memory grows only with the bytes actually present.
// Data shorter or longer than the header declares is an error. name is
// used in error messages.
func Read(r io.Reader, name string) (*mat.Dense, error) {
	h, err := ReadHeader(r, name)
	if err != nil {
		return nil, err
	}
	want := h.DataBytes()
	have, exact := remainingBytes(r)
	if !exact {
		buf, err := io.ReadAll(io.LimitReader(r, min(want, math.MaxInt64-1)+1))
		if err != nil {
			return nil, &formats.Error{File: name, Msg: "reading data: " + err.Error(), Err: err}
		}
		r = bytes.NewReader(buf)
		have = int64(len(buf))
	}
	if err := checkDataSize(h, name, have, exact); err != nil {
		return nil, err
	}
	return readNpyData(r, h, name)
}

// checkDataSize compares the bytes after the header with the declared
// size; exact says whether have counts all remaining bytes or only up to
// one more than declared.
func checkDataSize(h *Header, name string, have int64, exact bool) error {
	want := h.DataBytes()
	switch {
	case have < want:
		return textio.Errf(name, "truncated data: shape %s of %s needs %d bytes, but only %d follow the header",
			shapeStringInts(h.Shape), h.Descr, want, have)
	case have > want && !exact:
		return textio.Errf(name, "unexpected bytes after the data (shape %s of %s needs %d bytes)",
			shapeStringInts(h.Shape), h.Descr, want)
	case have > want:
		return textio.Errf(name, "%d unexpected bytes after the data (shape %s of %s needs %d bytes)",
			have-want, shapeStringInts(h.Shape), h.Descr, want)
	}
	return nil
}

func shapeStringInts(shape []int) string {
	s := make([]any, len(shape))
	for i, v := range shape {
		s[i] = v
	}
	return shapeString(s)
}

// readNpyData decodes exactly h.DataBytes() bytes from r into a new matrix.
func readNpyData(r io.Reader, h *Header, name string) (*mat.Dense, error) {
	rows, cols := h.Dims()
	n := rows * cols
	data := make([]float64, n)
	es := h.dt.size
	chunk := make([]byte, (64<<10)/es*es)
	fortran := h.FortranOrder && rows > 1 && cols > 1
	k := 0 // element index in file order
	for k < n {
		m := min(n-k, len(chunk)/es)
		b := chunk[:m*es]
		if got, err := io.ReadFull(r, b); err != nil {
			return nil, textio.Errf(name, "truncated data: expected %d bytes, got %d", h.DataBytes(), int64(k)*int64(es)+int64(got))
		}
		if !fortran && h.dt.kind == 'f' && es == 8 && h.dt.order == binary.LittleEndian {
			// Fast path for the common '<f8' C-order case.
			dst := data[k : k+m]
			for e := range dst {
				dst[e] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*e:]))
			}
			k += m
			continue
		}
		for e := 0; e < m; e, k = e+1, k+1 {
			v := h.dt.decode(b[e*es:])
			if fortran {
				i, j := k%rows, k/rows
				data[i*cols+j] = v
			} else {
				data[k] = v
			}
		}
	}
	return mat.NewDense(rows, cols, data), nil
}

// ReadFile reads an .npy file; see [Read].
func ReadFile(path string) (*mat.Dense, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDense()
}

// File is an open .npy file whose header has been read and whose size
// has been checked against the header, so that the caller can inspect
// the shape (for example to estimate memory) before reading the data.
type File struct {
	Header *Header
	f      *os.File
	name   string
}

// Open opens an .npy file, reads its header and checks that the file
// holds exactly the declared number of data bytes. No data is read.
func Open(path string) (*File, error) {
	f, err := formats.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(f)
	h, err := ReadHeader(br, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode().IsRegular() {
		if err := checkDataSize(h, path, st.Size()-h.DataOffset, true); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &File{Header: h, f: f, name: path}, nil
}

// ReadDense reads the data as a float64 matrix; see [Read]. It may be
// called once.
func (nf *File) ReadDense() (*mat.Dense, error) {
	h := nf.Header
	rows, cols := h.Dims()
	if st, err := nf.f.Stat(); err == nil && st.Mode().IsRegular() && rows*cols > 0 && nativeLittle &&
		h.dt.kind == 'f' && h.dt.size == 8 && h.dt.order == binary.LittleEndian && !(h.FortranOrder && rows > 1 && cols > 1) {
		return nf.readDirect(rows, cols)
	}
	if _, err := nf.f.Seek(nf.Header.DataOffset, io.SeekStart); err != nil {
		return nil, &formats.Error{File: nf.name, Msg: err.Error(), Err: err}
	}
	return readNpyData(bufio.NewReaderSize(nf.f, 64<<10), nf.Header, nf.name)
}

// nativeLittle reports whether float64s are stored little-endian in
// memory, as '<f8' data are in the file.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// directPart is the least number of bytes readDirect gives one reader.
const directPart = 4 << 20

// readDirect reads '<f8' data in C order (on a little-endian machine)
// straight into the matrix's memory: one copy from the page cache instead
// of a copy and a decoding pass, in parts read at once by as many
// goroutines as there are cores (each also touches its part's fresh
// pages first).
func (nf *File) readDirect(rows, cols int) (*mat.Dense, error) {
	data := make([]float64, rows*cols)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), 8*len(data))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(buf)/directPart))
	per := (len(buf)/parts + 7) &^ 7
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := min(p*per, len(buf)), min((p+1)*per, len(buf))
		wg.Go(func() {
			if got, err := nf.f.ReadAt(buf[lo:hi], nf.Header.DataOffset+int64(lo)); got < hi-lo {
				errs[p] = textio.Errf(nf.name, "truncated data: expected %d bytes, got %d (%v)", nf.Header.DataBytes(), int64(lo+got), err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return mat.NewDense(rows, cols, data), nil
}

// Scan calls fn(i, j, v) for every element in file order (row by row for
// C order, column by column for Fortran order) without holding the array
// in memory, for example to keep a random subset of the entries of a
// matrix too large to load. An error from fn stops the scan and is
// returned. It may be called instead of ReadDense, once.
func (nf *File) Scan(fn func(i, j int, v float64) error) error {
	h := nf.Header
	if _, err := nf.f.Seek(h.DataOffset, io.SeekStart); err != nil {
		return &formats.Error{File: nf.name, Msg: err.Error(), Err: err}
	}
	r := bufio.NewReaderSize(nf.f, 64<<10)
	rows, cols := h.Dims()
	n := rows * cols
	es := h.dt.size
	chunk := make([]byte, (64<<10)/es*es)
	fortran := h.FortranOrder && rows > 1 && cols > 1
	for k := 0; k < n; {
		m := min(n-k, len(chunk)/es)
		b := chunk[:m*es]
		if _, err := io.ReadFull(r, b); err != nil {
			return textio.Errf(nf.name, "truncated data: %v", err)
		}
		for e := 0; e < m; e, k = e+1, k+1 {
			i, j := k/cols, k%cols
			if fortran {
				i, j = k%rows, k/rows
			}
			if err := fn(i, j, h.dt.decode(b[e*es:])); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the file.
func (nf *File) Close() error { return nf.f.Close() }

// Write writes m as a 2-D little-endian float64 array in C order,
// format version 1.0 (2.0 if the header would not fit in 1.0), with the
// header padded so that the data start at a multiple of 64 bytes.
func Write(w io.Writer, m mat.Matrix) error {
	rows, cols := m.Dims()
	d, _ := m.(*mat.Dense)
	return WriteRows(w, rows, cols, func(i int, dst []float64) error {
		if d != nil {
			copy(dst, d.RawRowView(i))
			return nil
		}
		for j := range dst {
			dst[j] = m.At(i, j)
		}
		return nil
	})
}

// WriteRows writes a rows×cols float64 array like [Write], asking
// row(i, dst) for the values of row i, i = 0, 1, …, rows−1, in turn, so
// that a matrix can be written without ever being held in memory (for
// example a product U·Vᵀ computed row by row). dst has length cols and is
// reused between calls. An error from row stops the writing.
func WriteRows(w io.Writer, rows, cols int, row func(i int, dst []float64) error) error {
	if _, err := w.Write(npyHeaderBytes("<f8", false, rows, cols)); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	var err error
	vals := make([]float64, cols)
	for i := 0; i < rows; i++ {
		if err := row(i, vals); err != nil {
			return err
		}
		for _, v := range vals {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			if buf, err = flushFull(w, buf); err != nil {
				return err
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// flushFull writes buf out when it cannot take another 8 bytes, and
// returns it emptied (or as it was).
func flushFull(w io.Writer, buf []byte) ([]byte, error) {
	if len(buf)+8 <= cap(buf) {
		return buf, nil
	}
	_, err := w.Write(buf)
	return buf[:0], err
}

// npyHeaderBytes returns the magic, version, length and padded header
// dict of a 2-D array: format version 1.0 (2.0 if the header would not fit
// in 1.0), data starting at a multiple of 64 bytes.
func npyHeaderBytes(descr string, fortran bool, rows, cols int) []byte {
	fo := "False"
	if fortran {
		fo = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%d, %d), }", descr, fo, rows, cols)
	// Total header: magic(6) + version(2) + length(2 or 4) + dict + padding + '\n'.
	pre := 10
	pad := (64 - (pre+len(dict)+1)%64) % 64
	if len(dict)+pad+1 > math.MaxUint16 {
		pre = 12
		pad = (64 - (pre+len(dict)+1)%64) % 64
	}
	hlen := len(dict) + pad + 1
	hdr := make([]byte, 0, pre+hlen)
	hdr = append(hdr, npyMagic...)
	if pre == 10 {
		hdr = append(hdr, 1, 0)
		hdr = binary.LittleEndian.AppendUint16(hdr, uint16(hlen))
	} else {
		hdr = append(hdr, 2, 0)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(hlen))
	}
	hdr = append(hdr, dict...)
	hdr = append(hdr, bytes.Repeat([]byte{' '}, pad)...)
	return append(hdr, '\n')
}

// Options selects the element type and order of [WriteWith].
type Options struct {
	Float32      bool // '<f4' elements (rounded to float32) instead of '<f8'
	FortranOrder bool // column-major data, as NumPy writes Fortran-ordered arrays
}

// WriteWith writes m as a 2-D little-endian array with the element
// type and order of opt (Write writes '<f8' in C order). Float32
// output halves the size at the cost of about 7 significant digits.
func WriteWith(w io.Writer, m mat.Matrix, opt Options) error {
	rows, cols := m.Dims()
	descr := "<f8"
	if opt.Float32 {
		descr = "<f4"
	}
	if _, err := w.Write(npyHeaderBytes(descr, opt.FortranOrder, rows, cols)); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	var err error
	outer, inner := rows, cols
	if opt.FortranOrder {
		outer, inner = cols, rows
	}
	for a := 0; a < outer; a++ {
		for b := 0; b < inner; b++ {
			var v float64
			if opt.FortranOrder {
				v = m.At(b, a)
			} else {
				v = m.At(a, b)
			}
			if opt.Float32 {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v)))
			} else {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
			if buf, err = flushFull(w, buf); err != nil {
				return err
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// WriteFile writes m to path atomically; see [Write] and
// [outdir.WriteFile].
func WriteFile(path string, m mat.Matrix) error {
	return outdir.WriteFile(path, func(w io.Writer) error { return Write(w, m) })
}
