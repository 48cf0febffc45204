"""The gradient reaching W_Q and W_K of a fresh head, against the width, for four scalings.

Section "The Jacobian of softmax, and what saturation does to it" ("no gradient reaches
W_Q or W_K"), with the finding that without scaling the typical row's gradient collapses
while the gradient reaching the projections does not.
"""

from __future__ import annotations

import pandas as pd

from stats.models.heads import HeadSim
from stats.settings.fresh import FLOW_QUICK_ROWS, FLOW_ROWS, FLOW_WIDTHS as WIDTHS
from stats.training import HEAD_SCALINGS

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "gradient_flow"
STATS = ("dwq_norm", "dwk_norm", "ds_median_row", "ds_norm", "grad_rows", "max_weight")
FIGURES = {
    "gradient_flow": dict(
        width="full",
        caption="Gradients of a fresh head (32 tokens, normalised 32-wide inputs, variance-preserving projections, upstream "
        "gradient of unit norm per token) against the width, for four scalings of the scores: the Frobenius norms of "
        "dW_Q and dW_K, and the median token's score gradient. Without scaling the typical row's gradient collapses, "
        "but the gradient reaching W_Q and W_K grows like d_k^(1/4): it is carried by the few nearly tied rows. With "
        "d_model growing like d_k every slope rises by 1/2 (claim gradient-rate-by-shape). "
        "Monte Carlo means, 2 MCSE bars.",
        claims=("gradient-typical-row", "gradient-to-projections", "gradient-rate-by-scaling", "gradient-rate-by-shape"),
    ),
}


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = [HeadSim(d, sc) for sc in HEAD_SCALINGS for d in WIDTHS]
    n = FLOW_QUICK_ROWS if quick else FLOW_ROWS
    res = run([(s, n) for s in sims], seed=seed, workers=workers, scheduler=scheduler)
    rows = [dict(d_k=s.d_k, scaling=s.scaling, statistic=st, **mean_row(res[s.key].summary(st))) for s in sims for st in STATS]
    w.table("heads", pd.DataFrame(rows))
    return w.close()


def figures(out):
    from ._style import SCALING_COLORS, SCALING_LABELS, figure, setup

    setup()
    data = read_table(out, STUDY, "heads")
    fig, axes = figure("full", height=2.4, ncols=3)
    labels = {"dwq_norm": r"$E\|dW_Q\|_F$", "dwk_norm": r"$E\|dW_K\|_F$", "ds_median_row": r"median token's $\|dS_i\|$"}
    for ax, stat in zip(axes, labels):
        for sc in HEAD_SCALINGS:
            g = data[(data["statistic"] == stat) & (data["scaling"] == sc)]
            ax.errorbar(g["d_k"], g["mean"], yerr=2 * g["mcse"], fmt="-o", ms=2.6, color=SCALING_COLORS[sc], label=SCALING_LABELS[sc])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set(xlabel=r"key width $d_k$", ylabel=labels[stat])
    axes[2].legend(loc="lower left", frameon=True)
    return {"gradient_flow": fig}
