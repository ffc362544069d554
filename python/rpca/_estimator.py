"""RobustPCA, the scikit-learn estimator of robust PCA."""

import numbers

import numpy as np

try:
    from sklearn.base import BaseEstimator, TransformerMixin
    from sklearn.utils.validation import check_is_fitted
except ImportError:  # scikit-learn is optional: a minimal stand-in
    class BaseEstimator:
        def get_params(self, deep=True):
            return {k: getattr(self, k) for k in self._param_names()}

        def set_params(self, **params):
            for k, v in params.items():
                if k not in self._param_names():
                    raise ValueError("rpca: invalid parameter %r for RobustPCA" % k)
                setattr(self, k, v)
            return self

        @classmethod
        def _param_names(cls):
            import inspect
            return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    class TransformerMixin:
        def fit_transform(self, X, y=None, **fit_params):
            return self.fit(X, y, **fit_params).transform(X)

    def check_is_fitted(est, attributes=None):
        if not hasattr(est, "low_rank_"):
            raise AttributeError("rpca: this RobustPCA is not fitted yet; call fit first")

from . import _lib

_METHODS = ("auto", "accaltproj", "gd", "scaledgd", "als", "altproj", "ialm")


class RobustPCA(TransformerMixin, BaseEstimator):
    """Robust principal component analysis: Y = M + S with M of rank
    `rank` and S sparse (at most a fraction `alpha` of gross corruptions
    in every row and column), also when entries of Y are missing (NaN, or
    False in `mask`).

    Parameters
    ----------
    rank : int or None
        The rank of M. None chooses it from the spectrum of Y (the video
        command's rule: the last k ≤ max_rank with σ_k/σ_{k+1} ≥ 2); a
        fully observed Y only.
    alpha : float or None
        Fraction of corrupted entries per row and column, in [0, 1); None
        means 0.1. 0 is plain PCA (or matrix completion).
    method : str
        "auto" (AccAltProj for a full matrix, the paper's gradient method
        for missing entries, falling back to others while an answer is not
        verified), or one of "accaltproj", "gd", "scaledgd", "als",
        "altproj", "ialm".
    params : dict or None
        The method's own settings by their command-line names, e.g.
        {"mu": 3} or {"step-rule": "fixed"} (`rpca decompose -h` lists
        them); a setting the method does not have is a ValueError.
    max_iter, tol : int, float
        Iteration cap and relative residual tolerance (0: the method's
        defaults).
    random_state : int
        Seed of the randomized parts (the initial SVD's start).
    n_jobs : int or None
        Threads of the parallel kernels (None or 0: all cores).
    progress : bool or callable
        True shows a tqdm bar (or a line every 5 s without tqdm); a
        callable is called with (iteration, residual, seconds).

    Attributes
    ----------
    low_rank_ : ndarray (n_samples, n_features)
        M, formed from its factors.
    factors_ : (ndarray (n_samples, k), ndarray (n_features, k))
        U and V with M = U·Vᵀ, as the library returns them (the files
        U.npy and V.npy of `rpca decompose --factors`).
    sparse_ : scipy.sparse.csr_matrix
        S, the corruptions found (zero elsewhere and on missing entries).
    components_ : ndarray (k, n_features)
        The right singular vectors of M, largest first (as PCA's).
    singular_values_ : ndarray (k,)
        The singular values of M.
    n_iter_ : int
        Iterations (or sweeps) of the method whose answer was kept.
    verified_ : bool
        Whether the answer passed the library's verification; when not, a
        NotVerifiedWarning was issued and report_["verification"] says
        which check failed.
    report_ : dict
        The library's report: method, stop reason, verification, attempts,
        parameters, the rank choice.
    """

    def __init__(self, rank=None, alpha=None, method="auto", params=None, max_iter=0, tol=0.0,
                 random_state=1, n_jobs=None, progress=False):
        self.rank = rank
        self.alpha = alpha
        self.method = method
        self.params = params
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress

    def _check_params(self):
        if self.rank is not None and (not isinstance(self.rank, numbers.Integral) or isinstance(self.rank, bool) or self.rank < 1):
            raise ValueError("rpca: rank must be a positive integer or None, got %r" % (self.rank,))
        if self.alpha is not None and (not isinstance(self.alpha, numbers.Real) or not 0 <= self.alpha < 1):
            raise ValueError("rpca: alpha must be in [0, 1) or None, got %r" % (self.alpha,))
        if self.method not in _METHODS:
            raise ValueError("rpca: method must be one of %s, got %r" % (", ".join(_METHODS), self.method))
        if self.params is not None and not isinstance(self.params, dict):
            raise ValueError("rpca: params must be a dict or None")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 0:
            raise ValueError("rpca: max_iter must be a non-negative integer, got %r" % (self.max_iter,))
        if not isinstance(self.tol, numbers.Real) or not np.isfinite(self.tol):
            raise ValueError("rpca: tol must be a finite number, got %r" % (self.tol,))
        seed = self.random_state
        if seed is None:
            seed = 1
        if not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError("rpca: random_state must be a non-negative integer or None, got %r" % (seed,))
        return seed

    def fit(self, X, y=None, mask=None):
        """Decomposes X (n_samples × n_features; NaN entries, the masked
        entries of a numpy.ma array, or False in `mask`, are missing).
        Returns self."""
        seed = self._check_params()
        X = _validate(X)
        U, V, S, rep = _lib.solve(X, mask=mask, rank=self.rank, alpha=self.alpha, method=self.method,
                                  params=self.params, max_iter=self.max_iter, tol=self.tol, seed=seed,
                                  workers=self.n_jobs or 0, progress=self.progress)
        self.factors_ = (U, V)
        self.low_rank_ = U @ V.T
        self.sparse_ = S
        # The SVD of M from its factors: QR of each, then the small core.
        k = U.shape[1]
        if k:
            qu, ru = np.linalg.qr(U)
            qv, rv = np.linalg.qr(V)
            a, s, bt = np.linalg.svd(ru @ rv.T)
            keep = s > s[0] * 1e-12 if s.size and s[0] > 0 else np.zeros(s.size, bool)
            self.components_ = (qv @ bt.T).T[keep]
            self.singular_values_ = s[keep]
            self._left = (qu @ a)[:, keep]
        else:
            self.components_ = np.zeros((0, X.shape[1]))
            self.singular_values_ = np.zeros(0)
            self._left = np.zeros((X.shape[0], 0))
        self.n_components_ = self.components_.shape[0]
        self.n_iter_ = rep["iterations"]
        self.verified_ = bool(rep["verified"])
        self.report_ = rep
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        """Projects X onto the components: X·components_ᵀ (as PCA, without
        centering: an offset of the data is part of M)."""
        check_is_fitted(self, "components_")
        X = _validate(X, allow_nan=False, fitting=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError("rpca: X has %d features, but RobustPCA was fitted with %d" % (X.shape[1], self.n_features_in_))
        return X @ self.components_.T

    def fit_transform(self, X, y=None, mask=None):
        """Fits and returns the coordinates of M (not of X) on the
        components, low_rank_·components_ᵀ: the scores of the clean data."""
        self.fit(X, mask=mask)
        return self._left * self.singular_values_

    def inverse_transform(self, Z):
        """Maps coordinates back: Z·components_."""
        check_is_fitted(self, "components_")
        return np.asarray(Z) @ self.components_

    def _more_tags(self):
        return {"allow_nan": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _validate(X, allow_nan=True, fitting=True):
    """X as a 2-D array of real numbers, or a ValueError in scikit-learn's
    words; fitting needs at least two samples and two features."""
    try:
        import scipy.sparse
        if scipy.sparse.issparse(X):
            raise TypeError("rpca: sparse input is not supported; a missing entry is NaN in a dense array (or False in mask)")
    except ImportError:
        pass
    if isinstance(X, np.ma.MaskedArray):
        # Masked entries are missing, as NaN: np.asarray would hand over
        # the values under the mask as data.
        masked = np.ma.getmaskarray(X)
        if masked.any():
            if not allow_nan:
                raise ValueError("rpca: Input contains masked entries")
            X = np.ma.asarray(X, dtype=np.float64).filled(np.nan)
        else:
            X = np.ma.getdata(X)
    X = np.asarray(X)
    if X.dtype == object:
        X = X.astype(np.float64)  # a TypeError or ValueError names the entry that is not a number
    if np.iscomplexobj(X):
        raise ValueError("rpca: Complex data not supported")
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
        raise ValueError("rpca: X must hold numbers, got dtype %s" % X.dtype)
    if X.ndim != 2:
        raise ValueError("rpca: Expected 2D array, got %dD array instead: Reshape your data to (n_samples, n_features)" % X.ndim)
    if X.shape[1] < 1:
        raise ValueError("rpca: Found array with 0 feature(s) (shape=%s) while a minimum of 1 is required." % (X.shape,))
    if X.shape[0] < 1:
        raise ValueError("rpca: Found array with 0 sample(s) (shape=%s) while a minimum of 1 is required." % (X.shape,))
    if fitting and min(X.shape) < 2:
        raise ValueError("rpca: got %d sample(s) and %d feature(s) (n_samples=%d): robust PCA needs at least 2 of each" % (X.shape[0], X.shape[1], X.shape[0]))
    if np.isinf(X).any():
        raise ValueError("rpca: Input contains infinity")
    if not allow_nan and np.isnan(X).any():
        raise ValueError("rpca: Input contains NaN")
    return X
