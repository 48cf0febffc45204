"""Atomic file output: a reader never sees a half-written report, and a make target
interrupted mid-write is never left looking up to date."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_path", "locked_cache", "markdown_table", "write_bytes", "write_csv", "write_text"]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; move it into place only if the block succeeds.

    The file gets the permissions a plain ``open(path, "w")`` would (``0o666`` less the
    umask), not the ``0o600`` of :func:`tempfile.mkstemp`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_csv(frame, path):
    """Write a pandas DataFrame to ``path`` atomically (no index; floats in full precision)."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n")


def write_text(text, path):
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def write_bytes(data, path):
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)


def markdown_table(header, rows):
    """The lines of a Markdown table of ``header`` and ``rows`` (sequences of cells): each cell on one
    line, its pipes escaped, so that no value can break the table."""
    def cell(value):
        return " ".join(str(value).split()).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(c) for c in header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def locked_cache(lock_path, read, compute, store):
    """A result computed once per machine: ``read()`` (None when there is none yet) or, under an
    exclusive lock on ``lock_path``, ``read()`` again (another process may have computed it while
    this one waited) or ``compute()`` then ``store(result)`` (an OSError storing it is ignored: the
    result is still returned).  Where the lock cannot be made (a read-only place) it computes and
    keeps nothing."""
    found = read()
    if found is not None:
        return found
    lock_path = Path(lock_path)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(lock_path, "a")
    except OSError:
        return compute()
    with lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        found = read()
        if found is not None:
            return found
        result = compute()
        try:
            store(result)
        except OSError:
            pass
        return result
