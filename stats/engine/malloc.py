r"""glibc's malloc set for block simulations: fixed, high mmap and trim thresholds.

By default glibc serves an allocation above its mmap threshold (128 KiB at first, raised
as large blocks are freed, up to 32 MiB) with a fresh mapping, and gives free memory at
the top of the heap back to the system once it passes the trim threshold (twice the mmap
threshold).  A simulation allocates and frees arrays of 1-16 MiB thousands of times, so
much of that memory keeps coming back as fresh pages, each one a page fault: a 35 s
verify selection took 1.2 million minor faults and 3 s of system time.  With both
thresholds fixed high the same run takes 44 thousand (0.3 s), and its peak resident
memory grows by 3%.  Worse is a trim threshold fixed low with the mmap threshold left
at 128 KiB (Dask's nanny sets ``MALLOC_TRIM_THRESHOLD_=65536``): every array over
128 KiB is then mapped afresh, 1.55x the time.

The command lines and the local pool's workers set the thresholds with
:func:`tune_malloc`; a Dask cluster's workers get them from their environment
(:data:`MALLOC_ENVIRON`, see ``docs/dask.md``).
"""

from __future__ import annotations

import ctypes
import os
import platform

__all__ = ["MALLOC_ENVIRON", "MMAP_THRESHOLD", "TRIM_THRESHOLD", "malloc_choice", "tune_malloc"]

MMAP_THRESHOLD = 32 << 20  # the largest glibc accepts on 64-bit (half its heap size)
TRIM_THRESHOLD = 1 << 30
# The same settings as environment variables, read by glibc when a process starts.
MALLOC_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD), "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD)}
# Variables that mean somebody already chose this process's malloc settings.
_GLIBC_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")
_SWITCH = "SDPA_MALLOC"
_CHOICES = ("tuned", "glibc")
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # from <malloc.h>
_TUNED = []


def malloc_choice():
    """``"tuned"`` or ``"glibc"``, from ``SDPA_MALLOC`` (default ``"tuned"``); anything else is a ValueError."""
    choice = os.environ.get(_SWITCH, "tuned")
    if choice not in _CHOICES:
        raise ValueError(f"{_SWITCH} must be one of {', '.join(_CHOICES)}, not {choice!r}")
    return choice


def tune_malloc():
    """Fix this process's glibc mmap and trim thresholds at :data:`MMAP_THRESHOLD` and
    :data:`TRIM_THRESHOLD`; returns whether they are now set that way.

    Does nothing where the C library is not glibc, where the environment already sets a
    glibc malloc variable (whoever set it chose), or with ``SDPA_MALLOC=glibc`` (glibc's
    defaults kept).  Processes forked afterwards inherit the setting.  Once set, glibc's
    adaptive thresholds stay off for the life of the process.
    """
    if _TUNED:
        return True
    if malloc_choice() == "glibc" or any(v in os.environ for v in _GLIBC_VARIABLES):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - glibc always has it
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    if mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1 or mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) != 1:
        return False  # pragma: no cover - both values are within glibc's limits
    _TUNED.append(True)
    return True
