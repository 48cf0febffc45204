r"""Matrix-product FLOPs, counted from the shapes the code actually multiplies.

Every matrix product in :mod:`stats.exact.attention` goes through :func:`matmul`.  Inside
``with count_matmuls() as log:`` each call appends ``(phase, a.shape, b.shape, flops)``
to ``log``, with ``flops = 2 * (batch) * m * k * n`` for an ``(..., m, k) @ (..., k, n)``
product (one multiply and one add per term).  ``phase`` is ``"forward"`` or
``"backward"``, set by :func:`phase`.  Section "The backward pass of attention" says the
backward pass does four products each the size of one of the forward's two; the claim
``backward-flops`` counts them.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

__all__ = ["attention_matmul_flops", "count_matmuls", "matmul", "phase"]

_LOGS: list[list] = []
_PHASE = ["forward"]


def matmul(a, b):
    """``a @ b``, logged when a :func:`count_matmuls` block is open."""
    out = np.matmul(a, b)
    if _LOGS:
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = math.prod(out.shape[:-2])
        entry = (_PHASE[-1], tuple(a.shape), tuple(b.shape), 2 * batch * m * k * n)
        for log in _LOGS:
            log.append(entry)
    return out


@contextlib.contextmanager
def count_matmuls():
    """Collect ``(phase, a_shape, b_shape, flops)`` for every :func:`matmul` in the block."""
    log = []
    _LOGS.append(log)
    try:
        yield log
    finally:
        _LOGS.remove(log)


@contextlib.contextmanager
def phase(name):
    """Label the products made inside the block (``"forward"`` or ``"backward"``)."""
    _PHASE.append(name)
    try:
        yield
    finally:
        _PHASE.pop()


def attention_matmul_flops(log):
    """``{"forward": flops, "backward": flops}`` from a :func:`count_matmuls` log."""
    totals = {"forward": 0, "backward": 0}
    for ph, _, _, flops in log:
        totals[ph] = totals.get(ph, 0) + flops
    return totals
