package frames

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNoFFmpeg is wrapped by the error of [loadVideo] when the ffmpeg
// executable cannot be found.
var ErrNoFFmpeg = errors.New("ffmpeg is not installed")

// maxVideoPixels bounds the frame size accepted from ffprobe/ffmpeg.
const maxVideoPixels = 1 << 28

// loadVideo decodes the first video stream of a video file with an
// installed ffmpeg, reading raw frames (pixel format gray, or rgb24 for
// color) from its standard output, and returns them as the columns of a
// matrix. The frame size comes from ffprobe, or from ffmpeg's stream
// description when ffprobe is missing. Every decoded frame is kept
// (-fps_mode passthrough: no frames are duplicated or dropped to reach a
// constant rate) and rotation metadata is ignored (-noautorotate).
// opts.Range and opts.Scale apply as for [LoadDir]; decoding stops once
// the range is read. Cancelling ctx kills ffmpeg.
//
// Gray frames are ffmpeg's own conversion to gray, which for the usual
// Y'CbCr video is the luma plane, expanded to full range.
func loadVideo(ctx context.Context, path string, opts Options) (*Sequence, error) {
	l, err := openInput(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	frames, err := l.decode(ctx, 0, 0, nil)
	if err != nil {
		return nil, err
	}
	return l.sequence(frames, opts.Range.Start)
}

// videoLoader is a probed video file ready to be decoded.
type videoLoader struct {
	opts     Options
	w, h, n  int // frame size as decoded, downscaling factor
	g        Geometry
	channels int  // as decoded
	decided  bool // the colour of ColorAuto has been decided
	run      *decodeRun
}

// openVideo finds ffmpeg and probes the frame size of path.
func openVideo(ctx context.Context, path string, opts Options) (*videoLoader, error) {
	n, err := opts.streamScale()
	if err != nil {
		return nil, err
	}
	if !IsURL(path) {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("video: %v", err)
		}
	}
	lookPath := opts.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	ffmpeg, err := lookPath("ffmpeg")
	if err != nil {
		return nil, fmt.Errorf("video: cannot decode %s: %w (not found in PATH); install it (for example apt-get install ffmpeg) or give a directory of frame images", path, ErrNoFFmpeg)
	}
	w, h, err := probeSize(ctx, lookPath, ffmpeg, path)
	if err != nil {
		return nil, err
	}
	if w <= 0 || h <= 0 || w > maxVideoPixels/h {
		return nil, fmt.Errorf("video: %s: unusable frame size %d×%d", path, w, h)
	}
	g := Geometry{Width: w / n, Height: h / n, Color: opts.Color != ColorGray}
	if g.Width == 0 || g.Height == 0 {
		return nil, fmt.Errorf("video: %s is %d×%d, too small for scale 1/%d", path, w, h, n)
	}
	pixFmt, channels := "gray", 1
	if g.Color {
		pixFmt, channels = "rgb24", 3
	}
	limit := opts.maxBytes()
	return &videoLoader{
		opts: opts, w: w, h: h, n: n, g: g, channels: channels,
		decided: opts.Color != ColorAuto,
		run: &decodeRun{
			ffmpeg: ffmpeg, path: path, pixFmt: pixFmt, frameBytes: w * h * channels,
			r: opts.Range, frameLimit: limit / (int64(g.Rows()) * 8), g: g, limit: limit,
		},
	}, nil
}

// streamScale checks the range and the scale of frames read as a stream
// (a video, standard input) and returns the downscaling factor.
func (opts Options) streamScale() (int, error) {
	n, err := ScaleFactor(opts.Scale)
	if err != nil {
		return 0, err
	}
	if opts.Range.Start < 0 || opts.Range.End < 0 || (opts.Range.End != 0 && opts.Range.End <= opts.Range.Start) {
		return 0, fmt.Errorf("video: invalid frame range %v", opts.Range)
	}
	return n, nil
}

// decode runs ffmpeg over the range. With window > 0, every window
// frames are handed to sink (with the index of their first frame) once
// window more have arrived, and only the last one to two windows are
// returned; memory then holds at most two windows of raw frames.
func (l *videoLoader) decode(ctx context.Context, window, firstSize int, sink func(frames [][]byte, first int) error) ([][]byte, error) {
	l.run.window, l.run.firstSize, l.run.sink = window, firstSize, sink
	if window > 0 {
		l.run.frameLimit = math.MaxInt64 // each window is checked on its own
	}
	// -fps_mode exists from ffmpeg 5.1 on; older versions call it -vsync.
	frames, err := l.run.decode(ctx, "-fps_mode")
	if errors.Is(err, errOldFFmpeg) {
		frames, err = l.run.decode(ctx, "-vsync")
	}
	return frames, err
}

// sequence converts raw frames, the first of which is frame number first
// (0-based) of the video, into a Sequence. For ColorAuto, the first call
// decides the colour: a video whose decoded pixels are all gray keeps
// one channel.
func (l *videoLoader) sequence(frames [][]byte, first int) (*Sequence, error) {
	w, h, n := l.w, l.h, l.n
	if !l.decided {
		l.decided = true
		if !anyColor(frames) {
			l.g.Color = false
		}
	}
	g := l.g
	channels := l.channels
	if channels == 3 && !g.Color {
		// A gray video decoded as RGB: keep one of the equal channels.
		for k, f := range frames {
			gray := make([]byte, w*h)
			for i := range gray {
				gray[i] = f[3*i]
			}
			frames[k] = gray
		}
		channels = 1
	}
	y, err := allocFrames(g, len(frames), l.run.limit)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(frames))
	block := make([][][]float64, 0, loadBlock)
	for k, f := range frames {
		names[k] = fmt.Sprintf("frame%06d.png", first+k+1)
		planes := rawPlanes(f, w*h, channels)
		if n > 1 {
			for c, p := range planes {
				planes[c] = boxDown(p, w, h, n)
			}
		}
		frames[k] = nil
		// Stored loadBlock frames at a time, one pass over Y's rows.
		if block = append(block, planes); len(block) == loadBlock || k == len(frames)-1 {
			setColumns(y, k+1-len(block), block)
			block = block[:0]
		}
	}
	return &Sequence{Geometry: g, Names: names, Y: y}, nil
}

// anyColor reports whether some pixel of the interleaved RGB frames has
// channels that differ.
func anyColor(frames [][]byte) bool {
	for _, f := range frames {
		for i := 0; i+2 < len(f); i += 3 {
			if f[i] != f[i+1] || f[i+1] != f[i+2] {
				return true
			}
		}
	}
	return false
}

// errOldFFmpeg reports an ffmpeg that does not know -fps_mode.
var errOldFFmpeg = errors.New("ffmpeg does not know -fps_mode")

// decodeRun is one ffmpeg invocation streaming raw frames.
type decodeRun struct {
	window               int                                    // > 0: hand windows to sink
	firstSize            int                                    // the first window holds at least this many
	sink                 func(frames [][]byte, first int) error // receives each full window
	sent                 int                                    // frames handed to sink
	ffmpeg, path, pixFmt string
	frameBytes           int
	r                    Range
	frameLimit           int64 // most frames that fit in the memory limit
	g                    Geometry
	limit                int64
	src                  io.Reader // raw frames read directly, not from ffmpeg (standard input)
}

// decode runs ffmpeg with the given frame-rate option (-fps_mode or
// -vsync) set to passthrough and returns the raw frames in the range.
func (d *decodeRun) decode(ctx context.Context, syncOpt string) ([][]byte, error) {
	if d.src != nil {
		return d.decodeDirect(ctx)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, d.ffmpeg,
		"-nostdin", "-hide_banner", "-loglevel", "error",
		"-noautorotate", "-i", d.path,
		"-map", "0:v:0", syncOpt, "passthrough",
		"-f", "rawvideo", "-pix_fmt", d.pixFmt, "pipe:1")
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("video: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("video: starting ffmpeg: %v", err)
	}
	frames, index, stopped, readErr, partial := d.read(ctx, stdout)
	if stopped || (readErr != nil && !partial) {
		cancel() // kill ffmpeg; its exit status no longer matters
	}
	// After a partial frame ffmpeg has closed its output and is exiting:
	// its exit status tells a failure (reported with its message) from a
	// short last frame, so it must not be killed here.
	waitErr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("video: decoding %s: %w", d.path, err)
	}
	if waitErr != nil && !stopped && (readErr == nil || partial) {
		if stderr.contains("Unrecognized option '" + strings.TrimPrefix(syncOpt, "-") + "'") {
			return nil, errOldFFmpeg
		}
		return nil, fmt.Errorf("video: ffmpeg failed on %s: %s", d.path, stderr.lastLine(waitErr))
	}
	if readErr != nil {
		return nil, readErr
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("video: frame range %v selects no frames of %s (it has %d)", d.r, d.path, index)
	}
	return frames, nil
}

// read reads raw frames of frameBytes from r (ffmpeg's output, or the
// frames of standard input) until its end or the end of the range,
// handing full windows to the sink. It returns the frames it kept, the
// number read, whether it stopped at the range's end, and an error, with
// partial set when r ended inside a frame.
func (d *decodeRun) read(ctx context.Context, r io.Reader) (frames [][]byte, index int, stopped bool, readErr error, partial bool) {
	buf := make([]byte, d.frameBytes)
	for {
		if err := ctx.Err(); err != nil {
			return frames, index, false, err, false
		}
		got, err := io.ReadFull(r, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			partial = errors.Is(err, io.ErrUnexpectedEOF)
			if partial {
				readErr = fmt.Errorf("video: %s: %s ended inside frame %d (%d of %d bytes)", d.path, d.source(), index+1, got, d.frameBytes)
			} else {
				readErr = fmt.Errorf("video: reading %s: %w", d.source(), err)
			}
			break
		}
		k := index
		index++
		if k < d.r.Start {
			continue
		}
		if int64(len(frames)) >= d.frameLimit {
			readErr = fmt.Errorf("video: %s: more than %d frames of %d×%d×%d need over %s as a float64 matrix, the limit; select a frame range or a smaller scale",
				d.path, len(frames), d.g.Width, d.g.Height, d.g.Channels(), humanBytes(d.limit))
			break
		}
		frames = append(frames, buf)
		buf = make([]byte, d.frameBytes)
		if w := d.windowSize(); d.window > 0 && len(frames) == w+d.window {
			if err := d.sink(frames[:w], d.r.Start+d.sent); err != nil {
				readErr = err
				break
			}
			d.sent += w
			frames = append([][]byte(nil), frames[w:]...)
		}
		if d.r.End != 0 && index >= d.r.End {
			stopped = true
			break
		}
	}
	return frames, index, stopped, readErr, partial
}

// windowSize is the size of the next window handed to the sink: the
// first holds at least firstSize frames.
func (d *decodeRun) windowSize() int {
	if d.sent == 0 {
		return max(d.window, d.firstSize)
	}
	return d.window
}

// source names where the raw frames come from, for errors.
func (d *decodeRun) source() string {
	if d.src != nil {
		return d.path
	}
	return "ffmpeg output"
}

// decodeDirect reads the frames of d.src, with no ffmpeg to run.
func (d *decodeRun) decodeDirect(ctx context.Context) ([][]byte, error) {
	frames, index, _, readErr, _ := d.read(ctx, d.src)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("video: reading %s: %w", d.path, err)
	}
	if readErr != nil {
		return nil, readErr
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("video: frame range %v selects no frames of %s (it has %d)", d.r, d.path, index)
	}
	return frames, nil
}

// rawPlanes splits an 8-bit gray or interleaved RGB frame into planes
// with values in [0, 1].
func rawPlanes(f []byte, pixels, channels int) [][]float64 {
	planes := make([][]float64, channels)
	for c := range planes {
		p := make([]float64, pixels)
		for i := range p {
			p[i] = float64(f[i*channels+c]) / 255
		}
		planes[c] = p
	}
	return planes
}

// sizeRE finds the frame size in ffmpeg's stream description, e.g.
// "Stream #0:0: Video: ffv1 (FFV1 / 0x31564646), gray(pc, progressive),
// 10x6, SAR 1:1 DAR 5:3, 5 fps": the first ", WxH" (a codec tag such as
// 0x31564646 follows "/ ", not ", ").
var sizeRE = regexp.MustCompile(`Stream #\d+:\d+.*?: Video: .*?, (\d+)x(\d+)\b`)

// probeSize returns the frame size of the first video stream of path.
func probeSize(ctx context.Context, lookPath func(string) (string, error), ffmpeg, path string) (w, h int, err error) {
	if ffprobe, err := lookPath("ffprobe"); err == nil {
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, ffprobe, "-v", "error", "-select_streams", "v:0",
			"-show_entries", "stream=width,height", "-of", "csv=p=0:s=x", path)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return 0, 0, fmt.Errorf("video: probing %s: %w", path, ctx.Err())
			}
			tb := &tailBuffer{max: 4096}
			tb.Write(errb.Bytes())
			return 0, 0, fmt.Errorf("video: ffprobe failed on %s: %s", path, tb.lastLine(err))
		}
		line := strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0])
		if line == "" {
			return 0, 0, fmt.Errorf("video: %s has no video stream", path)
		}
		parts := strings.Split(strings.TrimSuffix(line, "x"), "x")
		if len(parts) == 2 {
			w, err1 := strconv.Atoi(parts[0])
			h, err2 := strconv.Atoi(parts[1])
			if err1 == nil && err2 == nil {
				return w, h, nil
			}
		}
		return 0, 0, fmt.Errorf("video: cannot read the frame size of %s from ffprobe output %q", path, line)
	}
	// No ffprobe: "ffmpeg -i FILE" describes the streams on stderr (and
	// exits with an error because no output is given).
	var errb bytes.Buffer
	cmd := exec.CommandContext(ctx, ffmpeg, "-nostdin", "-hide_banner", "-noautorotate", "-i", path)
	cmd.Stderr = &errb
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return 0, 0, fmt.Errorf("video: probing %s: %w", path, ctx.Err())
	}
	if m := sizeRE.FindStringSubmatch(errb.String()); m != nil {
		w, _ = strconv.Atoi(m[1])
		h, _ = strconv.Atoi(m[2])
		return w, h, nil
	}
	tb := &tailBuffer{max: 4096}
	tb.Write(errb.Bytes())
	return 0, 0, fmt.Errorf("video: cannot find a video stream in %s: %s", path, tb.lastLine(runErr))
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// contains reports whether the kept output contains s.
func (t *tailBuffer) contains(s string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Contains(string(t.b), s)
}

// lastLine returns the last non-empty line written, or err's text.
func (t *tailBuffer) lastLine(err error) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	if err != nil {
		return err.Error()
	}
	return "unknown error"
}
