"""Attention-logit growth and QK-norm, across a learning-rate grid that reaches instability.

The section's account of QK-norm (under "The assumption behind the argument, and when it
fails"; Henry et al. 2020, Dehghani et al. 2023): logits grew, the weights became nearly
one-hot, and training diverged.  At each Adam learning rate, the standard head
(1/sqrt(d_k)) and the QK-normed head (gain initialised at Henry et al.'s log2(T^2 - T),
learned with its own rate 0.03), as Wortsman et al. (2023) did in small models: the
largest logit any step's episode produced, the share of runs that became unstable (an
episode's loss above 0.75 and 0.25 above the run's step-0 loss, or parameters that diverged; counted, with
the step), the final
loss, and the share of nearly one-hot rows at and just before the step that crossed.
The learning-rate sensitivity is the width of the rate range (in decades of the grid)
whose mean final loss is within 0.05 of the head's best.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.training import UNSTABLE_LOSS, UNSTABLE_RISE, TrainingSim
from stats.settings.fixes import (GAIN_LR, QK_STEPS, QK_STUDY_GRID as GRID, QK_STUDY_QUICK_RUNS as QUICK_RUNS,
                                  QK_STUDY_QUICK_WIDTHS as QUICK_WIDTHS, QK_STUDY_RUNS as RUNS, QK_STUDY_WIDTHS as WIDTHS)

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "qknorm_growth"
TOLERANCE = 0.05
STATS = ("max_logit_train", "large_logit", "unstable", "unstable_step", "loss_8", "learned", "onehot_at_unstable",
         "onehot_before_unstable", "onehot_final")
FIGURES = {
    "qknorm_growth": dict(
        width="full",
        caption=f"Training the standard head (1/sqrt(d_k)) and the QK-normed head (gain learned) for {QK_STEPS} Adam steps "
        "at each learning rate, d_k = d_model = 16 (dashed) and 64 (solid): the largest logit of any step (left; the "
        "QK-normed head's stays below its gain, about 10), the share of runs that became unstable (an episode's loss "
        f"above {UNSTABLE_LOSS}, worse than uniform attention, and {UNSTABLE_RISE} above the run's start; middle) and the probe loss at the end (right). 16 runs a "
        "point, bands 2 MCSE (shares clipped to [0, 1]). The standard head's logits grow with the rate and past 0.1-0.3 "
        "it diverges within two steps; the QK-normed head learns at every rate from 0.003 to 3.",
        claims=("training-qknorm-logits",),
    ),
}


def cells(*, quick):
    return [TrainingSim(d, sc, "adam", lr, QK_STEPS, d, gain_lr=GAIN_LR if sc == "qknorm" else None, track_logits=True)
            for d in (QUICK_WIDTHS if quick else WIDTHS) for sc in ("sqrt", "qknorm") for lr in GRID]


def sensitivity(data):
    """Per (width, head): the grid rates whose mean final loss is within :data:`TOLERANCE` of the
    head's best -- how many, the smallest and largest, and the decades between those two."""
    rows = []
    loss = data[data["statistic"] == "loss_8"]
    for (d, sc), g in loss.groupby(["d_k", "scaling"]):
        within = g["lr"][g["mean"] <= g["mean"].min() + TOLERANCE]
        lo, hi = float(within.min()), float(within.max())
        rows.append(dict(d_k=d, scaling=sc, best_loss=float(g["mean"].min()), points_within=len(within), lo=lo, hi=hi,
                         decades_within=float(np.log10(hi / lo))))
    return pd.DataFrame(rows)


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = cells(quick=quick)
    res = run([(s, QUICK_RUNS if quick else RUNS) for s in sims], seed=seed, workers=workers, desc=STUDY, scheduler=scheduler)
    data = pd.DataFrame([dict(d_k=s.d_k, scaling=s.scaling, lr=s.lr, statistic=st, **mean_row(res[s.key].summary(st)))
                         for s in sims for st in STATS])
    w.table("cells", data)
    w.table("sensitivity", sensitivity(data))
    return w.close()


def figures(out):
    from ._style import SCALING_COLORS, SCALING_LABELS, figure, setup

    setup()
    data = read_table(out, STUDY, "cells")
    fig, axes = figure("full", height=2.4, ncols=3)
    widths = sorted(set(data["d_k"]))
    for d in widths:
        ls = "-" if d == widths[-1] else "--"
        for sc in ("sqrt", "qknorm"):
            for ax, st in zip(axes, ("max_logit_train", "unstable", "loss_8")):
                g = data[(data["d_k"] == d) & (data["scaling"] == sc) & (data["statistic"] == st)].sort_values("lr")
                m, s = g["mean"].to_numpy(), g["mcse"].to_numpy()
                lo, hi = m - 2 * s, m + 2 * s
                if st == "unstable":
                    lo, hi = np.clip(lo, 0, 1), np.clip(hi, 0, 1)
                if st == "max_logit_train":
                    lo = np.maximum(lo, m / 10)
                ax.plot(g["lr"], m, ls, marker="o", ms=2.2, lw=1.0, color=SCALING_COLORS[sc],
                        label=f"{SCALING_LABELS[sc]}, $d_k$={d}")
                ax.fill_between(g["lr"], lo, hi, color=SCALING_COLORS[sc], alpha=0.15, lw=0)
    for ax, label in zip(axes, ("largest |logit| over training", "share of runs unstable", f"probe loss after {QK_STEPS} steps")):
        ax.set_xscale("log")
        ax.set_xlabel("Adam learning rate")
        ax.set_ylabel(label)
    axes[0].set_yscale("log")
    axes[1].set_ylim(-0.05, 1.05)
    axes[0].legend(fontsize=5.5, loc="upper left")
    return {"qknorm_growth": fig}
