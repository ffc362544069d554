package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/formats/internal/formattest"
	"gonum.org/v1/gonum/mat"
)

// buildNpy assembles an .npy file by hand from a header dict, independently
// of Write: magic, version, little-endian header length, dict padded
// with spaces and a newline to a multiple of 64 bytes, then data.
func buildNpy(major int, dict string, data []byte) []byte {
	pre := 10
	if major >= 2 {
		pre = 12
	}
	hdr := dict
	for (pre+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(byte(major))
	b.WriteByte(0)
	if major >= 2 {
		binary.Write(&b, binary.LittleEndian, uint32(len(hdr)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	}
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

// encode packs values with the given byte order.
func encode(order binary.ByteOrder, vals ...any) []byte {
	var b bytes.Buffer
	for _, v := range vals {
		if err := binary.Write(&b, order, v); err != nil {
			panic(err)
		}
	}
	return b.Bytes()
}

// readers returns the ways a byte slice is presented to Read: a
// bytes.Reader (size known by seeking), a plain reader (size unknown,
// buffered path) and a file via ReadFile/Open.
func readAllWays(t *testing.T, raw []byte) []struct {
	name string
	m    *mat.Dense
	err  error
} {
	t.Helper()
	type res = struct {
		name string
		m    *mat.Dense
		err  error
	}
	var out []res
	m, err := Read(bytes.NewReader(raw), "seek.npy")
	out = append(out, res{"seeker", m, err})
	m, err = Read(struct{ io.Reader }{bytes.NewReader(raw)}, "stream.npy")
	out = append(out, res{"stream", m, err})
	path := filepath.Join(t.TempDir(), "file.npy")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err = ReadFile(path)
	out = append(out, res{"file", m, err})
	return out
}

func TestNpyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][2]int{{1, 1}, {5, 7}, {64, 3}, {300, 250}} {
		m := mat.NewDense(sz[0], sz[1], nil)
		for i := 0; i < sz[0]; i++ {
			for j := 0; j < sz[1]; j++ {
				m.Set(i, j, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, m); err != nil {
			t.Fatal(err)
		}
		raw := buf.Bytes()
		// The header must be what NumPy itself writes for this array.
		hlen := int(binary.LittleEndian.Uint16(raw[8:10]))
		if (10+hlen)%64 != 0 || raw[10+hlen-1] != '\n' || raw[6] != 1 || raw[7] != 0 {
			t.Fatalf("%v: header length %d not aligned or not newline-terminated", sz, hlen)
		}
		wantDict := "{'descr': '<f8', 'fortran_order': False, 'shape': (" + itoa(sz[0]) + ", " + itoa(sz[1]) + "), }"
		if got := strings.TrimRight(string(raw[10:10+hlen]), " \n"); got != wantDict {
			t.Fatalf("header %q, want %q", got, wantDict)
		}
		if len(raw) != 10+hlen+8*sz[0]*sz[1] {
			t.Fatalf("file has %d bytes, want %d", len(raw), 10+hlen+8*sz[0]*sz[1])
		}
		for _, r := range readAllWays(t, raw) {
			if r.err != nil {
				t.Fatalf("%s: %v", r.name, r.err)
			}
			if !mat.Equal(r.m, m) {
				t.Fatalf("%s: round trip differs", r.name)
			}
		}
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func TestNpyWriteNonDense(t *testing.T) {
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	var buf bytes.Buffer
	if err := Write(&buf, m.T()); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf, "t.npy")
	if err != nil {
		t.Fatal(err)
	}
	formattest.CheckMatrix(t, "transpose", got, [][]float64{{1, 4}, {2, 5}, {3, 6}})
}

func TestNpyWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.npy")
	m := mat.NewDense(2, 2, []float64{1, -2, 3.5, 1e-300})
	if err := WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, m) {
		t.Fatal("file round trip differs")
	}
}

func TestNpyHandBuilt(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	want23 := [][]float64{{1, 2, 3}, {4, 5, 6}}
	cases := []struct {
		name string
		raw  []byte
		want [][]float64
	}{
		{"f4 fortran", buildNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
			encode(le, []float32{1, 4, 2, 5, 3, 6})), want23},
		{"f8 fortran v2", buildNpy(2, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
			encode(le, []float64{1, 4, 2, 5, 3, 6})), want23},
		{"f8 C v3", buildNpy(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
			encode(le, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"big-endian f8", buildNpy(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }",
			encode(be, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"big-endian f4 fortran", buildNpy(1, "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }",
			encode(be, []float32{1, 4, 2, 5, 3, 6})), want23},
		{"native =f8", buildNpy(1, "{'descr': '=f8', 'fortran_order': False, 'shape': (2, 3), }",
			encode(le, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"i4", buildNpy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }",
			encode(le, []int32{-1, 2, math.MinInt32, math.MaxInt32})), [][]float64{{-1, 2}, {math.MinInt32, math.MaxInt32}}},
		{"big-endian i2", buildNpy(1, "{'descr': '>i2', 'fortran_order': False, 'shape': (1, 2), }",
			encode(be, []int16{-300, 7})), [][]float64{{-300, 7}}},
		{"i8", buildNpy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }",
			encode(le, []int64{-5, 1 << 40})), [][]float64{{-5, 1 << 40}}},
		{"u1", buildNpy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 3), }",
			[]byte{0, 128, 255}), [][]float64{{0, 128, 255}}},
		{"i1", buildNpy(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 2), }",
			[]byte{0xff, 0x7f}), [][]float64{{-1, 127}}},
		{"u8", buildNpy(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (1, 1), }",
			encode(le, uint64(1<<63))), [][]float64{{1 << 63}}},
		{"bool", buildNpy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 3), }",
			[]byte{0, 1, 1}), [][]float64{{0, 1, 1}}},
		// float16: 1.0 = 0x3C00, -2 = 0xC000, 0.5 = 0x3800, max 65504 = 0x7BFF,
		// smallest subnormal 2^-24 = 0x0001.
		{"f2", buildNpy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 5), }",
			encode(le, []uint16{0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001})),
			[][]float64{{1, -2, 0.5, 65504, math.Ldexp(1, -24)}}},
		{"1-D is a column", buildNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
			encode(le, []float64{7, 8, 9})), [][]float64{{7}, {8}, {9}}},
		// Arbitrary spacing, double quotes, key order, Python 2 longs, no trailing comma.
		{"odd spacing", buildNpy(1, "{ \"shape\" :( 2 ,3L ) ,\"fortran_order\":False,'descr' : '<f8'}",
			encode(le, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"extra key", buildNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), 'note': [1, (2, None), 'x']}",
			encode(le, 2.5)), [][]float64{{2.5}}},
	}
	for _, c := range cases {
		for _, r := range readAllWays(t, c.raw) {
			if r.err != nil {
				t.Fatalf("%s/%s: %v", c.name, r.name, r.err)
			}
			formattest.CheckMatrix(t, c.name+"/"+r.name, r.m, c.want)
		}
	}
}

func TestNpyErrors(t *testing.T) {
	le := binary.LittleEndian
	good := func(descr, shape string) string {
		return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	}
	v1 := buildNpy(1, good("<f8", "(2, 2)"), encode(le, []float64{1, 2, 3, 4}))
	badVersion := append([]byte(nil), v1...)
	badVersion[6] = 4
	cases := []struct {
		name     string
		raw      []byte
		contains []string
		dtype    bool // wraps ErrUnsupportedDtype
	}{
		{"empty", nil, []string{"empty file"}, false},
		{"bad magic", append([]byte("PK\x03\x04xxxxxxxx"), v1[12:]...), []string{"bad magic"}, false},
		{"short", v1[:5], []string{"not a NumPy"}, false},
		{"version", badVersion, []string{"version 4.0"}, false},
		{"truncated header", v1[:40], []string{"truncated .npy header"}, false},
		{"complex", buildNpy(1, good("<c16", "(2, 2)"), make([]byte, 64)), []string{`"<c16"`, "complex"}, true},
		{"string", buildNpy(1, good("|S5", "(2, 2)"), make([]byte, 20)), []string{`"|S5"`}, true},
		{"object", buildNpy(1, good("|O", "(2, 2)"), make([]byte, 32)), []string{`"|O"`}, true},
		{"long double", buildNpy(1, good("<f16", "(1, 1)"), make([]byte, 16)), []string{`"<f16"`}, true},
		{"pipe multibyte", buildNpy(1, good("|f8", "(1, 1)"), make([]byte, 8)), []string{`"|f8"`}, true},
		{"structured", buildNpy(1, "{'descr': [('a', '<f8'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,), }", make([]byte, 24)), []string{"structured"}, true},
		{"truncated data", buildNpy(1, good("<f8", "(3, 4)"), make([]byte, 50)), []string{"truncated data", "96 bytes", "only 50"}, false},
		{"trailing data", buildNpy(1, good("<f8", "(1, 2)"), make([]byte, 20)), []string{"unexpected bytes after the data"}, false},
		{"overflow", buildNpy(1, good("<f8", "(4294967296, 4294967296)"), nil), []string{"overflows"}, false},
		{"huge", buildNpy(1, good("<f8", "(100000000, 100000000)"), make([]byte, 80)), []string{"truncated data", "80000000000000000 bytes"}, false},
		{"3-D", buildNpy(1, good("<f8", "(2, 2, 2)"), make([]byte, 64)), []string{"3 dimensions"}, false},
		{"scalar", buildNpy(1, good("<f8", "()"), make([]byte, 8)), []string{"0-d"}, false},
		{"empty shape", buildNpy(1, good("<f8", "(0, 3)"), nil), []string{"empty"}, false},
		{"negative", buildNpy(1, good("<f8", "(-1, 3)"), nil), []string{"non-negative"}, false},
		{"missing key", buildNpy(1, "{'descr': '<f8', 'shape': (1, 1)}", make([]byte, 8)), []string{`"fortran_order"`}, false},
		{"not a dict", buildNpy(1, "[1, 2]", nil), []string{"not a dict"}, false},
		{"garbage", buildNpy(1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1, 1)}", nil), []string{"Maybe"}, false},
		{"unclosed", buildNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1", nil), []string{"not closed"}, false},
		{"deep", buildNpy(1, strings.Repeat("[", 1000)+strings.Repeat("]", 1000), nil), []string{"nests deeper"}, false},
	}
	for _, c := range cases {
		for _, r := range readAllWays(t, c.raw) {
			if r.err == nil {
				t.Fatalf("%s/%s: no error", c.name, r.name)
			}
			msg := r.err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("%s/%s: multi-line error %q", c.name, r.name, msg)
			}
			if !strings.Contains(msg, ".npy") {
				t.Errorf("%s/%s: error %q does not name the file", c.name, r.name, msg)
			}
			for _, s := range c.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("%s/%s: error %q does not contain %q", c.name, r.name, msg, s)
				}
			}
			if c.dtype != errors.Is(r.err, ErrUnsupportedDtype) {
				t.Errorf("%s/%s: errors.Is(ErrUnsupportedDtype) = %v", c.name, r.name, !c.dtype)
			}
		}
	}
}

func TestOpenNpyHeaderOnly(t *testing.T) {
	// Open reports the shape without reading data, and rejects a file
	// whose size does not match before any data allocation.
	dir := t.TempDir()
	raw := buildNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", make([]byte, 24))
	path := filepath.Join(dir, "a.npy")
	os.WriteFile(path, raw, 0o644)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if r, c := f.Header.Dims(); r != 2 || c != 3 || !f.Header.FortranOrder || f.Header.Descr != "<f4" || f.Header.DataBytes() != 24 {
		t.Fatalf("header %+v", f.Header)
	}
	if f.Header.DataOffset != int64(len(raw)-24) {
		t.Fatalf("DataOffset %d, want %d", f.Header.DataOffset, len(raw)-24)
	}
	bad := filepath.Join(dir, "b.npy")
	os.WriteFile(bad, raw[:len(raw)-1], 0o644)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("Open of truncated file: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing.npy")); err == nil {
		t.Fatal("Open of missing file: no error")
	}
}

func TestHalfToFloatAllFinite(t *testing.T) {
	// Every finite binary16 value is exactly representable as float32; compare
	// with a direct bit-level widening to float32.
	for h := 0; h < 1<<16; h++ {
		got := halfToFloat(uint16(h))
		sign := uint32(h>>15) << 31
		exp := uint32(h>>10) & 0x1f
		frac := uint32(h) & 0x3ff
		var want float64
		switch {
		case exp == 0x1f:
			if frac != 0 {
				if !math.IsNaN(got) {
					t.Fatalf("%#04x: %v, want NaN", h, got)
				}
				continue
			}
			want = math.Inf(1)
			if sign != 0 {
				want = math.Inf(-1)
			}
		case exp == 0:
			want = float64(frac) / (1 << 24)
			if sign != 0 {
				want = -want
			}
		default:
			want = float64(math.Float32frombits(sign | (exp-15+127)<<23 | frac<<13))
		}
		if got != want {
			t.Fatalf("%#04x: %v, want %v", h, got, want)
		}
	}
}

func FuzzReadNpy(f *testing.F) {
	le := binary.LittleEndian
	f.Add(buildNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", encode(le, []float64{1, 2, 3, 4})))
	f.Add(buildNpy(2, "{'descr': '>f4', 'fortran_order': True, 'shape': (2,), }", encode(binary.BigEndian, []float32{1, 2})))
	f.Add([]byte("\x93NUMPY\x01\x00\x10\x00{'shape': (1,)}"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Read(bytes.NewReader(raw), "fuzz.npy")
		if err == nil {
			if r, c := m.Dims(); r*c == 0 {
				t.Fatal("empty matrix without error")
			}
		} else if strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error %q", err)
		}
	})
}
