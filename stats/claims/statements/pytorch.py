"""Section "In PyTorch": SDPA against the suite's forward pass, autograd against the
hand-derived backward pass, the kernel SDPA dispatches to on this CPU, and attention
dropout as ``F.dropout`` and SDPA's own ``dropout_p`` apply it."""

from __future__ import annotations

import math

from ...models.dropout import DropoutSim
from ...models.torch_sdpa import (SDPA_DISPATCH_DTYPES, SDPA_DTYPES, SDPA_MASKS, SDPADispatchSim, SDPALargeScoreSim,
                                  TorchSDPASim)
from ...settings.numerics import DROPOUT_P as P, LONG_T_K
from ..check_builders import Measure, identity, mean
from ..headings import PYTORCH, STABILITY
from ..claim import Claim

SECTION = PYTORCH
TORCH = ("torch",)
_MASK_WORDS = {"none": "no mask", "bool": "boolean mask", "additive": "additive mask", "causal": "is_causal=True"}


def _problems():
    short = tuple(TorchSDPASim(dt, m) for m in SDPA_MASKS for dt in SDPA_DTYPES)
    long = tuple(TorchSDPASim(dt, "additive", batch=1, heads=1, T_q=4, T_k=LONG_T_K, d_k=8, d_v=8) for dt in SDPA_DTYPES)
    return short + long


#: Rows of a long problem: 256 reveal a violation in 2.7% of the problems with probability 0.999 (its
#: 6905 rows took two minutes of a verify; the short problems are sized for a violation share of 0.1%).
LONG_ROWS = 256


def _rows(s):
    return LONG_ROWS if s.T_k == LONG_T_K else None


def _lbl(s):
    return f"{s.dtype}, {_MASK_WORDS[s.mask]}, batch {s.batch} x {s.heads} heads, T_q={s.T_q}, T_k={s.T_k}, d_k={s.d_k}, d_v={s.d_v}"


def _dropout_checks():
    bound = math.sqrt(P / (1 - P))  # a bound for the row sum's sd, exact for one weight's ratio
    checks = []
    for backend, name in (("numpy", "stats.dropout_weights"), ("torch", "torch.nn.functional.dropout"),
                          ("sdpa", "SDPA's dropout_p")):
        sim = DropoutSim(P, 32, backend)
        req = () if backend == "numpy" else TORCH
        checks += [
            mean(f"share of weights dropped, {name}", Measure(sim, "dropped_share"), lambda F: P, uses=(),
                 target=0.005, relative=False, sd=lambda: math.sqrt(P * (1 - P) / 32), tail_index=math.inf, requires=req,
                 note="a proportion: each of the row's 32 weights is dropped with probability p"),
            mean(f"row sum, {name}", Measure(sim, "row_sum"), lambda F: 1.0, uses=(), target=0.005, relative=False,
                 sd=bound, tail_index=math.inf, requires=req),
            mean(f"one weight's expectation: its ratio to the undropped weight, {name}", Measure(sim, "first_ratio"), lambda F: 1.0, uses=(), target=0.01,
                 relative=False, sd=bound, tail_index=math.inf, requires=req),
            identity(f"values are 0 or a/(1 - p), {name}", Measure(sim, "values"), requires=req),
        ]
    return tuple(checks)


def _dispatch_checks():
    flash = tuple(
        identity(f"chooses and runs FlashAttention, {dt}, {_MASK_WORDS[m]}, 4-D, d_v = d_k",
                 Measure(SDPADispatchSim(dt, m), "dispatch"), requires=TORCH, rows=1)
        for dt in SDPA_DISPATCH_DTYPES for m in SDPA_MASKS
    )
    math_path = tuple(
        identity(f"chooses and runs the math path, float32, {what}", Measure(SDPADispatchSim(**kw, expect="MATH"), "dispatch"),
                 requires=TORCH, rows=1)
        for what, kw in (("d_v != d_k", dict(same_head_dim=False)), ("3-D (no head dimension)", dict(rank=3)),
                         ("5-D (an extra leading dimension)", dict(rank=5)), ("dropout_p = 0.1", dict(dropout_p=P)))
    )
    return flash + math_path


def claims():
    problems = _problems()
    tol = "tolerance 16 (T_k + d_k) u (1 + max|V|), u the dtype's unit roundoff"
    gtol = "tolerance 32 (T_k + d_k + d_v) u (1 + max|dX|) per gradient, u the dtype's unit roundoff"
    return (
        Claim(
            "sdpa-equals-forward",
            SECTION,
            "torch.nn.functional.scaled_dot_product_attention computes the section's formula: on the same inputs it "
            "gives the suite's forward pass, in float64 and float32, with no mask, a boolean mask, an additive mask and "
            "is_causal, with batch and head dimensions in front.",
            "SDPA(Q, K, V, mask) = softmax(Q K^T / sqrt(d_k) + mask) V, within the dtype's forward error bound",
            tuple(identity(_lbl(s), Measure(s, "forward"), requires=TORCH, note=tol, rows=_rows(s)) for s in problems),
        ),
        Claim(
            "autograd-equals-backward",
            SECTION,
            "PyTorch's autograd through SDPA gives the hand-derived backward pass (dQ, dK, dV) of the section, in float64 "
            "and float32, with every kind of mask.",
            "autograd(SDPA) = attention_backward(Q, K, V, dO, mask), within the dtype's error bound",
            tuple(identity(_lbl(s), Measure(s, "backward"), requires=TORCH, note=gtol, rows=_rows(s)) for s in problems),
        ),
        Claim(
            "sdpa-fused-kernel",
            SECTION,
            "SDPA dispatches to a fused FlashAttention kernel when one is available.  On this machine's CPU PyTorch has "
            "one: its backend query chooses it, and the call runs it (the autograd node it leaves), for 4-D inputs with "
            "d_v = d_k and no dropout, in every floating dtype and with every kind of mask; with d_v != d_k, without a "
            "head dimension, with an extra leading dimension or with dropout_p > 0 it takes the math path (the "
            "memory-efficient kernel is a GPU one).  The fused kernel's output and gradients equal the math path's.",
            "chosen = ran = FLASH_ATTENTION (4-D, d_v = d_k, dropout_p = 0), else MATH; fused (O, dQ, dK, dV) = math path's",
            _dispatch_checks()
            + tuple(identity(f"fused equals math path, {_lbl(s)}", Measure(s, "fused_equals_math"), requires=TORCH, rows=_rows(s),
                             note=f"{tol}; {gtol}") for s in problems),
        ),
        Claim(
            "sdpa-stable-at-large-scores",
            STABILITY,
            "Production kernels subtract the maximum, so they do not overflow where a naive softmax does: on rows of "
            "scores up to a few thousand (a naive exp overflows float16 past 11.09 and float32 past 88.7), PyTorch's "
            "SDPA, its fused CPU kernel and its math path alike, gives finite weights equal to the exact softmax of the "
            "rounded scores within the format's own rounding plus a float32 softmax's error, in float16, bfloat16 and "
            "float32 (so in the 16-bit formats it computes the softmax in float32, as mixed-precision practice has it).",
            "|SDPA(s)_j - softmax(s)_j| <= u + 4(T + 2) u_32, u the format's unit roundoff",
            tuple(
                identity(f"{what}, {dt}", Measure(SDPALargeScoreSim(dt), stat), requires=TORCH,
                         note="tolerance u + 4(T + 2) u_32: the weight's rounding to the format and a float32 softmax")
                for dt in ("float16", "bfloat16", "float32")
                for what, stat in (("SDPA as called (fused kernel) against the exact softmax", "fused"),
                                   ("SDPA's math path against the exact softmax", "math"))
            ),
        ),
        Claim(
            "dropout-unbiased",
            SECTION,
            "dropout_p zeroes attention weights at random, a share p of them, and rescales the rest by 1/(1 - p), so "
            "every weight keeps its expectation and each row's expected sum stays 1 (p = 0.1, as GPT-2 and BERT use): "
            "for the suite's dropout, torch.nn.functional.dropout, and SDPA's own dropout_p (V = I, so SDPA returns the "
            "dropped weights).",
            "P(dropped) = p; E[dropout(a)_j] = a_j; E[sum_j dropout(a)_j] = 1",
            _dropout_checks(),
        ),
    )


CLAIMS = claims()
