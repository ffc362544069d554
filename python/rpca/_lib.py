"""The ctypes binding of _librpca.so, the rpca library built as a C shared
library from python/bridge. Everything here is private: use rpca.decompose
or rpca.RobustPCA."""

import ctypes
import json
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse

from ._errors import CancelledError, NotVerifiedWarning

_HERE = os.path.dirname(os.path.abspath(__file__))
_lib = None


def _load():
    global _lib
    if _lib is not None:
        return _lib
    path = os.environ.get("RPCA_LIBRARY") or os.path.join(_HERE, "_librpca.so")
    if not os.path.exists(path):
        raise ImportError(
            "rpca: the compiled library %s is missing; install the package with "
            "'pip install ./python' (it builds the library with the Go toolchain)" % path)
    lib = ctypes.CDLL(path)  # CDLL releases the GIL during every call
    for name, (argtypes, restype) in _signatures().items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    _lib = lib
    return lib


def _signatures():
    """The C functions of the library: name → (argument types, result type)."""
    i64, dbl, p, cint, cstr = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    handle = ([i64], None)  # cancel, free: a handle in, nothing out
    return {
        "rpca_start": ([p, cint, i64, i64, i64, i64, p, i64, i64, cstr, ctypes.POINTER(p)], i64),
        "rpca_wait": ([i64, cint], cint),
        "rpca_progress": ([i64, ctypes.POINTER(i64), ctypes.POINTER(dbl), ctypes.POINTER(dbl)], None),
        "rpca_cancel": handle,
        "rpca_result": ([i64], p),
        "rpca_copy_factors": ([i64, p, p], None),
        "rpca_copy_sparse": ([i64, p, p, p], None),
        "rpca_free": handle,
        "rpca_free_string": ([p], None),
        "rpca_version": ([], p),
        "rpca_complete_start": ([p, p, p, i64, cstr, ctypes.POINTER(p)], i64),
        "rpca_complete_predict": ([i64, p, p, i64, p, p], None),
        "rpca_complete_top": ([i64, i64, i64, p, p], i64),
        "rpca_video_start": ([p, cint] + [i64] * 8 + [cstr, ctypes.POINTER(p)], i64),
        "rpca_video_result": ([i64], p),
        "rpca_video_copy": ([i64, p, p], None),
        "rpca_video_free": handle,
        "rpca_subtractor_new": ([i64, i64, i64, cstr, ctypes.POINTER(p)], i64),
        "rpca_subtractor_apply": ([i64, p, cint, i64, i64, i64, p, p], p),
        "rpca_subtractor_push": ([i64, p, cint, i64, i64, i64, ctypes.POINTER(i64)], p),
        "rpca_subtractor_flush": ([i64, ctypes.POINTER(i64)], p),
        "rpca_subtractor_take": ([i64, p, p], cint),
        "rpca_subtractor_info": ([i64], p),
        "rpca_subtractor_free": handle,
    }


class _Owner:
    """An object that owns a handle of the library, self._h (0: none),
    freed by the library function named _free when the object is
    collected. The handle lives in this process only, so the object
    cannot be pickled; _unpicklable says why, for the error."""

    _free = "rpca_free"
    _unpicklable = "holds the library's state"

    def __del__(self):
        h, self._h = getattr(self, "_h", 0), 0
        if h:
            getattr(self._lib, self._free)(h)

    def __reduce__(self):
        raise TypeError("rpca: a %s %s and cannot be pickled" % (type(self).__name__, self._unpicklable))


def _string(lib, ptr):
    """Reads and frees a string the library returned."""
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib.rpca_free_string(ptr)


def version():
    """The version line of the compiled library."""
    lib = _load()
    return _string(lib, lib.rpca_version())


def _raise(err):
    kind, msg = err.get("kind"), err.get("error", "rpca: unknown error")
    if kind in ("bad_input", "bad_settings"):
        raise ValueError(msg)
    if kind == "canceled":
        raise CancelledError(msg)
    raise RuntimeError(msg)


def _as_input(Y, mask):
    """Y as a 2-D float64 or float32 array the library can read, and the
    mask as a uint8 array of the same shape or None."""
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError("rpca: Y must be a 2-D array, got %d dimensions" % Y.ndim)
    if Y.dtype not in (np.float64, np.float32):
        if not (np.issubdtype(Y.dtype, np.number) or Y.dtype == np.bool_) or np.iscomplexobj(Y):
            raise ValueError("rpca: Y must hold real numbers, got dtype %s" % Y.dtype)
        Y = Y.astype(np.float64)
    if np.isinf(Y).any():
        raise ValueError("rpca: Y holds infinite values; only NaN marks a missing entry")
    m = None
    if mask is not None:
        m = np.asarray(mask)
        if m.shape != Y.shape:
            raise ValueError("rpca: mask has shape %s, Y %s" % (m.shape, Y.shape))
        m = m.astype(np.uint8, copy=False)
    return Y, m


class _Progress:
    """Shows a solve's progress: a tqdm bar when tqdm is installed, else a
    line on stderr every 5 s; or calls the user's callable."""

    def __init__(self, progress):
        self.fn = progress if callable(progress) else None
        self.bar = None
        self.last = 0.0
        if progress is True:
            try:
                from tqdm.auto import tqdm
                self.bar = tqdm(desc="rpca", unit="it")
            except ImportError:
                pass
        self.on = progress is True

    def update(self, it, res, secs):
        if it < 0:
            return
        if self.fn is not None:
            self.fn(int(it), float(res), float(secs))
            return
        if not self.on:
            return
        if self.bar is not None:
            self.bar.n = int(it)
            self.bar.set_postfix(residual="%.2e" % res, refresh=False)
            self.bar.refresh()
        elif time.monotonic() - self.last >= 5:
            self.last = time.monotonic()
            print("rpca: iteration %d, residual %.3e, %.1fs" % (it, res, secs), file=sys.stderr)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def solve(Y, mask=None, rank=None, alpha=None, method="auto", params=None, max_iter=0, tol=0.0,
          factor_tol=0.0, seed=1, workers=0, max_rank=0, progress=False):
    """Runs rpca.Solve on Y and returns (U, V, S, report): the factors of
    the low-rank part M = U·Vᵀ, the sparse part as a scipy.sparse CSR
    matrix, and the library's report (a dict)."""
    lib = _load()
    Y, m = _as_input(Y, mask)
    cfg = {"rank": int(rank or 0), "method": method or "auto", "max_iter": int(max_iter or 0),
           "tol": float(tol or 0), "factor_tol": float(factor_tol or 0), "seed": int(seed),
           "workers": int(workers or 0), "max_rank": int(max_rank or 0),
           "params": {k: _param_text(v) for k, v in (params or {}).items()}}
    if alpha is not None:
        cfg["alpha"] = float(alpha)
    err = ctypes.c_void_p()
    d1, d2 = Y.shape
    h = lib.rpca_start(Y.ctypes.data if Y.size else None, 1 if Y.dtype == np.float32 else 0, d1, d2,
                       Y.strides[0], Y.strides[1],
                       m.ctypes.data if m is not None and m.size else None,
                       m.strides[0] if m is not None else 0, m.strides[1] if m is not None else 0,
                       json.dumps(cfg).encode("utf-8"), ctypes.byref(err))
    if h == 0:
        _raise(json.loads(_string(lib, err.value)))
    try:
        rep = _wait(lib, h, progress)
        k, nnz = rep["k"], rep["nnz"]
        U = np.empty((d1, k), dtype=np.float64)
        V = np.empty((d2, k), dtype=np.float64)
        lib.rpca_copy_factors(h, U.ctypes.data, V.ctypes.data)
        rowptr = np.empty(d1 + 1, dtype=np.int64)
        colidx = np.empty(max(nnz, 1), dtype=np.int32)
        val = np.empty(max(nnz, 1), dtype=np.float64)
        lib.rpca_copy_sparse(h, rowptr.ctypes.data, colidx.ctypes.data, val.ctypes.data)
        S = scipy.sparse.csr_matrix((val[:nnz], colidx[:nnz], rowptr), shape=(d1, d2))
    finally:
        lib.rpca_free(h)
        del Y, m  # the library reads Y in place until rpca_free
    if not rep.get("verified"):
        v = rep.get("verification") or {}
        warnings.warn("rpca: %s's answer is not verified (%s check): %s" % (
            rep.get("method"), v.get("failed", "?"), v.get("reason", "")), NotVerifiedWarning, stacklevel=3)
    return U, V, S, rep


def _wait(lib, h, progress):
    """Waits for solve h in short steps (the library runs it on threads of
    its own, so this thread stays free to take Ctrl-C, which cancels it),
    shows its progress, and returns its report, or raises its error."""
    bar = _Progress(progress)
    it, res, secs = ctypes.c_int64(), ctypes.c_double(), ctypes.c_double()
    try:
        while not lib.rpca_wait(h, 100):
            lib.rpca_progress(h, ctypes.byref(it), ctypes.byref(res), ctypes.byref(secs))
            bar.update(it.value, res.value, secs.value)
    except KeyboardInterrupt:
        lib.rpca_cancel(h)
        lib.rpca_wait(h, -1)
        raise
    finally:
        bar.close()
    rep = json.loads(_string(lib, lib.rpca_result(h)))
    if "error" in rep:
        _raise(rep)
    return rep


def _param_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
