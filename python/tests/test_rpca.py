import gc
import os
import signal
import subprocess
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse

import rpca
from conftest import ROOT, centred_error, low_rank


def test_recovers_and_verifies():
    M, Y = low_rank(300, 200, 3, seed=1, offset=5.0)
    est = rpca.RobustPCA(rank=3, alpha=0.1).fit(Y)
    assert est.verified_ and est.report_["verified"]
    assert centred_error(est.low_rank_, M) < 1e-6
    assert scipy.sparse.issparse(est.sparse_) and est.sparse_.shape == Y.shape
    # Y = M + S on the entries S holds, to the accuracy of M.
    S = est.sparse_.toarray()
    on = S != 0
    assert np.abs(Y[on] - M[on] - S[on]).max() < 1e-6 * np.abs(Y).max()
    assert est.n_iter_ == est.report_["iterations"] > 0
    assert est.components_.shape == (est.n_components_, 200) and est.n_components_ <= 4


def test_input_unchanged_and_layouts_agree():
    """float32, Fortran order and strided views give the answer of the
    same values as a C-ordered float64 array, to the bit; Y is not
    modified (the library reads a C-ordered float64 Y in place)."""
    _, Y = low_rank(120, 90, 2, seed=2)
    Y32 = Y.astype(np.float32)
    ref = rpca.RobustPCA(rank=2, alpha=0.1).fit(Y32.astype(np.float64))
    before = Y32.astype(np.float64)
    inplace = before.copy()
    rpca.RobustPCA(rank=2, alpha=0.1).fit(inplace)
    assert np.array_equal(inplace, before)
    big = np.zeros((240, 180))
    big[::2, ::2] = Y32
    for X in (Y32, np.asfortranarray(Y32), np.asfortranarray(Y32.astype(np.float64)), big[::2, ::2]):
        got = rpca.RobustPCA(rank=2, alpha=0.1).fit(X)
        assert np.array_equal(got.factors_[0], ref.factors_[0]) and np.array_equal(got.factors_[1], ref.factors_[1])


def test_missing_entries_nan_and_mask():
    M, Y = low_rank(300, 200, 3, seed=3)
    rng = np.random.default_rng(4)
    keep = rng.random(Y.shape) < 0.5
    Yn = np.where(keep, Y, np.nan)
    a = rpca.RobustPCA(rank=3, alpha=0.1).fit(Yn)
    b = rpca.RobustPCA(rank=3, alpha=0.1).fit(Y, mask=keep)
    assert a.verified_ and centred_error(a.low_rank_, M) < 1e-5
    assert np.array_equal(a.factors_[0], b.factors_[0])
    # S holds nothing where Y is missing.
    S = a.sparse_.tocoo()
    assert keep[S.row, S.col].all()


def test_masked_array_entries_missing():
    # A numpy.ma array's masked entries are missing, as NaN: np.asarray
    # used to pass the values under the mask as data (here 1e6 on 40% of
    # the entries).
    M, Y = low_rank(120, 80, 2, seed=5)
    keep = np.random.default_rng(6).random(Y.shape) < 0.6
    hidden = np.where(keep, Y, 1e6)
    a = rpca.RobustPCA(rank=2, alpha=0.1).fit(np.ma.masked_array(hidden, mask=~keep))
    b = rpca.RobustPCA(rank=2, alpha=0.1).fit(Y, mask=keep)
    assert np.array_equal(a.factors_[0], b.factors_[0])
    assert centred_error(a.low_rank_, M) < 1e-5
    # Nothing masked: the data as they are; transform refuses masked entries.
    c = rpca.RobustPCA(rank=2, alpha=0).fit(np.ma.masked_array(Y, mask=False))
    assert np.array_equal(c.factors_[0], rpca.RobustPCA(rank=2, alpha=0).fit(Y).factors_[0])
    with pytest.raises(ValueError, match="masked"):
        c.transform(np.ma.masked_array(Y, mask=~keep))


def test_same_bits_as_the_command_line(tmp_path, rpca_cli):
    """The package and `rpca decompose --factors` give the same factors,
    bit for bit, at the same seed."""
    _, Y = low_rank(150, 120, 3, seed=5)
    np.save(tmp_path / "Y.npy", Y)
    subprocess.check_call([rpca_cli, "decompose", "--in", str(tmp_path / "Y.npy"), "--rank", "3", "--alpha", "0.1",
                           "--seed", "7", "--factors", "--quiet", "--out", str(tmp_path / "out")])
    est = rpca.RobustPCA(rank=3, alpha=0.1, random_state=7).fit(Y)
    assert np.array_equal(np.load(tmp_path / "out" / "U.npy"), est.factors_[0])
    assert np.array_equal(np.load(tmp_path / "out" / "V.npy"), est.factors_[1])


@pytest.mark.parametrize("kw, Y, match", [
    ({"rank": 0}, None, "rank"),
    ({"rank": 2.5}, None, "rank"),
    ({"rank": 200}, None, "rank"),
    ({"rank": 2, "alpha": 1.0}, None, "alpha"),
    ({"rank": 2, "method": "pcp"}, None, "method"),
    ({"rank": 2, "method": "gd", "params": {"huber": 3}}, None, "huber"),
    ({"rank": 2, "params": {"mu": -1}}, None, "mu"),
    ({"rank": 2, "max_iter": -1}, None, "max_iter"),
    ({"rank": 2}, np.ones(5), "2D"),
    ({"rank": 2}, np.full((20, 10), np.inf), "infinity"),
    ({"rank": 2}, np.array([["a", "b"], ["c", "d"]]), "numbers"),
    ({"rank": 2}, np.full((20, 10), np.nan), "observed"),
    ({"rank": 2, "method": "ialm"}, "partial", "full"),
])
def test_bad_input_is_value_error(kw, Y, match):
    if Y is None:
        _, Y = low_rank(60, 50, 2, seed=6)
    elif isinstance(Y, str):
        _, Y = low_rank(60, 50, 2, seed=6)
        Y[::3, ::2] = np.nan
    with pytest.raises(ValueError, match=match):
        rpca.RobustPCA(**kw).fit(Y)


def test_not_verified_warns():
    """A rank above the data's with too few entries to tell: the answer
    is not verified, and says so."""
    rng = np.random.default_rng(7)
    Y = rng.standard_normal((30, 20))  # noise: no low-rank structure at rank 2
    with pytest.warns(rpca.NotVerifiedWarning):
        est = rpca.RobustPCA(rank=2, alpha=0.1).fit(Y)
    assert not est.verified_ and est.report_["verification"]["failed"]


def test_keyboard_interrupt_cancels():
    """Ctrl-C during a long solve raises KeyboardInterrupt within about
    one iteration, and the solve stops (the next call runs normally)."""
    _, Y = low_rank(1500, 1500, 10, seed=8)
    est = rpca.RobustPCA(rank=10, alpha=0.1, method="gd", max_iter=100000, tol=-1, params={"step": 0.01})
    # A process started in the background of a non-interactive shell
    # (nohup …&, some CI runners) inherits SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler: install it for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        t = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            est.fit(Y)
        assert time.monotonic() - t < 10
    finally:
        signal.signal(signal.SIGINT, previous)
    small = rpca.RobustPCA(rank=2, alpha=0.1).fit(low_rank(60, 50, 2, seed=9)[1])
    assert small.verified_


def test_progress_callable():
    seen = []
    _, Y = low_rank(800, 600, 5, seed=10)
    rpca.RobustPCA(rank=5, alpha=0.1, method="gd", progress=lambda it, res, s: seen.append((it, res))).fit(Y)
    assert seen and all(it >= 0 for it, _ in seen)


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_freed():
    """100 fits do not grow the process by more than 64 MB (one fit's
    result is about 1 MB; a leak of the library's copy would be 100 MB)."""
    _, Y = low_rank(400, 300, 3, seed=11)
    for _ in range(5):
        rpca.RobustPCA(rank=3, alpha=0.1).fit(Y)
    gc.collect()
    before = _rss()
    for _ in range(100):
        rpca.RobustPCA(rank=3, alpha=0.1).fit(Y)
    gc.collect()
    assert _rss() - before < 64 << 20


def test_rank_none_from_the_spectrum():
    M, Y = low_rank(300, 200, 4, seed=12)
    est = rpca.RobustPCA(alpha=0.1).fit(Y)
    assert est.report_["rank"] == 4 and est.verified_ and centred_error(est.low_rank_, M) < 1e-6
    with pytest.raises(ValueError, match="rank"):
        Yn = Y.copy()
        Yn[0, 0] = np.nan
        rpca.RobustPCA(alpha=0.1).fit(Yn)


def test_decompose_function_and_transform():
    M, Y = low_rank(200, 150, 2, seed=13)
    L, S, rep = rpca.decompose(Y, rank=2, alpha=0.1)
    assert rep["verified"] and centred_error(L, M) < 1e-6
    est = rpca.RobustPCA(rank=2, alpha=0.1)
    Z = est.fit_transform(Y)
    assert np.allclose(est.inverse_transform(Z), est.low_rank_, atol=1e-9 * np.abs(M).max())
    assert np.allclose(est.transform(est.low_rank_), Z, atol=1e-9 * np.abs(M).max())


def test_estimator_contract():
    """What the scikit-learn checks listed in test_sklearn.py test, on data
    where the model applies: fit returns self and leaves the parameters
    as given; a second fit gives the same answer; n_features_in_ and a
    NotFittedError before fit; a pickled estimator (with NaN in the data)
    transforms as the original."""
    import pickle
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError
    M, Y = low_rank(120, 80, 2, seed=14)
    est = rpca.RobustPCA(rank=2, alpha=0.1, params={"mu": 2})
    params = clone(est).get_params()
    with pytest.raises(NotFittedError):
        est.transform(Y)
    assert est.fit(Y) is est and est.get_params() == params and est.n_features_in_ == 80
    first = est.low_rank_.copy()
    assert np.array_equal(est.fit(Y).low_rank_, first)
    Yn = Y.copy()
    Yn[::4, ::3] = np.nan
    est = rpca.RobustPCA(rank=2, alpha=0.1).fit(Yn)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.transform(M), est.transform(M)) and again.verified_ == est.verified_


def test_readme_example():
    """The Python example in README.md runs as written."""
    text = open(os.path.join(ROOT, "README.md")).read()
    start = text.index("```python\n") + len("```python\n")
    code = text[start:text.index("```", start)]
    exec(compile(code, "README.md", "exec"), {})


def test_owned_handles_not_picklable():
    """A Subtractor and a CompletionModel hold a handle of this process's
    library: pickling either is a TypeError that names the type, and
    dropping either frees its handle without error."""
    import pickle
    import rpca
    import rpca.video
    sub = rpca.video.Subtractor()
    with pytest.raises(TypeError, match="a Subtractor holds the library's state"):
        pickle.dumps(sub)
    frame = np.zeros((12, 16))
    sub.apply(frame)
    assert sub._h != 0
    del sub
