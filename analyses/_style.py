"""One look for every figure of the book: seaborn's paper context, column and full widths,
Monte Carlo uncertainty drawn, and byte-for-byte reproducible files.

Edit this module to restyle: ``make reports`` then re-renders every figure from the data
already on disk, without re-running a simulation.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # headless: figures are files

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from stats.io import write_bytes  # noqa: E402

COLUMN = 3.5  # inches: one book column
FULL = 7.0  # inches: the full text width
DPI = 200
PALETTE = "colorblind"
#: One colour per scaling, shared by every figure that compares them.
SCALING_COLORS = {"none": "#d55e00", "sqrt": "#0072b2", "mup": "#009e73", "qknorm": "#cc79a7"}
SCALING_LABELS = {"none": "no scaling", "sqrt": r"$1/\sqrt{d_k}$", "mup": r"$1/d_k$ ($\mu$P)", "qknorm": "QK-norm"}
LAW_LABELS = {"gaussian": "Gaussian", "rademacher": "Rademacher", "uniform": "uniform", "student_t(df=10)": r"Student-$t_{10}$"}


def setup():
    """Apply the suite's style (call before drawing)."""
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE, font_scale=0.9)
    plt.rcParams.update(
        {
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "axes.titlesize": 8.5,
            "axes.labelsize": 8,
            "legend.fontsize": 6.5,
            "legend.title_fontsize": 7,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "lines.linewidth": 1.2,
            "lines.markersize": 3.5,
            "errorbar.capsize": 1.5,
            "svg.hashsalt": "sdpa-verify",
        }
    )


def figure(width="column", height=None, **kwargs):
    """A figure sized for the book: ``width`` is ``"column"`` (3.5 in) or ``"full"`` (7 in)."""
    w = COLUMN if width == "column" else FULL
    h = height if height is not None else (w * 0.72 if width == "column" else w * 0.36)
    return plt.subplots(figsize=(w, h), **kwargs)


def png_bytes(fig, *, title, draft=False):
    buf = io.BytesIO()
    meta = {"Title": title, "Software": f"matplotlib {matplotlib.__version__}"}
    if draft:
        meta["Description"] = "DRAFT (QUICK=1): reduced sample sizes, not for print"
    fig.savefig(buf, format="png", dpi=DPI, metadata=meta)
    return buf.getvalue()


def pdf_bytes(fig, *, title, draft=False):
    buf = io.BytesIO()
    meta = {"Title": title, "CreationDate": None, "ModDate": None, "Producer": f"matplotlib {matplotlib.__version__}"}
    if draft:
        meta["Subject"] = "DRAFT (QUICK=1): reduced sample sizes, not for print"
    fig.savefig(buf, format="pdf", metadata=meta)
    return buf.getvalue()


def save(fig, out, name, *, title, draft=False, close=True):
    """Write ``name``.png (200 dpi) and ``name``.pdf (vector) under ``out/figures``, atomically."""
    fig.tight_layout(pad=0.4)
    paths = [out / "figures" / f"{name}.png", out / "figures" / f"{name}.pdf"]
    write_bytes(png_bytes(fig, title=title, draft=draft), paths[0])
    write_bytes(pdf_bytes(fig, title=title, draft=draft), paths[1])
    if close:
        plt.close(fig)
    return paths


def save_captioned(fig, out, name, caption, *, title, draft=False):
    """The figure with its caption below it, one PDF page, for ``figures.pdf`` (then closed)."""
    import textwrap

    w, h = fig.get_size_inches()
    text = f"Figure {name}." + (" DRAFT (QUICK=1)." if draft else "") + f" {caption}"
    wrapped = textwrap.fill(text, width=int(w * 17))
    extra = 0.13 * (wrapped.count("\n") + 1) + 0.2
    fig.set_size_inches(w, h + extra)
    fig.tight_layout(rect=(0, extra / (h + extra), 1, 1), pad=0.4)
    fig.text(0.01, 0.012, wrapped, fontsize=6.5, va="bottom", ha="left")
    path = out / "figures" / "captioned" / f"{name}.pdf"
    write_bytes(pdf_bytes(fig, title=title, draft=draft), path)
    plt.close(fig)
    return path
