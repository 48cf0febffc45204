"""The command lines' shared helpers: one set of argument checks for ``python -m stats``,
``python -m analyses`` and ``python -m benchmarks``.

A usage error is one line on stderr and exit status 2, before any simulation.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from .engine.malloc import tune_malloc

__all__ = ["Parser", "count", "dask_client", "output_files", "positive_float", "seed", "tune_malloc_or_exit", "writable_dir"]


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr (``PROG: error: ...``)
    and exit status 2, without the usage text."""

    def error(self, message):  # one line on stderr, exit 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def tune_malloc_or_exit(parser):
    """Set this command's glibc malloc (stats/engine/malloc.py): each command line owns its
    process and its pool's; a bad ``SDPA_MALLOC`` is one line on stderr and exit 2."""
    try:
        tune_malloc()
    except ValueError as exc:
        parser.error(str(exc))


def positive_float(text):
    """An argument ``type``: a positive finite number."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return v


def count(text):
    """An argument ``type``: a positive integer (workers, seeds)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def seed(text):
    """An argument ``type``: a root seed, a non-negative integer."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return v


def writable_dir(path, parser):
    """``path`` as a directory this process can write into (created if missing), or a usage error."""
    if not str(path).strip():
        parser.error("--out is empty; give a folder (e.g. reports)")
    p = Path(path)
    if p.exists() and not p.is_dir():
        parser.error(f"--out {path!r} is a file, not a folder")
    probe = p
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        parser.error(f"--out {path!r} cannot be written ({probe} is not a writable folder)")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"--out {path!r} cannot be created ({exc.strerror or exc})")
    return p


def output_files(folder, names, parser):
    """``folder / name`` for each of ``names``, or a usage error when one exists and is not a
    plain file (a folder of that name): refused before any simulation, not after it."""
    paths = [Path(folder) / n for n in names]
    for p in paths:
        if (p.exists() or p.is_symlink()) and not p.is_file():
            parser.error(f"--out: {p} exists and is not a file; remove it or give another --out")
    return paths


def dask_client(address, parser):
    """A ``distributed.Client`` connected to the scheduler at ``address`` (None: None), or a usage
    error, one line, when the extra is missing or nothing answers there within 10 s."""
    if address is None:
        return None
    try:
        from distributed import Client
    except ImportError:
        parser.error("--scheduler needs the dask extra: pip install -e '.[dask]'")
    if not address.strip():
        parser.error("--scheduler is empty; give the scheduler's address, e.g. tcp://10.0.0.5:8786")
    try:
        return Client(address, timeout=10)
    except (OSError, ValueError, TypeError, TimeoutError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        parser.error(f"--scheduler {address!r}: cannot connect ({reason})")
