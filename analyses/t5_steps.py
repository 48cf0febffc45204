"""T5's folded initialisation against the divided one: the score change after one step.

Section "The assumption behind the argument, and when it fails": the two choices are
identical at initialisation and differ during training; by how much is derived and
measured here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.models.fixes import t5_step_ratio
from stats.models.heads import T5Sim
from stats.settings.fixes import T5_STEP_QUICK_RUNS, T5_STEP_RUNS, T5_STEP_WIDTHS as WIDTHS

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "t5_steps"
FIGURES = {
    "t5_steps": dict(
        width="column",
        caption="After one step from the same loss, the change of the scores under T5's folded initialisation over the "
        "change under the divided one, from the query side and the key side, for Adam and SGD (Monte Carlo over random "
        "heads, markers; derived ratios, lines: sqrt(d_k) for Adam, d_k for SGD, 1 from the key side). The ratio is "
        "the same for every head (its Monte Carlo standard error is about 1e-16), and the Adam and SGD key-side "
        "markers coincide at 1.",
        claims=("t5-step-ratio", "t5-identical-at-init", "t5-differ-slightly"),
    ),
}


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = [T5Sim(d, opt) for opt in ("adam", "sgd") for d in WIDTHS]
    res = run([(s, T5_STEP_QUICK_RUNS if quick else T5_STEP_RUNS) for s in sims], seed=seed, workers=workers, scheduler=scheduler)
    rows = []
    for s in sims:
        for side in ("query", "key"):
            rows.append(dict(d_k=s.d_k, optimizer=s.optimizer, side=side, derived=t5_step_ratio(s.optimizer, side, s.d_k),
                             **mean_row(res[s.key].summary(f"{side}_ratio"))))
    w.table("ratios", pd.DataFrame(rows))
    return w.close()


def figures(out):
    from ._style import figure, setup

    setup()
    data = read_table(out, STUDY, "ratios")
    fig, ax = figure("column", height=2.6)
    colors = {"adam": "#0072b2", "sgd": "#d55e00"}
    for (opt, side), g in data.groupby(["optimizer", "side"]):
        ax.plot(g["d_k"], g["derived"], color=colors[opt], lw=1.0, ls="-" if side == "query" else "--")
        ax.plot(g["d_k"], g["mean"], "o" if side == "query" else "s", ms=3, mfc="white", mew=0.9, color=colors[opt],
                label=f"{'Adam' if opt == 'adam' else 'SGD'}, {side} side")
    d = np.array(WIDTHS, dtype=float)
    ax.text(d[-1], np.sqrt(d[-1]) * 1.4, r"$\sqrt{d_k}$", fontsize=7, ha="right", color=colors["adam"])
    ax.text(d[-2], d[-2] * 1.5, r"$d_k$", fontsize=7, ha="right", color=colors["sgd"])
    ax.set(xscale="log", yscale="log", xlabel=r"key width $d_k$", ylabel="score change, folded / divided")
    ax.set_xscale("log", base=2)
    ax.legend(loc="upper left", frameon=True)
    return {"t5_steps": fig}
