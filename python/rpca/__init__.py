"""rpca: robust principal component analysis from NumPy, on the Go library
of the same name (Yi, Park, Chen and Caramanis, NeurIPS 2016, and
AccAltProj, scaled steps, ALS, AltProj, IALM).

    import numpy as np, rpca
    est = rpca.RobustPCA(rank=3, alpha=0.1).fit(Y)
    est.low_rank_, est.sparse_, est.verified_
"""

from ._errors import CancelledError, NotVerifiedWarning
from ._estimator import RobustPCA
from ._lib import version
from ._ratings import CompletionModel, complete, cross_validate
from . import video


def decompose(Y, rank=None, alpha=None, method="auto", mask=None, **kw):
    """Splits Y into (M, S, report): the low-rank part as an array, the
    sparse part as a scipy.sparse CSR matrix, and the library's report.
    NaN entries, the masked entries of a numpy.ma array, and False in
    mask are missing. Keyword arguments are RobustPCA's."""
    est = RobustPCA(rank=rank, alpha=alpha, method=method, **kw).fit(Y, mask=mask)
    return est.low_rank_, est.sparse_, est.report_


__all__ = ["RobustPCA", "decompose", "complete", "cross_validate", "CompletionModel", "NotVerifiedWarning",
           "CancelledError", "version", "video"]
