"""Section "The backward pass of attention": the hand-derived gradients, masks, the D
identity, tiled attention, the memory each pass keeps, and the FLOP count."""

from __future__ import annotations

import functools
import math

from ...exact.memory import attention_memory_alone
from ...models.problems import BackwardSim, FlopSim, TiledSim
from ...settings.numerics import MEMORY_BLOCK, MEMORY_SIDES, MEMORY_WIDTH
from ..check_builders import Measure, Stated, exact, identity
from ..headings import BACKWARD
from ..claim import Claim

SECTION = BACKWARD


@functools.cache
def _measured():
    return attention_memory_alone(MEMORY_SIDES, MEMORY_WIDTH, MEMORY_WIDTH, block_size=MEMORY_BLOCK)


def _memory(T):
    return _measured()[T]


def _two_digits(x):
    """A peak's ratio to two significant digits: tracemalloc's peaks move by a few hundred bytes
    between runs (about 1e-4 of them), and claims.csv must be the same bytes on every run."""
    return float(f"{x:.2g}")


def _memory_ratio(T, measured, formula):
    return lambda F: _two_digits(_memory(T)[measured] / _memory(T)[formula])


def _memory_excess(T, measured, formula):
    return lambda F: float(_memory(T)[measured] - _memory(T)[formula])


def _memory_exponent(measured):
    """The exponent p of peak ~ T^p between the two sides (4 times apart)."""
    lo, hi = MEMORY_SIDES
    return lambda F: _two_digits(math.log(_memory(hi)[measured] / _memory(lo)[measured]) / math.log(hi / lo))


_HEADERS = ("the excess is the returned arrays' and tuple's Python objects (about 100-200 bytes each); one more "
            "T_q-long float64 array would add 8 T_q bytes, 2 KiB or more here")


def _memory_checks():
    kept = Stated.between("exactly that, up to the arrays' Python object headers (under 1 KiB)", 0.0, 1024.0)
    checks = []
    for T in MEMORY_SIDES:
        checks += [
            exact(f"the dense forward keeps O and A: bytes beyond 8 T_q (T_k + d_v), T={T}", kept,
                  _memory_excess(T, "dense_kept", "dense_kept_formula"), uses=(), note=_HEADERS),
            exact(f"the tiled forward keeps O and one number a row: bytes beyond 8 T_q (d_v + 1), T={T}", kept,
                  _memory_excess(T, "tiled_kept", "tiled_kept_formula"), uses=(), note=_HEADERS),
            exact(f"the dense backward holds A: peak / 8 T_q T_k, T={T}", Stated.at_least("at least one T_q x T_k matrix", 1.0,
                  strict=False), _memory_ratio(T, "dense_peak", "A_bytes"), uses=()),
        ]
    lo, hi = MEMORY_SIDES
    checks += [
        exact(f"the dense backward's peak grows like T^2 (exponent, T={lo} -> {hi})", Stated.between("quadratic: 2", 1.9, 2.1),
              _memory_exponent("dense_peak"), uses=(), note="T^2 arrays, with the inputs' T d ones pulling it a little below 2"),
        exact(f"the tiled backward's peak grows like T (exponent, T={lo} -> {hi})", Stated.between("linear: 1", 0.8, 1.1),
              _memory_exponent("tiled_peak"), uses=(),
              note="T x block and T x d arrays, with a part that does not grow pulling it below 1 at these lengths"),
        exact(f"the tiled backward's peak against the dense one's, T={hi}", Stated.at_most("far less", 0.1),
              lambda F: _two_digits(_memory(hi)["tiled_peak"] / _memory(hi)["dense_peak"]), uses=(),
              note="an order of magnitude less at this length, and less the longer the sequence"),
        exact(f"the tiled forward never forms the scores: its peak / 8 T_q T_k, T={hi}",
              Stated.at_most("less than one T_q x T_k matrix", 0.5), _memory_ratio(hi, "tiled_forward_peak", "A_bytes"),
              uses=(), note="a forward that formed S (or A) would hold at least 1; its tiles of T_q x 32 scores are 1/32"),
    ]
    return tuple(checks)


def claims():
    problems = (BackwardSim(3, 5, 4, 3, False), BackwardSim(3, 5, 4, 3, True), BackwardSim(4, 4, 3, 3, False))
    tiled = (TiledSim(6, 37, 8, 5, 8, True), TiledSim(5, 64, 4, 4, 16, False), TiledSim(1, 3, 2, 2, 1, True))
    flops = FlopSim()

    def lbl(s):
        return f"T_q={s.T_q}, T_k={s.T_k}, d_k={s.d_k}, d_v={s.d_v}{', masked' if s.masked else ''}"

    return (
        Claim(
            "forward-three-equations",
            SECTION,
            "The vectorised forward pass computes the section's three equations, S = Q K^T/sqrt(d_k), A = softmax(S), "
            "O = A V, with or without a mask.",
            "O = softmax(Q K^T / sqrt(d_k) + mask) V",
            tuple(identity(lbl(s), Measure(s, "forward"), note="against an independent einsum implementation") for s in problems),
        ),
        Claim(
            "backward-finite-differences",
            SECTION,
            "The hand-derived backward pass (dV = A^T dO, dS = A * (dO V^T - D), dQ = c dS K, dK = c dS^T Q) agrees "
            "with central finite differences of the forward pass.",
            "dQ, dK, dV = central differences of <dO, O>, step 1e-5, tolerance 1e-7",
            tuple(identity(lbl(s), Measure(s, "finite_differences")) for s in problems),
        ),
        Claim(
            "masks-leak-no-gradient",
            SECTION,
            "Masks need no special handling: a masked entry has A_ij = 0, so dS_ij = 0 exactly.",
            "mask_ij = False  =>  dS_ij = 0",
            (identity(lbl(problems[1]), Measure(problems[1], "masked_score_grad")),),
        ),
        Claim(
            "d-identity",
            SECTION,
            "The softmax row sum D_i = sum_l A_il dA_il equals dO_i . O_i, so it needs neither a row of A nor of dA.",
            "D_i = dO_i . O_i",
            tuple(identity(lbl(s), Measure(s, "d_identity")) for s in problems),
        ),
        Claim(
            "tiled-equals-dense",
            SECTION,
            "FlashAttention's scheme -- keep O and the row log-sum-exp, recompute A tile by tile -- gives the dense "
            "forward and backward pass.",
            "tiled (O, lse, dQ, dK, dV) = dense, within 32 (T_k + d_k + d_v) u",
            tuple(identity(f"{name}, T_k={s.T_k}, block={s.block_size}{', masked' if s.masked else ''}", Measure(s, name))
                  for s in tiled for name in ("forward", "lse", "backward")),
        ),
        Claim(
            "backward-memory",
            SECTION,
            "The backward pass needs A, a T_q x T_k matrix per head, which is what makes naive attention memory-hungry; "
            "FlashAttention instead keeps only O and one number per row (the log-sum-exp) and recomputes A block by "
            "block.  Measured with tracemalloc on one head (d_k = d_v = 16, tiles of 32 keys, in a process of its own): "
            "what each forward pass "
            "keeps for its backward, and the peak each backward pass allocates, quadratic in the length for the dense "
            "pass and linear for the tiled one.",
            "kept: dense 8 T_q (T_k + d_v) bytes, tiled 8 T_q (d_v + 1); peak: dense >= 8 T_q T_k ~ T^2, tiled ~ T",
            _memory_checks(),
        ),
        Claim(
            "backward-flops",
            SECTION,
            "The forward pass does two large matrix products and the backward pass four, each the same size: the "
            "backward pass costs twice the forward's matrix-product FLOPs (counted in the code, for any d_v, not only "
            "d_v = d_k).",
            "counted FLOPs: forward 2 T_q T_k (d_k + d_v), backward 4 T_q T_k (d_k + d_v)",
            (
                identity("forward count, random shapes", Measure(flops, "forward_count"), rows=2000),
                identity("backward count, random shapes", Measure(flops, "backward_count"), rows=2000),
                exact("backward / forward, closed form", Stated.parse("2", unit=1e-12),
                      lambda F: F.attention_flops(7, 11, 5, 3)[1] / F.attention_flops(7, 11, 5, 3)[0], uses=("attention_flops",),
                      macro="backwardFlopRatio"),
            ),
        ),
    )


CLAIMS = claims()
