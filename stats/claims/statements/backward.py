"""Section "The backward pass of attention": the hand-derived gradients, masks, the D
identity, tiled attention, and the FLOP count."""

from __future__ import annotations

from ...models.problems import BackwardSim, FlopSim, TiledSim
from ..build import Measure, Stated, exact, identity
from ..schema import Claim

SECTION = "The backward pass of attention"


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
