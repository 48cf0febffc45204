"""Beyond the text: how saturation approaches its limits as the width grows.

Exact values (quadrature) of sqrt(d_k) (1 - E max a) and sqrt(d_k) E[1 - ||a||^2]
without scaling, which tend to the constants C_max = f_G(0) ln 2 and C_tr = f_G(0), and
of the scaled head's width effect d_k (E max a - its limit), which tends to B.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.models.asymptotics import saturation_asymptotics
from stats.settings.saturation import ASYMPTOTIC_KEYS as KEYS, ASYMPTOTIC_STUDY_WIDTHS as WIDTHS

from ._data import StudyWriter, read_table
from .saturation import exact_rows

STUDY = "asymptotics"
FIGURES = {
    "asymptotics": dict(
        width="full",
        caption="How a fresh head approaches its limits (exact values, markers; derived asymptotes, lines). Left and "
        "middle, without scaling: sqrt(d_k) (1 - E max a) tends to f_G(0) ln 2 and sqrt(d_k) E[1 - ||a||^2] to f_G(0), "
        "f_G(0) the density at zero of the gap between the two best of T normal scores (dashed), with the 1/d_k "
        "correction for the largest weight (solid); the trace has none. Right, with 1/sqrt(d_k): d_k times the largest "
        "weight's distance from its limit tends to B = (f''(1) - f'(1))/4, the chi law of ||q||/sqrt(d_k) at work.",
        claims=("asymptotic-unscaled-law", "asymptotic-scaled-law", "asymptotic-laws-vs-mc"),
    ),
}


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    widths = WIDTHS[::2] if quick else WIDTHS
    points = [(d, T, sc) for T in KEYS for sc in ("none", "sqrt") for d in widths]
    w.table("exact", pd.DataFrame(exact_rows(points, workers)))
    w.table("constants", pd.DataFrame([saturation_asymptotics(T) for T in KEYS]))
    return w.close()


def figures(out):
    from ._style import figure, setup

    setup()
    ex = read_table(out, STUDY, "exact")
    k = read_table(out, STUDY, "constants").set_index("n_keys")
    fig, axes = figure("full", height=2.5, ncols=3)
    colors = dict(zip(KEYS, ("#0072b2", "#009e73", "#e69f00", "#cc79a7")))
    d = np.logspace(np.log10(4), np.log10(65536), 200)
    for T in KEYS:
        c = colors[T]
        g = ex[(ex["n_keys"] == T) & (ex["scaling"] == "none")]
        s = g["d_k"] ** 0.5
        axes[0].plot(g["d_k"], s * (1 - g["max_weight"]), "o", ms=2.8, color=c, label=f"T = {T}")
        axes[0].plot(d, k.loc[T, "C_max"] + k.loc[T, "D_max"] / d**0.5, "-", lw=0.9, color=c)
        axes[0].axhline(k.loc[T, "C_max"], ls="--", lw=0.7, color=c)
        axes[1].plot(g["d_k"], s * g["trace"], "o", ms=2.8, color=c)
        axes[1].axhline(k.loc[T, "C_trace"], ls="--", lw=0.8, color=c)
        h = ex[(ex["n_keys"] == T) & (ex["scaling"] == "sqrt")]
        axes[2].plot(h["d_k"], h["d_k"] * (h["max_weight"] - k.loc[T, "limit_max_weight"]), "o", ms=2.8, color=c)
        axes[2].axhline(k.loc[T, "B_max_weight"], ls="--", lw=0.8, color=c)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"key width $d_k$")
    axes[0].set_ylabel(r"$\sqrt{d_k}\,(1 - E\max_j a_j)$, unscaled")
    axes[1].set_ylabel(r"$\sqrt{d_k}\,E[1 - \|a\|^2]$, unscaled")
    axes[2].set_ylabel(r"$d_k\,(E\max_j a_j - \mathrm{limit})$, $1/\sqrt{d_k}$")
    # In the empty band of the right panel, clear of every curve (one colour per T in all panels).
    axes[2].legend(*axes[0].get_legend_handles_labels(), loc="lower right", bbox_to_anchor=(1.0, 0.14), ncol=2, frameon=True)
    return {"asymptotics": fig}
