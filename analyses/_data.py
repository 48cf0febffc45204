"""Tidy data on disk, with a manifest that makes truncation and corruption detectable.

Each study writes its tables under ``out/data/<study>/`` and then, last, a manifest
``out/data/<study>/manifest.json`` listing every table with its row count, columns and
SHA-256.  The manifest is the study's make target: a run killed before it is written
leaves no manifest, so make runs the study again; a table changed or truncated after it
is written fails :func:`read_table`'s check, and the figure is never drawn from it.
Beside the manifest, ``SHA256SUMS`` (``sha256sum -c`` format) lets ``make reports`` find
a corrupted table before deciding what is up to date, and regenerate the study.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from pathlib import Path

import pandas as pd

from stats.io import write_bytes, write_text

__all__ = ["DataError", "StudyWriter", "data_dir", "read_manifest", "read_table"]


class DataError(RuntimeError):
    """A study's data is missing, partial or corrupted."""


def data_dir(out, study):
    return Path(out) / "data" / study


class StudyWriter:
    """Collects a study's tables and writes them, then the manifest, atomically."""

    def __init__(self, out, study, *, seed, quick):
        self.dir = data_dir(out, study)
        self.study = study
        self.entries = {}
        self.meta = dict(study=study, seed=seed, quick=bool(quick))
        self.t0 = time.perf_counter()

    def table(self, name, frame):
        buf = io.StringIO()
        frame.to_csv(buf, index=False, lineterminator="\n")
        data = buf.getvalue().encode()
        write_bytes(data, self.dir / f"{name}.csv")
        self.entries[name] = dict(rows=int(len(frame)), columns=list(frame.columns), sha256=hashlib.sha256(data).hexdigest())
        return frame

    def close(self, **extra):
        manifest = dict(self.meta, tables=self.entries, seconds=round(time.perf_counter() - self.t0, 2), **extra)
        sums = "".join(f"{e['sha256']}  {name}.csv\n" for name, e in sorted(self.entries.items()))
        write_text(sums, self.dir / "SHA256SUMS")
        write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", self.dir / "manifest.json")
        return manifest


def read_manifest(out, study):
    path = data_dir(out, study) / "manifest.json"
    if not path.exists():
        raise DataError(f"no data for {study!r} under {path.parent} (run `python -m analyses {study}` first)")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON ({exc}); re-run the study") from None


def read_table(out, study, name):
    """A table of a study, checked against the manifest (checksum, row count, columns)."""
    manifest = read_manifest(out, study)
    entry = manifest["tables"].get(name)
    if entry is None:
        raise DataError(f"{study!r} has no table {name!r}; its manifest lists {sorted(manifest['tables'])}")
    path = data_dir(out, study) / f"{name}.csv"
    if not path.exists():
        raise DataError(f"{path} is missing; re-run the study")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise DataError(f"{path} does not match its manifest (truncated or changed); re-run the study")
    frame = pd.read_csv(io.BytesIO(data))
    if len(frame) != entry["rows"] or list(frame.columns) != entry["columns"]:
        raise DataError(f"{path} has the wrong shape for its manifest; re-run the study")
    return frame
