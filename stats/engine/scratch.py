"""Scratch buffers that outlive a block.

A sampler fills megabytes of random numbers per block into temporaries.  Allocated
afresh, such a buffer is handed back to the operating system when it is freed (glibc
maps large allocations, and trims the heap top beyond 2x that threshold), so every block
pays a page fault per 4 KiB page on first touch: measured on these machines, 16 MiB of
fresh buffers cost about 9 ms a block, 15% of the direct Gaussian sampler's time.

:func:`scratch` lends a buffer from a small per-thread pool and takes it back when the
``with`` block ends.  A buffer is lent to one borrower at a time, so nested or interleaved
borrowers (two chunk generators advanced in turn) each get their own; the contents of a
lent buffer are undefined, as with :func:`numpy.empty`.
"""

from __future__ import annotations

import contextlib
import math
import threading

import numpy as np

__all__ = ["scratch"]

MAX_POOLED_BYTES = 1 << 27  # per thread: beyond this a returned buffer is dropped, not kept
_LOCAL = threading.local()


def _free_list():
    free = getattr(_LOCAL, "free", None)
    if free is None:
        free = _LOCAL.free = []
    return free


@contextlib.contextmanager
def scratch(shape, dtype=np.float64):
    """A C-contiguous array of ``shape`` and ``dtype`` with undefined contents, reused
    across calls in this thread; valid only inside the ``with`` block."""
    dtype = np.dtype(dtype)
    shape = tuple(int(k) for k in shape)
    nbytes = math.prod(shape) * dtype.itemsize
    free = _free_list()
    # The smallest free buffer that is large enough: a big one stays for a big request.
    # (By position, never list.remove: that compares arrays elementwise.)
    fits = [i for i, b in enumerate(free) if b.nbytes >= nbytes]
    if fits:
        buf = free.pop(min(fits, key=lambda i: free[i].nbytes))
    else:
        buf = np.empty(max(nbytes, 1), dtype=np.uint8)
    try:
        yield buf[:nbytes].view(dtype).reshape(shape)
    finally:
        free.append(buf)
        while sum(b.nbytes for b in free) > MAX_POOLED_BYTES and len(free) > 1:
            free.pop(min(range(len(free)), key=lambda i: free[i].nbytes))
