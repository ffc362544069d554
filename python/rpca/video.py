"""Video from NumPy: background and foreground of a clip as rpca video
separates them (rpca.video.separate), and a frame-by-frame background
subtractor in the manner of OpenCV's (rpca.video.Subtractor).

Frames are arrays of shape (T, H, W) or (T, H, W, 3) for a clip and
(H, W) or (H, W, 3) for one frame: uint8 (0–255) or floats in [0, 1]."""

import ctypes
import json
import warnings

import numpy as np

from ._errors import NotVerifiedWarning
from ._lib import _Owner, _load, _raise, _string

_DTYPES = {np.dtype(np.float64): 0, np.dtype(np.float32): 1, np.dtype(np.uint8): 2}


def _frames(a, ndim):
    """a as an array the library reads, with a channel axis, and its dtype
    code."""
    a = np.asarray(a)
    if a.ndim == ndim:
        a = a[..., np.newaxis]
    if a.ndim != ndim + 1 or a.shape[-1] not in (1, 3):
        raise ValueError("rpca: frames must have shape %s or %s with 3 channels, got %s" % (
            "(T, H, W)" if ndim == 3 else "(H, W)", "(T, H, W, 3)" if ndim == 3 else "(H, W, 3)", a.shape))
    if a.dtype not in _DTYPES:
        if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
            raise ValueError("rpca: frames must hold real numbers, got dtype %s" % a.dtype)
        a = a.astype(np.float64)
    if a.dtype != np.uint8 and not np.isfinite(a).all():
        raise ValueError("rpca: frames hold values that are not finite")
    return a, _DTYPES[a.dtype]


def _config(method, rank, alpha, noise_factor, keep_shadows, pixel_noise, random_state, displacement=None,
            **extra):
    cfg = {"method": method or "auto", "rank": int(rank or 0), "alpha": float(alpha or 0),
           "noise_factor": float(noise_factor or 0), "keep_shadows": bool(keep_shadows),
           "pixel_noise": bool(pixel_noise), "seed": int(random_state)}
    if displacement is not None:
        if isinstance(displacement, bool) or int(displacement) != displacement:
            raise ValueError("rpca: displacement must be an integer radius or None, got %r" % (displacement,))
        cfg["displacement"] = int(displacement)
    cfg.update(extra)
    return json.dumps(cfg).encode("utf-8")


def separate(frames, method="auto", rank=None, alpha=None, noise_factor=None, keep_shadows=False,
             pixel_noise=False, random_state=1, displacement=None):
    """Separates a clip as rpca video does: returns (background, mask,
    report), the background with the frames' shape in [0, 1], the
    foreground mask as a bool array (T, H, W), and the library's report.
    method is "auto" (scaled steps), a method's name, run with rpca video
    --method's settings (γ, stopping rules), or "median" (the per-pixel
    temporal median); rank None chooses it from the data.
    pixel_noise also scales the threshold by each pixel's noise level
    over time (rpca video --pixel-noise: for moving backgrounds such as
    foliage). displacement is rpca video --displacement: the radius of
    the shifts of the background that may explain a foreground region,
    which is then dropped (camera shake, swaying leaves); None is its
    default (2), 0 turns it off. Each of the library's notes on the separation (report
    ["notes"]) is a warning: NotVerifiedWarning for a background not
    verified as an exact fit, RuntimeWarning for no foreground at all or
    a solve stopped at its cap. Ctrl-C cancels the separation
    (KeyboardInterrupt)."""
    lib = _load()
    a, code = _frames(frames, 3)
    t, h, w, c = a.shape
    err = ctypes.c_void_p()
    hd = lib.rpca_video_start(a.ctypes.data if a.size else None, code, t, h, w, c, *a.strides,
                              _config(method, rank, alpha, noise_factor, keep_shadows, pixel_noise, random_state,
                                      displacement),
                              ctypes.byref(err))
    if hd == 0:
        _raise(json.loads(_string(lib, err.value)))
    try:
        try:
            while not lib.rpca_wait(hd, 100):
                pass
        except KeyboardInterrupt:
            lib.rpca_cancel(hd)
            lib.rpca_wait(hd, -1)
            raise
        rep = json.loads(_string(lib, lib.rpca_video_result(hd)))
        if "error" in rep:
            _raise(rep)
        bg = np.empty((t, h, w, c), dtype=np.float64)
        mask = np.empty((t, h, w), dtype=np.uint8)
        lib.rpca_video_copy(hd, bg.ctypes.data, mask.ctypes.data)
    finally:
        lib.rpca_video_free(hd)
    if np.asarray(frames).ndim == 3:
        bg = bg[..., 0]
    _warn_notes(rep)
    return bg, mask.astype(bool), rep


def _warn_notes(rep):
    """Warns of each note of a separation's report (the library's
    video.Separation.Notes), with this package's remedy."""
    remedy = {"no-foreground": ": lower noise_factor"}
    for n in rep.get("notes") or ():
        cls = NotVerifiedWarning if n["kind"] == "unverified" else RuntimeWarning
        warnings.warn("rpca: " + n["text"] + remedy.get(n["kind"], ""), cls, stacklevel=3)


class Subtractor(_Owner):
    """A background subtractor, frame by frame, as OpenCV's
    createBackgroundSubtractorKNN and MOG2 are used: apply(frame) returns
    the frame's foreground mask, decided against a background learnt from
    the frames before it only. Every refit frames the background is
    fitted again by robust PCA to the last history frames, and between
    two fits the background model turns toward each frame's background
    by the fraction track of the step that takes it in (GRASTA's step;
    0 turns it off); the first warmup frames are compared with their
    per-pixel median. The frame size is fixed by the first frame. See
    docs/video.md for what it measures against the batch separation."""

    _free = "rpca_subtractor_free"

    def __init__(self, history=100, refit=20, warmup=20, method="auto", rank=None, alpha=None,
                 noise_factor=None, keep_shadows=False, pixel_noise=False, random_state=1, track=1.0,
                 displacement=None):
        if not 0 <= float(track) <= 1:
            raise ValueError("rpca: track must be between 0 and 1 (0: off), got %r" % (track,))
        self.history, self.refit, self.warmup, self.track = history, refit, warmup, track
        self._cfg = _config(method, rank, alpha, noise_factor, keep_shadows, pixel_noise, random_state,
                            displacement, history=int(history), refit=int(refit), warmup=int(warmup), track=float(track))
        self._lib = _load()
        self._h = 0
        self._shape, self._gray = None, False
        self.background_ = None

    def _start(self, frame):
        """The frame as the library reads it, its dtype code, and whether
        it was gray (H, W); starts the library's subtractor on the first."""
        a, code = _frames(frame, 2)
        h, w, c = a.shape
        if self._h == 0:
            err = ctypes.c_void_p()
            self._h = self._lib.rpca_subtractor_new(h, w, c, self._cfg, ctypes.byref(err))
            if self._h == 0:
                _raise(json.loads(_string(self._lib, err.value)))
            self._shape, self._gray = a.shape, np.asarray(frame).ndim == 2
        elif a.shape != self._shape:
            raise ValueError("rpca: frame of shape %s after frames of %s" % (a.shape, self._shape))
        return a, code

    def _out(self, mask, bg, return_background):
        self.background_ = bg[..., 0] if self._gray else bg
        mask = mask.astype(bool)
        return (mask, self.background_) if return_background else mask

    def apply(self, frame, return_background=False):
        """The foreground mask of frame as a bool array (H, W); with
        return_background also the frame's background (the frame's shape,
        in [0, 1]), which stays in background_. The first warmup frames
        are compared with the median of the frames so far (see push)."""
        a, code = self._start(frame)
        h, w, c = a.shape
        mask = np.empty((h, w), dtype=np.uint8)
        bg = np.empty((h, w, c), dtype=np.float64)
        e = self._lib.rpca_subtractor_apply(self._h, a.ctypes.data, code, *a.strides, mask.ctypes.data,
                                            bg.ctypes.data)
        if e:
            _raise(json.loads(_string(self._lib, e)))
        return self._out(mask, bg, return_background)

    def push(self, frame, return_background=False):
        """Like apply, but the warm-up frames are held back: the list of
        the masks decided by this call, oldest first: empty for the first
        warmup - 1 frames, all warmup of them at the end of the warm-up
        (each decided against a fit to them, which is better than the
        running median apply uses), then one. With return_background, a
        list of (mask, background) pairs. Do not mix push and apply."""
        a, code = self._start(frame)
        n = ctypes.c_int64()
        e = self._lib.rpca_subtractor_push(self._h, a.ctypes.data, code, *a.strides, ctypes.byref(n))
        if e:
            _raise(json.loads(_string(self._lib, e)))
        return self._take(n.value, return_background)

    def flush(self, return_background=False):
        """The masks of the frames push still holds back, when the input
        ends inside the warm-up (as push returns them)."""
        if self._h == 0:
            return []
        n = ctypes.c_int64()
        e = self._lib.rpca_subtractor_flush(self._h, ctypes.byref(n))
        if e:
            _raise(json.loads(_string(self._lib, e)))
        return self._take(n.value, return_background)

    def _take(self, n, return_background):
        h, w, c = self._shape
        out = []
        for _ in range(n):
            mask = np.empty((h, w), dtype=np.uint8)
            bg = np.empty((h, w, c), dtype=np.float64)
            if self._lib.rpca_subtractor_take(self._h, mask.ctypes.data, bg.ctypes.data):
                break
            out.append(self._out(mask, bg, return_background))
        return out

    def info(self):
        """The state of the background model: its rank, the number of fits
        and their seconds."""
        if self._h == 0:
            return {"rank": 0, "fits": 0, "fit_seconds": 0.0}
        return json.loads(_string(self._lib, self._lib.rpca_subtractor_info(self._h)))
