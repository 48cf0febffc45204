"""muP's coordinate check on the small transformer: how far a few Adam steps move its activations, against width.

The section's paragraph on muP (under "The assumption behind the argument, and when it
fails"): muP's 1/d_k keeps a trained model's logits stable across widths.  Yang et al.
(2022) check their rules this way, and the ``mup`` package plots it: train models of growing
width a few steps at one learning rate and plot, per step, the size of the change of each
layer's output coordinates against the width -- flat lines under muP, lines that climb with
the width under the standard parameterisation.  Here the model is
:class:`stats.training.transformer_simulations.CoordinateCheckSim`'s (two layers with MLPs,
heads of 32, muP's base width 32, :mod:`stats.training.mup_rules`), the moves are the root
mean square change of the last residual stream and of the logits on a fixed batch, and each
point is a mean over seeds with its MCSE.
"""

from __future__ import annotations

import pandas as pd

from stats.settings.model import (COORDINATE_LR, COORDINATE_QUICK_RUNS, COORDINATE_RUNS, COORDINATE_STEPS, COORDINATE_WIDTHS,
                                  MODEL_MUP_BASE, MODEL_PARAMETERISATIONS)
from stats.training.transformer_simulations import CoordinateCheckSim

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "coordinate_check"
NAMES = {"sqrt": "standard", "mup": "muP"}
FIGURES = {
    "coordinate_check": dict(
        width="full",
        caption=f"muP's coordinate check on the small transformer (two layers with MLPs, heads of 32): after each of "
        f"{COORDINATE_STEPS} Adam steps at lr = {COORDINATE_LR:g} (colour), how far the last residual stream (top) and "
        f"the logits (bottom) have moved from step 0 (root mean square over a fixed batch), against the width, for the "
        f"standard parameterisation (left; 1/sqrt(d_k), one rate) and muP's rules (right; 1/d_k, read-out variance "
        f"d_0/d^2, hidden and read-out rates times d_0/d, d_0 = {MODEL_MUP_BASE}). Means over {COORDINATE_RUNS} seeds, "
        "bars 2 MCSE. The standard model's moves grow with the width, the logits' more slowly (they read the stream "
        "through the final LayerNorm); under muP the residual stream's lines are flat and the logits' fall slowly "
        "with the width.",
        claims=("model-mup-coordinates",),
    ),
}


def cells():
    """Every (parameterisation, width) of the study."""
    return [CoordinateCheckSim(d, scaling, base, COORDINATE_LR, COORDINATE_STEPS)
            for _, scaling, base in MODEL_PARAMETERISATIONS for d in COORDINATE_WIDTHS]


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = cells()
    res = run([(s, COORDINATE_QUICK_RUNS if quick else COORDINATE_RUNS) for s in sims], seed=seed, workers=workers, scheduler=scheduler)
    rows = [dict(parameterisation=NAMES[s.scaling], d_model=s.d_model, step=t, activation=what,
                 **mean_row(res[s.key].summary(f"{what}_{t}")))
            for s in sims for t in range(1, s.steps + 1) for what in ("residual", "logits")]
    w.table("moves", pd.DataFrame(rows))
    return w.close()


def figures(out):
    import matplotlib as mpl

    from ._style import figure, setup

    setup()
    data = read_table(out, STUDY, "moves")
    fig, axes = figure("full", nrows=2, ncols=2, height=4.6, sharex=True, sharey="row")
    cmap = mpl.colormaps["viridis"]
    plain = mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    steps = sorted(data["step"].unique())
    for row, what in enumerate(("residual", "logits")):
        for col, name in enumerate(("standard", "muP")):
            ax = axes[row, col]
            g = data[(data["activation"] == what) & (data["parameterisation"] == name)]
            for t in steps:
                s = g[g["step"] == t].sort_values("d_model")
                ax.errorbar(s["d_model"], s["mean"], yerr=2 * s["mcse"], marker="o", ms=3, lw=1.0, capsize=2,
                            color=cmap(t / (len(steps) + 0.5)), label=f"step {t}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.xaxis.set_major_formatter(plain)
            ax.yaxis.set_major_locator(mpl.ticker.LogLocator(base=10, subs=(1, 2, 5)))
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(mpl.ticker.NullFormatter())
            ax.set_title(f"{name}: {'residual stream' if what == 'residual' else 'logits'}", fontsize=8)
            if row == 1:
                ax.set_xlabel(r"width $d_{model}$")
            if col == 0:
                ax.set_ylabel("RMS move from step 0")
    axes[0, 0].legend(loc="upper left", frameon=True, fontsize=7)
    return {"coordinate_check": fig}
