"""Float16/float32 overflow of the naive softmax, and the stable softmax that never fails.

Section "A vectorized implementation, and why stability is not optional": the naive
``exp(s)/sum exp(s)`` overflows in float16 once the largest score passes ln 65504 ~ 11.09
(a score of 12 already fails) and in float32 past ~88.72; subtracting the row maximum
removes the failure.  For each precision we sweep the largest score of a row of T = 32
WRONG = 1e-2  # an error this large means the weights are garbage, NaN or not
scores and record whether each softmax is finite and its error against float64.

A row of many large scores fails earlier than its largest exponent: the naive
denominator, a sum of T exponentials, overflows first, and the weights silently become 0
(finite, but wrong).  We therefore record both the first non-finite result and the first
wrong one (max error above ``WRONG``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stats import exp_overflow_threshold, naive_softmax, softmax
from stats._io import write_csv

DTYPES = ("float16", "float32")
T = 32
WRONG = 1e-2  # an error this large means the weights are garbage, NaN or not
DATA = "overflow.csv"
THRESHOLDS = "overflow_thresholds.csv"


def _row(max_score, dtype):
    # A fixed row shape, largest entry max_score and the rest spread below it, in the target precision.
    return (max_score * np.linspace(-1.0, 1.0, T)).astype(dtype)


def simulate(out):
    """Sweep the largest score from 0 to 100 and write tidy results to ``out/data``."""
    out = Path(out)
    grid = np.unique(np.concatenate([np.linspace(0.1, 100, 2000)] + [_near(exp_overflow_threshold(d)) for d in DTYPES]))
    rows = []
    for dtype in DTYPES:
        for m in grid:
            s = _row(m, dtype)
            ref = softmax(s.astype(np.float64))
            for method, fn in (("naive", naive_softmax), ("stable", softmax)):
                a = fn(s)
                finite = bool(np.all(np.isfinite(a)))
                err = float(np.max(np.abs(a.astype(np.float64) - ref))) if finite else np.nan
                rows.append(dict(dtype=dtype, method=method, max_score=float(s.max()), finite=finite, max_abs_error=err))
    data = pd.DataFrame(rows)
    write_csv(data, out / "data" / DATA)
    write_csv(thresholds(data), out / "data" / THRESHOLDS)
    return data


def _near(x, k=3):
    """A few representable values either side of x in its own precision."""
    vals, lo, hi = [x], x, x
    for _ in range(k):
        lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
        vals += [lo, hi]
    return np.array(vals, dtype=np.float64)


def thresholds(data):
    """Where each method first fails, beside the threshold computed from ``np.finfo``."""
    rows = []
    for (dtype, method), g in data.groupby(["dtype", "method"], sort=False):
        nonfinite = g.loc[~g["finite"], "max_score"]
        wrong = g.loc[~g["finite"] | (g["max_abs_error"] > WRONG), "max_score"]
        rows.append(
            dict(
                dtype=dtype,
                method=method,
                first_nonfinite=float(nonfinite.min()) if len(nonfinite) else np.nan,
                first_wrong=float(wrong.min()) if len(wrong) else np.nan,
                exp_overflow_threshold=float(exp_overflow_threshold(dtype)),
                log_finfo_max=float(np.log(np.float64(np.finfo(dtype).max))),
            )
        )
    return pd.DataFrame(rows)


def render(out):
    """Draw ``overflow.png``/``.pdf`` from the data written by :func:`simulate`."""
    from matplotlib import pyplot as plt

    from ._style import save, setup

    out = Path(out)
    data = pd.read_csv(out / "data" / DATA)
    setup()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    floor = 1e-11
    for ax, dtype in zip(axes, DTYPES):
        g = data[data["dtype"] == dtype]
        thr = exp_overflow_threshold(dtype)
        hi = 16 if dtype == "float16" else 100
        for method, color in (("stable", "tab:blue"), ("naive", "tab:red")):
            h = g[(g["method"] == method) & (g["max_score"] <= hi)]
            ok = h[h["finite"]]
            ax.plot(ok["max_score"], np.maximum(ok["max_abs_error"], floor), color=color, lw=1.4, label=f"{method} softmax")
            bad = h[~h["finite"]]
            if len(bad):
                ax.scatter(bad["max_score"], np.full(len(bad), 1.0), color=color, marker="x", s=10, lw=0.8, label=f"{method}: NaN/inf")
        ax.axvline(thr, color="0.3", ls="--", lw=1)
        ax.annotate(f"exp(x) = inf\nfrom x = {float(thr):.5g}", (float(thr), 3e-3), xytext=(4, 0), textcoords="offset points", fontsize=8, ha="left")
        t = thresholds(g).set_index("method").loc["naive"]
        if t["first_wrong"] < 0.99 * t["first_nonfinite"]:  # the denominator overflowed well before exp(max)
            ax.annotate(
                f"sum of exps = inf:\nweights 0 from {t['first_wrong']:.4g}",
                (t["first_wrong"], 0.3),
                xytext=(-6, 0),
                textcoords="offset points",
                fontsize=8,
                ha="right",
                color="tab:red",
            )
        ax.set(yscale="log", xlim=(0, hi), ylim=(floor / 3, 10), title=f"{dtype}: T = {T} scores", xlabel="largest score in the row")
    axes[0].set_ylabel("max |error| vs float64\n(x: NaN or inf, drawn at 1)")
    axes[0].legend(loc="lower right", fontsize=8, frameon=True)
    fig.suptitle("Naive softmax overflows; subtracting the row maximum never does", fontsize=11)
    fig.tight_layout()
    return save(fig, out, "overflow")
