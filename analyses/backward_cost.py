"""What the backward pass costs: FLOPs counted in the code, time measured, and peak memory
of the dense and the tiled (FlashAttention-style) backward pass.

Section "The backward pass of attention".  This is the one *measured* study: its times
come from this machine's clock and differ from run to run (its manifest says so, and the
determinism tests leave it out); the FLOP counts and tracemalloc's peak memory are exact.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import pandas as pd

from stats.exact.attention import attention_backward, scaled_dot_product_attention
from stats.exact.cost import attention_matmul_flops, count_matmuls
from stats.exact.memory import peak_memory
from stats.exact.tiled import tiled_attention_backward, tiled_attention_forward
from stats.settings.numerics import (COST_BLOCK as BLOCK, COST_LENGTHS as LENGTHS, COST_QUICK_LENGTHS, COST_QUICK_REPEATS,
                                     COST_REPEATS, COST_WIDE_FROM, COST_WIDE_REPEATS, COST_WIDTH as D)

from ._data import StudyWriter, read_table

STUDY = "backward_cost"
MEASURED = True
FIGURES = {
    "backward_cost": dict(
        width="full",
        caption="Left: peak memory of the dense backward pass, which keeps the T x T weights, and of the tiled one, which "
        "recomputes them tile by tile from the row log-sum-exp (d = 64, float32, tiles of 256 keys; fitted growth "
        "exponents in the legend). Right: the backward pass's matrix-product FLOPs over the forward's, counted in the "
        "code (exactly 2), beside its measured time over the forward's on one core of this machine (median and "
        "quartiles over repeated pairs, each the fastest of three runs). The time runs above the count, which covers "
        "matrix products only: the softmax's backward makes more elementwise passes over the T x T arrays than its "
        "forward does.",
        claims=("backward-flops", "tiled-equals-dense"),
    ),
}


def _median_ratio(f, g, reps, inner=3):
    """Median and quartiles over ``reps`` pairs of (fastest of ``inner`` runs of f) / (fastest
    of ``inner`` runs of g), the two timed back to back, BLAS on one thread.

    Other processes (``make reports`` runs steps side by side) only ever add time, so each
    side's minimum is its own cost, and their ratio is stable where a ratio of single
    timings is not (quartiles 1.5-5 at T = 512 in one build).
    """
    from threadpoolctl import threadpool_limits

    def fastest(fn):
        best = math.inf
        for _ in range(inner):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best

    with threadpool_limits(limits=1):
        f(), g()
        ratios = [fastest(f) / fastest(g) for _ in range(reps)]
    return statistics.median(ratios), float(np.quantile(ratios, 0.25)), float(np.quantile(ratios, 0.75))


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    rows = []
    for T in COST_QUICK_LENGTHS if quick else LENGTHS:
        Q, K, V, dO = (rng.standard_normal((T, D), dtype=np.float32) for _ in range(4))
        O, lse = tiled_attention_forward(Q, K, V, block_size=BLOCK)
        dense = peak_memory(lambda: attention_backward(Q, K, V, dO))
        tiled = peak_memory(lambda: tiled_attention_backward(Q, K, V, O, lse, dO, block_size=BLOCK))
        with count_matmuls() as log:
            attention_backward(Q, K, V, dO)
        flops = attention_matmul_flops(log)
        reps = COST_QUICK_REPEATS if quick else (COST_WIDE_REPEATS if T >= COST_WIDE_FROM else COST_REPEATS)
        r, lo, hi = _median_ratio(lambda: attention_backward(Q, K, V, dO), lambda: scaled_dot_product_attention(Q, K, V), reps)
        rows.append(dict(T=T, d=D, dense_peak_mib=dense / 2**20, tiled_peak_mib=tiled / 2**20,
                         flop_ratio=flops["backward"] / flops["forward"], time_ratio=r, time_ratio_q25=lo, time_ratio_q75=hi))
    w.table("cost", pd.DataFrame(rows))
    return w.close(measured=True)


def growth_exponent(T, y):
    """Least-squares slope of log y against log T."""
    return float(np.polyfit(np.log(T), np.log(y), 1)[0])


def figures(out):
    from ._style import figure, setup

    setup()
    data = read_table(out, STUDY, "cost")
    fig, axes = figure("full", height=2.4, ncols=2)
    ax = axes[0]
    for col, label, color in (("dense_peak_mib", "dense backward", "#d55e00"), ("tiled_peak_mib", "tiled backward", "#0072b2")):
        b = growth_exponent(data["T"], data[col])
        ax.plot(data["T"], data[col], "-o", ms=3, color=color, label=f"{label} (grows like $T^{{{b:.2f}}}$)")
    ax.set(xscale="log", yscale="log", xlabel="sequence length $T$", ylabel="peak memory (MiB)")
    ax.set_xscale("log", base=2)
    ax.legend(loc="upper left", frameon=True)
    ax = axes[1]
    ax.plot(data["T"], data["flop_ratio"], "-", color="0.2", lw=1.2, label="matrix-product FLOPs (counted)")
    ax.errorbar(data["T"], data["time_ratio"], yerr=[data["time_ratio"] - data["time_ratio_q25"], data["time_ratio_q75"] - data["time_ratio"]],
                fmt="o", ms=3, color="#009e73", label="measured time (median, quartiles)")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="sequence length $T$", ylabel="backward / forward", ylim=(0, max(4.0, float(data["time_ratio_q75"].max()) * 1.1)))
    ax.legend(loc="lower right", frameon=True)
    return {"backward_cost": fig}
