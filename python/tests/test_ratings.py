import json
import subprocess

import numpy as np
import pytest

import rpca


def ratings(n_users=150, n_items=100, r=3, p=0.4, noise=0.05, seed=1):
    """Ratings of a rank-r model plus biases, observed at rate p, with
    string ids."""
    rng = np.random.default_rng(seed)
    truth = 3 + 0.5 * rng.standard_normal((n_users, 1)) + 0.5 * rng.standard_normal((1, n_items)) + \
        0.4 * rng.standard_normal((n_users, r)) @ rng.standard_normal((r, n_items))
    u, i = np.nonzero(rng.random(truth.shape) < p)
    vals = truth[u, i] + noise * rng.standard_normal(u.size)
    users = np.array(["u%d" % k for k in u], dtype=object)
    items = np.array(["item-%d" % k for k in i], dtype=object)
    return users, items, vals, truth


def test_complete_predicts_and_ranks():
    users, items, vals, truth = ratings()
    m = rpca.complete(users, items, vals)
    assert m.report_["method"] == "gibbs" and m.report_["rank"] == 10
    # Every pair, rated or not, against the truth.
    uu, ii = np.meshgrid(np.arange(150), np.arange(100), indexing="ij")
    pred, known = m.predict(np.array(["u%d" % k for k in uu.ravel()], dtype=object),
                            np.array(["item-%d" % k for k in ii.ravel()], dtype=object), return_known=True)
    rmse = np.sqrt(np.mean((pred - truth.ravel()) ** 2))
    assert known.all() and rmse < 0.1, rmse
    # Unknown ids: the bias model or the mean, flagged as unknown.
    p, k = m.predict(np.array(["nobody", "u1"], dtype=object), np.array(["item-1", "no-item"], dtype=object), return_known=True)
    assert not k.any() and np.isfinite(p).all()
    # top_n: sorted, best first, without the excluded items.
    rated = set(items[users == "u7"].tolist())
    top, scores = m.top_n("u7", n=5, exclude=rated)
    assert len(top) == 5 and not rated & set(top.tolist()) and np.all(np.diff(scores) <= 0)
    assert np.allclose(scores, m.predict(np.full(5, "u7", dtype=object), top))
    # The model lives in this process's library: it cannot be pickled.
    import pickle
    with pytest.raises(TypeError, match="a CompletionModel holds the library's model"):
        pickle.dumps(m)
    # By default the user's training ratings are left out: the same five
    # as the obvious computation over the items u7 did not rate (no clip,
    # so the unclipped order is the predictions').
    top2, scores2 = m.top_n("u7", n=5)
    others = np.array(sorted(set(items.tolist()) - rated), dtype=object)
    p = m.predict(np.full(others.size, "u7", dtype=object), others)
    want = others[np.argsort(-p, kind="stable")[:5]]
    assert list(top2) == list(want) and np.allclose(scores2, np.sort(p)[::-1][:5])
    with pytest.raises(ValueError):
        m.top_n("nobody")


def test_cross_validate_equals_the_command_line(tmp_path, rpca_cli):
    """rpca.cross_validate and rpca complete --cv give the same folds and
    the same figures at the same seed."""
    users, items, vals, _ = ratings(seed=2)
    cv = rpca.cross_validate(users, items, vals, k=3, rank=4)
    path = tmp_path / "r.tsv"
    path.write_text("".join("%s\t%s\t%r\n" % t for t in zip(users, items, vals.tolist())))
    out = subprocess.check_output([rpca_cli, "complete", "--in", str(path), "--cv", "3", "--rank", "4", "--json", "--quiet"])
    folds = json.loads(out)["folds"]
    assert np.array_equal(cv["test_rmse"], [f["rmse"] for f in folds])
    assert np.array_equal(cv["bias_mae"], [f["bias_mae"] for f in folds])
    assert np.all(cv["test_rmse"] < cv["bias_rmse"])


def test_rating_errors():
    users, items, vals, _ = ratings(n_users=20, n_items=15, seed=3)
    with pytest.raises(ValueError, match="one length"):
        rpca.complete(users[:-1], items, vals)
    with pytest.raises(ValueError, match="finite"):
        rpca.complete(users, items, np.where(np.arange(vals.size) == 0, np.inf, vals))
    with pytest.raises(ValueError, match="model"):
        rpca.complete(users, items, vals, model="svd")
    with pytest.raises(ValueError, match="ridge"):  # Gibbs has no ridge: not ignored
        rpca.complete(users, items, vals, model="gibbs", ridge=0.5)
    # Too few ratings to fit is the caller's data: a ValueError (it was a
    # RuntimeError), for Gibbs and for the choice by validation.
    with pytest.raises(ValueError, match="too few"):
        rpca.complete([0], [0], [3.0])
    with pytest.raises(ValueError, match="cannot choose the rank"):
        rpca.complete([0], [0], [3.0], model="als")
    with pytest.raises(ValueError, match="k must"):
        rpca.cross_validate(users, items, vals, k=1)
