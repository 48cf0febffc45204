"""The suite's cache on disk: where it is, what its entries depend on, and a memo of values that
are costly and deterministic.

:func:`cache_dir` is ``$SDPA_CACHE``, else ``reports/.cache`` of the checkout (whatever ``--out``
a build writes to), else the user's cache folder.  The rate pilots and searches keep their
results there (:mod:`stats.tuning`, :mod:`stats.lr_search`), keyed by :func:`source_digest`.

:func:`persistent` keeps the results of a deterministic function there too: the exact values
(quadrature) and the procedure's tail masses that the claims' design and evaluation ask for and
that the studies tabulate.  ``make reports`` runs the claims and the studies side by side, and
a draft after a build asks for the same values again; each was computed once per process
before, and is now computed once per change of the sources.  An entry is keyed by the
function, its arguments, the sources of every ``stats`` module (the claims and settings
included: a value may read a setting) and the versions of Python, numpy and scipy, so it can
only hold what calling the function again would give: no output depends on whether the cache
was warm.  Entries of other sources are removed when the first entry of these is written.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import platform
import shutil
from importlib import metadata
from pathlib import Path

from .io import locked_cache, write_bytes

__all__ = ["cache_dir", "hash_sources", "persistent", "source_digest"]

_PACKAGE = Path(__file__).resolve().parent
#: Argument types a persistent function may take: their ``repr`` is the key, so it must say the value.
_KEY_TYPES = (int, float, str, bool, type(None))


def cache_dir():
    """Where the cache is: ``$SDPA_CACHE``, else the checkout's ``reports/.cache``, else the
    user's cache folder."""
    if os.environ.get("SDPA_CACHE"):
        return Path(os.environ["SDPA_CACHE"])
    checkout = _PACKAGE.parent
    if (checkout / "pyproject.toml").is_file():
        return checkout / "reports" / ".cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sdpa-verify"


def hash_sources(h, *, skip=("claims", "settings")):
    """Feed ``h`` the sources of every ``stats`` module outside the folders ``skip`` (by default
    those below the claims and the settings: the code that draws a pilot or a search)."""
    for path in sorted(_PACKAGE.rglob("*.py")):
        rel = path.relative_to(_PACKAGE)
        if rel.parts[0] in skip:
            continue
        h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")


def source_digest(*, claims=False):
    """SHA-256 (hex) of the sources of every ``stats`` module below the claims and the settings:
    what a cached pilot or search depends on besides its own definition.  With ``claims`` True,
    of every module, the claims and settings too (what a calibration's numbers depend on)."""
    if not isinstance(claims, bool):
        raise TypeError(f"claims must be True or False; got {claims!r}")
    h = hashlib.sha256()
    hash_sources(h, skip=() if claims else ("claims", "settings"))
    return h.hexdigest()


@functools.cache
def _values_digest():
    """What every persistent value depends on besides its function and arguments (read once a process)."""
    versions = [platform.python_version()] + [_version(p) for p in ("numpy", "scipy")]
    return hashlib.sha256((source_digest(claims=True) + "\0" + "\0".join(versions)).encode()).hexdigest()


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def _check_key(args, name):
    for a in args:
        if isinstance(a, tuple):
            _check_key(a, name)
        elif not isinstance(a, _KEY_TYPES):
            raise TypeError(f"{name}: a persistent function's arguments are numbers, strings and tuples of them; "
                            f"got {type(a).__name__}")


def _remove_other_sources(folder, keep):
    """Remove the value folders of other sources than ``keep`` (their entries can never be read again)."""
    try:
        others = [p for p in folder.iterdir() if p.is_dir() and p.name != keep]
    except OSError:
        return
    for p in others:
        shutil.rmtree(p, ignore_errors=True)


def persistent(kind):
    """Decorate a deterministic function of positional arguments (numbers, strings and tuples of
    them) whose result pickles and is never None: its results are kept in memory and in
    ``cache_dir()/values`` (module docstring), through :func:`stats.io.locked_cache`.  ``kind``
    names the function's folder.  A cache that cannot be read or written is passed over: the
    value is computed and returned."""
    if not (isinstance(kind, str) and kind.replace("-", "").replace("_", "").isalnum()):
        raise ValueError(f"kind must be a non-empty name of letters, digits, - and _; got {kind!r}")

    def decorate(f):
        memo = {}
        name = f"{f.__module__}.{f.__qualname__}"

        @functools.wraps(f)
        def cached(*args):
            _check_key(args, name)
            said = repr(args)  # the key in memory too: 3 and 3.0 are one dict key, not one argument
            try:
                return memo[said]
            except KeyError:
                pass
            digest = _values_digest()
            top = cache_dir() / "values"
            key = hashlib.sha256(f"{name}\0{said}".encode()).hexdigest()[:32]
            path = top / digest[:24] / kind / f"{key}.pkl"

            def read():  # None when absent or unreadable: computed then
                try:
                    return pickle.loads(path.read_bytes())
                except Exception:  # noqa: BLE001
                    return None

            if not path.parent.is_dir():
                _remove_other_sources(top, digest[:24])
            # Under a lock of its own, so that processes asking at once (the claims and a study) compute it once.
            memo[said] = locked_cache(path.with_suffix(".lock"), read, lambda: f(*args),
                                      lambda value: write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), path))
            return memo[said]

        cached.cache_clear = memo.clear
        return cached

    return decorate
