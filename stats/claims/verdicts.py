"""The verdicts a check can get, and which of them let a run pass.

* ``pass`` -- the check holds;
* ``REJECTED`` -- the evidence refutes it (Holm-adjusted p below the family's level, an
  identity violated on some row, an exact value outside the stated interval);
* ``ERROR`` -- it decided nothing: a NaN or infinite expected value, a NaN p-value or
  statistic, a simulation that raised;
* ``erratum confirmed`` / ``erratum stale`` -- a recorded erratum that the evidence still
  refutes / no longer refutes (a strict xfail);
* ``untestable`` -- the reason is in the row's note (a moment the law lacks, an optional
  part not installed here).
"""

from __future__ import annotations

__all__ = ["ERRATUM_CONFIRMED", "ERRATUM_STALE", "ERROR", "OK_VERDICTS", "PASS", "REJECTED", "UNTESTABLE", "VERDICTS", "verdict"]

PASS = "pass"
REJECTED = "REJECTED"
ERROR = "ERROR"
ERRATUM_CONFIRMED = "erratum confirmed"
ERRATUM_STALE = "erratum stale"
UNTESTABLE = "untestable"
VERDICTS = (PASS, REJECTED, ERROR, ERRATUM_CONFIRMED, ERRATUM_STALE, UNTESTABLE)
#: The verdicts with which a run passes.
OK_VERDICTS = (PASS, ERRATUM_CONFIRMED, UNTESTABLE)


def verdict(refuted, *, erratum):
    """The verdict of a decided check: refuted or not, with or without a recorded erratum."""
    if erratum:
        return ERRATUM_CONFIRMED if refuted else ERRATUM_STALE
    return REJECTED if refuted else PASS
