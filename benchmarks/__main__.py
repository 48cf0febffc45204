"""Run the benchmarks and write ``reports/bench/bench.csv``."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from stats import (
    REGISTRY,
    attention_backward,
    scaled_dot_product_attention,
    score_chunks,
    softmax,
    tiled_attention_backward,
    tiled_attention_forward,
    verify_claims,
)
from stats._io import write_csv


def paired_ratio(f, g, reps):
    """Median over reps of time(f)/time(g), the two timed back to back each time."""
    ratios, tf, tg = [], [], []
    f(), g()  # warm up
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t1 = time.perf_counter()
        g()
        t2 = time.perf_counter()
        tf.append(t1 - t0)
        tg.append(t2 - t1)
        ratios.append((t1 - t0) / (t2 - t1))
    return statistics.median(ratios), statistics.median(tf), statistics.median(tg)


def peak_bytes(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def attention_benchmarks(reps):
    rng = np.random.default_rng(0)
    T, d = 1024, 64
    Q, K, V, dO = (rng.standard_normal((T, d), dtype=np.float32) for _ in range(4))
    A = softmax(Q @ K.T / np.float32(8))

    def matmuls():
        Q @ K.T
        A @ V

    fwd = lambda: scaled_dot_product_attention(Q, K, V)  # noqa: E731
    bwd = lambda: attention_backward(Q, K, V, dO)  # noqa: E731
    r1, t_fwd, t_mm = paired_ratio(fwd, matmuls, reps)
    r2, t_bwd, _ = paired_ratio(bwd, fwd, reps)
    rows = [
        ("forward / its two matmuls", r1, "ratio", f"T={T}, d_k=d_v={d}, float32; forward {t_fwd * 1e3:.2f} ms, matmuls {t_mm * 1e3:.2f} ms"),
        ("backward / forward", r2, "ratio", f"T={T}, d_k=d_v={d}, float32; backward {t_bwd * 1e3:.2f} ms (the section says about 2)"),
    ]
    T = 4096
    Q, K, V, dO = (rng.standard_normal((T, d), dtype=np.float32) for _ in range(4))
    O, lse = tiled_attention_forward(Q, K, V, block_size=256)
    dense = peak_bytes(lambda: attention_backward(Q, K, V, dO))
    tiled = peak_bytes(lambda: tiled_attention_backward(Q, K, V, O, lse, dO, block_size=256))
    rows += [
        ("peak memory, dense backward", dense / 2**20, "MiB", f"T={T}, d={d}, float32 (tracemalloc)"),
        ("peak memory, tiled backward", tiled / 2**20, "MiB", f"T={T}, d={d}, float32, block 256 (tracemalloc)"),
        ("dense / tiled peak memory", dense / tiled, "ratio", f"T={T}"),
    ]
    return rows


def sampler_benchmarks(reps):
    n, d = 4096, 256
    rows = []
    for law, rho in (("gaussian", 0.0), ("gaussian", 0.5), ("student_t", 0.5)):
        draw_buf = np.empty((min(n, 8192), d))

        def sampler():
            for _ in score_chunks(n, d, rho=rho, entries=law, seed=1):
                pass

        def draws():
            rng = np.random.default_rng(1)
            for _ in range(2):  # queries and key noise: 2 n d numbers
                if law == "gaussian":
                    rng.standard_normal(out=draw_buf)
                else:
                    rng.standard_t(10.0, size=draw_buf.shape)

        r, t_s, _ = paired_ratio(sampler, draws, reps)
        rows.append(
            (f"sampler / its random draws ({law}, rho={rho:g})", r, "ratio", f"n={n} rows, d_k={d}; sampler {t_s * 1e3:.1f} ms")
        )
    return rows


def verify_benchmark():
    t0 = time.perf_counter()
    table = verify_claims(REGISTRY)
    wall = time.perf_counter() - t0
    return [("python -m stats verify, default sizes", wall, "s", f"{len(table)} checks; budget 60 s on a 2-core machine")]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks")
    p.add_argument("--out", default="reports")
    p.add_argument("--reps", type=int, default=15)
    args = p.parse_args(argv)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"
    rows = attention_benchmarks(args.reps) + sampler_benchmarks(args.reps) + verify_benchmark()
    frame = pd.DataFrame(rows, columns=["benchmark", "value", "unit", "detail"])
    frame["machine"] = machine
    path = Path(args.out) / "bench" / "bench.csv"
    write_csv(frame, path)
    with pd.option_context("display.max_colwidth", 90, "display.width", 200):
        print(frame[["benchmark", "value", "unit", "detail"]].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"\nmachine: {machine}\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
