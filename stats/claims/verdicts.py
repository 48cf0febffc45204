"""The verdicts a check can get in a run, and which of them let the run pass.

* ``pass`` -- the check holds;
* ``REJECTED`` -- the evidence refutes it (Holm-adjusted p below the family's level, an
  identity violated on some row, an exact value outside the stated interval);
* ``ERROR`` -- it decided nothing: a NaN or infinite expected value, a NaN p-value or
  statistic, a simulation that raised;
* ``erratum confirmed`` / ``erratum stale`` and ``caveat confirmed`` / ``caveat stale`` -- a
  recorded finding (:class:`~stats.claims.measures.Erratum`, by its kind) that the evidence
  still refutes / no longer refutes (a strict xfail);
* ``untestable`` -- the reason is in the row's note (a moment the law lacks, an optional
  part not installed here, a recorded finding that a draft's rows, fewer than its design
  asks, do not refute).

What a verdict means for the text -- holds, caveat, erratum and its grade -- is the row's
finding (:mod:`stats.claims.findings`).
"""

from __future__ import annotations

__all__ = [
    "CAVEAT_CONFIRMED", "CAVEAT_STALE", "CONFIRMED", "ERRATUM_CONFIRMED", "ERRATUM_STALE", "ERROR", "OK_VERDICTS", "PASS",
    "REJECTED", "STALE", "UNTESTABLE", "VERDICTS", "verdict",
]

PASS = "pass"
REJECTED = "REJECTED"
ERROR = "ERROR"
ERRATUM_CONFIRMED = "erratum confirmed"
ERRATUM_STALE = "erratum stale"
CAVEAT_CONFIRMED = "caveat confirmed"
CAVEAT_STALE = "caveat stale"
UNTESTABLE = "untestable"
#: A recorded finding the evidence still refutes, and one it no longer refutes.
CONFIRMED = (ERRATUM_CONFIRMED, CAVEAT_CONFIRMED)
STALE = (ERRATUM_STALE, CAVEAT_STALE)
VERDICTS = (PASS, REJECTED, ERROR, *CONFIRMED, *STALE, UNTESTABLE)
#: The verdicts with which a run passes.
OK_VERDICTS = (PASS, *CONFIRMED, UNTESTABLE)


def verdict(refuted, *, erratum=None):
    """The verdict of a decided check: refuted or not, with or without a recorded finding
    (an :class:`~stats.claims.measures.Erratum`, whose ``kind`` names it)."""
    if erratum is not None:
        return f"{erratum.kind} {'confirmed' if refuted else 'stale'}"
    return REJECTED if refuted else PASS
