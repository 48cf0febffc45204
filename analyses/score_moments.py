"""Scores at initialisation: variance vs width for four entry laws, the exact law against
histograms, and the correlated logit's mean under three scalings.

Sections "Why dot products grow with the width" and "The assumption behind the argument,
and when it fails".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.models.fixes import cosine_mean
from stats.training import qknorm_gain
from stats.models.distributions import score_distribution
from stats.models.laws import entry_law
from stats.models.sampling import CosineSim, ScoreSim
from stats.settings.fresh import (GAIN_KEYS, LAW_NAMES as LAWS, SCORE_FAST as FAST, SCORE_HIST as HIST, SCORE_NUMBERS,
                                  SCORE_QUICK_ROWS, SCORE_RHO as RHO, SCORE_ROWS, SCORE_ROWS_CAP, SCORE_WIDTHS as WIDTHS)

from ._common import rows_for, run, variance_row
from ._data import StudyWriter, read_table

STUDY = "score_moments"
GAIN = qknorm_gain(GAIN_KEYS)
FIGURES = {
    "score_variance": dict(
        width="column",
        caption="Variance of the raw score q.k and of the scaled score q.k/sqrt(d_k) against the key width, for four "
        "entry laws with unit variance (Monte Carlo, error bars 2 MCSE, mostly smaller than the markers). The raw "
        "variance follows the line d_k; the scaled one stays at 1.",
        claims=("raw-variance-width", "scaled-variance-width", "product-variance"),
    ),
    "score_histograms": dict(
        width="full",
        caption="Histograms of the scaled score for Gaussian entries against its exact law, a difference of two scaled "
        "chi-squares (line), at a small and a large width, independent (rho = 0) and correlated (rho = 0.6) keys. "
        "At d_k = 1 the density axis is logarithmic (the law has a log singularity at 0); at d_k = 512 it is linear.",
        claims=("exact-law",),
    ),
    "correlated_logits": dict(
        width="column",
        caption=f"Mean logit of a key correlated with its query (rho = {RHO}) against the width: it grows like "
        f"rho sqrt(d_k) under 1/sqrt(d_k), stays at rho under muP's 1/d_k, and under QK-norm levels off at rho g, "
        f"below the gain g = {GAIN:.3g} (exact curves; Monte Carlo markers with 2 MCSE bars, smaller than the markers).",
        claims=("correlated-mean-scaled", "mup-mean", "qknorm-bounded"),
    ),
}


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = {(d, law): ScoreSim(d, entries=entry_law(law), method=FAST[law]) for d in WIDTHS for law in LAWS}
    jobs = [(s, rows_for(s, quick=quick, numbers=SCORE_NUMBERS, cap=SCORE_ROWS_CAP)) for s in sims.values()]
    hist = {(d, r): ScoreSim(d, r, method="direct") for d, r in HIST}
    jobs += [(s, SCORE_QUICK_ROWS if quick else SCORE_ROWS) for s in hist.values()]
    corr = {d: ScoreSim(d, RHO, method="chi2") for d in WIDTHS}
    cos = {d: CosineSim(d, RHO, method="chi2") for d in WIDTHS}
    jobs += [(s, SCORE_QUICK_ROWS if quick else SCORE_ROWS) for s in list(corr.values()) + list(cos.values())]
    res = run(jobs, seed=seed, workers=workers, keep={s.key: ("score",) for s in hist.values()}, scheduler=scheduler)
    rows = []
    for (d, law), s in sims.items():
        summ = res[s.key].summary("score")
        for scale, c in (("raw", 1.0), ("scaled", d**-0.5)):
            rows.append(dict(d_k=d, law=entry_law(law).label, score=scale, **variance_row(summ, c)))
    w.table("variance", pd.DataFrame(rows))
    samples = []
    for (d, r), s in hist.items():
        x = res[s.key].rows("score") / np.sqrt(d)
        lo, hi = np.quantile(x, [0.0005, 0.9995])
        counts, edges = np.histogram(x, bins=80, range=(lo, hi))
        width = np.diff(edges)
        density = counts / (x.size * width)
        law = score_distribution(d, r)
        mid = 0.5 * (edges[1:] + edges[:-1])
        samples.append(
            pd.DataFrame(dict(d_k=d, rho=r, left=edges[:-1], right=edges[1:], density=density,
                              density_mcse=np.sqrt(counts) / (x.size * width), exact=law.pdf(mid), n=x.size))
        )
    w.table("histograms", pd.concat(samples, ignore_index=True))
    crow = []
    for d in WIDTHS:
        sc = res[corr[d].key].summary("score")
        from ._common import mean_row

        crow.append(dict(d_k=d, scaling="sqrt", exact=RHO * np.sqrt(d), **mean_row(sc, d**-0.5)))
        crow.append(dict(d_k=d, scaling="mup", exact=RHO, **mean_row(sc, 1.0 / d)))
        crow.append(dict(d_k=d, scaling="qknorm", exact=GAIN * cosine_mean(d, RHO), **mean_row(res[cos[d].key].summary("cosine"), GAIN)))
    w.table("correlated", pd.DataFrame(crow))
    return w.close()


def figures(out):
    from matplotlib.lines import Line2D

    from ._style import LAW_LABELS, SCALING_COLORS, SCALING_LABELS, figure, setup

    setup()
    figs = {}
    var = read_table(out, STUDY, "variance")
    fig, ax = figure("column", height=2.9)
    markers = dict(zip(sorted(var["law"].unique()), "osD^"))
    palette = dict(zip(sorted(var["law"].unique()), ("#0072b2", "#e69f00", "#009e73", "#cc79a7")))
    d = np.array(WIDTHS, dtype=float)
    ax.plot(d, d, color="0.45", lw=0.9, ls="--", zorder=1)
    ax.plot(d, np.ones_like(d), color="0.45", lw=0.9, ls=":", zorder=1)
    ax.text(d[-3], d[-3] * 2.2, r"$d_k$", fontsize=7, color="0.3", ha="center")
    ax.text(d[-1], 1.6, "1", fontsize=7, color="0.3", ha="right")
    dodge = dict(zip(sorted(var["law"].unique()), (0.86, 0.95, 1.05, 1.16)))  # side by side on the log axis
    for law, g in var.groupby("law"):
        for score, fill in (("raw", True), ("scaled", False)):
            h = g[g["score"] == score]
            ax.errorbar(h["d_k"] * dodge[law], h["variance"], yerr=2 * h["mcse"], fmt=markers[law], ms=3.2, lw=0.8, color=palette[law],
                        mfc=palette[law] if fill else "white", mew=0.8, ls="none")
    handles = [Line2D([], [], marker=markers[k], ls="none", color=palette[k], label=LAW_LABELS.get(k, k)) for k in palette]
    handles += [Line2D([], [], marker="o", ls="none", color="0.3", label=r"raw $q\cdot k$"),
                Line2D([], [], marker="o", ls="none", color="0.3", mfc="white", label=r"scaled $q\cdot k/\sqrt{d_k}$")]
    ax.legend(handles=handles, loc="upper left", ncol=1, frameon=True)
    ax.set(xscale="log", yscale="log", xlabel=r"key width $d_k$", ylabel="variance of the score")
    ax.set_xscale("log", base=2)
    figs["score_variance"] = fig

    hist = read_table(out, STUDY, "histograms")
    fig, axes = figure("full", height=2.0, ncols=4)
    for ax, ((dk, rho), g) in zip(axes, hist.groupby(["d_k", "rho"], sort=True)):
        mid = 0.5 * (g["left"] + g["right"])
        edges = np.append(g["left"].to_numpy(), g["right"].to_numpy()[-1])
        ax.stairs(g["density"].to_numpy(), edges, fill=True, color="#9ecae1", edgecolor="none", lw=0, label="simulated")
        ax.plot(mid, g["exact"], color="#08306b", lw=1.0, label="exact law")
        ax.set_title(rf"$d_k = {dk}$, $\rho = {rho:g}$")
        ax.set_xlabel(r"$q\cdot k/\sqrt{d_k}$")
        if dk == 1:
            ax.set_yscale("log")
    axes[0].set_ylabel("density")
    axes[2].legend(loc="upper left", frameon=True)  # an empty corner: panel 1's legend hid the peak
    figs["score_histograms"] = fig

    corr = read_table(out, STUDY, "correlated")
    fig, ax = figure("column", height=2.7)
    for sc, g in corr.groupby("scaling"):
        ax.plot(g["d_k"], g["exact"], color=SCALING_COLORS[sc], lw=1.0)
        ax.errorbar(g["d_k"], g["mean"], yerr=2 * g["mcse"], fmt="o", ms=2.8, color=SCALING_COLORS[sc], label=SCALING_LABELS[sc])
    ax.axhline(GAIN, color=SCALING_COLORS["qknorm"], lw=0.7, ls=":")
    ax.text(1.2, GAIN * 1.12, f"QK-norm gain g = {GAIN:.3g}", fontsize=6.5, color=SCALING_COLORS["qknorm"])
    ax.set(xscale="log", yscale="log", xlabel=r"key width $d_k$", ylabel=rf"mean logit, $\rho = {RHO}$")
    ax.set_xscale("log", base=2)
    ax.legend(loc="upper left", frameon=True)
    figs["correlated_logits"] = fig
    return figs
