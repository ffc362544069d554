package frames

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// StdinInput is the input name that stands for standard input: frames in
// the YUV4MPEG2 format (.y4m), as `ffmpeg -i SOURCE -f yuv4mpegpipe -`
// writes them, read as they arrive ([Options.Stdin]).
const StdinInput = "-"

// ErrY4M is wrapped by the errors about a malformed or unsupported
// YUV4MPEG2 stream.
var ErrY4M = errors.New("not a YUV4MPEG2 stream this reader supports")

// urlRE matches an input that names a URL (rtsp://, http://, udp://,
// file:// …), which ffmpeg opens itself.
var urlRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// IsURL reports whether input names a URL for ffmpeg (a camera's
// rtsp://…, a stream's http://…) rather than a file or a directory.
func IsURL(input string) bool { return urlRE.MatchString(input) }

// y4mHeader is what the stream header of a YUV4MPEG2 stream says.
type y4mHeader struct {
	w, h       int
	chroma     string // "420", "422", "444" or "mono"
	fullRange  bool   // XCOLORRANGE=FULL; otherwise video range (16–235)
	cw, ch     int    // chroma plane size
	frameBytes int    // the planes of one frame
}

// parseY4MHeader reads the stream header line, "YUV4MPEG2 W320 H240 F25:1
// Ip A1:1 C420jpeg XCOLORRANGE=LIMITED".
func parseY4MHeader(r *bufio.Reader) (y4mHeader, error) {
	var h y4mHeader
	line, err := r.ReadString('\n')
	switch {
	case errors.Is(err, io.EOF) && line == "":
		return h, fmt.Errorf("%w: the input is empty", ErrY4M)
	case errors.Is(err, io.EOF):
		return h, fmt.Errorf("%w: no complete header line", ErrY4M)
	case err != nil: // an interruption, or the input failed
		return h, fmt.Errorf("reading the header: %w", err)
	}
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0] != "YUV4MPEG2" {
		return h, fmt.Errorf("%w: it does not start with YUV4MPEG2 (produce it with ffmpeg -i SOURCE -f yuv4mpegpipe -)", ErrY4M)
	}
	h.chroma = "420"
	for _, f := range fields[1:] {
		if err := h.tag(f); err != nil {
			return h, err
		}
	}
	if h.w == 0 || h.h == 0 {
		return h, fmt.Errorf("%w: the header gives no frame size", ErrY4M)
	}
	if h.w > maxVideoPixels/h.h {
		return h, fmt.Errorf("%w: unusable frame size %d×%d", ErrY4M, h.w, h.h)
	}
	switch h.chroma {
	case "420":
		h.cw, h.ch = (h.w+1)/2, (h.h+1)/2
	case "422":
		h.cw, h.ch = (h.w+1)/2, h.h
	case "444":
		h.cw, h.ch = h.w, h.h
	}
	h.frameBytes = h.w*h.h + 2*h.cw*h.ch
	return h, nil
}

// tag reads one tag of the stream header: the frame size (W, H), the
// colour space (C) and the colour range (X); the others are ignored.
func (h *y4mHeader) tag(f string) error {
	switch tag, val := f[0], f[1:]; tag {
	case 'W', 'H':
		n, err := strconv.Atoi(val)
		if err != nil || n <= 0 {
			return fmt.Errorf("%w: bad frame size %q", ErrY4M, f)
		}
		if tag == 'W' {
			h.w = n
		} else {
			h.h = n
		}
	case 'C':
		switch {
		case val == "mono":
			h.chroma = "mono"
		case val == "420" || val == "420jpeg" || val == "420paldv" || val == "420mpeg2":
			h.chroma = "420" // the chroma siting is ignored
		case val == "422" || val == "444":
			h.chroma = val
		default:
			return fmt.Errorf("%w: colour space C%s (8-bit 420, 422, 444 and mono are read; convert with ffmpeg -pix_fmt yuv420p)", ErrY4M, val)
		}
	case 'X':
		if strings.EqualFold(val, "COLORRANGE=FULL") {
			h.fullRange = true
		}
	}
	return nil
}

// y4mFrames reads the frames of a YUV4MPEG2 stream and gives them as raw
// 8-bit frames, gray (the luma) or interleaved RGB (BT.601), each pixel
// expanded to full range: the layout ffmpeg's rawvideo output has.
type y4mFrames struct {
	r      *bufio.Reader
	hdr    y4mHeader
	rgb    bool
	planes []byte     // one frame as read
	luma   *[256]byte // luma code → full-range byte
	frame  []byte     // one frame converted
	out    []byte     // the part of frame not yet read
	frames int
}

// Read implements io.Reader.
func (y *y4mFrames) Read(p []byte) (int, error) {
	if len(y.out) == 0 {
		if err := y.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, y.out)
	y.out = y.out[n:]
	return n, nil
}

// next reads and converts one frame; io.EOF at the end of the stream.
func (y *y4mFrames) next() error {
	line, err := y.r.ReadString('\n')
	switch {
	case errors.Is(err, io.EOF) && line == "":
		return io.EOF
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: frame %d: its FRAME line is cut off", ErrY4M, y.frames+1)
	case err != nil: // an interruption, or the input failed
		return err
	case !strings.HasPrefix(line, "FRAME"):
		return fmt.Errorf("%w: frame %d does not start with FRAME", ErrY4M, y.frames+1)
	}
	if n, err := io.ReadFull(y.r, y.planes); err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
		return fmt.Errorf("%w: frame %d is cut off (%d of %d bytes)", ErrY4M, y.frames+1, n, len(y.planes))
	}
	y.frames++
	y.convert()
	return nil
}

// convert turns y.planes into y.out.
func (y *y4mFrames) convert() {
	h := y.hdr
	luma := y.planes[:h.w*h.h]
	lut := y.luma
	if !y.rgb {
		out := y.frame
		for i, v := range luma {
			out[i] = lut[v]
		}
		y.out = out
		return
	}
	out := y.frame // colour: not mono (openY4M)
	cb := y.planes[len(luma) : len(luma)+h.cw*h.ch]
	cr := y.planes[len(luma)+h.cw*h.ch:]
	sx, sy := 1, 1 // chroma subsampling
	if h.cw < h.w {
		sx = 2
	}
	if h.ch < h.h {
		sy = 2
	}
	yScale, yOff, cScale := 1.0/255, 0.0, 1.0/255
	if !h.fullRange {
		yScale, yOff, cScale = 1.0/219, 16, 1.0/224
	}
	for r := range h.h {
		crow := (r / sy) * h.cw
		for c := range h.w {
			i := r*h.w + c
			yy := (float64(luma[i]) - yOff) * yScale
			u := (float64(cb[crow+c/sx]) - 128) * cScale
			v := (float64(cr[crow+c/sx]) - 128) * cScale
			out[3*i] = toByte(yy + 1.402*v)
			out[3*i+1] = toByte(yy - 0.344136*u - 0.714136*v)
			out[3*i+2] = toByte(yy + 1.772*u)
		}
	}
	y.out = out
}

// lumaTable maps a luma code to its full-range byte.
func lumaTable(full bool) *[256]byte {
	var t [256]byte
	for v := range t {
		if full {
			t[v] = byte(v)
		} else {
			t[v] = toByte((float64(v) - 16) / 219)
		}
	}
	return &t
}

// toByte rounds x in [0, 1] (clipped) to 0–255.
func toByte(x float64) byte {
	return byte(math.Round(255 * min(max(x, 0), 1)))
}

// openY4M reads the header of the YUV4MPEG2 stream r and returns a
// loader that reads its frames as they arrive, as openVideo's reads
// ffmpeg's.
func openY4M(ctx context.Context, r io.Reader, name string, opts Options) (*videoLoader, error) {
	n, err := opts.streamScale()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(&ctxReader{ctx: ctx, r: r}, 1<<20)
	hdr, err := parseY4MHeader(br)
	if err != nil {
		return nil, fmt.Errorf("video: %s: %w", name, err)
	}
	g := Geometry{Width: hdr.w / n, Height: hdr.h / n, Color: opts.Color != ColorGray && hdr.chroma != "mono"}
	if g.Width == 0 || g.Height == 0 {
		return nil, fmt.Errorf("video: %s is %d×%d, too small for scale 1/%d", name, hdr.w, hdr.h, n)
	}
	channels := 1
	if g.Color {
		channels = 3
	}
	frames := &y4mFrames{r: br, hdr: hdr, rgb: g.Color, planes: make([]byte, hdr.frameBytes), luma: lumaTable(hdr.fullRange), frame: make([]byte, hdr.w*hdr.h*channels)}
	limit := opts.maxBytes()
	return &videoLoader{
		opts: opts, w: hdr.w, h: hdr.h, n: n, g: g, channels: channels,
		decided: opts.Color != ColorAuto || !g.Color,
		run: &decodeRun{
			path: name, frameBytes: hdr.w * hdr.h * channels, src: frames,
			r: opts.Range, frameLimit: limit / (int64(g.Rows()) * 8), g: g, limit: limit,
		},
	}, nil
}

// ctxReader reads r until ctx is done: a read that blocks (a pipe whose
// writer has stopped) does not keep an interrupted run waiting. The read
// itself runs on its own goroutine, which a cancelled read leaves behind
// until r returns.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte // reused while no read has been abandoned
}

// Read implements io.Reader.
func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	type result struct {
		n   int
		err error
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p)) // p stays the caller's if the read is abandoned
	}
	buf := c.buf[:len(p)]
	done := make(chan result, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- result{n, err}
	}()
	select {
	case res := <-done:
		copy(p, buf[:res.n])
		return res.n, res.err
	case <-c.ctx.Done():
		c.buf = nil // the abandoned read may still write into it
		return 0, c.ctx.Err()
	}
}

// openInput opens a video for decoding: standard input (StdinInput) as
// YUV4MPEG2, anything else through ffmpeg.
func openInput(ctx context.Context, path string, opts Options) (*videoLoader, error) {
	if path == StdinInput {
		return openY4M(ctx, opts.stdin(), "standard input", opts)
	}
	return openVideo(ctx, path, opts)
}
