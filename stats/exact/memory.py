r"""What the dense and the tiled attention passes keep and hold in memory, measured.

The dense backward pass needs the weights ``A``, a :math:`T_q \times T_k` matrix per head,
so a framework keeps them from the forward pass; FlashAttention's tiled pass keeps only
``O`` and one number per query row, the log-sum-exp, and recomputes ``A`` tile by tile
(section "The backward pass of attention").  :func:`attention_memory` measures both with
:mod:`tracemalloc`, which numpy reports its array buffers to: the bytes each forward pass
returns for its backward (``kept``), and the peak of what each backward pass allocates
beyond its inputs (``peak``).  Byte counts of numpy's buffers do not depend on the values,
the machine or the BLAS, so the measurement is exact and repeatable; the small excess
over the buffers' sizes is the Python objects' own headers (a few hundred bytes).  The bytes
kept are counted from allocations made in the passes' own modules only, so other threads of
the process do not blur them.
"""

from __future__ import annotations

import os
import tracemalloc

import numpy as np

from .._validation import check_integer
from .attention import attention_backward, scaled_dot_product_attention
from .tiled import tiled_attention_backward, tiled_attention_forward

__all__ = ["attention_memory", "attention_memory_alone", "peak_memory"]

#: The largest side this function accepts: a dense pass at 8192 already holds about 2 GB.
MAX_SIDE = 8192


#: Allocations whose innermost Python frame is in the exact half's modules (other than this one): what
#: the passes themselves allocate, not what other threads of the process (a verify run's importer, a
#: pool's bookkeeping), or the measurement's own snapshots, allocate meanwhile.
_HERE = os.path.dirname(os.path.abspath(__file__))
_OWN = [tracemalloc.Filter(True, os.path.join(_HERE, "*")), tracemalloc.Filter(False, os.path.abspath(__file__))]


def peak_memory(fn):
    """Peak bytes traced (``tracemalloc``) while ``fn()`` runs: every allocation of the process,
    unfiltered (the backward-cost study and the bench time and measure whole passes with it)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _traced(fn):
    """``(result, bytes fn's own allocations still hold when it returns, peak bytes allocated during fn)``.

    The bytes kept are counted from snapshots filtered to allocations made in the passes' own
    modules (tracemalloc counts every thread's allocations); the peak is the process's, so another thread's allocations during
    ``fn`` would add to it (a few KiB in a verify run, against peaks of hundreds of KiB here)."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        snap = tracemalloc.take_snapshot().filter_traces(_OWN)  # before the peak is reset: its own bytes stay out
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
        kept = sum(d.size_diff for d in tracemalloc.take_snapshot().filter_traces(_OWN).compare_to(snap, "filename"))
        return result, kept, peak - before
    finally:
        if started:
            tracemalloc.stop()


def attention_memory(T_q, T_k, d_k, d_v, *, block_size=32, seed=0):
    r"""Bytes the dense and the tiled attention passes keep and hold, for one head in float64.

    Returns a dict: ``dense_kept`` (what the dense forward returns for its backward, ``O``
    and ``A``), ``tiled_kept`` (``O`` and ``lse``), ``dense_peak`` and ``tiled_peak`` (the
    most each backward pass allocates beyond its inputs), ``tiled_forward_peak`` (the most the
    tiled forward allocates: it never forms the score matrix), and the closed forms they are
    compared with, ``A_bytes`` :math:`= 8T_qT_k`, ``dense_kept_formula``
    :math:`= 8T_q(T_k + d_v)` and ``tiled_kept_formula`` :math:`= 8T_q(d_v + 1)`.
    Sides up to :data:`MAX_SIDE`; ``block_size`` the tiles' key count; ``seed`` the inputs'.
    It measures with :mod:`tracemalloc` (started and stopped here unless the caller traces
    already, in which case the caller's recorded peak is reset: tracemalloc keeps one peak);
    :func:`attention_memory_alone` measures in a process of its own.
    """
    T_q, T_k, d_k, d_v = (check_integer(v, name, maximum=MAX_SIDE)
                          for name, v in (("T_q", T_q), ("T_k", T_k), ("d_k", d_k), ("d_v", d_v)))
    block_size = check_integer(block_size, "block_size", maximum=MAX_SIDE)
    check_integer(seed, "seed", minimum=0, maximum=2**63 - 1, what="a non-negative integer")
    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal((T_q, d_k)), rng.standard_normal((T_k, d_k))
    V, dO = rng.standard_normal((T_k, d_v)), rng.standard_normal((T_q, d_v))
    # Each pass once on a small problem first: what a first call allocates and keeps (caches,
    # interned objects; 30-120 bytes, more on some runs than others) is then not counted as kept.
    small = (Q[:2], K[:3], V[:3])
    scaled_dot_product_attention(*small, return_weights=True)
    attention_backward(*small, dO[:2])
    o, lse = tiled_attention_forward(*small, block_size=block_size)
    tiled_attention_backward(*small, o, lse, dO[:2], block_size=block_size)
    (O, A), dense_kept, _ = _traced(lambda: scaled_dot_product_attention(Q, K, V, return_weights=True))
    _, _, dense_peak = _traced(lambda: attention_backward(Q, K, V, dO))
    del O, A
    (O, lse), tiled_kept, tiled_forward_peak = _traced(lambda: tiled_attention_forward(Q, K, V, block_size=block_size))
    _, _, tiled_peak = _traced(lambda: tiled_attention_backward(Q, K, V, O, lse, dO, block_size=block_size))
    return dict(dense_kept=dense_kept, tiled_kept=tiled_kept, dense_peak=dense_peak, tiled_peak=tiled_peak,
                tiled_forward_peak=tiled_forward_peak,
                A_bytes=8 * T_q * T_k, dense_kept_formula=8 * T_q * (T_k + d_v), tiled_kept_formula=8 * T_q * (d_v + 1))


def attention_memory_alone(sides, d_k, d_v, *, block_size=32, seed=0):
    """:func:`attention_memory` at each ``T`` in ``sides`` (``T_q = T_k = T``), measured in a fresh
    Python process with the garbage collector off: what the passes keep is then the same bytes on
    every run, whatever threads the calling process runs; their peaks vary by a few hundred bytes
    between runs (about 1e-4 of them here), which is why the claims quote them to two digits.
    Returns ``{T: dict}``."""
    import json
    import subprocess
    import sys

    if isinstance(sides, (str, bytes)) or not hasattr(sides, "__iter__") or getattr(sides, "ndim", 1) == 0:
        raise TypeError(f"sides must be a sequence of lengths T (e.g. (256, 1024)); got {sides!r}")
    sides = [check_integer(T, "each of sides", maximum=MAX_SIDE) for T in sides]
    if not sides:
        raise ValueError("sides must hold at least one length T")
    check_integer(seed, "seed", minimum=0, maximum=2**63 - 1, what="a non-negative integer")
    code = ("import gc, json, sys; gc.collect(); gc.disable()\n"
            "from stats.exact.memory import attention_memory\n"
            "T, d_k, d_v, b, seed = json.loads(sys.argv[1])\n"
            "print(json.dumps({t: attention_memory(t, t, d_k, d_v, block_size=b, seed=seed) for t in T}))")
    args = json.dumps([sides, check_integer(d_k, "d_k", maximum=MAX_SIDE), check_integer(d_v, "d_v", maximum=MAX_SIDE),
                       check_integer(block_size, "block_size", maximum=MAX_SIDE), seed])
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    r = subprocess.run([sys.executable, "-c", code, args], capture_output=True, text=True, env=env, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"the memory measurement's process failed: {r.stderr.strip().splitlines()[-1:]}")
    return {int(T): m for T, m in json.loads(r.stdout).items()}
