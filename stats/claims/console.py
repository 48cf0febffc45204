"""The console report of a ``verify`` run, and the run's provenance record."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import subprocess
import sys
from pathlib import Path

from .verdicts import CONFIRMED, ERROR, REJECTED, STALE, UNTESTABLE

# pandas is imported where it is used: ``import stats`` stays at numpy and scipy.special
# (see stats/models/__init__.py).

__all__ = ["print_report", "provenance", "table_text"]


def _fmt(x, digits=4):
    import pandas as pd

    return "" if pd.isna(x) else f"{x:.{digits}g}"


def table_text(rows):
    import pandas as pd

    shown = pd.DataFrame(
        {
            "claim": rows["claim"],
            "check": rows["check"].str.slice(0, 48),
            "expected": rows["expected"].map(_fmt),
            "estimate ± mcse": [
                _fmt(e) if pd.isna(s) else f"{_fmt(e)} ± {_fmt(s, 2)}" for e, s in zip(rows["estimate"], rows["mcse"])
            ],
            "p_value": rows["p_value"].map(lambda p: _fmt(p, 3)),
            "detectable": rows["detectable"].map(lambda d: _fmt(d, 3)),
            "n": rows["n"],
            "verdict": rows["verdict"],
            "finding": [f"{f} ({g})" if isinstance(g, str) and g else f for f, g in zip(rows["finding"], rows["grade"])],
        }
    )
    return shown.to_string(index=False)


def print_report(table, *, out=sys.stdout, full=False):
    """Rejections and errors first, then the recorded errata and caveats and the untestable
    checks; every row with ``full``."""
    bad = table[table["verdict"].isin([REJECTED, ERROR, *STALE])]
    if full:
        main = table[~table["verdict"].isin([UNTESTABLE, *CONFIRMED, *STALE])]
        print(table_text(main), file=out)
    else:
        per_claim = table.groupby("claim", sort=False)["verdict"].agg(lambda v: ", ".join(f"{k} {n}" for k, n in v.value_counts().items()))
        print("\n".join(f"  {c:<34} {v}" for c, v in per_claim.items()), file=out)
    if len(bad):
        print("\nFAILED checks:", file=out)
        print(table_text(bad), file=out)
        for _, r in bad.iterrows():
            print(f"  {r['claim']} [{r['check']}]: {r['note']}", file=out)
    for kind, heading in (("erratum", "Errata of the text (false as written, graded; their corrected values are tested too)"),
                          ("caveat", "Caveats (true as written; the evidence qualifies a consequence the text draws)")):
        recorded = table[table["verdict"].isin([f"{kind} confirmed", f"{kind} stale"])]
        if len(recorded):
            print(f"\n{heading}:", file=out)
            print(table_text(recorded), file=out)
            for _, r in recorded.iterrows():
                print(f"  {r['claim']} [{r['check']}]: {r['note']}", file=out)
    untestable = table[table["verdict"] == UNTESTABLE]
    if len(untestable):
        print("\nUntestable here (no calibrated test exists, or a dependency is missing):", file=out)
        for _, r in untestable.iterrows():
            print(f"  {r['claim']} [{r['check']}]: {r['note']}", file=out)


def _git_commit():
    root = Path(__file__).resolve().parents[2]
    try:
        r = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        commit = r.stdout.strip() if r.returncode == 0 else "unknown"
        d = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=10)
        if d.returncode == 0 and d.stdout.strip():
            commit += "+modified"
        return commit
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def provenance(**run):
    """The run's record: its options, the code's commit and the packages' versions."""
    import numpy
    import pandas as pd
    import scipy

    versions = {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__, "pandas": pd.__version__}
    try:  # the installed version, read without importing PyTorch (~1 s)
        versions["torch"] = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        versions["torch"] = None
    return {**run, "git_commit": _git_commit(), "versions": versions, "machine": f"{platform.machine()}, {platform.system()}"}


def provenance_json(record):
    return json.dumps(record, indent=2, sort_keys=True, default=str) + "\n"
