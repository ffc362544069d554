"""Rating completion from Python: rpca.complete and rpca.cross_validate,
on the library's package ratings (rpca complete's models)."""

import ctypes
import json
import warnings

import numpy as np

from . import _lib


def _start(users, items, ratings, cfg, progress):
    lib = _lib._load()
    users, items, ratings = np.asarray(users), np.asarray(items), np.asarray(ratings, dtype=np.float64)
    if users.ndim != 1 or users.shape != items.shape or users.shape != ratings.shape:
        raise ValueError("rpca: users, items and ratings must be 1-D arrays of one length, got shapes %s, %s, %s"
                         % (users.shape, items.shape, ratings.shape))
    if users.size == 0:
        raise ValueError("rpca: no ratings")
    if not np.isfinite(ratings).all():
        raise ValueError("rpca: ratings must be finite numbers")
    user_ids, ui = np.unique(users, return_inverse=True)
    item_ids, ii = np.unique(items, return_inverse=True)
    ui, ii = np.ascontiguousarray(ui, dtype=np.int64), np.ascontiguousarray(ii, dtype=np.int64)
    vals = np.ascontiguousarray(ratings)
    err = ctypes.c_void_p()
    h = lib.rpca_complete_start(ui.ctypes.data, ii.ctypes.data, vals.ctypes.data, vals.size,
                                json.dumps(cfg).encode("utf-8"), ctypes.byref(err))
    if h == 0:
        _lib._raise(json.loads(_lib._string(lib, err.value)))
    try:
        rep = _lib._wait(lib, h, progress)
    except BaseException:
        lib.rpca_free(h)
        raise
    del ui, ii, vals  # the library has its own copy of the ratings
    return lib, h, rep, user_ids, item_ids


def _config(model, rank, alpha, ridge, clip, random_state, cv=0):
    if model not in ("gibbs", "als"):
        raise ValueError("rpca: model must be 'gibbs' or 'als', got %r" % (model,))
    if rank is not None and (int(rank) != rank or rank < 1):
        raise ValueError("rpca: rank must be a positive integer or None, got %r" % (rank,))
    if not 0 <= alpha < 1:
        raise ValueError("rpca: alpha must be in [0, 1), got %r" % (alpha,))
    cfg = {"model": model, "rank": int(rank or 0), "alpha": float(alpha), "ridge": float(ridge),
           "seed": int(random_state), "cv": int(cv)}
    if clip is not None:
        lo, hi = clip
        cfg["clip"] = [float(lo), float(hi)]
    return cfg


class CompletionModel(_lib._Owner):
    """A fitted rating model (rpca.complete). predict and top_n take the
    ids the ratings used; an unknown id is predicted by the bias model."""

    _unpicklable = "holds the library's model (refit it)"

    def __init__(self, lib, handle, report, user_ids, item_ids):
        self._lib, self._h = lib, handle
        self.report_ = report
        self.user_ids_, self.item_ids_ = user_ids, item_ids
        self._uindex = {u: k for k, u in enumerate(user_ids.tolist())}
        self._iindex = {i: k for k, i in enumerate(item_ids.tolist())}

    def _indices(self, ids, index):
        # An unknown id gets an index the library has never seen.
        unknown = len(index) + 1
        return np.array([index.get(x, unknown) for x in np.asarray(ids).tolist()], dtype=np.int64)

    def predict(self, users, items, return_known=False):
        """Predicted ratings for the pairs (users[k], items[k]); with
        return_known also whether the model knew both ids."""
        u, i = self._indices(users, self._uindex), self._indices(items, self._iindex)
        if u.shape != i.shape:
            raise ValueError("rpca: users and items must have one length")
        out = np.empty(u.size, dtype=np.float64)
        known = np.empty(u.size, dtype=np.uint8)
        if u.size:
            self._lib.rpca_complete_predict(self._h, u.ctypes.data, i.ctypes.data, u.size, out.ctypes.data, known.ctypes.data)
        return (out, known.astype(bool)) if return_known else out

    def top_n(self, user, n=10, exclude=None):
        """The n items with the highest predicted rating for user, best
        first, as (items, predictions). By default the items the user
        rated in the training ratings are left out and the order is by the
        unclipped prediction, as rpca predict --top does; with exclude
        (e.g. a set of items), exactly those are left out instead. An
        unknown user is a ValueError."""
        if user not in self._uindex:
            raise ValueError("rpca: unknown user %r: it has no training rating" % (user,))
        n = int(n)
        if n < 1:
            raise ValueError("rpca: n must be at least 1, got %r" % (n,))
        if exclude is None:
            idx = np.empty(n, dtype=np.int64)
            pred = np.empty(n, dtype=np.float64)
            got = self._lib.rpca_complete_top(self._h, self._uindex[user], n, idx.ctypes.data, pred.ctypes.data)
            if got < 0:
                raise ValueError("rpca: unknown user %r" % (user,))
            return self.item_ids_[idx[:got]], pred[:got]
        items = self.item_ids_
        items = items[~np.isin(items, np.asarray(list(exclude)))]
        pred = self.predict(np.full(items.size, user, dtype=object) if items.dtype == object else np.full(items.size, user), items)
        order = np.argsort(-pred, kind="stable")[:n]
        return items[order], pred[order]


def complete(users, items, ratings, rank=None, alpha=0.0, model="gibbs", ridge=0.0, clip=None,
             random_state=1, progress=False):
    """Fits a rating model (rpca complete's): model="gibbs", the biased
    low-rank model by Gibbs sampling (rank None: 10), or "als",
    alternating least squares with the paper's sparse estimator (rank
    None: chosen by validation; ridge, its penalty, is an error with
    "gibbs"). alpha > 0 sets up to that fraction of
    each user's and item's ratings aside as outliers. clip=(lo, hi)
    bounds the predictions. Returns a CompletionModel."""
    cfg = _config(model, rank, alpha, ridge, clip, random_state)
    fit = CompletionModel(*_start(users, items, ratings, cfg, progress))
    for w in fit.report_.get("warnings") or ():
        warnings.warn("rpca: " + w, RuntimeWarning, stacklevel=2)
    return fit


def cross_validate(users, items, ratings, k=5, rank=None, alpha=0.0, model="gibbs", ridge=0.0, clip=None,
                   random_state=1, progress=False):
    """K-fold cross-validation of complete's model (rpca complete --cv K,
    the same folds at the same random_state): a dict of arrays per fold,
    "test_rmse", "test_mae", "bias_rmse", "bias_mae", "fit_time", as
    Surprise's cross_validate returns."""
    if int(k) != k or k < 2:
        raise ValueError("rpca: k must be an integer of at least 2, got %r" % (k,))
    cfg = _config(model, rank, alpha, ridge, clip, random_state, cv=int(k))
    lib, h, rep, _, _ = _start(users, items, ratings, cfg, progress)
    lib.rpca_free(h)
    folds = rep["folds"]

    def col(key):
        return np.array([np.nan if f[key] is None else f[key] for f in folds])
    return {"test_rmse": col("rmse"), "test_mae": col("mae"), "bias_rmse": col("bias_rmse"),
            "bias_mae": col("bias_mae"), "fit_time": col("seconds")}
