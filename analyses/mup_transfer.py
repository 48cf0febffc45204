"""Does the best learning rate transfer across widths?  muP against the standard parameterisation, for one head.

The section's paragraph on muP (under "The assumption behind the argument, and when it
fails"): 1/d_k keeps a trained model's logits stable across widths, "which is what makes
hyperparameters transfer".  Yang et al. (2022)'s Figure 1 for one head: the final loss
against the Adam learning rate at each width d_k = d_model (16 to 512), for the standard
parameterisation (1/sqrt(d_k), one rate), muP's 1/d_k with one rate, and muP as Yang et
al. prescribe it for Adam (1/d_k and the rate of the hidden weights W_Q, W_K times
d_0/d_model, base width d_0 = 16).  Of their other rules none applies to this head: its
input is the data (no embedding layer), it has no trained read-out (W_V is fixed: no
output multiplier, no zero read-out), and its hidden weights keep the variance-preserving
initialisation that muP also prescribes.  Each row of a cell is one seed trained at every
grid rate on the same draws (:class:`stats.training.LRSweepSim`), so the seed's own
best rate is a per-seed outcome: its mean, with an MCSE from the replicates, locates the
minimum, and its slope against log2 d_k is the drift.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.training import LRSweepSim
from stats.settings.fixes import (MUP_BASE, MUP_STEPS, MUP_STUDY_GRIDS as GRIDS, MUP_STUDY_QUICK_RUNS as QUICK_RUNS,
                                  MUP_STUDY_QUICK_WIDTHS as QUICK_WIDTHS, MUP_STUDY_RUNS as RUNS, MUP_STUDY_WIDE_RUNS as WIDE_RUNS,
                                  MUP_STUDY_WIDTHS as WIDTHS, PARAMETERISATIONS)

from ._common import drift, mean_row, run
from ._data import StudyWriter, read_table

STUDY = "mup_transfer"
NAMES = {"sqrt/None": "standard", "mup/None": "1/d_k, one rate", f"mup/{MUP_BASE}": "muP (rate d_0/d_model)"}
FIGURES = {
    "mup_transfer": dict(
        width="full",
        caption=f"Probe loss after {MUP_STEPS} Adam steps against the learning rate, at widths d_k = d_model from 16 to 512 "
        "(colour), for the standard parameterisation (left), muP's 1/d_k with one learning rate (middle) and muP as Yang "
        "et al. prescribe it for Adam, with the rate of W_Q and W_K times 16/d_model (right), each at five rates around "
        "its best. Means over 8 seeds (3 from d_k = 256), bands 2 MCSE. The standard head's minimum moves to smaller rates "
        "as the width grows; with 1/d_k and one rate it moves little, and not at all from d_k = 128 up; muP's "
        "width-scaled rate moves it up.",
        claims=("training-mup-transfer",),
    ),
    "mup_best_rate": dict(
        width="full",
        caption="Left: each seed's best grid learning rate (log10; mean over seeds, bars 2 MCSE) against the width, with "
        "its least-squares drift in decades per doubling of d_k (legend). At d_k = 512 muP's best rate is its grid's "
        "largest (1) in most seeds, so its minimum may lie beyond the grid and its drift is a lower bound. Right: the "
        "mean target logit after training at each parameterisation's best grid rate for that width (bars 2 MCSE): it "
        "moves with which grid rate is best, with no clean trend for the standard head and full muP; under 1/d_k with "
        "one rate, whose best rate stays put from d_k = 128 up, it rises slowly with the width there.",
        claims=("training-mup-transfer",),
    ),
}


def cells(*, quick):
    """Every (parameterisation, width) sweep of the study."""
    return [LRSweepSim(d, GRIDS[f"{scaling}/{base}"], scaling, "adam", MUP_STEPS, mup_base=base)
            for _, scaling, base in PARAMETERISATIONS for d in (QUICK_WIDTHS if quick else WIDTHS)]


def runs(sim, *, quick):
    """Seeds a cell trains: 8, 3 from d_k = 256 (each seed trains its 5 grid rates), 2 in a draft."""
    return QUICK_RUNS if quick else (WIDE_RUNS if sim.d_k >= 256 else RUNS)


def _name(sim):
    return NAMES[f"{sim.scaling}/{sim.mup_base}"]


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = cells(quick=quick)
    res = run([(s, runs(s, quick=quick)) for s in sims], seed=seed, workers=workers, desc=STUDY, scheduler=scheduler)
    rows = [dict(parameterisation=_name(s), d_k=s.d_k, statistic=st, **mean_row(res[s.key].summary(st)))
            for s in sims for st in s.statistics]
    cells_table = pd.DataFrame(rows)
    w.table("cells", cells_table)
    w.table("grid", pd.DataFrame([dict(parameterisation=NAMES[key], point=i, lr=lr)
                                  for key, grid in GRIDS.items() for i, lr in enumerate(grid)]))
    drifts = []
    for name, g in cells_table[cells_table["statistic"] == "best_log_lr"].groupby("parameterisation", sort=False):
        slope, se = drift(g.sort_values("d_k"))
        drifts.append(dict(parameterisation=name, decades_per_doubling=slope, se=se))
    w.table("drift", pd.DataFrame(drifts))
    return w.close()


def figures(out):
    import seaborn as sns

    from ._style import figure, setup

    setup()
    data = read_table(out, STUDY, "cells")
    grid_table = read_table(out, STUDY, "grid")
    grids = {name: g.sort_values("point")["lr"].to_numpy() for name, g in grid_table.groupby("parameterisation")}
    drifts = read_table(out, STUDY, "drift").set_index("parameterisation")
    names = list(dict.fromkeys(data["parameterisation"]))
    widths = sorted(set(data["d_k"]))
    colours = dict(zip(widths, sns.color_palette("viridis", len(widths))))
    figs = {}
    fig, axes = figure("full", height=2.5, ncols=len(names), sharey=True)
    for ax, name in zip(np.atleast_1d(axes), names):
        grid = grids[name]
        for d in widths:
            g = data[(data["parameterisation"] == name) & (data["d_k"] == d)]
            loss = [g[g["statistic"] == f"loss_at_{i}"].iloc[0] for i in range(len(grid))]
            m, s = np.array([r["mean"] for r in loss]), np.array([r["mcse"] for r in loss])
            ax.plot(grid, m, "-o", ms=2.2, lw=1.0, color=colours[d], label=f"$d_k$={d}")
            ax.fill_between(grid, np.clip(m - 2 * s, 0, None), m + 2 * s, color=colours[d], alpha=0.15, lw=0)
        ax.set_xscale("log")
        ax.set_xlim(0.7 * grid_table["lr"].min(), 1.4 * grid_table["lr"].max())  # one rate axis for the three panels
        ax.set_title(name, fontsize=7)
        ax.set_xlabel("Adam learning rate")
    np.atleast_1d(axes)[0].set_ylabel(f"probe loss after {MUP_STEPS} steps")
    np.atleast_1d(axes)[0].legend(fontsize=5.5, loc="upper left")
    figs["mup_transfer"] = fig

    fig, axes = figure("full", height=2.4, ncols=2)
    palette = {"standard": "#0072b2", "1/d_k, one rate": "#009e73", "muP (rate d_0/d_model)": "#cc79a7"}
    for name in names:
        b = data[(data["parameterisation"] == name) & (data["statistic"] == "best_log_lr")].sort_values("d_k")
        slope, se = drifts.loc[name, "decades_per_doubling"], drifts.loc[name, "se"]
        axes[0].errorbar(b["d_k"], b["mean"], yerr=2 * b["mcse"], marker="o", ms=2.6, lw=1.0, capsize=1.5,
                         color=palette.get(name), label=f"{name}: {slope:+.2f} $\\pm$ {se:.2f} dec/doubling")
        logits = []
        for d in b["d_k"]:
            g = data[(data["parameterisation"] == name) & (data["d_k"] == d)]
            best = int(np.argmin([g[g["statistic"] == f"loss_at_{i}"]["mean"].iloc[0] for i in range(len(grids[name]))]))
            logits.append(g[g["statistic"] == f"logit_at_{best}"].iloc[0])
        axes[1].errorbar(b["d_k"], [r["mean"] for r in logits], yerr=[2 * r["mcse"] for r in logits], marker="o", ms=2.6,
                         lw=1.0, capsize=1.5, color=palette.get(name), label=name)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"$d_k$ ($d_{model} = d_k$)")
    axes[0].set_ylabel("best grid rate, log10 (per seed)")
    axes[1].set_ylabel("mean target logit at the best rate")
    axes[0].legend(fontsize=5.5, loc="best")
    figs["mup_best_rate"] = fig
    return figs
