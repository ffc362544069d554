package frames

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // register JPEG decoding
	_ "image/png"  // register PNG decoding
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/internal/hugepage"
	"github.com/rpca-gd/rpca/load"
	_ "golang.org/x/image/bmp" // register BMP decoding

	_ "github.com/rpca-gd/rpca/formats/netpbm" // register PGM and PPM decoding
	"gonum.org/v1/gonum/mat"
)

// DefaultExclude is the exclude list used when [Options].Exclude is nil:
// ground-truth masks stored beside the frames, such as
// groundtruth_frame0016.png in the benchmark data sets, are not frames.
var DefaultExclude = []string{"groundtruth*"}

// DefaultMaxBytes is the default limit on the size of the frame matrix Y
// (8 GiB of float64s); see [Options].MaxBytes.
const DefaultMaxBytes int64 = 8 << 30

// PeakFactor is the peak memory of a separation in units of the size of
// Y: Y, M, the foreground, the mask and the sorted magnitudes for the
// display scale each take about as much, and the solver's work.
const PeakFactor = 6

// imageExts are the file extensions (lower case) loaded by default.
var imageExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".bmp": true,
	".pgm": true, ".ppm": true, ".pnm": true,
}

// Range selects frames Start, Start+1, …, End−1 (0-based, End exclusive,
// like a Python slice) of the sorted frame list. End = 0 means up to the
// last frame; an End beyond the last frame is clamped to it.
type Range struct{ Start, End int }

// ParseRange parses "a:b", "a:" or ":b" (either bound may be omitted) or
// a single frame index "a" (meaning a:a+1). Bounds are non-negative.
func ParseRange(s string) (Range, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Range{}, nil
	}
	parse := func(t string) (int, error) {
		if t == "" {
			return 0, nil
		}
		v, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || v < 0 {
			return 0, fmt.Errorf("video: frame range %q: %q is not a non-negative integer", s, t)
		}
		return v, nil
	}
	a, b, found := strings.Cut(s, ":")
	start, err := parse(a)
	if err != nil {
		return Range{}, err
	}
	if !found {
		return Range{start, start + 1}, nil
	}
	end, err := parse(b)
	if err != nil {
		return Range{}, err
	}
	if end != 0 && end <= start {
		return Range{}, fmt.Errorf("video: frame range %q is empty (end must exceed start)", s)
	}
	return Range{start, end}, nil
}

// String formats r as "a:b" (b omitted when open-ended).
func (r Range) String() string {
	if r.End == 0 {
		return fmt.Sprintf("%d:", r.Start)
	}
	return fmt.Sprintf("%d:%d", r.Start, r.End)
}

// apply returns the selected part of n frames, or an error when it is empty.
func (r Range) apply(n int) (lo, hi int, err error) {
	if r.Start < 0 || r.End < 0 {
		return 0, 0, fmt.Errorf("video: invalid frame range %v", r)
	}
	hi = n
	if r.End != 0 && r.End < n {
		hi = r.End
	}
	if r.Start >= hi {
		return 0, 0, fmt.Errorf("video: frame range %v selects no frames (there are %d)", r, n)
	}
	return r.Start, hi, nil
}

// ColorMode says whether frames are loaded in colour.
type ColorMode int

const (
	// ColorAuto keeps the colour channels when the frames are in colour:
	// for a directory, when the first frame is not a gray image and has a
	// pixel whose red, green and blue differ; for a video file, when some
	// decoded pixel's channels differ.
	ColorAuto ColorMode = iota
	// ColorGray converts frames to gray (luma).
	ColorGray
	// ColorRGB keeps the three channels.
	ColorRGB
)

// Options selects and converts frames.
type Options struct {
	// Include lists glob patterns (path.Match syntax) matched against file
	// base names; a file is loaded if it matches any. Empty: every file
	// with an image extension (.png, .jpg, .jpeg, .bmp, .pgm, .ppm, .pnm,
	// case-insensitive).
	Include []string

	// Exclude lists glob patterns of base names to skip. nil means
	// [DefaultExclude]; an empty non-nil slice excludes nothing.
	Exclude []string

	// Range selects frames of the sorted list (zero value: all).
	Range Range

	// Scale shrinks every frame by an integer factor n = 1/Scale (0.5 → 2,
	// 0.25 → 4) with a box filter: each output pixel is the mean of an
	// n×n block; rightmost columns and bottom rows that do not fill a
	// block are dropped. 0 or 1 means full size.
	Scale float64

	// Color says whether to keep the three colour channels (see the
	// package doc for the layout): by default (ColorAuto) they are kept
	// when the frames are in colour.
	Color ColorMode

	// MaxBytes limits the size of Y in bytes (0: [DefaultMaxBytes], or
	// the free memory divided by [PeakFactor] when that is less;
	// negative: no limit), so that a long video fails with a clear error
	// rather than exhausting memory.
	MaxBytes int64

	// LookPath finds the ffmpeg and ffprobe executables for [loadVideo];
	// nil means exec.LookPath.
	LookPath func(file string) (string, error)

	// Stdin is what the input [StdinInput] reads (nil: os.Stdin).
	Stdin io.Reader
}

// stdin is o.Stdin, or os.Stdin.
func (o Options) stdin() io.Reader {
	if o.Stdin != nil {
		return o.Stdin
	}
	return os.Stdin
}

func (o *Options) exclude() []string {
	if o.Exclude == nil {
		return DefaultExclude
	}
	return o.Exclude
}

func (o *Options) maxBytes() int64 {
	switch {
	case o.MaxBytes == 0:
		return max(min(DefaultMaxBytes, int64(load.AvailableMemory()/PeakFactor)), 1)
	case o.MaxBytes < 0:
		return math.MaxInt64
	}
	return o.MaxBytes
}

// ScaleFactor returns the integer downscaling factor n = 1/scale, 1 for
// scale 0 or 1, and an error unless 1/scale is (within 1e-6) a positive
// integer.
func ScaleFactor(scale float64) (int, error) {
	if scale == 0 || scale == 1 {
		return 1, nil
	}
	if !(scale > 0 && scale < 1) {
		return 0, fmt.Errorf("video: scale %v must be in (0, 1]", scale)
	}
	inv := 1 / scale
	n := math.Round(inv)
	if math.Abs(inv-n) > 1e-6*n || n > 1<<20 {
		return 0, fmt.Errorf("video: scale %v is not 1/n for an integer n (use 0.5, 0.25, 0.2, …)", scale)
	}
	return int(n), nil
}

// Geometry is the layout of a frame as a column of Y.
type Geometry struct {
	Width, Height int  // frame size in pixels (after downscaling)
	Color         bool // three channels (R, G, B planes) instead of one
}

// Channels returns 3 for color frames and 1 for grayscale.
func (g Geometry) Channels() int {
	if g.Color {
		return 3
	}
	return 1
}

// Pixels returns Width·Height.
func (g Geometry) Pixels() int { return g.Width * g.Height }

// Rows returns the length of a frame column: Pixels·Channels.
func (g Geometry) Rows() int { return g.Pixels() * g.Channels() }

// Sequence is a set of frames as the columns of a matrix.
type Sequence struct {
	Geometry
	// Names has one entry per column: the frame's file name (base name)
	// for a directory, "frame000001.png", … (numbered from 1 in the
	// video) for a video file.
	Names []string
	// Y is Rows()×len(Names), values in [0, 1].
	Y *mat.Dense
}

// ListFrames returns the base names of the frame files in dir: regular
// files, not hidden (names starting with '.'), matching opts.Include and
// none of the exclude patterns, in natural order ([naturalLess]). The
// frame range is not applied.
func ListFrames(dir string, opts Options) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("video: %v", err)
	}
	for _, p := range append(slices.Clone(opts.Include), opts.exclude()...) {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("video: bad pattern %q: %v", p, err)
		}
	}
	var names []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if !e.Type().IsRegular() {
			if e.Type()&os.ModeSymlink == 0 {
				continue
			}
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
		}
		if len(opts.Include) > 0 {
			if !matchAny(opts.Include, name) {
				continue
			}
		} else if !imageExts[strings.ToLower(filepath.Ext(name))] {
			continue
		}
		if matchAny(opts.exclude(), name) {
			continue
		}
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case naturalLess(a, b):
			return -1
		case naturalLess(b, a):
			return 1
		}
		return 0
	})
	return names, nil
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// naturalLess orders strings with embedded numbers by numeric value, so
// that "frame2.png" < "frame10.png": digit runs compare as numbers (leading
// zeros ignored), other text byte-wise. Strings equal in this order (such
// as "f01" and "f1") fall back to plain byte order.
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			continue
		}
		if ca != cb {
			return ca < cb
		}
		i++
		j++
	}
	if len(a)-i != len(b)-j {
		return len(a)-i < len(b)-j
	}
	return a < b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// DecodeFile decodes an image file: PNG, JPEG, BMP, or PGM/PPM (package
// formats/netpbm), by their magic numbers, whatever the extension.
//
// A file's header is checked before it is decoded: one that claims more
// pixels than a quarter of the free memory holds (at 8 bytes a pixel, the
// most a decoder allocates) is refused, so a small file with a forged
// header cannot exhaust memory.
func DecodeFile(name string) (image.Image, error) {
	f, err := formats.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	cfg, _, err := image.DecodeConfig(br)
	if err == nil {
		if need, free := 8*float64(cfg.Width)*float64(cfg.Height), load.AvailableMemory(); need > free/4 {
			return nil, fmt.Errorf("%s: its header claims %d×%d pixels, %.3g GB to decode, more than a quarter of the %.3g GB free", name, cfg.Width, cfg.Height, need/1e9, free/1e9)
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	br.Reset(f)
	img, _, err := image.Decode(br)
	if errors.Is(err, image.ErrFormat) {
		err = errors.New("not a PNG, JPEG, BMP, PGM or PPM image")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return img, nil
}

// LoadDir loads the frames in dir selected by opts ([ListFrames], then
// opts.Range) as the columns of a matrix, converting and downscaling them
// as opts says. All frames must have the same size. Frames are decoded in
// parallel; ctx cancels the load.
func LoadDir(ctx context.Context, dir string, opts Options) (*Sequence, error) {
	n, err := ScaleFactor(opts.Scale)
	if err != nil {
		return nil, err
	}
	all, err := ListFrames(dir, opts)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("video: no frame images in %s (include %q, exclude %q)", dir, opts.Include, opts.exclude())
	}
	lo, hi, err := opts.Range.apply(len(all))
	if err != nil {
		return nil, fmt.Errorf("%v in %s", err, dir)
	}
	names := all[lo:hi]
	paths := make([]string, len(names))
	for k, name := range names {
		paths[k] = filepath.Join(dir, name)
	}

	// The first frame fixes the size.
	first, err := DecodeFile(paths[0])
	if err != nil {
		return nil, fmt.Errorf("video: %v", err)
	}
	b0 := first.Bounds()
	g := Geometry{Width: b0.Dx() / n, Height: b0.Dy() / n, Color: opts.Color == ColorRGB || (opts.Color == ColorAuto && isColorImage(first))}
	if g.Width == 0 || g.Height == 0 {
		return nil, fmt.Errorf("video: %s is %d×%d, too small for scale 1/%d", paths[0], b0.Dx(), b0.Dy(), n)
	}
	y, err := allocFrames(g, len(names), opts.maxBytes())
	if err != nil {
		return nil, err
	}
	// planes converts frame k into dst's planes when they are the right
	// size (a worker reuses its block's planes: a frame's are dropped once
	// stored in y).
	planes := func(dst [][]float64, k int, img image.Image) ([][]float64, error) {
		if b := img.Bounds(); b.Dx() != b0.Dx() || b.Dy() != b0.Dy() {
			return nil, fmt.Errorf("video: %s is %d×%d, but %s is %d×%d; all frames must have the same size",
				paths[k], b.Dx(), b.Dy(), paths[0], b0.Dx(), b0.Dy())
		}
		return framePlanes(dst, img, g.Color, n), nil
	}
	p0, _ := planes(nil, 0, first)
	setColumns(y, 0, [][][]float64{p0})

	// Decode the rest in parallel, loadBlock consecutive frames per task,
	// each block stored with one pass over the rows of y (a column of a
	// row-major matrix touches a cache line per entry); report the error
	// of the earliest frame.
	var (
		next    atomic.Int64
		failed  atomic.Bool
		errs    = make([]error, len(paths))
		wg      sync.WaitGroup
		workers = min(runtime.GOMAXPROCS(0), len(paths)-1)
	)
	next.Store(1)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			block := make([][][]float64, 0, loadBlock)
			bufs := make([][][]float64, loadBlock) // the planes, reused
			for !failed.Load() {
				k0 := int(next.Add(loadBlock) - loadBlock)
				if k0 >= len(paths) {
					return
				}
				block = block[:0]
				for k := k0; k < min(k0+loadBlock, len(paths)); k++ {
					if err := ctx.Err(); err != nil {
						errs[k] = err
						failed.Store(true)
						return
					}
					img, err := DecodeFile(paths[k])
					var p [][]float64
					if err == nil {
						p, err = planes(bufs[k-k0], k, img)
						bufs[k-k0] = p
					} else {
						err = fmt.Errorf("video: %v", err)
					}
					if err != nil {
						errs[k] = err
						failed.Store(true)
						return
					}
					block = append(block, p)
				}
				setColumns(y, k0, block)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &Sequence{Geometry: g, Names: slices.Clone(names), Y: y}, nil
}

// isColorImage reports whether img has a pixel whose red, green and blue
// differ.
func isColorImage(img image.Image) bool {
	switch m := img.(type) {
	case *image.Gray, *image.Gray16:
		return false
	case *image.Paletted:
		for _, c := range m.Palette {
			r, g, b, _ := c.RGBA()
			if r != g || g != b {
				return true
			}
		}
		return false
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			if r != g || g != bb {
				return true
			}
		}
	}
	return false
}

// allocFrames allocates Y for frames of geometry g after checking its size.
func allocFrames(g Geometry, frames int, limit int64) (*mat.Dense, error) {
	rows := g.Rows()
	if frames > 0 && (rows > math.MaxInt/frames || int64(rows)*int64(frames) > math.MaxInt64/8) {
		return nil, fmt.Errorf("video: %d frames of %d values overflow", frames, rows)
	}
	if bytes := int64(rows) * int64(frames) * 8; bytes > limit {
		return nil, fmt.Errorf("video: %d frames of %d×%d×%d need %s as a float64 matrix, over the limit of %s; select a frame range or a smaller scale",
			frames, g.Width, g.Height, g.Channels(), humanBytes(bytes), humanBytes(limit))
	}
	return mat.NewDense(rows, frames, hugepage.Float64s(rows*frames)), nil
}

// humanBytes formats a byte count in binary units.
func humanBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit && exp < 5; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

// loadBlock is the number of consecutive frames a loader decodes and
// stores at once: eight float64s fill a cache line of a row of Y.
const loadBlock = 8

// setColumns stores the planes of consecutive frames as columns k0, k0+1,
// … of y, in one pass over its rows.
func setColumns(y *mat.Dense, k0 int, frames [][][]float64) {
	raw := y.RawMatrix()
	for c := range frames[0] {
		for p := range frames[0][c] {
			i := c*len(frames[0][0]) + p
			row := raw.Data[i*raw.Stride+k0 : i*raw.Stride+k0+len(frames)]
			for f, planes := range frames {
				row[f] = planes[c][p]
			}
		}
	}
}

// framePlanes converts an image to one luma plane or three color planes
// with values in [0, 1], downscaled by the factor n. Without downscaling
// the planes are written into dst when it holds as many of the right
// length (and allocated otherwise).
func framePlanes(dst [][]float64, img image.Image, color bool, n int) [][]float64 {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	nc := 1
	if color {
		nc = 3
	}
	planes := dst
	if n > 1 || len(planes) != nc || len(planes[0]) != w*h {
		planes = make([][]float64, nc)
		for c := range planes {
			planes[c] = make([]float64, w*h)
		}
	}
	if color {
		rgbPlanes(planes, img)
	} else {
		lumaPlane(planes[0], img)
	}
	if n > 1 {
		for c, p := range planes {
			planes[c] = boxDown(p, w, h, n)
		}
	}
	return planes
}

// BT.601 luma weights.
const (
	lumaR = 0.299
	lumaG = 0.587
	lumaB = 0.114
)

// lumaPlane writes into out (of the image's size) the BT.601 luma of
// every pixel, row-major, in [0, 1]. Gray images give their gray level;
// JPEG (Y'CbCr) images give their Y' channel, which is the BT.601 luma by
// definition of JFIF. Other images are converted from their
// (alpha-premultiplied) RGB values, i.e. composited over black.
func lumaPlane(out []float64, img image.Image) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	switch m := img.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+w]
			for x, v := range row {
				out[y*w+x] = float64(v) / 255
			}
		}
	case *image.Gray16:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+2*w]
			for x := 0; x < w; x++ {
				out[y*w+x] = float64(uint16(row[2*x])<<8|uint16(row[2*x+1])) / 65535
			}
		}
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			off := m.YOffset(b.Min.X, b.Min.Y+y)
			for x, v := range m.Y[off : off+w] {
				out[y*w+x] = float64(v) / 255
			}
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+4*w]
			for x := 0; x < w; x++ {
				p := row[4*x : 4*x+3]
				out[y*w+x] = (lumaR*float64(p[0]) + lumaG*float64(p[1]) + lumaB*float64(p[2])) / 255
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				out[y*w+x] = (lumaR*float64(r) + lumaG*float64(g) + lumaB*float64(bl)) / 65535
			}
		}
	}
}

// rgbPlanes writes into planes (three of the image's size) its red, green
// and blue planes, row-major, in [0, 1].
func rgbPlanes(planes [][]float64, img image.Image) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if m, ok := img.(*image.Gray); ok {
		for y := 0; y < h; y++ {
			for x, v := range m.Pix[y*m.Stride : y*m.Stride+w] {
				f := float64(v) / 255
				planes[0][y*w+x], planes[1][y*w+x], planes[2][y*w+x] = f, f, f
			}
		}
		return
	}
	// 8-bit RGBA and opaque NRGBA (what the PNG decoder returns for RGB
	// frames) are read directly: c/255 equals the 16-bit path's
	// (c·257)/65535.
	var pix []uint8
	stride := 0
	switch m := img.(type) {
	case *image.RGBA:
		pix, stride = m.Pix, m.Stride
	case *image.NRGBA:
		if m.Opaque() {
			pix, stride = m.Pix, m.Stride
		}
	}
	if m, ok := img.(*image.YCbCr); ok {
		// What the JPEG decoder returns: the colour of At without boxing
		// it in an interface (an allocation per pixel), the same values.
		r0, g0, b0 := planes[0][:w*h], planes[1][:w*h], planes[2][:w*h]
		for y := 0; y < h; y++ {
			yo := m.YOffset(b.Min.X, b.Min.Y+y)
			for x, yv := range m.Y[yo : yo+w] {
				co := m.COffset(b.Min.X+x, b.Min.Y+y)
				r, g, bl, _ := color.YCbCr{Y: yv, Cb: m.Cb[co], Cr: m.Cr[co]}.RGBA()
				i := y*w + x
				r0[i] = float64(r) / 65535
				g0[i] = float64(g) / 65535
				b0[i] = float64(bl) / 65535
			}
		}
		return
	}
	if pix != nil {
		for y := 0; y < h; y++ {
			row := pix[y*stride : y*stride+4*w]
			for x := 0; x < w; x++ {
				i := y*w + x
				planes[0][i] = float64(row[4*x]) / 255
				planes[1][i] = float64(row[4*x+1]) / 255
				planes[2][i] = float64(row[4*x+2]) / 255
			}
		}
		return
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			planes[0][y*w+x] = float64(r) / 65535
			planes[1][y*w+x] = float64(g) / 65535
			planes[2][y*w+x] = float64(bl) / 65535
		}
	}
}

// boxDown shrinks a w×h plane by the factor n, averaging n×n blocks and
// dropping the incomplete blocks at the right and bottom edges.
func boxDown(p []float64, w, h, n int) []float64 {
	ow, oh := w/n, h/n
	out := make([]float64, ow*oh)
	inv := 1 / float64(n*n)
	for oy := 0; oy < oh; oy++ {
		dst := out[oy*ow : (oy+1)*ow]
		for dy := 0; dy < n; dy++ {
			src := p[(oy*n+dy)*w:]
			for ox := range dst {
				s := 0.0
				for _, v := range src[ox*n : ox*n+n] {
					s += v
				}
				dst[ox] += s
			}
		}
		for ox := range dst {
			dst[ox] *= inv
		}
	}
	return out
}

// LoadMask reads a ground-truth mask image (nonzero pixels are
// foreground), downscaled like the frames by [Options].Scale: an output
// pixel is foreground when at least half of its block is. The mask is in
// the frames' row-major pixel order, for comparison with a thresholded
// sparse part.
func LoadMask(name string, scale float64) (mask []bool, width, height int, err error) {
	n, err := ScaleFactor(scale)
	if err != nil {
		return nil, 0, 0, err
	}
	img, err := DecodeFile(name)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("video: %v", err)
	}
	b := img.Bounds()
	if b.Dx()/n == 0 || b.Dy()/n == 0 {
		return nil, 0, 0, fmt.Errorf("video: %s is %d×%d, too small for scale 1/%d", name, b.Dx(), b.Dy(), n)
	}
	luma := make([]float64, b.Dx()*b.Dy())
	lumaPlane(luma, img)
	for i, v := range luma {
		if v > 0 {
			luma[i] = 1
		}
	}
	if n > 1 {
		luma = boxDown(luma, b.Dx(), b.Dy(), n)
	}
	mask = make([]bool, len(luma))
	for i, v := range luma {
		mask[i] = v >= 0.5
	}
	return mask, b.Dx() / n, b.Dy() / n, nil
}

// Load loads frames from a directory ([LoadDir]), a video file or URL
// ([loadVideo]), or standard input ([StdinInput]).
func Load(ctx context.Context, path string, opts Options) (*Sequence, error) {
	if path == StdinInput || IsURL(path) {
		return loadVideo(ctx, path, opts)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("video: %v", err)
	}
	if st.IsDir() {
		return LoadDir(ctx, path, opts)
	}
	if imageExts[strings.ToLower(filepath.Ext(path))] {
		return nil, fmt.Errorf("video: %s is a single image; give the directory of frames", path)
	}
	return loadVideo(ctx, path, opts)
}
