"""The plays at the head widths the section names: one head of d_k = d_model = 64, 128 and 256, for the
scaled, unscaled and folded-control models, under both comparison protocols (``EVIDENCE=full`` only).

The section's opening says a large unscaled head cannot learn; ``model-text-unscaled`` tests it on the
plays at d_k = 64, and ``text_transfer`` sweeps widths with two heads (d_k = d_model / 2, to 128 under
``EVIDENCE=full``).  Here the small transformer of those runs (:class:`stats.TextSweepSim`: two layers
with MLPs, Adam) has one head, so d_k reaches 256, the width the opening names, at the cost of
d_model = 256.  Every model trains every rate of one half-decade grid on the same draws, so the two
protocols of ``docs/findings.md`` read the same runs: each model at its own best rate (per seed) and
every model at the scaled model's best rate of the width (the grid rate with its smallest mean loss).
A run *uses the context* when its validation loss ends below the bigram model's on the same windows
(the floor of a model that uses none).  Three seeds a cell: directions with their MCSE, not graded
findings (the graded claim is ``model-text-unscaled``, at d_k = 64).

The study runs under ``EVIDENCE=full`` (its cost: docs/performance.md); ``python -m analyses text_widths``
runs it under any profile.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.settings.model import (TEXT_BATCH, TEXT_CONTEXT, TEXT_HEAD_GRID, TEXT_HEAD_QUICK_WIDTHS, TEXT_HEAD_RUNS,
                                  TEXT_HEAD_WIDTHS, TEXT_QUICK_RUNS, TEXT_QUICK_STEPS, TEXT_STEPS, TEXT_WARMUP)
from stats.training import TEXT_VALIDATION_WINDOWS, TextSweepSim, bigram_loss, shakespeare_ids, validation_windows

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "text_widths"
#: The evidence profile whose build runs this study (``make reports EVIDENCE=full``).
EVIDENCE = "full"
NAMES = {"sqrt": "scaled", "none": "unscaled", "t5": "folded control"}
PALETTE = {"scaled": "#0072b2", "unscaled": "#d55e00", "folded control": "#009e73"}
#: Per run and grid rate: what the runs table keeps.
_PER_RATE = ("loss", "beats_bigram", "logit", "diverged")
_SETUP = (f"two layers with MLPs and one head, d_k = d_model, context {TEXT_CONTEXT}, {TEXT_STEPS} Adam steps of "
          f"{TEXT_BATCH} windows ({TEXT_WARMUP} warm-up), every model at every rate of one grid")
FIGURES = {
    "text_widths": dict(
        width="full",
        caption=f"The small transformer on the plays with one head as wide as the model ({_SETUP}). The first "
        "three panels: validation loss in nats per character against the Adam learning rate at d_k = 64, 128 and 256, "
        "one curve per model: the scaled head, the unscaled head and the folded control (no division, W_Q's "
        "initialisation divided by sqrt(d_k): the unscaled forward pass without its saturated start); means over seeds, "
        "bands 2 MCSE; dashed, the bigram model on the same windows, the best a model without context can do; a run "
        "that diverged scores its step-0 loss. Last panel: how many seeds end below the bigram's loss, at each model's "
        "own best rate (filled, solid) and at the scaled model's best rate of the width (open, dotted: the shared-rate "
        f"protocol). {TEXT_HEAD_RUNS} seeds a cell: directions, not graded findings (the graded claim is "
        "model-text-unscaled, at d_k = 64).",
        claims=("model-text-unscaled",),
    ),
}


def cells(*, quick):
    """Every (model, width) sweep: a draft trains the narrowest width a third of the steps at every other rate."""
    widths = TEXT_HEAD_QUICK_WIDTHS if quick else TEXT_HEAD_WIDTHS
    return [TextSweepSim(d, scaling, TEXT_HEAD_GRID[::2] if quick else TEXT_HEAD_GRID, TEXT_QUICK_STEPS if quick else TEXT_STEPS,
                         n_heads=1, n_ctx=TEXT_CONTEXT, batch=TEXT_BATCH, warmup=TEXT_WARMUP)
            for scaling in NAMES for d in widths]


def shared_points(mean_losses):
    """``{width: grid point}``: at each width, the point where the scaled model's mean loss is least (the
    shared-rate protocol's rate), from ``{(scaling, width): mean loss at each grid point}``."""
    return {d: int(np.argmin(losses)) for (scaling, d), losses in mean_losses.items() if scaling == "sqrt"}


def protocols_table(sims, res):
    """Per (model, width): the share of seeds using the context at the model's own best rate and at the scaled
    model's best rate of the width (:func:`shared_points`), each with its MCSE."""
    shared = shared_points({(s.scaling, s.d_model): [mean_row(res[s.key].summary(f"loss_at_{i}"))["mean"]
                                                     for i in range(len(s.lrs))] for s in sims})
    rows = []
    for s in sims:
        i = shared[s.d_model]
        for protocol, lr, st in (("own best rate", np.nan, "beats_bigram_best"),
                                 ("shared rate", s.lrs[i], f"beats_bigram_at_{i}")):
            rows.append(dict(model=NAMES[s.scaling], d_k=s.d_model, protocol=protocol, lr=lr,
                             **mean_row(res[s.key].summary(st))))
    return pd.DataFrame(rows)


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = cells(quick=quick)
    runs = TEXT_QUICK_RUNS if quick else TEXT_HEAD_RUNS
    keep = {s.key: ("best_log_lr",) + tuple(f"{st}_at_{i}" for st in _PER_RATE for i in range(len(s.lrs))) for s in sims}
    res = run([(s, runs) for s in sims], seed=seed, workers=workers, keep=keep, desc=STUDY, scheduler=scheduler)
    w.table("cells", pd.DataFrame([dict(model=NAMES[s.scaling], d_k=s.d_model, statistic=st,
                                        **mean_row(res[s.key].summary(st)))
                                   for s in sims for st in s.statistics]))
    w.table("runs", pd.DataFrame([dict(model=NAMES[s.scaling], d_k=s.d_model, seed=k, lr=lr, steps=s.steps,
                                       best_lr=float(10.0 ** res[s.key].rows("best_log_lr")[k]),
                                       **{st: float(res[s.key].rows(f"{st}_at_{i}")[k]) for st in _PER_RATE})
                                  for s in sims for k in range(runs) for i, lr in enumerate(s.lrs)]))
    w.table("protocols", protocols_table(sims, res))
    train_ids, val_ids, vocabulary = shakespeare_ids()
    floor = bigram_loss(train_ids, validation_windows(val_ids, n_ctx=TEXT_CONTEXT, count=TEXT_VALIDATION_WINDOWS),
                        vocab=len(vocabulary))
    w.table("floor", pd.DataFrame([dict(model="bigram", loss=floor, steps=sims[0].steps)]))
    return w.close()


def figures(out):
    import matplotlib as mpl

    from ._style import figure, setup

    setup()
    runs, protocols = read_table(out, STUDY, "runs"), read_table(out, STUDY, "protocols")
    floor, steps = (float(v) for v in read_table(out, STUDY, "floor")[["loss", "steps"]].iloc[0])
    widths = sorted(runs["d_k"].unique())
    models = [m for m in NAMES.values() if m in set(runs["model"])]
    fig, axes = figure("full", ncols=len(widths) + 1, height=2.5)
    loss_axes, share_ax = axes[:-1], axes[-1]
    for ax, d in zip(loss_axes, widths):
        for model in models:
            r = runs[(runs["model"] == model) & (runs["d_k"] == d)].groupby("lr")["loss"]
            mean, n = r.mean(), r.count()
            se = (r.std(ddof=1) / np.sqrt(n)).fillna(0.0)
            ax.plot(mean.index, mean, "-o", ms=2.4, lw=1.0, color=PALETTE[model], label=model)
            ax.fill_between(mean.index, mean - 2 * se, mean + 2 * se, color=PALETTE[model], alpha=0.15, lw=0)
        ax.axhline(floor, color="0.3", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_title(f"$d_k = d_{{model}} = {d}$", fontsize=8)
        ax.set_xlabel("Adam learning rate")
    top = runs["loss"].quantile(0.98)
    for ax in loss_axes:
        ax.set_ylim(floor - 0.35, max(top, floor) + 0.1)
    loss_axes[0].set_ylabel(f"validation loss after {steps:g} steps (nats/char)")
    loss_axes[0].annotate("bigram", (runs["lr"].min(), floor), xytext=(0, 2), textcoords="offset points", fontsize=6,
                          color="0.3", va="bottom")
    loss_axes[0].legend(fontsize=6, loc="lower left")
    offsets = dict(zip(models, np.linspace(-0.1, 0.1, len(models))))
    for model in models:
        for protocol, filled in (("own best rate", True), ("shared rate", False)):
            p = protocols[(protocols["model"] == model) & (protocols["protocol"] == protocol)].sort_values("d_k")
            x = p["d_k"].to_numpy(dtype=float) * 2.0 ** (offsets[model] + (0.03 if filled else -0.03))
            # Counts of a few seeds: their MCSE (up to a third) would draw bars across the whole axis.
            share_ax.plot(x, p["mean"] * p["n"], color=PALETTE[model], lw=0.9 if filled else 0.6,
                          ls="-" if filled else ":", marker="o", ms=3.5, mfc=PALETTE[model] if filled else "white")
    share_ax.set_ylim(-0.2, protocols["n"].max() + 0.2)
    share_ax.set_yticks(range(int(protocols["n"].max()) + 1))
    share_ax.set_xscale("log", base=2)
    share_ax.set_xticks(widths)
    share_ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    share_ax.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
    share_ax.set_xlabel(r"$d_k$ ($= d_{model}$)")
    share_ax.set_ylabel(f"seeds below the bigram (of {int(protocols['n'].max())})")
    return {"text_widths": fig}
