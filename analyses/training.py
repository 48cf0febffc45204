"""Does the head learn?  Seeded training runs over widths, scalings, optimisers and learning rates.

The section's opening ("the head cannot learn"), "The Jacobian of softmax, and what
saturation does to it" ("frozen wherever it happened to land"), "Saturation, measured"
("its sharpness becomes something it learns") and "The assumption behind the argument, and
when it fails" (independent at initialisation, not after training; logits that grow with
the width).  Every cell of (shape, scaling, optimiser, learning rate) is a block of
independent runs of :class:`stats.training.TrainingSim`; the table holds each
outcome's Monte Carlo mean and MCSE per cell, and the figures read the whole
learning-rate curves, as Wortsman et al. (2023) do, not only their minima.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.training import CHECKPOINTS, PROBE_STATISTICS, TrainingSim, checkpoint_steps
from stats.settings.training import (ALIGNMENT_LR, CURVE_SCALINGS, GRIDS, STEPS, STUDY_MID_RUNS as MID_RUNS,
                                     STUDY_QUICK_RUNS as QUICK_RUNS, STUDY_QUICK_SHAPES as QUICK_SHAPES, STUDY_RUNS as RUNS,
                                     STUDY_SCALINGS as SCALINGS, STUDY_SHAPES as SHAPES, STUDY_WIDE_OFF_BEST_RUNS as WIDE_OFF_BEST_RUNS,
                                     STUDY_WIDE_RUNS as WIDE_RUNS)
from stats.tuning import training_best_lr

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "training"
STATS = (
    ("learned", "steps_to_accuracy", "diverged", "max_logit_final", "q_square_final", "k_square_final")
    + tuple(f"{name}_{k}" for name in PROBE_STATISTICS for k in range(CHECKPOINTS))
    + tuple(f"learned_by_{k}" for k in range(CHECKPOINTS))
)
OPT_LABELS = {"sgd": "SGD", "adam": "Adam"}
FIGURES = {
    "training_lr": dict(
        width="full",
        caption="Loss on a fixed probe episode after 150 training steps against the learning rate, for d_k = d_model "
        "= 16, 64, 256 (columns) and each optimiser (rows), without scaling and with 1/sqrt(d_k) (muP's 1/d_k across "
        "widths and rates is the muP study's figure). Means over 16 seeded runs at d_k = 16, 8 at 64; at 256, 8 at each "
        "head's best rate and 4 at the others; bands 2 MCSE. The unscaled head has a minimum too, but a narrower one "
        "that moves to smaller learning rates as the width grows; at the scaled head's best rate it does not learn.",
        claims=("training-unscaled-cannot-learn", "training-unscaled-slower", "training-scaled-head-learns"),
    ),
    "training_steps": dict(
        width="full",
        caption="Left: restricted mean number of steps until the held-out probe holds 90% accuracy to the end of the "
        "run (censored at 151), at each head's best learning rate, against d_k (d_model = d_k). Right: that best rate, "
        "as a fraction of the base grid's largest (SGD 3, Adam 0.1; above 1 where the grid was extended past it): the "
        "unscaled head's moves down as the width grows; the scaled head's Adam rate moves down one step at 256 and its "
        "SGD rate up. Best rates are chosen on these same runs, which flatters every curve alike. Bars 2 MCSE.",
        claims=("training-unscaled-slower", "training-unscaled-cannot-learn"),
    ),
    "training_curves": dict(
        width="full",
        caption="Training at d_k = d_model = 256, each head at the best grid learning rate that the registry's claims "
        "test it at (chosen on a pilot of another seed), against the step: the share "
        "of runs whose held-out probe has not yet reached the 90% accuracy it then holds to the end (the survival curve "
        "of the steps to sustained accuracy; no run is censored before the budget, so this is its Kaplan-Meier estimate), the probe loss, the "
        "share of probe queries still choosing the key they chose at step 0 ('frozen'), and the mean largest weight. "
        "The unscaled head starts one-hot and is not frozen: its choices leave their initial keys as it learns, more "
        "slowly than the scaled head's. Legend: scaling, optimiser, learning rate. 8 runs a curve; bands 2 MCSE (clipped to "
        "[0, 1] for shares).",
        claims=("training-frozen-pattern", "training-sharpness-learned"),
    ),
    "training_alignment": dict(
        width="full",
        caption="After 150 Adam steps at one learning rate (0.01) for every width: the mean cosine of a query and its "
        "target key (left) and the mean target logit (right), against d_k (d_model = d_k). Crosses: the logit that "
        "the measured cosine and entry scales give, c d_k cos sqrt(E q^2 E k^2); dotted: the growth a fixed cosine "
        "would give (sqrt(d_k) under 1/sqrt(d_k), none under 1/d_k). Under 1/sqrt(d_k) the trained logit grows with "
        "the width, more slowly than sqrt(d_k) because the trained cosine falls; under muP's 1/d_k it levels off. "
        "Bars 2 MCSE.",
        claims=("training-correlated-after",),
    ),
}


def cells(*, quick):
    """Every (shape, scaling, optimiser, learning rate) the study trains."""
    shapes = QUICK_SHAPES if quick else SHAPES
    best = training_best_lr()

    def rates(d_k, d_model, sc, opt, grid):
        # The grid, and the claims' best rate where the pilot extended the grid to find it (SGD's 10).
        chosen = best.get(((d_k, d_model), sc, opt))
        return tuple(sorted(set(grid) | ({chosen} if chosen is not None else set())))

    return [
        TrainingSim(d_k, sc, opt, lr, STEPS, d_model)
        for d_k, d_model in shapes
        for opt, grid in GRIDS.items()
        for sc in SCALINGS[opt]
        if not (sc == "mup" and d_k != d_model)
        for lr in (rates(d_k, d_model, sc, opt, grid) if sc in CURVE_SCALINGS else (ALIGNMENT_LR,))
    ]


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = cells(quick=quick)
    res = run([(s, runs(s, quick=quick)) for s in sims], seed=seed, workers=workers, desc="training", scheduler=scheduler)
    rows = [
        dict(d_k=s.d_k, d_model=s.d_model, scaling=s.scaling, optimizer=s.optimizer, lr=s.lr, statistic=st,
             **mean_row(res[s.key].summary(st)))
        for s in sims for st in STATS
    ]
    w.table("cells", pd.DataFrame(rows))
    w.table("checkpoints", pd.DataFrame(dict(checkpoint=range(CHECKPOINTS), step=checkpoint_steps(STEPS))))
    return w.close()


def runs(sim, *, quick):
    """Runs a cell trains: 16 where d_model = 16, 8 where it is 64; where d_model = 256, 8 at a
    rate a figure reads (the claims' best grid rates, :func:`stats.tuning.training_best_lr`, and
    Adam's 0.01) and 4 elsewhere; 2 in a draft (:mod:`stats.settings.training`)."""
    if quick:
        return QUICK_RUNS
    if sim.d_model < 64:
        return RUNS
    if sim.d_model < 256:
        return MID_RUNS
    read = training_best_lr().get(((sim.d_k, sim.d_model), sim.scaling, sim.optimizer)) == sim.lr or (
        sim.optimizer == "adam" and sim.lr == ALIGNMENT_LR)
    return WIDE_RUNS if read else WIDE_OFF_BEST_RUNS


def best_rates(data):
    """Each (shape, scaling, optimiser)'s grid rate with the smallest restricted mean steps to accuracy."""
    steps = data[(data["statistic"] == "steps_to_accuracy") & data["scaling"].isin(CURVE_SCALINGS)]
    idx = steps.groupby(["d_k", "d_model", "scaling", "optimizer"])["mean"].idxmin()
    return steps.loc[idx, ["d_k", "d_model", "scaling", "optimizer", "lr"]]


def _at(data, statistic, **where):
    g = data[data["statistic"] == statistic]
    for k, v in where.items():
        g = g[g[k] == v]
    return g


def _band(ax, x, mean, mcse, color, label=None, ls="-", share=False):
    """A curve with its 2-MCSE band (clipped to [0, 1] for a share)."""
    ax.plot(x, mean, ls, color=color, lw=1.1, marker="o", ms=2.4, label=label)
    lo, hi = mean - 2 * mcse, mean + 2 * mcse
    if share:
        lo, hi = np.clip(lo, 0, 1), np.clip(hi, 0, 1)
    ax.fill_between(x, lo, hi, color=color, alpha=0.18, lw=0)


def figures(out):
    from ._style import SCALING_COLORS, SCALING_LABELS, figure, setup

    setup()
    data = read_table(out, STUDY, "cells")
    marks = read_table(out, STUDY, "checkpoints")
    shapes = sorted({(r.d_k, r.d_model) for r in data.itertuples()}, key=lambda s: (s[1] != s[0], s))
    figs = {}

    fig, axes = figure("full", height=3.6, ncols=len(shapes), nrows=2, sharey=True)
    axes = np.atleast_2d(axes)
    for i, opt in enumerate(GRIDS):
        for j, (d_k, d_model) in enumerate(shapes):
            ax = axes[i, j]
            for sc in CURVE_SCALINGS:
                g = _at(data, f"loss_{CHECKPOINTS - 1}", d_k=d_k, d_model=d_model, optimizer=opt, scaling=sc).sort_values("lr")
                if len(g):
                    _band(ax, g["lr"], g["mean"], g["mcse"], SCALING_COLORS[sc], SCALING_LABELS[sc])
            ax.set_xscale("log")
            ax.set_title(f"{OPT_LABELS[opt]}, $d_k$={d_k}, $d_{{model}}$={d_model}", fontsize=7)
            if i == 1:
                ax.set_xlabel("learning rate")
            if j == 0:
                ax.set_ylabel("probe loss after 150 steps")
    axes[1, 0].legend(loc="upper center", fontsize=6)
    figs["training_lr"] = fig

    best = best_rates(data)
    square = best[best["d_k"] == best["d_model"]]
    fig, axes = figure("full", height=2.4, ncols=2)
    for opt, ls in (("sgd", "--"), ("adam", "-")):
        for sc in CURVE_SCALINGS:
            rows = square[(square["optimizer"] == opt) & (square["scaling"] == sc)].sort_values("d_k")
            pts = pd.concat([_at(data, "steps_to_accuracy", d_k=r.d_k, d_model=r.d_model, optimizer=opt, scaling=sc, lr=r.lr)
                             for r in rows.itertuples()]).sort_values("d_k")
            label = f"{SCALING_LABELS[sc]}, {OPT_LABELS[opt]}"
            axes[0].errorbar(pts["d_k"], pts["mean"], yerr=2 * pts["mcse"], ls=ls, marker="o", ms=2.6, lw=1.0, color=SCALING_COLORS[sc], label=label)
            axes[1].plot(rows["d_k"], rows["lr"] / GRIDS[opt][-1], ls=ls, marker="o", ms=2.6, lw=1.0, color=SCALING_COLORS[sc], label=label)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"$d_k$ ($d_{model} = d_k$)")
    axes[0].set_ylabel("steps to sustained 90% (RMST)")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("best rate / the base grid's largest")
    axes[0].legend(fontsize=6, loc="upper right")  # upper left holds the d_k = 16 points
    figs["training_steps"] = fig

    d_big = max(d for d, m in shapes if d == m)
    fig, axes = figure("full", height=2.4, ncols=4)
    for opt, ls in (("sgd", "--"), ("adam", "-")):
        for sc in ("none", "sqrt"):
            # The registry's rate where it tests this shape (a draft's widest shape it does not: the data's best).
            r = best[(best["d_k"] == d_big) & (best["d_model"] == d_big) & (best["optimizer"] == opt) & (best["scaling"] == sc)]
            lr = training_best_lr().get(((d_big, d_big), sc, opt), float(r["lr"].iloc[0]) if len(r) else None)
            if lr is None:
                continue
            for ax, name in zip(axes, ("learned_by", "loss", "frozen", "max_weight")):
                g = pd.concat([_at(data, f"{name}_{k}", d_k=d_big, d_model=d_big, optimizer=opt, scaling=sc, lr=lr) for k in range(CHECKPOINTS)])
                mean = g["mean"].to_numpy()
                _band(ax, marks["step"].to_numpy(), 1 - mean if name == "learned_by" else mean, g["mcse"].to_numpy(),
                      SCALING_COLORS[sc], f"{SCALING_LABELS[sc]}, {OPT_LABELS[opt]}, {lr:g}", ls=ls,
                      share=name in ("learned_by", "frozen"))
    for ax, label in zip(axes, ("runs not yet at sustained 90%", "probe loss", "share of queries on their step-0 key",
                                "mean largest weight")):
        ax.set_xlabel("step")
        ax.set_ylabel(label)
    for ax in (axes[0], axes[2]):
        ax.set_ylim(-0.05, 1.05)
    axes[3].legend(fontsize=5, loc="lower right", handlelength=1.8, labelspacing=0.3, borderpad=0.3)
    figs["training_curves"] = fig

    fig, axes = figure("full", height=2.4, ncols=2)
    last = CHECKPOINTS - 1
    for sc in ("sqrt", "mup"):
        cos = _at(data, f"cosine_{last}", optimizer="adam", scaling=sc, lr=ALIGNMENT_LR)
        cos = cos[cos["d_k"] == cos["d_model"]].sort_values("d_k")
        logit = _at(data, f"target_logit_{last}", optimizer="adam", scaling=sc, lr=ALIGNMENT_LR)
        logit = logit[logit["d_k"] == logit["d_model"]].sort_values("d_k")
        q2 = _at(data, "q_square_final", optimizer="adam", scaling=sc, lr=ALIGNMENT_LR)
        k2 = _at(data, "k_square_final", optimizer="adam", scaling=sc, lr=ALIGNMENT_LR)
        q2, k2 = (x[x["d_k"] == x["d_model"]].sort_values("d_k")["mean"].to_numpy() for x in (q2, k2))
        d = cos["d_k"].to_numpy(dtype=float)
        c = 1 / np.sqrt(d) if sc == "sqrt" else 1 / d
        axes[0].errorbar(d, cos["mean"], yerr=2 * cos["mcse"], marker="o", ms=2.6, lw=1.0, color=SCALING_COLORS[sc], label=SCALING_LABELS[sc])
        axes[1].errorbar(d, logit["mean"], yerr=2 * logit["mcse"], marker="o", ms=2.6, lw=1.0, color=SCALING_COLORS[sc], label=SCALING_LABELS[sc])
        axes[1].plot(d, c * d * cos["mean"].to_numpy() * np.sqrt(q2 * k2), "x", ms=6, mew=1.0, color=SCALING_COLORS[sc])
        axes[1].plot(d, logit["mean"].iloc[0] * (d / d[0]) ** (0.5 if sc == "sqrt" else 0.0), ":", lw=0.9, color=SCALING_COLORS[sc])
    for ax, label in zip(axes, ("mean cos(query, target key)", "mean target logit")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"$d_k$ ($d_{model} = d_k$)")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=6)
    figs["training_alignment"] = fig
    return figs
