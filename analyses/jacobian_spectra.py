"""Softmax-Jacobian spectra of fresh heads against the width, with and without scaling.

Section "The Jacobian of softmax, and what saturation does to it": the claim "a saturated
softmax has a zero Jacobian" as a measured rate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.models.spectra import SpectrumSim
from stats.settings.fresh import SPECTRA_KEYS as T, SPECTRA_QUICK_ROWS, SPECTRA_ROWS, SPECTRA_WIDTHS as WIDTHS

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "jacobian_spectra"
STATS = ("lam_max", "eff_rank", "tr_j", "tr_j2")
FIGURES = {
    "jacobian_spectra": dict(
        width="full",
        caption="Spectrum of the softmax Jacobian diag(a) - a a^T on the rows of a fresh head (32 keys) against the width: "
        "its trace, the sum of squared eigenvalues tr J^2 (the mean squared gradient passed to the scores), and the "
        "effective rank (sum l)^2 / sum l^2, computed from the weights (eigenvalues of a nearly one-hot row are "
        "rounding noise). Without scaling tr J and tr J^2 fall like d_k^(-1/2) (dotted, under the data); with "
        "1/sqrt(d_k) they stay put. Markers: Monte Carlo means (2 MCSE bars); bands: the middle half of the rows, whose "
        "lower edge without scaling drops below the axis (1e-4) from d_k = 256 to 1024, and the whole band from "
        "4096 (tr J^2) and 16384 (tr J): the typical row passes no gradient and the mean is carried by the few "
        "nearly tied ones.",
        claims=("jacobian-spectrum", "saturated-jacobian-vanishes", "jacobian-gradient-norm"),
    ),
}


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    sims = [SpectrumSim(d, T, sc) for sc in ("none", "sqrt") for d in WIDTHS]
    n = SPECTRA_QUICK_ROWS if quick else SPECTRA_ROWS
    res = run([(s, n) for s in sims], seed=seed, workers=workers, keep={s.key: STATS for s in sims}, scheduler=scheduler)
    rows, quant = [], []
    for s in sims:
        r = res[s.key]
        for stat in STATS:
            rows.append(dict(d_k=s.d_k, scaling=s.scaling, statistic=stat, **mean_row(r.summary(stat))))
            q = np.quantile(r.rows(stat), [0.1, 0.25, 0.5, 0.75, 0.9])
            quant.append(dict(d_k=s.d_k, scaling=s.scaling, statistic=stat, q10=q[0], q25=q[1], q50=q[2], q75=q[3], q90=q[4]))
    w.table("means", pd.DataFrame(rows))
    w.table("quantiles", pd.DataFrame(quant))
    return w.close()


def figures(out):
    from ._style import SCALING_COLORS, SCALING_LABELS, figure, setup

    setup()
    means = read_table(out, STUDY, "means")
    quant = read_table(out, STUDY, "quantiles")
    fig, axes = figure("full", height=2.4, ncols=3)
    labels = {"tr_j": r"$\mathrm{tr}\,J = 1 - \|a\|^2$", "tr_j2": r"$\mathrm{tr}\,J^2 = E\|Jg\|^2$", "eff_rank": "effective rank"}
    for ax, stat in zip(axes, ("tr_j", "tr_j2", "eff_rank")):
        for sc in ("none", "sqrt"):
            m = means[(means["statistic"] == stat) & (means["scaling"] == sc)]
            q = quant[(quant["statistic"] == stat) & (quant["scaling"] == sc)]
            ax.fill_between(q["d_k"], q["q25"], q["q75"], color=SCALING_COLORS[sc], alpha=0.18, lw=0)
            ax.errorbar(m["d_k"], m["mean"], yerr=2 * m["mcse"], fmt="-o", ms=2.6, color=SCALING_COLORS[sc], label=SCALING_LABELS[sc])
        if stat != "eff_rank":
            m = means[(means["statistic"] == stat) & (means["scaling"] == "none")]
            ref = m[m["d_k"] == 1024]["mean"].iloc[0]
            d = np.array([64.0, 16384.0])
            ax.plot(d, ref * (d / 1024) ** -0.5, color="0.2", ls=":", lw=1.1, label=r"$\propto d_k^{-1/2}$")
            ax.set_yscale("log")
            ax.set_ylim(1e-4, 2)  # the unscaled band's lower quartile falls far below: the typical row is dead
        ax.set_xscale("log", base=2)
        ax.set(xlabel=r"key width $d_k$", ylabel=labels[stat])
    axes[0].legend(loc="lower left", frameon=True)
    return {"jacobian_spectra": fig}
