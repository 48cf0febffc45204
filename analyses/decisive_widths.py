"""The decisive cells' learning-rate searches: how fast each head learns at every rate searched, how
wide a window of rates works, and how long learning takes at the chosen rate.

Section: the opening (a head of the width real models use).  The claims ``decisive-*`` test the
shares that learn; this study reads the same searches (:func:`stats.lr_search.profile_search`,
cached on disk: no run of its own when the claims have run) at the evidence profile's widths
(``EVIDENCE=full``: d_k = 512 and 1024), and writes per head and cell

* every searched rate's restricted mean steps to sustained accuracy and capped probe loss, with
  their standard errors (``curves``);
* Wortsman et al.'s LR sensitivity and the window of rates within a tenth of the best loss's gain,
  from the coarse stage's half-decade grid, each with its bootstrap MCSE over whole seeds, and the
  Kaplan--Meier share learned and restricted mean steps at the chosen rate, from the confirm stage
  (Greenwood SEs) (``windows``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats import lr_sensitivity, lr_window, survival_to_accuracy
from stats.lr_search import profile_search
from stats.settings.decisive import decisive_profile

from ._data import StudyWriter, read_table

STUDY = "decisive_widths"
HEAD_LABELS = {"none": "no scaling", "sqrt": r"$1/\sqrt{d_k}$", "t5": "control (folded)"}
FIGURES = {
    "decisive_widths": dict(
        width="full",
        caption="The decisive cells' learning-rate searches at the evidence profile's widths: restricted mean steps "
        "to sustained 90% accuracy on the held-out probe, on a log scale (censored runs count the budget plus one, the "
        "dotted line) "
        "at every rate searched, for the unscaled head, the scaled head and the control (no division, 1/sqrt(d_k) "
        "folded into W_Q's initialisation); each rate's point from the stage with the most runs there, bars 2 "
        "standard errors; a star marks each head's chosen rate (open: a bound at the search's edge). One panel per "
        "shape and optimiser.",
        claims=("decisive-unscaled-learns", "decisive-control", "decisive-frozen"),
    ),
}


def simulate(out, *, seed, quick=False, workers=1):
    profile = decisive_profile()
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    curves, windows = [], []
    for shape, optimizer, warmup, head in profile.searches():
        search = profile_search(profile, shape, head, optimizer, warmup)
        cell = dict(profile=profile.name, d_k=shape[0], d_model=shape[1], optimizer=optimizer, warmup=warmup, head=head)
        for stage in search.stages:
            for p in stage.points:
                curves.append(dict(cell, stage=stage.name, lr=p.lr, runs=p.n, steps_mean=p.steps_mean, steps_se=p.steps_se,
                                   loss_mean=p.loss_mean, loss_se=p.loss_se, chosen=p.lr == search.rate))
        coarse = search.stage("coarse")
        window = lr_window(*coarse.losses(), seed=seed)
        sensitivity = lr_sensitivity(*coarse.losses(), seed=seed)
        row = dict(cell, rate=search.rate, interior=search.interior, bound=search.bound, coarse_runs=coarse.runs,
                   sensitivity=sensitivity.value, sensitivity_mcse=sensitivity.mcse, window_decades=window.decades,
                   window_mcse=window.mcse, window_low=window.low, window_high=window.high,
                   window_reaches_edge=window.reaches_edge)
        confirm = [s for s in search.stages if s.name == "confirm"]
        if confirm:
            at = next(p for p in confirm[0].points if p.lr == search.rate)
            km = survival_to_accuracy(at.steps_rows, steps=profile.budget)
            row.update(confirm_runs=at.n, censored=km.censored, share_learned=km.share_learned.value,
                       share_learned_se=km.share_learned.mcse, steps_rmean=km.restricted_mean.value,
                       steps_rmean_se=km.restricted_mean.mcse)
        windows.append(row)
    w.table("curves", pd.DataFrame(curves))
    w.table("windows", pd.DataFrame(windows))
    return w.close(profile=profile.name, budget=profile.budget)


def _variant(optimizer, warmup):
    name = {"sgd": "SGD", "adam": "Adam", "adafactor": "Adafactor"}[optimizer]
    return f"{name}, warm-up {warmup}" if warmup else name


def _select(frame, **values):
    """The rows of ``frame`` with these column values (columns by name: ``head`` is also a method)."""
    keep = np.ones(len(frame), dtype=bool)
    for column, value in values.items():
        keep &= (frame[column] == value).to_numpy()
    return frame[keep]


def figures(out):
    from ._data import read_manifest
    from ._style import SCALING_COLORS, figure, setup

    setup()
    budget = read_manifest(out, STUDY)["budget"]
    curves, windows = read_table(out, STUDY, "curves"), read_table(out, STUDY, "windows")
    colors = {"none": SCALING_COLORS["none"], "sqrt": SCALING_COLORS["sqrt"], "t5": "#009e73"}
    panels = list(curves[["d_k", "d_model", "optimizer", "warmup"]].drop_duplicates().itertuples(index=False))
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = figure("full", height=2.0 * nrows + 0.8, nrows=nrows, ncols=ncols, sharey=True, squeeze=False)
    for ax, (d_k, d_model, optimizer, warmup) in zip(axes.flat, panels):
        here = _select(curves, d_k=d_k, d_model=d_model, optimizer=optimizer, warmup=warmup)
        for head, g in here.groupby("head", sort=False):
            # One point a rate: the stage with the most runs there.
            g = g.sort_values("runs").groupby("lr").tail(1).sort_values("lr")
            ax.errorbar(g.lr, g.steps_mean, yerr=2 * g.steps_se, color=colors[head], marker="o", ms=2.6, lw=1.0,
                        capsize=1.5, label=HEAD_LABELS[head])
            w = _select(windows, d_k=d_k, d_model=d_model, optimizer=optimizer, warmup=warmup, head=head).iloc[0]
            y = g.loc[g.lr == w.rate, "steps_mean"]
            ax.plot([w.rate], [y.iloc[0] if len(y) else budget + 1], marker="*", ms=8, color=colors[head],
                    mfc=colors[head] if w.interior else "white", ls="none")
        ax.axhline(budget + 1, color="0.4", lw=0.8, ls=":")
        # Log steps: the scaled head learns in a few steps, the unscaled in hundreds.
        ax.set(xscale="log", yscale="log", ylim=(2, 2 * (budget + 1)))
        ax.set_title(f"$d_k$ = {d_k}, $d_{{model}}$ = {d_model}\n{_variant(optimizer, warmup)}", fontsize=7)
        ax.set_xlabel("learning rate")
    for ax in axes[:, 0]:
        ax.set_ylabel("steps to sustained accuracy")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    spare = list(axes.flat)[len(panels):]
    for ax in spare:
        ax.axis("off")
    if spare:  # the legend in the first empty panel
        spare[0].legend(handles, labels, loc="center", frameon=False)
    else:  # below the bottom row's middle panel (an axes' legend: the saving layout makes room for it)
        axes[-1, ncols // 2].legend(handles, labels, loc="upper center", ncol=3, frameon=False,
                                    bbox_to_anchor=(0.5, -0.32))
    return {"decisive_widths": fig}
