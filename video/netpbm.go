package video

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"strconv"
)

// maxNetpbmPixels bounds the image size accepted from a Netpbm header
// before the pixel data are read (2^28 pixels, e.g. 16384×16384).
const maxNetpbmPixels = 1 << 28

// DecodeNetpbm decodes a binary or plain PGM (P5, P2) or PPM (P6, P3)
// image with 8-bit (maxval < 256) or 16-bit (big-endian, maxval < 65536)
// samples. Samples are rescaled from [0, maxval] to the full range of the
// returned *image.Gray, *image.Gray16, *image.RGBA or *image.RGBA64.
// Only the first image of a multi-image file is read.
func DecodeNetpbm(r io.Reader) (image.Image, error) {
	br := bufio.NewReader(r)
	var magic [2]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, errors.New("netpbm: missing magic number")
	}
	if magic[0] != 'P' || (magic[1] != '2' && magic[1] != '3' && magic[1] != '5' && magic[1] != '6') {
		return nil, fmt.Errorf("netpbm: unsupported magic %q (want P2, P3, P5 or P6)", magic[:])
	}
	plain := magic[1] == '2' || magic[1] == '3'
	channels := 1
	if magic[1] == '3' || magic[1] == '6' {
		channels = 3
	}
	var hdr [3]int
	names := [3]string{"width", "height", "maxval"}
	for i := range hdr {
		v, err := readPnmInt(br)
		if err != nil {
			return nil, fmt.Errorf("netpbm: reading %s: %v", names[i], err)
		}
		hdr[i] = v
	}
	w, h, maxval := hdr[0], hdr[1], hdr[2]
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("netpbm: invalid size %d×%d", w, h)
	}
	if w > maxNetpbmPixels/h {
		return nil, fmt.Errorf("netpbm: size %d×%d is too large", w, h)
	}
	if maxval <= 0 || maxval > 65535 {
		return nil, fmt.Errorf("netpbm: maxval %d out of range 1..65535", maxval)
	}
	if !plain {
		// Exactly one white-space byte separates the header from the data.
		c, err := br.ReadByte()
		if err != nil || !isPnmSpace(c) {
			return nil, errors.New("netpbm: no white space after the header")
		}
	}
	n := w * h * channels
	wide := maxval > 255
	samples := make([]uint16, n)
	if plain {
		for k := range samples {
			v, err := readPnmInt(br)
			if err != nil {
				return nil, fmt.Errorf("netpbm: sample %d of %d: %v", k+1, n, err)
			}
			if v > maxval {
				return nil, fmt.Errorf("netpbm: sample %d exceeds maxval %d", v, maxval)
			}
			samples[k] = uint16(v)
		}
	} else {
		bps := 1
		if wide {
			bps = 2
		}
		buf := make([]byte, 64<<10)
		for k := 0; k < n; {
			m := min(n-k, len(buf)/bps)
			b := buf[:m*bps]
			if got, err := io.ReadFull(br, b); err != nil {
				return nil, fmt.Errorf("netpbm: truncated data: %d of %d bytes", k*bps+got, n*bps)
			}
			for e := 0; e < m; e++ {
				var v uint16
				if wide {
					v = uint16(b[2*e])<<8 | uint16(b[2*e+1])
				} else {
					v = uint16(b[e])
				}
				if int(v) > maxval {
					return nil, fmt.Errorf("netpbm: sample %d exceeds maxval %d", v, maxval)
				}
				samples[k+e] = v
			}
			k += m
		}
	}
	rect := image.Rect(0, 0, w, h)
	scale8 := func(v uint16) uint8 { return uint8((uint32(v)*255 + uint32(maxval)/2) / uint32(maxval)) }
	scale16 := func(v uint16) uint16 { return uint16((uint32(v)*65535 + uint32(maxval)/2) / uint32(maxval)) }
	switch {
	case channels == 1 && !wide:
		img := image.NewGray(rect)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				img.Pix[y*img.Stride+x] = scale8(samples[y*w+x])
			}
		}
		return img, nil
	case channels == 1:
		img := image.NewGray16(rect)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				img.SetGray16(x, y, color.Gray16{Y: scale16(samples[y*w+x])})
			}
		}
		return img, nil
	case !wide:
		img := image.NewRGBA(rect)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				s := samples[3*(y*w+x):]
				img.SetRGBA(x, y, color.RGBA{scale8(s[0]), scale8(s[1]), scale8(s[2]), 255})
			}
		}
		return img, nil
	default:
		img := image.NewRGBA64(rect)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				s := samples[3*(y*w+x):]
				img.SetRGBA64(x, y, color.RGBA64{scale16(s[0]), scale16(s[1]), scale16(s[2]), 65535})
			}
		}
		return img, nil
	}
}

func isPnmSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// readPnmInt reads a decimal integer, skipping white space and '#'
// comments (to the end of the line) before it.
func readPnmInt(br *bufio.Reader) (int, error) {
	var c byte
	var err error
	for {
		if c, err = br.ReadByte(); err != nil {
			return 0, errors.New("unexpected end of file")
		}
		if c == '#' {
			if _, err := br.ReadString('\n'); err != nil {
				return 0, errors.New("unexpected end of file in a comment")
			}
			continue
		}
		if !isPnmSpace(c) {
			break
		}
	}
	digits := []byte{}
	for c >= '0' && c <= '9' {
		digits = append(digits, c)
		if len(digits) > 9 {
			return 0, errors.New("number too large")
		}
		if c, err = br.ReadByte(); err != nil {
			c = 0
			break
		}
	}
	if len(digits) == 0 {
		return 0, fmt.Errorf("expected a number, found %q", c)
	}
	if err == nil {
		if isPnmSpace(c) || c == '#' {
			br.UnreadByte()
		} else {
			return 0, fmt.Errorf("unexpected %q after a number", c)
		}
	}
	return strconv.Atoi(string(digits))
}
