"""Builds _librpca.so from python/bridge with the local Go toolchain
(go build -buildmode=c-shared) before the package is assembled."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithGo(build_py):
    def run(self):
        go = shutil.which("go")
        if go is None:
            raise RuntimeError("rpca: building the package needs the Go toolchain (go) on PATH")
        out = os.path.join(HERE, "rpca", "_librpca.so")
        env = dict(os.environ, CGO_ENABLED="1")
        subprocess.check_call([go, "build", "-trimpath", "-buildmode=c-shared", "-o", out, "."],
                              cwd=os.path.join(HERE, "bridge"), env=env)
        super().run()


setup(cmdclass={"build_py": BuildWithGo})
