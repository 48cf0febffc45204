"""The small transformer on the plays of Shakespeare: validation loss against the learning rate, per width and scaling.

Two of the section's sentences, on a real model trained on real text.  The opening's: without
the division a large head cannot learn (here: the unscaled model, the scaled one, and the
folded control -- no division, W_Q's initialisation divided by sqrt(d_k), so the unscaled
model's forward pass without its saturated start).  And the paragraph on muP (under "The
assumption behind the argument, and when it fails"): 1/d_k is part of what makes the learning
rate transfer across widths -- Yang et al. (2022)'s Figure 1, loss against log2 of the rate, one
curve per width, for the standard parameterisation and for muP (their rules for every parameter
group, :mod:`stats.training.mup_rules`).  And QK-norm, the fix the section's paragraph on it
names: Wortsman et al. (2023)'s LR sensitivity (:func:`stats.lr_sensitivity`, a bootstrap MCSE
over seeds) and the attention-logit growth at large rates that it is meant to stop.  And the
muP paragraph's reason for 1/d_k, on a trained model: the largest attention logit and the
query-key cosine after training, against the width, at one rate for every width (muP's
protocol) and at each seed's own best rate.

Each row of a cell is one seed trained at every rate of its scaling's grid on the same draws
(:class:`stats.TextSweepSim`): the seed's own best rate is a per-seed outcome, its mean (with
an MCSE from the seeds) locates the minimum, and its least-squares slope against log2 d_model
is the drift in decades per doubling.  The dashed line is the bigram model's loss on the same
validation windows: the floor of a model that uses no context.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.settings.decisive import decisive_profile
from stats.settings.model import (TEXT_BATCH, TEXT_CONTEXT, TEXT_FULL_RUNS, TEXT_FULL_WIDTHS, TEXT_GRIDS, TEXT_HEADS,
                                  TEXT_PARAMETERISATIONS, TEXT_QUICK_RUNS, TEXT_QUICK_STEPS, TEXT_QUICK_WIDTHS, TEXT_RUNS,
                                  TEXT_SHARED_LR, TEXT_STEPS, TEXT_WARMUP, TEXT_WIDTHS)
from stats import lr_sensitivity
from stats.training import TEXT_VALIDATION_WINDOWS, TextSweepSim, bigram_loss, shakespeare_ids, validation_windows

from ._common import drift, mean_row, run
from ._data import StudyWriter, read_table

STUDY = "text_transfer"
NAMES = {"sqrt": "standard", "mup": "muP", "qknorm": "QK-norm", "none": "unscaled", "t5": "folded control"}
PALETTE = {"standard": "#0072b2", "muP": "#cc79a7", "QK-norm": "#e69f00", "unscaled": "#d55e00", "folded control": "#009e73"}
#: The statistics kept row by row, for the LR sensitivity's bootstrap over seeds.
_KEPT = ("initial_loss",)
_SETUP = (f"two layers with MLPs and {TEXT_HEADS} heads (d_k = d_model/{TEXT_HEADS}), context {TEXT_CONTEXT}, {TEXT_STEPS} "
          f"Adam steps of {TEXT_BATCH} windows ({TEXT_WARMUP} warm-up)")
FIGURES = {
    "text_transfer": dict(
        width="full",
        caption=f"The small transformer on the plays of Shakespeare ({_SETUP}): validation loss in nats per character "
        "against the Adam learning rate, one curve per width (colour), for the standard parameterisation (1/sqrt(d_k), "
        "one rate), muP (1/d_k, read-out variance d_0/d^2, hidden and read-out rates times d_0/d, d_0 = 32), QK-norm "
        "(unit queries and keys times a learned gain), the unscaled model and the folded control (no division, W_Q's "
        f"initialisation divided by sqrt(d_k)). Means over {TEXT_RUNS} seeds ({TEXT_FULL_RUNS} and width 256 under "
        "EVIDENCE=full), bands 2 MCSE (from so few seeds, a rough guide); a run that diverged scores its step-0 loss. "
        "Dashed: the bigram model on the same windows, the best a model without context can do. The standard model's "
        "minimum moves to smaller rates as the width grows, muP's does not; the unscaled model stays above the bigram "
        "level at every rate and width; the control reaches it only at small rates.",
        claims=("model-text-unscaled",),
    ),
    "text_best_rate": dict(
        width="full",
        caption="The same runs. Left: each seed's best grid rate (log10; mean over seeds, bars 2 MCSE, points shifted "
        "sideways to keep them apart) against the width, with its least-squares drift in decades per doubling of "
        "d_model (legend; where every seed of a width picks the same rate its MCSE is 0 and the fit floors it at 0.05, "
        "the grid's resolution being half a decade); a mean at a grid's edge is a bound, not a location. Right: each "
        "seed's validation loss at its own best rate, the bigram floor dashed.",
        claims=("model-text-unscaled",),
    ),
    "text_trained": dict(
        width="full",
        caption="What training leaves in the attention, the same runs. Left: the largest attention logit after "
        f"training at one Adam rate for every width ({TEXT_SHARED_LR:g}, in every parameterisation's grid; a draft, "
        "whose grids are every other rate, takes each grid's rate nearest it): muP's protocol, where the rate tuned at "
        "one width is used at all. Middle: the same at each seed's own best rate. Right: the query-key cosine at the "
        "own best rate, each query with the key it weights most, averaged over layers, heads and positions (dotted: "
        "the cosine at step 0, the mean over parameterisations). Means over seeds, bars 2 MCSE (from so few seeds, a "
        "rough guide), log scale for the logits. At one rate the standard and the unscaled model's logits grow with "
        "the width while muP's and QK-norm's stay level; at the own best rate, which falls with the width, the "
        "standard model's stay level too; the cosine is much the same in every model, so the unscaled logits' growth "
        "is length, not alignment.",
        claims=("model-text-unscaled",),
    ),
    "text_lr_sensitivity": dict(
        width="full",
        caption="The same runs, for QK-norm. Left: Wortsman et al. (2023)'s LR sensitivity -- the mean over the grid's "
        "rates of the loss (capped at the step-0 loss) minus the best rate's -- against the width, bars 2 bootstrap "
        "MCSE over seeds (from so few seeds, a rough guide); the standard model, muP and QK-norm share one grid (1e-3 to "
        "1e-1), the unscaled model and the control another, half a decade lower. A low value where no rate learns much "
        "(the unscaled model) says the curve is flat, not that training is robust: read it beside the loss at the best "
        "rate. Right: the largest attention logit after training at each grid's top rate, the logit growth QK-norm is "
        "meant to stop.",
        claims=("model-text-unscaled",),
    ),
}


def _full():
    return decisive_profile().name == "full"


def cells(*, quick):
    """Every (parameterisation, width) sweep of the study: EVIDENCE=full adds width 256; a draft trains
    the two narrowest widths a third of the steps, at every other rate of the grids (whole decades)."""
    widths = TEXT_QUICK_WIDTHS if quick else TEXT_FULL_WIDTHS if _full() else TEXT_WIDTHS
    steps = TEXT_QUICK_STEPS if quick else TEXT_STEPS
    return [TextSweepSim(d, scaling, TEXT_GRIDS[scaling][::2] if quick else TEXT_GRIDS[scaling], steps, n_heads=TEXT_HEADS,
                         mup_base=base, n_ctx=TEXT_CONTEXT, batch=TEXT_BATCH, warmup=TEXT_WARMUP)
            for _, scaling, base in TEXT_PARAMETERISATIONS for d in widths]


def runs(*, quick):
    """Seeds a cell trains (each seed trains its grid's rates)."""
    return TEXT_QUICK_RUNS if quick else TEXT_FULL_RUNS if _full() else TEXT_RUNS


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = cells(quick=quick)
    keep = {s.key: _KEPT + tuple(f"loss_at_{i}" for i in range(len(s.lrs))) for s in sims}
    res = run([(s, runs(quick=quick)) for s in sims], seed=seed, workers=workers, keep=keep, desc=STUDY, scheduler=scheduler)
    rows = [dict(parameterisation=NAMES[s.scaling], d_model=s.d_model, d_k=s.config.d_k, statistic=st,
                 **mean_row(res[s.key].summary(st)))
            for s in sims for st in s.statistics]
    cells_table = pd.DataFrame(rows)
    w.table("cells", cells_table)
    grids = {NAMES[s.scaling]: s.lrs for s in sims}
    w.table("grid", pd.DataFrame([dict(parameterisation=name, point=i, lr=lr)
                                  for name, lrs in grids.items() for i, lr in enumerate(lrs)]))
    train_ids, val_ids, vocabulary = shakespeare_ids()
    floor = bigram_loss(train_ids, validation_windows(val_ids, n_ctx=TEXT_CONTEXT, count=TEXT_VALIDATION_WINDOWS),
                        vocab=len(vocabulary))
    w.table("floor", pd.DataFrame([dict(model="bigram", loss=floor, log_vocab=float(np.log(len(vocabulary))),
                                        steps=sims[0].steps)]))
    drifts = []
    for name, g in cells_table[cells_table["statistic"] == "best_log_lr"].groupby("parameterisation", sort=False):
        slope, se = drift(g.sort_values("d_model"), width="d_model")
        drifts.append(dict(parameterisation=name, decades_per_doubling=slope, se=se))
    w.table("drift", pd.DataFrame(drifts))
    sensitivity = []
    for s in sims:
        r = res[s.key]
        losses = np.stack([r.rows(f"loss_at_{i}") for i in range(len(s.lrs))])
        e = lr_sensitivity(s.lrs, losses, r.rows("initial_loss"), seed=seed)
        sensitivity.append(dict(parameterisation=NAMES[s.scaling], d_model=s.d_model, lr_sensitivity=e.value, mcse=e.mcse,
                                n=e.n, lo=s.lrs[0], hi=s.lrs[-1]))
    w.table("lr_sensitivity", pd.DataFrame(sensitivity))
    w.table("trained", trained_table(sims, res))
    return w.close()


def shared_point(lrs):
    """The grid point at :data:`~stats.settings.model.TEXT_SHARED_LR`, or nearest it on the log scale (a draft's grids)."""
    return int(np.argmin(np.abs(np.log10(lrs) - np.log10(TEXT_SHARED_LR))))


def trained_table(sims, res):
    """The largest attention logit and the query-key cosine after training, per cell, at the shared rate and at the
    seeds' own best rates, and the cosine at step 0 (mean and MCSE over seeds)."""
    rows = []
    for s in sims:
        i = shared_point(s.lrs)
        for protocol, lr, logit, cosine in (("shared rate", s.lrs[i], f"logit_at_{i}", f"cosine_at_{i}"),
                                            ("own best rate", np.nan, "logit_best", "cosine_best"),
                                            ("step 0", np.nan, None, "initial_cosine")):
            row = dict(parameterisation=NAMES[s.scaling], d_model=s.d_model, protocol=protocol, lr=lr)
            for what, st in (("logit", logit), ("cosine", cosine)):
                m = mean_row(res[s.key].summary(st)) if st else dict(mean=np.nan, mcse=np.nan, n=0)
                row.update({f"{what}_mean": m["mean"], f"{what}_mcse": m["mcse"]})
            rows.append(row)
    return pd.DataFrame(rows)


def _stat(data, name, d, statistic):
    row = data[(data["parameterisation"] == name) & (data["d_model"] == d) & (data["statistic"] == statistic)].iloc[0]
    return row["mean"], row["mcse"]


def _dodged(widths, k, count):
    """The widths of the k-th of ``count`` series, shifted sideways on the log axis so equal points stay apart."""
    return np.asarray(widths, dtype=float) * 2.0 ** (0.06 * (k - (count - 1) / 2))


def _width_axis(ax, widths):
    """A log2 width axis with a tick at each width, labelled plainly."""
    import matplotlib as mpl

    ax.set_xscale("log", base=2)
    ax.set_xticks(widths)
    ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
    ax.set_xlabel(r"width $d_{model}$")


def _key(ax, source, title):
    """``ax`` emptied to hold the legend of ``source``'s series."""
    ax.axis("off")
    ax.legend(*source.get_legend_handles_labels(), loc="center left", fontsize=5.5, frameon=False, title=title,
              title_fontsize=6)


def figures(out):
    import matplotlib as mpl
    import seaborn as sns

    from ._style import figure, setup

    setup()
    data = read_table(out, STUDY, "cells")
    grid_table = read_table(out, STUDY, "grid")
    grids = {name: g.sort_values("point")["lr"].to_numpy() for name, g in grid_table.groupby("parameterisation")}
    floor = float(read_table(out, STUDY, "floor")["loss"].iloc[0])
    drifts = read_table(out, STUDY, "drift").set_index("parameterisation")
    names = list(dict.fromkeys(data["parameterisation"]))
    widths = sorted(set(data["d_model"]))
    colours = dict(zip(widths, sns.color_palette("viridis", len(widths))))
    figs = {}

    fig, axes = figure("full", height=2.6, ncols=len(names), sharey=True)
    for ax, name in zip(np.atleast_1d(axes), names):
        grid = grids[name]
        for d in widths:
            m, s = np.array([_stat(data, name, d, f"loss_at_{i}") for i in range(len(grid))]).T
            ax.plot(grid, m, "-o", ms=2.2, lw=1.0, color=colours[d], label=f"$d_{{model}}$={d}")
            ax.fill_between(grid, m - 2 * s, m + 2 * s, color=colours[d], alpha=0.15, lw=0)
        ax.axhline(floor, color="0.3", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlim(0.7 * grid_table["lr"].min(), 1.4 * grid_table["lr"].max())
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("Adam learning rate")
    axes = np.atleast_1d(axes)
    steps = int(read_table(out, STUDY, "floor")["steps"].iloc[0])
    axes[0].set_ylabel(f"validation loss after {steps} steps (nats/char)")
    axes[0].annotate("bigram", (grid_table["lr"].min(), floor), xytext=(0, 2), textcoords="offset points", fontsize=6,
                     color="0.3", va="bottom")
    axes[0].legend(fontsize=5.5, loc="upper right")
    figs["text_transfer"] = fig

    fig, axes = figure("full", height=2.6, ncols=3, gridspec_kw=dict(width_ratios=(1, 1, 0.8)))
    key, axes = axes[2], axes[:2]
    for k, name in enumerate(names):
        colour = PALETTE.get(name)
        x = _dodged(widths, k, len(names))
        best, best_se = np.array([_stat(data, name, d, "best_log_lr") for d in widths]).T
        slope, se = drifts.loc[name, "decades_per_doubling"], drifts.loc[name, "se"]
        axes[0].errorbar(x, best, yerr=2 * best_se, marker="o", ms=2.6, lw=1.0, capsize=1.5, color=colour,
                         label=f"{name}: {slope:+.2f} $\\pm$ {se:.2f}")
        loss, loss_se = np.array([_stat(data, name, d, "best_loss") for d in widths]).T
        axes[1].errorbar(x, loss, yerr=2 * loss_se, marker="o", ms=2.6, lw=1.0, capsize=1.5, color=colour)
    axes[1].axhline(floor, color="0.3", lw=0.8, ls="--")
    for ax in axes:
        _width_axis(ax, widths)
    axes[0].set_ylabel("best grid rate, log10 (per seed)")
    axes[1].set_ylabel("validation loss at the best rate")
    _key(key, axes[0], "drift (decades/doubling)")
    figs["text_best_rate"] = fig

    trained = read_table(out, STUDY, "trained")
    plain = mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    fig, axes = figure("full", height=2.6, ncols=4, gridspec_kw=dict(width_ratios=(1, 1, 1, 0.7)))
    key, axes = axes[3], axes[:3]
    panels = (("shared rate", "logit"), ("own best rate", "logit"), ("own best rate", "cosine"))
    for k, name in enumerate(names):
        x = _dodged(widths, k, len(names))
        for ax, (protocol, what) in zip(axes, panels):
            g = trained[(trained["parameterisation"] == name) & (trained["protocol"] == protocol)].sort_values("d_model")
            ax.errorbar(x, g[f"{what}_mean"], yerr=2 * g[f"{what}_mcse"], marker="o", ms=2.6, lw=1.0, capsize=1.5,
                        color=PALETTE.get(name), label=name)
    start = trained[trained["protocol"] == "step 0"].groupby("d_model")["cosine_mean"].mean()
    (step0,) = axes[2].plot(widths, start.loc[widths], ls=":", color="0.3", lw=0.9)
    rates = trained[trained["protocol"] == "shared rate"]["lr"]
    shared = f"{rates.iloc[0]:.2g}" if np.allclose(rates, rates.iloc[0]) else f"{rates.min():.2g} to {rates.max():.2g}"
    for ax in axes[:2]:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain)
    for ax in axes:
        _width_axis(ax, widths)
    axes[0].set_ylabel(f"largest attention logit, lr {shared}")
    axes[1].set_ylabel("largest attention logit, own best rate")
    axes[2].set_ylabel("query-key cosine, own best rate")
    axes[2].set_ylim(0, 1)
    handles, labels = axes[0].get_legend_handles_labels()
    key.axis("off")
    key.legend([*handles, step0], [*labels, "step 0 (cosine)"], loc="center left", fontsize=5.5, frameon=False,
               title="parameterisation", title_fontsize=6)
    figs["text_trained"] = fig

    sens = read_table(out, STUDY, "lr_sensitivity")
    fig, axes = figure("full", height=2.6, ncols=3, gridspec_kw=dict(width_ratios=(1, 1, 0.8)))
    key, axes = axes[2], axes[:2]
    for k, name in enumerate(names):
        colour = PALETTE.get(name)
        g = sens[sens["parameterisation"] == name].sort_values("d_model")
        x = _dodged(g["d_model"], k, len(names))
        top = len(grids[name]) - 1
        axes[0].errorbar(x, g["lr_sensitivity"], yerr=2 * g["mcse"], marker="o", ms=2.6, lw=1.0, capsize=1.5,
                         color=colour, label=f"{name}: {g['lo'].iloc[0]:.1e} to {g['hi'].iloc[0]:.1e}")
        logit, logit_se = np.array([_stat(data, name, d, f"logit_at_{top}") for d in widths]).T
        axes[1].errorbar(x, logit, yerr=2 * logit_se, marker="o", ms=2.6, lw=1.0, capsize=1.5, color=colour)
    axes[1].set_yscale("log")
    for ax in axes:
        _width_axis(ax, widths)
    axes[0].set_ylabel("LR sensitivity (nats/char)")
    axes[1].set_ylabel("largest attention logit, top rate")
    _key(key, axes[0], "grid (the right panel: its top rate)")
    figs["text_lr_sensitivity"] = fig
    return figs
