"""Times a fit from Python against rpca.Solve in Go on the same matrix,
alternating the two, and prints the medians and their ratio
(docs/performance.md, "Python against Go"). Run from the repository's
root after python/install.sh:

    .venv/bin/python python/bench/compare.py [d] [runs]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import rpca

d = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((d, 10)) @ rng.standard_normal((10, d))
    hit = rng.random(Y.shape) < 0.1
    Y[hit] += rng.uniform(-50, 50, hit.sum())
    path = os.path.join(tmp, "Y.npy")
    np.save(path, Y)
    gotime = os.path.join(tmp, "gotime")
    subprocess.check_call(["go", "build", "-o", gotime, "./bench/gotime"], cwd=os.path.join(here, ".."))
    go, py = [], []
    for _ in range(runs):
        go.append(float(subprocess.check_output([gotime, path]).split()[0]))
        t = time.perf_counter()
        rpca.RobustPCA(rank=10, alpha=0.1, random_state=1).fit(Y)
        py.append(time.perf_counter() - t)
    print("d = %d, %d runs: Go median %.3f s (%.3f–%.3f), Python median %.3f s (%.3f–%.3f), ratio %.3f; load %s" % (
        d, runs, statistics.median(go), min(go), max(go), statistics.median(py), min(py), max(py),
        statistics.median(py) / statistics.median(go), os.getloadavg()))
