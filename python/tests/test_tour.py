import os
import re

import pytest

from conftest import ROOT


def test_tour():
    """docs/python.md runs as written: its Python blocks, in order, from
    the repository's root (they read ../shared and redraw the page's
    figures). RPCA_DOC_TOUR=1 runs it; it needs ../shared."""
    if os.environ.get("RPCA_DOC_TOUR") != "1":
        pytest.skip("RPCA_DOC_TOUR=1 runs the tour of docs/python.md (it needs ../shared)")
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(code, "docs/python.md", "exec"), {})
    finally:
        os.chdir(cwd)
