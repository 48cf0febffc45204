"""The synthetic task at growing width: multi-query associative recall (MQAR) for the scaled, unscaled and
folded-control models, and additive attention (``EVIDENCE=full`` only).

The section's opening says a large unscaled head cannot learn; ``model-recall-unscaled`` tests it on
Zoology's MQAR (Arora et al. 2023; :mod:`stats.training.recall`) at the widths of
:data:`~stats.settings.model.RECALL_WIDTHS`, each model at a rate searched at that width.  This study trains the
same two-layer attention-only model at growing ``d_k`` (one head, ``d_model = d_k``), all at one rate,
the scaled model's better of two in a pilot at ``d_k = 64`` (a shared rate at that width), with the
folded control (no division, ``W_Q``'s initialisation divided by sqrt(d_k): the unscaled forward
pass without its saturated start), and additive attention, the alternative Vaswani et al. say beat
unscaled dot products at large ``d_k`` (citing Britz et al. 2017), where a run of it is affordable (its (T, T, d_k) tanh makes a step about
seven times a dot product's at d_k = 64).  Each cell is a few seeds, so its numbers are directions: the share that
solves the task within the budget, the held-out accuracy at the end, the step it was solved at
(one past the budget when it was not), and the largest attention logit at step 0 and at the end, each a mean
over seeds with its MCSE.

The study runs under ``EVIDENCE=full`` (its cost: docs/performance.md); ``python -m analyses
recall_widths`` runs it under any profile.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.settings.model import (RECALL_ADDITIVE_WIDTHS, RECALL_BATCH, RECALL_LENGTH, RECALL_LR, RECALL_PAIRS,
                                  RECALL_QUICK_STEPS, RECALL_QUICK_WIDTHS, RECALL_STEPS, RECALL_STUDY_RUNS,
                                  RECALL_STUDY_WIDTHS, RECALL_VOCAB, RECALL_WARMUP)
from stats.training import RECALL_OUTCOMES, RecallSim

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "recall_widths"
#: The evidence profile whose build runs this study (``make reports EVIDENCE=full``).
EVIDENCE = "full"
NAMES = {"sqrt": "scaled", "none": "unscaled", "t5": "folded control", "additive": "additive"}
PALETTE = {"scaled": "#0072b2", "unscaled": "#d55e00", "folded control": "#009e73", "additive": "#cc79a7"}
_SETUP = (f"a two-layer attention-only model, one head of d_k = d_model, vocabulary {RECALL_VOCAB}, sequences of "
          f"{RECALL_LENGTH} with {RECALL_PAIRS} key-value pairs, Adam at lr = {RECALL_LR:g} (the scaled model's better of two "
          f"rates in a pilot at d_k = 64) with a "
          f"{RECALL_WARMUP}-step warm-up, batches of {RECALL_BATCH}, at most {RECALL_STEPS} steps")
FIGURES = {
    "recall_widths": dict(
        width="full",
        caption=f"Zoology's multi-query associative recall at growing width ({_SETUP}). Left: held-out accuracy at the "
        "end of each run (points: seeds; line: their mean), chance 2/vocabulary; a run solves the task at 0.99 "
        "and stops there. Middle: the step it was solved at (one past the budget when it was not). Right: the largest "
        "attention logit at step 0 (open) and at the end (filled). Scaled and unscaled dot products and the folded "
        "control (no division, W_Q's initialisation divided by sqrt(d_k)) at every width; additive attention where a "
        f"run is affordable. {RECALL_STUDY_RUNS} seeds a cell, so the bars (2 MCSE) are a rough guide: directions, not "
        "graded findings (the graded claim is model-recall-unscaled). The step solved is read at checkpoints about 190 "
        "steps apart.",
        claims=("model-recall-unscaled",),
    ),
}


def cells(*, quick):
    """Every (scaling, width) of the study: a draft trains the narrowest width a few steps."""
    widths = RECALL_QUICK_WIDTHS if quick else RECALL_STUDY_WIDTHS
    steps = RECALL_QUICK_STEPS if quick else RECALL_STEPS
    additive = widths[:1] if quick else RECALL_ADDITIVE_WIDTHS
    return [RecallSim(d, scaling, RECALL_LR, steps, warmup=RECALL_WARMUP, vocab=RECALL_VOCAB, length=RECALL_LENGTH,
                      pairs=RECALL_PAIRS, batch=RECALL_BATCH)
            for scaling in NAMES for d in (additive if scaling == "additive" else widths)]


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = cells(quick=quick)
    runs = 2 if quick else RECALL_STUDY_RUNS
    keep = {s.key: RECALL_OUTCOMES for s in sims}
    res = run([(s, runs) for s in sims], seed=seed, workers=workers, keep=keep, desc=STUDY, scheduler=scheduler)
    w.table("cells", pd.DataFrame([dict(model=NAMES[s.scaling], d_k=s.d_model, statistic=st, **mean_row(res[s.key].summary(st)))
                                   for s in sims for st in RECALL_OUTCOMES]))
    w.table("runs", pd.DataFrame([dict(model=NAMES[s.scaling], d_k=s.d_model, seed=i, steps=s.steps,
                                       **{st: float(v) for st, v in zip(RECALL_OUTCOMES, values)})
                                  for s in sims
                                  for i, values in enumerate(zip(*(res[s.key].rows(st) for st in RECALL_OUTCOMES)))]))
    return w.close()


def figures(out):
    import matplotlib as mpl

    from ._style import figure, setup

    setup()
    cells_table, runs = read_table(out, STUDY, "cells"), read_table(out, STUDY, "runs")
    fig, axes = figure("full", ncols=3, height=2.6)
    plain = mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    models = [m for m in NAMES.values() if m in set(runs["model"])]
    offsets = dict(zip(models, np.linspace(-0.12, 0.12, len(models))))
    for model in models:
        colour = PALETTE[model]
        r = runs[runs["model"] == model]
        c = cells_table[cells_table["model"] == model]
        shift = 2.0 ** offsets[model]  # apart on the log axis, so the models' points do not overlap

        def x(d):
            return np.asarray(d, dtype=float) * shift

        for ax, stat in ((axes[0], "accuracy"), (axes[1], "steps_to_solve")):
            ax.scatter(x(r["d_k"]), r[stat], s=10, color=colour, alpha=0.6, lw=0)
            m = c[c["statistic"] == stat].sort_values("d_k")
            ax.errorbar(x(m["d_k"]), m["mean"], yerr=2 * m["mcse"], color=colour, lw=1.0, capsize=2, label=model)
        for stat, filled in (("max_logit_0", False), ("max_logit_end", True)):
            m = c[c["statistic"] == stat].sort_values("d_k")
            axes[2].errorbar(x(m["d_k"]), m["mean"], yerr=2 * m["mcse"], color=colour, lw=1.0 if filled else 0.6,
                             ls="-" if filled else ":", marker="o", ms=3, mfc=colour if filled else "white", capsize=2)
    axes[0].axhline(2 / RECALL_VOCAB, color="grey", lw=0.6, ls="--")
    axes[0].axhline(0.99, color="grey", lw=0.6, ls=":")
    axes[0].set_ylim(0, 1.05)
    axes[0].set_ylabel("held-out accuracy at the end")
    axes[1].set_ylabel("step solved (budget + 1 if not)")
    axes[1].set_ylim(0, runs["steps"].max() * 1.05)
    axes[2].set_yscale("log")
    axes[2].set_ylabel("largest |attention logit|")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(plain)
        ax.set_xticks(sorted(runs["d_k"].unique()))
        ax.set_xlabel(r"$d_k$ ($= d_{model}$)")
    # Under the middle panel's lines: no step is solved before the warm-up ends, so that corner stays empty.
    handles, labels = axes[0].get_legend_handles_labels()
    axes[1].legend(handles, labels, loc="lower center", ncol=2, frameon=True, fontsize=7)
    return {"recall_widths": fig}
