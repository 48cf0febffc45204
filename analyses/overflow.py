"""Overflow of the naive softmax in float16, bfloat16 and float32, and the stable softmax that never fails.

Section "A vectorized implementation, and why stability is not optional": the naive
``exp(s)/sum exp(s)`` overflows once the largest score passes ln(largest number) --
ln 65504 ~ 11.09 in float16, about 88.7 in float32 and bfloat16 -- and subtracting the
row maximum removes the failure.  For each format we sweep the largest score of a row
of T = 32 scores and record whether each softmax is finite and its error against float64.

A row of many large scores fails earlier than its largest exponent: the naive
denominator, a sum of T exponentials, overflows first, and the weights silently become 0
(finite, but wrong).  We therefore record both the first non-finite result and the first
wrong one (max error above ``WRONG``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.exact.attention import naive_softmax, softmax
from stats.exact.formats import FORMATS, exp_overflow_threshold, float_format
from stats.settings.numerics import OVERFLOW_KEYS as T, OVERFLOW_POINTS, OVERFLOW_QUICK_POINTS

from ._data import StudyWriter, read_table

STUDY = "overflow"
WRONG = 1e-2  # an error this large means the weights are garbage, NaN or not
FIGURES = {
    "overflow": dict(
        width="full",
        caption="Largest error of the naive softmax exp(s)/sum exp(s) and of the stable one (the row maximum subtracted) "
        "against float64, for a row of 32 scores, as its largest score grows, in float16, bfloat16 and float32 "
        "(crosses: NaN or inf). The naive one fails where exp overflows (dashed line) -- or earlier, when the sum of "
        "the exponentials overflows first and the weights silently become 0; the stable one never does.",
        claims=("overflow-cutoffs", "stable-softmax-never-overflows"),
    ),
}


def _row(max_score, dtype):
    # A fixed row shape, largest entry max_score and the rest spread below it, in the target format.
    return (max_score * np.linspace(-1.0, 1.0, T)).astype(float_format(dtype))


def _near(x, dtype, k=3):
    """A few representable values either side of x in its own format."""
    dt = float_format(dtype)
    v = np.array(x, dtype=dt)
    vals = [float(v)]
    lo = hi = v
    for _ in range(k):
        lo = np.nextafter(lo, np.array(-np.inf, dtype=dt))
        hi = np.nextafter(hi, np.array(np.inf, dtype=dt))
        vals += [float(lo), float(hi)]
    return np.array(vals)


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    rows = []
    for dtype in FORMATS:
        grid = np.unique(np.concatenate([np.linspace(0.1, 100, OVERFLOW_QUICK_POINTS if quick else OVERFLOW_POINTS), _near(exp_overflow_threshold(dtype), dtype)]))
        for m in grid:
            s = _row(m, dtype)
            ref = softmax(s.astype(np.float64))
            for method, fn in (("naive", naive_softmax), ("stable", softmax)):
                with np.errstate(over="ignore", invalid="ignore"):
                    a = fn(s).astype(np.float64)
                finite = bool(np.all(np.isfinite(a)))
                err = float(np.max(np.abs(a - ref))) if finite else np.nan
                rows.append(dict(dtype=dtype, method=method, max_score=float(s.astype(np.float64).max()), finite=finite, max_abs_error=err))
    data = w.table("sweep", pd.DataFrame(rows))
    w.table("thresholds", thresholds(data))
    return w.close()


def thresholds(data):
    """Where each method first fails, beside the threshold computed from the format."""
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
            )
        )
    return pd.DataFrame(rows)


def figures(out):
    from ._style import figure, setup

    setup()
    data = read_table(out, STUDY, "sweep")
    thr = read_table(out, STUDY, "thresholds").set_index(["dtype", "method"])
    fig, axes = figure("full", height=2.5, ncols=3, sharey=True)
    floor = 1e-11
    for ax, dtype in zip(axes, FORMATS):
        g = data[data["dtype"] == dtype]
        t = float(exp_overflow_threshold(dtype))
        hi = 16 if dtype == "float16" else 100
        for method, color in (("stable", "#0072b2"), ("naive", "#d55e00")):
            h = g[(g["method"] == method) & (g["max_score"] <= hi)]
            ok = h[h["finite"]]
            # The stable curve on top and thinner: where both are exact they coincide.
            ax.plot(ok["max_score"], np.maximum(ok["max_abs_error"], floor), color=color, lw=0.8 if method == "stable" else 1.4,
                    zorder=3 if method == "stable" else 2, label=f"{method} softmax")
            bad = h[~h["finite"]]
            if len(bad):
                ax.scatter(bad["max_score"], np.full(len(bad), 1.0), color=color, marker="x", s=8, lw=0.7, label=f"{method}: NaN or inf")
        ax.axvline(t, color="0.3", ls="--", lw=0.9)
        y = 1e-4 if dtype == "float32" else 1e-7  # clear of the error curve, which sits lower in float32
        ax.annotate(f"exp overflows\nfrom {t:.5g}", (t, y), xytext=(-4, 0), textcoords="offset points", fontsize=6.5, ha="right")
        first_wrong = thr.loc[(dtype, "naive"), "first_wrong"]
        if first_wrong < 0.99 * thr.loc[(dtype, "naive"), "first_nonfinite"]:
            ax.annotate(f"sum overflows:\nweights 0 from {first_wrong:.4g}", (first_wrong, 0.02), xytext=(-4, 0),
                        textcoords="offset points", fontsize=6.5, ha="right", color="#d55e00")
        ax.set(yscale="log", xlim=(0, hi), ylim=(floor / 3, 10), title=f"{dtype}, a row of {T} scores", xlabel="largest score in the row")
    axes[0].set_ylabel("largest error against float64\n(crosses: NaN or inf, drawn at 1)")
    axes[0].legend(loc="lower left", frameon=True)
    return {"overflow": fig}
