// Package pngenc writes 8-bit gray and opaque RGB PNG files faster than
// image/png, for the frames that rpca video writes by the hundred.
//
// image/png chooses a filter for every row by trying all five of the PNG
// specification's filters (section 12.8's sum-of-absolute-differences
// heuristic), which is most of its time on a 320×240 frame. Encode applies
// the Up filter (each byte minus the byte above it) to every row: on
// natural frames it compresses within a few percent of the adaptive
// choice, and on flat ones (masks) the cost of a filter is negligible.
// Any other image, or an RGBA image that is not opaque, is written by
// image/png.
package pngenc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"sync"
)

// Level is the compression level of the image data (zlib's fastest), the
// level rpca has always written its frames with.
const Level = zlib.BestSpeed

// state is the reusable part of an encoding: the compressor and buffers.
type state struct {
	z         *zlib.Writer
	idat      bytes.Buffer
	cur, prev []byte
}

var states = sync.Pool{New: func() any { return new(state) }}

// Encode writes img to w as a PNG. *image.Gray is written as 8-bit gray,
// an opaque *image.RGBA as 8-bit RGB, with the Up filter; anything else as
// image/png writes it at the same compression level.
func Encode(w io.Writer, img image.Image) error {
	st := states.Get().(*state)
	defer states.Put(st)
	ok, err := st.encode(w, img)
	if ok || err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return enc.Encode(w, img)
}

// encode writes img when it is of a kind encode handles; ok is false,
// with nothing written, otherwise.
func (st *state) encode(w io.Writer, img image.Image) (ok bool, err error) {
	var pix []byte
	var stride, inBytes, outBytes int
	var colorType byte
	b := img.Bounds()
	switch m := img.(type) {
	case *image.Gray:
		pix, stride, inBytes, outBytes, colorType = m.Pix, m.Stride, 1, 1, 0
	case *image.RGBA:
		pix, stride, inBytes, outBytes, colorType = m.Pix, m.Stride, 4, 3, 2
	default:
		return false, nil
	}
	width, height := b.Dx(), b.Dy()
	if width <= 0 || height <= 0 {
		return false, nil
	}
	n := width * outBytes
	st.cur, st.prev = grow(st.cur, n+1), grow(st.prev, n+1)
	clear(st.prev)
	st.idat.Reset()
	if st.z == nil {
		if st.z, err = zlib.NewWriterLevel(&st.idat, Level); err != nil {
			return false, err
		}
	} else {
		st.z.Reset(&st.idat)
	}
	for y := range height {
		row := pix[y*stride : y*stride+width*inBytes]
		cur := st.cur[1:]
		if inBytes == 4 {
			alpha := byte(255)
			for x := range width {
				p := row[4*x : 4*x+4 : 4*x+4]
				c := cur[3*x : 3*x+3 : 3*x+3]
				c[0], c[1], c[2] = p[0], p[1], p[2]
				alpha &= p[3]
			}
			if alpha != 255 {
				return false, nil // not opaque: image/png keeps the alpha
			}
		} else {
			copy(cur, row)
		}
		// The Up filter, written over prev (the row above, which is not
		// needed again): then prev holds the filtered row and cur the raw
		// one, which becomes the next row's prev.
		prev := st.prev
		prev[0] = 2
		for i, v := range cur {
			prev[1+i] = v - prev[1+i]
		}
		if _, err := st.z.Write(prev); err != nil {
			return false, err
		}
		st.cur, st.prev = prev, st.cur
	}
	if err := st.z.Close(); err != nil {
		return false, err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, colorType // bit depth; compression, filter and interlace methods 0
	if _, err := io.WriteString(w, "\x89PNG\r\n\x1a\n"); err != nil {
		return true, err
	}
	if err := writeChunk(w, "IHDR", ihdr[:]); err != nil {
		return true, err
	}
	for data := st.idat.Bytes(); len(data) > 0; {
		k := min(len(data), maxChunk)
		if err := writeChunk(w, "IDAT", data[:k]); err != nil {
			return true, err
		}
		data = data[k:]
	}
	return true, writeChunk(w, "IEND", nil)
}

// maxChunk is the largest IDAT chunk written: the data of a large image
// is split over consecutive chunks, as the format allows (a chunk's
// length must stay below 2³¹).
const maxChunk = 1 << 20

// writeChunk writes one PNG chunk: length, type, data and the CRC of type
// and data.
func writeChunk(w io.Writer, typ string, data []byte) error {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
	copy(head[4:], typ)
	crc := crc32.Update(crc32.ChecksumIEEE(head[4:]), crc32.IEEETable, data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc)
	for _, p := range [][]byte{head[:], data, tail[:]} {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// grow returns b resized to n bytes, reusing its array when it can.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}
