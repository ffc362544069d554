package main

/*
#include <stdint.h>
*/
import "C"

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/video"
	"github.com/rpca-gd/rpca/video/frames"
)

// callerFrames is a (T, H, W, C) array of the caller: dtype 0 = float64, 1 =
// float32 (values in [0, 1]), 2 = uint8 (0–255), strides in bytes.
type callerFrames struct {
	data           unsafe.Pointer
	dtype          int
	t, h, w, c     int
	st, sh, sw, sc int
}

// at returns frame k's value at (y, x, channel ch), in [0, 1] for uint8.
func (f *callerFrames) at(k, y, x, ch int) float64 {
	p := unsafe.Add(f.data, k*f.st+y*f.sh+x*f.sw+ch*f.sc)
	switch f.dtype {
	case 1:
		return float64(*(*float32)(p))
	case 2:
		return float64(*(*uint8)(p)) / 255
	}
	return *(*float64)(p)
}

// geometry checks the frame size and returns it.
func (f *callerFrames) geometry() (frames.Geometry, error) {
	switch {
	case f.h <= 0 || f.w <= 0:
		return frames.Geometry{}, rpca.BadInput(fmt.Errorf("rpca: frames of %d×%d pixels; they need at least one", f.w, f.h))
	case f.c != 1 && f.c != 3:
		return frames.Geometry{}, rpca.BadInput(fmt.Errorf("rpca: frames with %d channels; give 1 (gray) or 3 (RGB)", f.c))
	case f.dtype < 0 || f.dtype > 2:
		return frames.Geometry{}, fmt.Errorf("%w: dtype code %d", errBadConfig, f.dtype)
	}
	return frames.Geometry{Width: f.w, Height: f.h, Color: f.c == 3}, nil
}

// column writes frame k into col in the layout of a column of
// frames.Sequence.Y: the pixels row by row, a channel after the other.
func (f *callerFrames) column(k int, col []float64) {
	p := f.w * f.h
	for ch := range f.c {
		for y := range f.h {
			for x := range f.w {
				col[ch*p+y*f.w+x] = f.at(k, y, x, ch)
			}
		}
	}
}

// videoConfig is the JSON configuration of the video functions.
type videoConfig struct {
	Method      string            `json:"method"` // auto, a method's name, or median
	Rank        int               `json:"rank"`   // 0: chosen from the data
	Alpha       float64           `json:"alpha"`  // 0: the default's
	Params      map[string]string `json:"params"`
	Seed        uint64            `json:"seed"`
	Workers     int               `json:"workers"`
	NoiseFactor float64           `json:"noise_factor"`
	KeepShadows bool              `json:"keep_shadows"`
	PixelNoise  bool              `json:"pixel_noise"`
	// Displacement is the displacement test's radius (nil: the default;
	// 0: off), rpca video --displacement.
	Displacement *int    `json:"displacement"`
	History      int     `json:"history"` // the Subtractor's
	Refit        int     `json:"refit"`
	Warmup       int     `json:"warmup"`
	Track        float64 `json:"track"` // 0: off, as rpca video --track 0
}

// separateOptions are the options of rpca video for c's method, rank,
// α and settings (video.Choose, the command line's choice), with c's
// foreground decision.
func (c videoConfig) separateOptions() (video.SeparateOptions, error) {
	if c.Rank < 0 || c.Alpha < 0 || c.Alpha >= 1 || c.NoiseFactor < 0 {
		return video.SeparateOptions{}, fmt.Errorf("%w: rank %d, alpha %v, noise_factor %v", errBadConfig, c.Rank, c.Alpha, c.NoiseFactor)
	}
	if d := c.Displacement; d != nil && (*d < 0 || *d > video.MaxDisplacement) {
		return video.SeparateOptions{}, fmt.Errorf("%w: displacement must be from 0 (off) to %d, got %d", errBadConfig, video.MaxDisplacement, *d)
	}
	var given []string
	if c.Alpha > 0 { // 0: the default's
		given = append(given, "alpha")
	}
	ch, err := video.Choose(video.Request{Method: c.Method, Rank: c.Rank, Alpha: c.Alpha, Given: given,
		Params: c.Params, Seed: max(c.Seed, 1), Workers: c.Workers})
	if err != nil {
		return ch.Options, fmt.Errorf("%w: %v", errBadConfig, err)
	}
	o := ch.Options
	o.Mask.NoiseFactor, o.Mask.KeepShadows, o.Mask.PixelNoise = c.NoiseFactor, c.KeepShadows, c.PixelNoise
	if d := c.Displacement; d != nil {
		o.Mask.Displacement = *d
		if *d == 0 {
			o.Mask.Displacement = -1 // off
		}
	}
	return o, nil
}

// videoJob is one separation of a clip (rpca_video_start).
type videoJob struct {
	task
	g   frames.Geometry
	t   int
	sep *video.Separation
	err error
}

// videoJobs and subtractors are the separations and the subtractors
// Python has started.
var (
	videoJobs   table[*videoJob]
	subtractors table[*subtractor]
)

// subtractor is a video.Subtractor with a lock: Python may call it from
// several threads.
type subtractor struct {
	mu     sync.Mutex
	s      *video.Subtractor
	g      frames.Geometry
	col    []float64
	queued []*video.Frame // decided by Push or Flush, not yet taken
}

// rpca_video_start separates the frames (see callerFrames) as rpca video does,
// with the configuration's method, rank and decision, in a goroutine of
// its own (rpca_wait, rpca_cancel, rpca_video_result). It
// returns a handle, or 0 with *errOut set.
//
//export rpca_video_start
func rpca_video_start(data unsafe.Pointer, dtype C.int, t, h, w, c, st, sh, sw, sc C.int64_t, config *C.char, errOut **C.char) C.int64_t {
	fail := func(err error) C.int64_t { *errOut = C.CString(errorJSON(err)); return 0 }
	var cfg videoConfig
	if err := jsonStrict(C.GoString(config), &cfg); err != nil {
		return fail(fmt.Errorf("%w: %v", errBadConfig, err))
	}
	f := callerFrames{data: data, dtype: int(dtype), t: int(t), h: int(h), w: int(w), c: int(c), st: int(st), sh: int(sh), sw: int(sw), sc: int(sc)}
	g, err := f.geometry()
	if err != nil {
		return fail(err)
	}
	if f.t < 2 {
		return fail(rpca.BadInput(fmt.Errorf("rpca: %d frames; a separation needs at least 2", f.t)))
	}
	o, err := cfg.separateOptions()
	if err != nil {
		return fail(err)
	}
	y := mat.NewDense(g.Rows(), f.t, nil)
	col := make([]float64, g.Rows())
	names := make([]string, f.t)
	for k := range f.t {
		f.column(k, col)
		y.SetCol(k, col)
		names[k] = fmt.Sprintf("frame%d", k)
	}
	seq := &frames.Sequence{Geometry: g, Names: names, Y: y}
	ctx, cancel := context.WithCancel(context.Background())
	j := &videoJob{task: task{cancel: cancel, done: make(chan struct{})}, g: g, t: f.t}
	go func() {
		defer close(j.done)
		defer func() {
			if r := recover(); r != nil {
				j.err = fmt.Errorf("rpca: internal error: %v (please report this)\n%s", r, debug.Stack())
			}
		}()
		j.sep, j.err = video.Separate(ctx, seq, o)
	}()
	return videoJobs.add(j)
}

func lookupVideo(h C.int64_t) *videoJob { return videoJobs.get(h) }

// rpca_video_result returns the ended separation's report as JSON, or an
// error; free it with rpca_free_string.
//
//export rpca_video_result
func rpca_video_result(h C.int64_t) *C.char {
	j := lookupVideo(h)
	if j == nil {
		return noSuch("separation")
	}
	<-j.done
	if j.err != nil {
		return resultJSON(nil, j.err)
	}
	s := j.sep
	rep := map[string]any{"rank": s.Rank, "rank_rule": s.RankRule, "rank_reason": s.RankReason, "seconds": s.Seconds,
		"noise": s.MaskReport.Noise, "foreground": s.MaskReport.Foreground, "shadow_pixels": s.MaskReport.Shadow, "displaced_pixels": s.MaskReport.Displaced}
	if r := s.Result; r != nil {
		rep["method"], rep["iterations"], rep["stop"] = r.Method, r.Iterations, string(r.Stop)
		if r.Verification != nil {
			rep["verified"] = r.Verification.Verified
		}
	} else {
		rep["method"] = "median"
	}
	rep["notes"] = s.Notes()
	return resultJSON(rep, nil)
}

// rpca_video_copy copies the background (T·H·W·C doubles, the caller's
// (T, H, W, C) order) and the masks (T·H·W bytes, 1 = foreground) of an
// ended separation.
//
//export rpca_video_copy
func rpca_video_copy(h C.int64_t, bg *C.double, mask *C.uint8_t) {
	j := lookupVideo(h)
	if j == nil || j.sep == nil {
		return
	}
	g, p := j.g, j.g.Pixels()
	c := g.Channels()
	out := unsafe.Slice((*float64)(unsafe.Pointer(bg)), j.t*p*c)
	m := unsafe.Slice((*uint8)(unsafe.Pointer(mask)), j.t*p)
	for k := range j.t {
		for i := range p {
			for ch := range c {
				out[(k*p+i)*c+ch] = j.sep.Background.At(ch*p+i, k)
			}
		}
	}
	copy(m, j.sep.Masks.Data) // frame after frame, as Python's (T, H, W)
}

// rpca_video_free forgets a separation (cancelling it if it runs).
//
//export rpca_video_free
func rpca_video_free(h C.int64_t) {
	j := lookupVideo(h)
	if j == nil {
		return
	}
	j.cancel()
	<-j.done
	videoJobs.remove(h)
}

// rpca_subtractor_new returns a handle to a video.Subtractor for frames
// of h×w pixels and c channels, or 0 with *errOut set.
//
//export rpca_subtractor_new
func rpca_subtractor_new(h, w, c C.int64_t, config *C.char, errOut **C.char) C.int64_t {
	fail := func(err error) C.int64_t { *errOut = C.CString(errorJSON(err)); return 0 }
	var cfg videoConfig
	if err := jsonStrict(C.GoString(config), &cfg); err != nil {
		return fail(fmt.Errorf("%w: %v", errBadConfig, err))
	}
	f := callerFrames{h: int(h), w: int(w), c: int(c)}
	g, err := f.geometry()
	if err != nil {
		return fail(err)
	}
	o, err := cfg.separateOptions()
	if err != nil {
		return fail(err)
	}
	s, err := video.NewSubtractor(g, video.StreamOptions{History: cfg.History, Refit: cfg.Refit, Warmup: cfg.Warmup, Track: cmp.Or(cfg.Track, -1), Fit: &o})
	if err != nil {
		return fail(fmt.Errorf("%w: %v", errBadConfig, err))
	}
	return subtractors.add(&subtractor{s: s, g: g, col: make([]float64, g.Rows())})
}

func lookupSubtractor(h C.int64_t) *subtractor { return subtractors.get(h) }

// withSubtractor runs fn on the subtractor of handle h under its lock,
// or returns the error JSON of an unknown handle.
func withSubtractor(h C.int64_t, fn func(s *subtractor) *C.char) *C.char {
	s := lookupSubtractor(h)
	if s == nil {
		return noSuch("subtractor")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(s)
}

// rpca_subtractor_apply separates one frame (an (H, W, C) array of the
// dtype codes of frames, strides in bytes): the mask into mask (H·W
// bytes, 1 = foreground) and, when bg is not NULL, the background into bg
// (H·W·C doubles). It returns NULL, or an error as JSON (free it with
// rpca_free_string).
//
//export rpca_subtractor_apply
func rpca_subtractor_apply(h C.int64_t, data unsafe.Pointer, dtype C.int, sh, sw, sc C.int64_t, mask *C.uint8_t, bg *C.double) *C.char {
	return withSubtractor(h, func(s *subtractor) *C.char {
		s.read(data, dtype, sh, sw, sc)
		fr, err := s.s.Apply(context.Background(), s.col)
		if err != nil {
			return C.CString(errorJSON(rpca.BadInput(err)))
		}
		s.copyOut(fr, mask, bg)
		return nil
	})
}

// rpca_subtractor_push passes one frame (as rpca_subtractor_apply) to
// video.Subtractor.Push and sets *n to the number of frames it decided,
// which rpca_subtractor_take then hands out, oldest first: none during
// the warm-up, all of the warm-up's at its end, then one. It returns NULL
// or an error as JSON.
//
//export rpca_subtractor_push
func rpca_subtractor_push(h C.int64_t, data unsafe.Pointer, dtype C.int, sh, sw, sc C.int64_t, n *C.int64_t) *C.char {
	return withSubtractor(h, func(s *subtractor) *C.char {
		s.read(data, dtype, sh, sw, sc)
		return s.enqueue(s.s.Push(context.Background(), s.col))(n)
	})
}

// rpca_subtractor_flush decides the frames Push holds back
// (video.Subtractor.Flush) and sets *n to the number waiting for
// rpca_subtractor_take.
//
//export rpca_subtractor_flush
func rpca_subtractor_flush(h C.int64_t, n *C.int64_t) *C.char {
	return withSubtractor(h, func(s *subtractor) *C.char {
		return s.enqueue(s.s.Flush(context.Background()))(n)
	})
}

// rpca_subtractor_take copies the oldest decided frame that Push or Flush
// left (its mask, and its background when bg is not NULL) and forgets it;
// it returns 0, or 1 when none is waiting.
//
//export rpca_subtractor_take
func rpca_subtractor_take(h C.int64_t, mask *C.uint8_t, bg *C.double) C.int {
	s := lookupSubtractor(h)
	if s == nil {
		return 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queued) == 0 {
		return 1
	}
	s.copyOut(s.queued[0], mask, bg)
	s.queued[0] = nil
	s.queued = s.queued[1:]
	return 0
}

// enqueue queues the frames Push or Flush decided and returns the
// function that sets *n to the number waiting and returns the error as
// JSON (or NULL).
func (s *subtractor) enqueue(fs []*video.Frame, err error) func(n *C.int64_t) *C.char {
	return func(n *C.int64_t) *C.char {
		if err != nil {
			return C.CString(errorJSON(rpca.BadInput(err)))
		}
		s.queued = append(s.queued, fs...)
		*n = C.int64_t(len(s.queued))
		return nil
	}
}

// read reads one frame of Python's layout into s.col.
func (s *subtractor) read(data unsafe.Pointer, dtype C.int, sh, sw, sc C.int64_t) {
	f := callerFrames{data: data, dtype: int(dtype), t: 1, h: s.g.Height, w: s.g.Width, c: s.g.Channels(), sh: int(sh), sw: int(sw), sc: int(sc)}
	f.column(0, s.col)
}

// copyOut writes a decided frame's mask (H·W bytes) and, when bg is not
// NULL, its background (H·W·C doubles) in Python's layout.
func (s *subtractor) copyOut(fr *video.Frame, mask *C.uint8_t, bg *C.double) {
	p, c := s.g.Pixels(), s.g.Channels()
	m := unsafe.Slice((*uint8)(unsafe.Pointer(mask)), p)
	for i, v := range fr.Mask {
		m[i] = 0
		if v != 0 {
			m[i] = 1
		}
	}
	if bg != nil {
		out := unsafe.Slice((*float64)(unsafe.Pointer(bg)), p*c)
		for i := range p {
			for ch := range c {
				out[i*c+ch] = fr.Background[ch*p+i]
			}
		}
	}
}

// rpca_subtractor_info returns the subtractor's state as JSON: its rank,
// fits and their seconds.
//
//export rpca_subtractor_info
func rpca_subtractor_info(h C.int64_t) *C.char {
	s := lookupSubtractor(h)
	if s == nil {
		return noSuch("subtractor")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"rank": s.s.Rank, "fits": s.s.Fits, "fit_seconds": s.s.FitSeconds})
	return C.CString(string(b))
}

// rpca_subtractor_free forgets a subtractor.
//
//export rpca_subtractor_free
func rpca_subtractor_free(h C.int64_t) {
	subtractors.remove(h)
}
