"""The calibration figure: every null check's p-values over seeds against the uniform law.

Reads what ``python -m stats calibrate`` wrote (``calibration-pvalues.csv`` and
``calibration.csv``) and draws a QQ plot -- one thin line per check, the 99% pointwise
band of uniform order statistics, miscalibrated checks in colour -- as
``figures/calibration.png``/``.pdf``.  Run by ``make calibrate``:
``python -m analyses.calibration --out reports``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

CAPTION = (
    "The suite's tests under true nulls: each null check's p-values over independent seeds "
    "(sorted) against uniform quantiles, with the 99% band of uniform order statistics. "
    "A line below the band rejects too often; above it, the test is conservative."
)


def figure(out):
    from ._style import figure as new_figure
    from ._style import setup

    out = Path(out)
    pv = pd.read_csv(out / "calibration-pvalues.csv")
    verdicts = pd.read_csv(out / "calibration.csv").set_index(["claim", "check"])["verdict"]
    setup()
    fig, ax = new_figure("column", height=3.2)
    colors = {"calibrated": "#7f7f7f", "conservative": "#0072b2", "MISCALIBRATED": "#d55e00"}
    seen = set()
    n_seeds = 0
    for (claim, check), g in pv.groupby(["claim", "check"], sort=True):
        p = np.sort(g["p_value"].dropna().to_numpy())
        if p.size < 2:
            continue
        n_seeds = max(n_seeds, p.size)
        u = (np.arange(1, p.size + 1) - 0.5) / p.size
        v = verdicts.get((claim, check), "calibrated")
        ax.plot(u, p, color=colors.get(v, "#7f7f7f"), lw=0.5 if v == "calibrated" else 1.0, alpha=0.35 if v == "calibrated" else 0.9,
                label=v if v not in seen else None, zorder=1 if v == "calibrated" else 3)
        seen.add(v)
    if n_seeds:
        k = np.arange(1, n_seeds + 1)
        u = (k - 0.5) / n_seeds
        lo, hi = sps.beta.ppf(0.005, k, n_seeds + 1 - k), sps.beta.ppf(0.995, k, n_seeds + 1 - k)
        ax.fill_between(u, lo, hi, color="black", alpha=0.12, lw=0, label="99% band (uniform)", zorder=2)
    ax.plot([0, 1], [0, 1], color="black", lw=0.8, zorder=2)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="uniform quantile", ylabel="sorted p-value",
           title=f"{pv.groupby(['claim', 'check']).ngroups} null checks over {n_seeds} seeds")
    ax.legend(loc="upper left", frameon=True)
    return fig


def render(out, *, draft=False):
    from ._style import save, save_captioned

    fig = figure(out)
    paths = save(fig, Path(out), "calibration", title="calibration", draft=draft, close=False)
    save_captioned(fig, Path(out), "calibration", CAPTION, title="calibration", draft=draft)
    return paths


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m analyses.calibration", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="reports", help="folder holding calibration.csv (default: reports)")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    out = Path(args.out)
    missing = [n for n in ("calibration.csv", "calibration-pvalues.csv") if not (out / n).exists()]
    if missing:
        parser.exit(2, f"python -m analyses.calibration: no {missing[0]} under {out} (run `python -m stats calibrate` first)\n")
    for p in render(out):
        print(f"calibration: wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
