// Package netpbm decodes PGM and PPM images (Netpbm's P2, P3, P5 and P6)
// and registers them with package image, so that image.Decode and
// image.DecodeConfig read them as they read PNG or JPEG once the package
// is imported.
package netpbm

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"strconv"
)

func init() {
	for _, magic := range []string{"P2", "P5"} {
		image.RegisterFormat("pgm", magic, Decode, DecodeConfig)
	}
	for _, magic := range []string{"P3", "P6"} {
		image.RegisterFormat("ppm", magic, Decode, DecodeConfig)
	}
}

// MaxPixels bounds the image size accepted from a header before the pixel
// data are read (2^28 pixels, e.g. 16384×16384).
const MaxPixels = 1 << 28

// header is what precedes the samples.
type header struct {
	plain    bool // P2, P3: decimal samples
	channels int  // 1 (PGM) or 3 (PPM)
	w, h     int
	maxval   int
}

// DecodeConfig returns the size and colour model of a PGM or PPM image
// without reading its samples.
func DecodeConfig(r io.Reader) (image.Config, error) {
	hd, err := readHeader(bufio.NewReader(r))
	if err != nil {
		return image.Config{}, err
	}
	var m color.Model
	switch wide := hd.maxval > 255; {
	case hd.channels == 1 && !wide:
		m = color.GrayModel
	case hd.channels == 1:
		m = color.Gray16Model
	case !wide:
		m = color.RGBAModel
	default:
		m = color.RGBA64Model
	}
	return image.Config{ColorModel: m, Width: hd.w, Height: hd.h}, nil
}

// Decode decodes a binary or plain PGM (P5, P2) or PPM (P6, P3) image
// with 8-bit (maxval < 256) or 16-bit (big-endian, maxval < 65536)
// samples. Samples are rescaled from [0, maxval] to the full range of the
// returned *image.Gray, *image.Gray16, *image.RGBA or *image.RGBA64. Only
// the first image of a multi-image file is read.
func Decode(r io.Reader) (image.Image, error) {
	br := bufio.NewReader(r)
	hd, err := readHeader(br)
	if err != nil {
		return nil, err
	}
	var samples []uint16
	if hd.plain {
		samples, err = readPlain(br, hd)
	} else {
		samples, err = readBinary(br, hd)
	}
	if err != nil {
		return nil, err
	}
	return hd.image(samples), nil
}

// readHeader reads the magic number, the size and maxval, and, for a
// binary image, the one white-space byte before the samples.
func readHeader(br *bufio.Reader) (header, error) {
	var hd header
	var magic [2]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return hd, errors.New("netpbm: missing magic number")
	}
	switch string(magic[:]) {
	case "P2", "P5":
		hd.channels = 1
	case "P3", "P6":
		hd.channels = 3
	default:
		return hd, fmt.Errorf("netpbm: unsupported magic %q (want P2, P3, P5 or P6)", magic[:])
	}
	hd.plain = magic[1] == '2' || magic[1] == '3'
	for _, f := range []struct {
		name string
		p    *int
	}{{"width", &hd.w}, {"height", &hd.h}, {"maxval", &hd.maxval}} {
		v, err := readInt(br)
		if err != nil {
			return hd, fmt.Errorf("netpbm: reading %s: %v", f.name, err)
		}
		*f.p = v
	}
	switch {
	case hd.w <= 0 || hd.h <= 0:
		return hd, fmt.Errorf("netpbm: invalid size %d×%d", hd.w, hd.h)
	case hd.w > MaxPixels/hd.h:
		return hd, fmt.Errorf("netpbm: size %d×%d is too large", hd.w, hd.h)
	case hd.maxval <= 0 || hd.maxval > 65535:
		return hd, fmt.Errorf("netpbm: maxval %d out of range 1..65535", hd.maxval)
	}
	if !hd.plain {
		// Exactly one white-space byte separates the header from the data.
		if c, err := br.ReadByte(); err != nil || !isSpace(c) {
			return hd, errors.New("netpbm: no white space after the header")
		}
	}
	return hd, nil
}

// readPlain reads the decimal samples of a P2 or P3 image.
func readPlain(br *bufio.Reader, hd header) ([]uint16, error) {
	n := hd.w * hd.h * hd.channels
	samples := make([]uint16, n)
	for k := range samples {
		v, err := readInt(br)
		if err != nil {
			return nil, fmt.Errorf("netpbm: sample %d of %d: %v", k+1, n, err)
		}
		if v > hd.maxval {
			return nil, fmt.Errorf("netpbm: sample %d exceeds maxval %d", v, hd.maxval)
		}
		samples[k] = uint16(v)
	}
	return samples, nil
}

// readBinary reads the samples of a P5 or P6 image: bytes, or big-endian
// pairs when maxval > 255.
func readBinary(br *bufio.Reader, hd header) ([]uint16, error) {
	n := hd.w * hd.h * hd.channels
	bps := 1
	if hd.maxval > 255 {
		bps = 2
	}
	samples := make([]uint16, n)
	buf := make([]byte, 64<<10)
	for k := 0; k < n; {
		m := min(n-k, len(buf)/bps)
		b := buf[:m*bps]
		if got, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("netpbm: truncated data: %d of %d bytes", k*bps+got, n*bps)
		}
		for e := range m {
			v := uint16(b[e])
			if bps == 2 {
				v = uint16(b[2*e])<<8 | uint16(b[2*e+1])
			}
			if int(v) > hd.maxval {
				return nil, fmt.Errorf("netpbm: sample %d exceeds maxval %d", v, hd.maxval)
			}
			samples[k+e] = v
		}
		k += m
	}
	return samples, nil
}

// image returns the samples as an image of hd's size, rescaled from
// [0, maxval] to the full range of its colour type.
func (hd header) image(samples []uint16) image.Image {
	rect := image.Rect(0, 0, hd.w, hd.h)
	mv := uint32(hd.maxval)
	scale8 := func(v uint16) uint8 { return uint8((uint32(v)*255 + mv/2) / mv) }
	scale16 := func(v uint16) uint16 { return uint16((uint32(v)*65535 + mv/2) / mv) }
	n := hd.w * hd.h
	switch wide := hd.maxval > 255; {
	case hd.channels == 1 && !wide:
		img := image.NewGray(rect)
		for k := range n {
			img.Pix[k] = scale8(samples[k])
		}
		return img
	case hd.channels == 1:
		img := image.NewGray16(rect)
		for k := range n {
			v := scale16(samples[k])
			img.Pix[2*k], img.Pix[2*k+1] = uint8(v>>8), uint8(v)
		}
		return img
	case !wide:
		img := image.NewRGBA(rect)
		for k := range n {
			s := samples[3*k:]
			copy(img.Pix[4*k:], []uint8{scale8(s[0]), scale8(s[1]), scale8(s[2]), 255})
		}
		return img
	}
	img := image.NewRGBA64(rect)
	for k := range n {
		s := samples[3*k:]
		for c := range 3 {
			v := scale16(s[c])
			img.Pix[8*k+2*c], img.Pix[8*k+2*c+1] = uint8(v>>8), uint8(v)
		}
		img.Pix[8*k+6], img.Pix[8*k+7] = 0xff, 0xff
	}
	return img
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// readInt reads a decimal integer, skipping white space and '#' comments
// (to the end of the line) before it.
func readInt(br *bufio.Reader) (int, error) {
	c, err := skipSpace(br)
	if err != nil {
		return 0, err
	}
	var digits []byte
	for c >= '0' && c <= '9' {
		if digits = append(digits, c); len(digits) > 9 {
			return 0, errors.New("number too large")
		}
		if c, err = br.ReadByte(); err != nil {
			c = 0
			break
		}
	}
	switch {
	case len(digits) == 0:
		return 0, fmt.Errorf("expected a number, found %q", c)
	case err == nil && (isSpace(c) || c == '#'):
		br.UnreadByte()
	case err == nil:
		return 0, fmt.Errorf("unexpected %q after a number", c)
	}
	return strconv.Atoi(string(digits))
}

// skipSpace returns the first byte that is neither white space nor in a
// comment.
func skipSpace(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, errors.New("unexpected end of file")
		}
		if c == '#' {
			if _, err := br.ReadString('\n'); err != nil {
				return 0, errors.New("unexpected end of file in a comment")
			}
			continue
		}
		if !isSpace(c) {
			return c, nil
		}
	}
}
