"""Block-wise in-place arithmetic on a batch of runs, and the checks of a learning rate.

A batch of runs holds each parameter as an array whose first axis is the run.  An update
reads and writes these arrays once each, block by block of about :data:`BLOCK_ENTRIES`
entries, so that its dozen operations run on blocks that stay in cache.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_real_array, check_finite

__all__ = [
    "BLOCK_ENTRIES",
    "DTYPES",
    "apply_step",
    "block",
    "block_width",
    "broadcasts",
    "check_dtype",
    "column_blocks",
    "finite_array",
    "per_row",
    "positive_lr",
]

#: Entries of one cache block of an update (1 MiB of float64).
BLOCK_ENTRIES = 1 << 17
#: The precisions a run trains in: its parameters, episodes, forward and backward pass and optimiser state.
DTYPES = ("float32", "float64")


def check_dtype(dtype):
    """``dtype`` (one of :data:`DTYPES`, by name) as a numpy dtype, else a ValueError naming the allowed ones."""
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}; got {dtype!r}")
    return np.dtype(dtype)


def block_width(n):
    """Columns of one block of an ``(n, entries)`` array."""
    return max(1, BLOCK_ENTRIES // n)


def column_blocks(a):
    """Slices of the columns of an ``(n, entries)`` array, about :data:`BLOCK_ENTRIES` entries a block."""
    width = block_width(a.shape[0])
    return (slice(lo, lo + width) for lo in range(0, a.shape[1], width))


def block(a, cols):
    """Columns ``cols`` of ``a``; all of it when ``a`` is one column (a per-run factor)."""
    return a if a.shape[1] == 1 else a[:, cols]


def broadcasts(lr, shape):
    """``lr`` when it broadcasts to ``shape`` without enlarging it; else a ValueError naming it."""
    try:
        fits = np.broadcast_shapes(np.shape(lr), shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"lr must be one number or broadcast against g's shape {tuple(shape)}; got shape {np.shape(lr)}")
    return lr


def per_row(lr, shape, n):
    """``lr`` (broadcastable to ``shape``) as an ``(n, 1)`` column, or as ``(n, entries)`` when it varies within a run."""
    lr = np.asarray(lr, dtype=np.float64)
    if lr.ndim == 0 or lr.size == 1:
        return lr.reshape(1, 1)
    if lr.ndim == len(shape) and lr.shape[0] == n and all(k == 1 for k in lr.shape[1:]):
        return lr.reshape(-1, 1)
    return np.broadcast_to(lr, shape).reshape(n, -1)


def apply_step(w, step, out, *, scale=None):
    """``out = w + step`` (``w + scale * step`` when ``scale`` is given), block by block, and
    each run's smallest and largest new entry (NaN when one is NaN)."""
    n = w.shape[0]
    w2, s2, o2 = (a.reshape(n, -1) for a in (w, step, out))
    # The scale in w's precision: a float64 factor would run a float32 update in float64 (the same bits in float64).
    scale = None if scale is None else per_row(scale, w.shape, n).astype(w.dtype, copy=False)
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    for cols in column_blocks(w2):
        ob = o2[:, cols]
        if scale is None:
            np.add(w2[:, cols], s2[:, cols], out=ob)
        else:
            np.multiply(s2[:, cols], block(scale, cols), out=ob)
            np.add(w2[:, cols], ob, out=ob)
        np.minimum(lo, ob.min(axis=1), out=lo)
        np.maximum(hi, ob.max(axis=1), out=hi)
    return out, lo, hi


def finite_array(x, name):
    """``x`` as a float64 array (float32 kept as it is: a float32 run's arrays) with every entry
    finite, else a TypeError or ValueError naming it."""
    arr = as_real_array(x, name)
    return check_finite(arr if arr.dtype == np.float32 else arr.astype(np.float64, copy=False), name)


def positive_lr(lr, ndim):
    """``lr`` as a float64 array of at most ``ndim`` dimensions, every entry finite and > 0."""
    if isinstance(lr, (bool, str, bytes)):
        raise TypeError(f"lr must be a positive number or an array of them; got {lr!r}")
    try:
        arr = np.asarray(lr, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"lr must be a positive number or an array of them; got {lr!r}") from None
    if arr.ndim > ndim or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"lr must be finite and > 0 (a number, or one per run); got {lr!r}")
    return arr
