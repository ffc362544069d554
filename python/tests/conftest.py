import os
import shutil
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def low_rank(d1, d2, r, seed, offset=0.0, frac=0.05, mag=10.0):
    """M = A·Bᵀ (+ offset) and Y = M with a fraction frac of its entries
    corrupted by uniform noise in ±mag."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((d1, r)) @ rng.standard_normal((d2, r)).T + offset
    Y = M.copy()
    hit = rng.random(Y.shape) < frac
    Y[hit] += rng.uniform(-mag, mag, hit.sum())
    return M, Y


def centred_error(L, M):
    """‖L − M‖_F / ‖M − mean(M)‖_F: an offset of M cannot hide an error."""
    return np.linalg.norm(L - M) / np.linalg.norm(M - M.mean())


@pytest.fixture(scope="session")
def rpca_cli(tmp_path_factory):
    """The rpca command, built from this repository."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("no Go toolchain")
    out = str(tmp_path_factory.mktemp("bin") / "rpca")
    subprocess.check_call([go, "build", "-o", out, "./cmd/rpca"], cwd=ROOT)
    return out
