"""The exceptions and warnings of the rpca package."""


class NotVerifiedWarning(UserWarning):
    """The answer did not pass the library's verification (a check of the
    answer against the data, independent of the method): it may be wrong.
    The estimator's report_["verification"] names the check and why."""


class CancelledError(RuntimeError):
    """The solve was cancelled."""
