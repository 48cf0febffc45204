"""Shared figure conventions: one look for every figure of the book."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # headless: figures are files

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from stats._io import atomic_path  # noqa: E402


def setup():
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)


def save(fig, out, name):
    """Write ``name``.png (200 dpi) and ``name``.pdf under ``out/figures``, atomically."""
    paths = []
    for ext, kw in (("png", {"dpi": 200}), ("pdf", {})):
        path = out / "figures" / f"{name}.{ext}"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, bbox_inches="tight", **kw)
        paths.append(path)
    plt.close(fig)
    return paths
