"""The decisive cells' learning-rate searches: how fast each head learns at every rate searched, how
wide a window of rates works, and how long learning takes at the chosen rate.

Section: the opening (a head of the width real models use).  The claims ``decisive-*`` test the
shares that learn; this study reads the same searches (:func:`stats.lr_search.profile_search`,
cached on disk: no run of its own when the claims have run) at the evidence profile's widths
(``EVIDENCE=full``: d_k = 512 and 1024), and writes per head and cell

* every searched rate's restricted mean steps to sustained accuracy and capped probe loss, with
  their standard errors, and how many of its runs the search gave up on, after which step
  (``curves``; such a rate cannot be chosen, and its means are not estimates: they read an
  abandoned run as censored, where it stopped);
* Wortsman et al.'s LR sensitivity and the window of rates within a tenth of the best loss's gain,
  from the coarse stage's half-decade grid, each with its bootstrap MCSE over whole seeds, and the
  Kaplan--Meier share learned and restricted mean steps at the chosen rate, from the confirm stage
  (Greenwood SEs), with the trained mean target logit (the score the softmax is given for a query's
  right key) and query--target-key cosine on the held-out probe, means over the confirm runs with
  their standard errors (``windows``);
* at the chosen rate, the share of the probe's queries still on the key they chose at step 0 at
  every checkpoint, mean over the confirm runs with its standard error (``frozen``): the pattern
  over time.

A run stops once its accuracy is sustained, so "trained" and a later checkpoint read a run that
stopped where it stopped: the heads are compared at the point each learned, or at the budget.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats import lr_sensitivity, lr_window, mean_estimate, survival_to_accuracy
from stats.lr_search import profile_searches
from stats.settings.decisive import decisive_profile
from stats.training import checkpoint_steps

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
        "standard errors; a star marks each head's chosen rate (open: a bound at the search's edge). A rate the search "
        "gave up on, once it could no longer be chosen (its runs stopped early, so no mean), is drawn only where another "
        "stage ran it to the end. One panel per shape and optimiser.",
        claims=("decisive-unscaled-learns", "decisive-control", "decisive-frozen"),
    ),
    "decisive_pattern": dict(
        width="full",
        caption="The attention pattern over training at each head's chosen rate: the share of the held-out probe's "
        "queries whose chosen key is still the one they chose at step 0, mean over the confirm stage's runs, bars 2 "
        "standard errors (a run that learned and stopped is read where it stopped; a head that has learned keeps its "
        "step-0 choice only where that choice was right, about one query in n_keys). One panel per shape and optimiser.",
        claims=("decisive-frozen",),
    ),
    "decisive_trained": dict(
        width="full",
        caption="What training left at each head's chosen rate, per cell (shape, optimiser): the mean logit of a "
        "query's right key on the held-out probe (top; the score the softmax is given, after any division) and the "
        "mean cosine of a query and its right key (bottom), means over the confirm stage's runs, bars 2 standard errors; "
        "read where each run stopped, having learned, or at the budget.",
        claims=("decisive-correlated-after",),
    ),
}


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    profile = decisive_profile()
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    curves, windows, frozen = [], [], []
    steps_at = checkpoint_steps(profile.budget)
    for (shape, optimizer, warmup, head), search in profile_searches(profile, workers=workers, scheduler=scheduler).items():
        cell = dict(profile=profile.name, d_k=shape[0], d_model=shape[1], optimizer=optimizer, warmup=warmup, head=head)
        for stage in search.stages:
            for p in stage.points:
                curves.append(dict(cell, stage=stage.name, lr=p.lr, runs=p.n, steps_mean=p.steps_mean, steps_se=p.steps_se,
                                   loss_mean=p.loss_mean, loss_se=p.loss_se, chosen=p.lr == search.rate,
                                   abandoned=p.abandoned, give_up_after=p.give_up_after))
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
                       steps_rmean_se=km.restricted_mean.mcse, **_mean_se("logit", at.logit_rows),
                       **_mean_se("cosine", at.cosine_rows))
            shares = np.asarray(at.frozen_rows)
            for k, step in enumerate(steps_at):
                frozen.append(dict(cell, rate=search.rate, runs=at.n, checkpoint=k, step=step,
                                   **_mean_se("share", shares[:, k])))
        windows.append(row)
    w.table("curves", pd.DataFrame(curves))
    w.table("windows", pd.DataFrame(windows))
    w.table("frozen", pd.DataFrame(frozen))
    return w.close(profile=profile.name, budget=profile.budget)


def _mean_se(name, rows):
    """``{name}_mean`` and ``{name}_se``: the mean of ``rows`` and its standard error (:func:`stats.mean_estimate`)."""
    e = mean_estimate(np.asarray(rows, dtype=float))
    return {f"{name}_mean": float(e.value), f"{name}_se": float(e.mcse)}


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
    fig, axes, ncols = _panel_grid(panels, figure)
    for ax, (d_k, d_model, optimizer, warmup) in zip(axes.flat, panels):
        here = _select(curves, d_k=d_k, d_model=d_model, optimizer=optimizer, warmup=warmup)
        for head, g in here.groupby("head", sort=False):
            # One point a rate: the stage with the most runs there, of those that gave up on none (a
            # point with abandoned runs says only that its rate cannot be chosen: no mean to draw).
            g = g[g.abandoned == 0].sort_values("runs").groupby("lr").tail(1).sort_values("lr")
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
    _legend(axes, panels, ncols)
    return {"decisive_widths": fig, "decisive_pattern": _pattern_figure(out, colors),
            "decisive_trained": _trained_figure(out, colors)}


def _panel_grid(panels, figure):
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = figure("full", height=2.0 * nrows + 0.8, nrows=nrows, ncols=ncols, sharey=True, squeeze=False)
    return fig, axes, ncols


def _legend(axes, panels, ncols):
    """The heads' legend in the first empty panel, else below the bottom row's middle panel."""
    handles, labels = axes.flat[0].get_legend_handles_labels()
    spare = list(axes.flat)[len(panels):]
    for ax in spare:
        ax.axis("off")
    if spare:
        spare[0].legend(handles, labels, loc="center", frameon=False)
    else:
        axes[-1, ncols // 2].legend(handles, labels, loc="upper center", ncol=3, frameon=False, bbox_to_anchor=(0.5, -0.32))


def _pattern_figure(out, colors):
    from ._style import figure

    frozen = read_table(out, STUDY, "frozen")
    panels = list(frozen[["d_k", "d_model", "optimizer", "warmup"]].drop_duplicates().itertuples(index=False))
    fig, axes, ncols = _panel_grid(panels, figure)
    for ax, (d_k, d_model, optimizer, warmup) in zip(axes.flat, panels):
        here = _select(frozen, d_k=d_k, d_model=d_model, optimizer=optimizer, warmup=warmup)
        for head, g in here.groupby("head", sort=False):
            g = g.sort_values("step")
            ax.errorbar(g.step, g.share_mean, yerr=2 * g.share_se, color=colors[head], marker="o", ms=2.6, lw=1.0,
                        capsize=1.5, label=f"{HEAD_LABELS[head]} (lr {g.rate.iloc[0]:g})")
        ax.axhline(0.9, color="0.4", lw=0.8, ls=":")  # the frozen claim's bar: 90% of choices kept
        ax.set(ylim=(-0.03, 1.03))
        ax.set_title(f"$d_k$ = {d_k}, $d_{{model}}$ = {d_model}\n{_variant(optimizer, warmup)}", fontsize=7)
        ax.set_xlabel("training step")
        ax.legend(fontsize=5.5, frameon=False, loc="upper right")
    for ax in axes[:, 0]:
        ax.set_ylabel("queries on their step-0 key")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    return fig


def _trained_figure(out, colors):
    from ._style import figure

    windows = read_table(out, STUDY, "windows").dropna(subset=["logit_mean"])
    cells = list(windows[["d_k", "d_model", "optimizer", "warmup"]].drop_duplicates().itertuples(index=False))
    # One panel above the other, each the page's width: the cells' labels need it once a profile has many.
    fig, axes = figure("full", height=4.4, nrows=2, sharex=True)
    offsets = {"none": -0.2, "sqrt": 0.0, "t5": 0.2}
    for ax, (name, label) in zip(axes, (("logit", "trained logit of the right key"),
                                        ("cosine", "trained cosine of query and right key"))):
        for head, g in windows.groupby("head", sort=False):
            x = [cells.index(c) + offsets[head] for c in g[["d_k", "d_model", "optimizer", "warmup"]].itertuples(index=False)]
            ax.errorbar(x, g[f"{name}_mean"], yerr=2 * g[f"{name}_se"], color=colors[head], marker="o", ms=3, lw=0,
                        elinewidth=1.0, capsize=1.5, label=HEAD_LABELS[head])
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels([f"{d_k}/{d_model}\n{_variant(o, w).replace(', ', chr(10))}" for d_k, d_model, o, w in cells],
                           fontsize=5.5)
        ax.set_ylabel(label)
        if name == "cosine":
            ax.set_xlabel("$d_k$/$d_{model}$, optimiser")
            ax.axhline(0.0, color="0.4", lw=0.8, ls=":")
    axes[0].legend(fontsize=6, frameon=False)
    return fig
