r"""Whole attention heads at initialisation: gradient flow and T5's folded initialisation.

A row is one head.  Inputs :math:`X \in \mathbb R^{T\times d_{model}}` have i.i.d. N(0, 1)
entries, then each token is normalised to mean 0 and variance 1 (LayerNorm without its
affine part); :math:`W_Q, W_K, W_V \in \mathbb R^{d_{model}\times d_k}` have i.i.d.
:math:`N(0, 1/d_{model})` entries (variance-preserving), so Q = X W_Q and K = X W_K have
unit-variance entries; the upstream gradient dO has i.i.d. :math:`N(0, 1/d_k)` entries,
so each token's upstream gradient has unit expected squared norm whatever the width
(:math:`d_v = d_k`).  Gradients come from the suite's own ``attention_backward``.

:class:`HeadSim` (section "The Jacobian of softmax, and what saturation does to it")
records, per head, :math:`\lVert dS\rVert_F`, :math:`\lVert dW_Q\rVert_F`,
:math:`\lVert dW_K\rVert_F`, the median over tokens of :math:`\lVert dS_i\rVert` (the
typical row), the share of tokens with :math:`\lVert dS_i\rVert >` :data:`NEAR_ZERO_GRADIENT`, and the mean
largest weight, for four scalings of the scores: ``"none"``, ``"sqrt"``
(:math:`1/\sqrt{d_k}`), ``"mup"`` (:math:`1/d_k`) and ``"qknorm"`` (unit-normalised q and
k times the fixed gain :func:`~stats.training.scalings.qknorm_gain`; the chain rule through
the normalisation is :math:`dq = g(I - \hat q\hat q^\top)\,d\hat q/\lVert q\rVert`).

:class:`T5Sim` (section "The assumption behind the argument, and when it fails")
compares the divided parameterisation :math:`S = c\,XW_Q(XW_K)^\top` with T5's folded
one, :math:`V_Q = cW_Q`, :math:`S = XV_Q(XW_K)^\top`, c = :math:`1/\sqrt{d_k}`, on the same
draws: the scores at initialisation (an identity, within the rounding bound
:math:`\gamma_k\,|X||W|` of a chain of products) and, after one SGD or Adam step from the
loss :math:`L = \langle dO, O\rangle`, the ratio of the score changes from the query side
and from the key side (an identity against :func:`~stats.models.fixes.t5_step_ratio`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import check_d_k, check_integer
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key
from ..exact.formats import UNIT_ROUNDOFF
from ..training.optimizers import FIRST_STEP_OPTIMIZERS, optimizer_named
from ..training.scalings import HEAD_SCALINGS, SCALINGS, qknorm_gain, scaling_named

__all__ = ["NEAR_ZERO_GRADIENT", "HeadSim", "T5Sim", "draw_head"]

#: A token's score gradient ||dS_i|| counts as close to zero below this: 1/200 of a scaled row's
#: typical one (about 0.2 with the unit-norm upstream gradient of :class:`HeadSim`).
NEAR_ZERO_GRADIENT = 1e-3

_CHUNK_NUMBERS = 1 << 21  # random numbers of the heads processed together


def draw_head(rngs, rows, n_tokens, d_model, d_k):
    """``(X, W_Q, W_K, W_V, dO)`` for ``rows`` heads from streams ``rngs[0..2]`` (module docstring)."""
    X = rngs[0].standard_normal((rows, n_tokens, d_model))
    X -= X.mean(axis=2, keepdims=True)
    X /= X.std(axis=2, keepdims=True)
    W = rngs[1].standard_normal((rows, 3, d_model, d_k))
    W /= np.sqrt(d_model)
    dO = rngs[2].standard_normal((rows, n_tokens, d_k))
    dO /= np.sqrt(d_k)
    return X, W[:, 0], W[:, 1], W[:, 2], dO


def _chunks(rows, per_row):
    step = max(1, min(rows, _CHUNK_NUMBERS // per_row))
    return [(i, min(rows, i + step)) for i in range(0, rows, step)]


def _per_row_cost(n_tokens, d_model, d_k):
    return n_tokens * d_model + 3 * d_model * d_k + n_tokens * d_k


@dataclass(frozen=True)
class HeadSim(Simulation):
    """Gradient flow through a fresh head (module docstring)."""

    d_k: int
    scaling: str = "sqrt"
    n_tokens: int = 32
    d_model: int = 32

    block_rows: ClassVar[int] = 128
    statistics: ClassVar[tuple[str, ...]] = ("ds_norm", "dwq_norm", "dwk_norm", "ds_median_row", "grad_rows", "max_weight")
    uses: ClassVar[tuple[str, ...]] = ("attention_backward",)

    def __post_init__(self):
        check_d_k(self.d_k)
        scaling_named(self.scaling, among=HEAD_SCALINGS)
        check_integer(self.n_tokens, "n_tokens", minimum=2, what="an integer >= 2")
        check_integer(self.d_model, "d_model")

    @property
    def key(self):
        return stream_key("head-gradients", d_k=self.d_k, scaling=self.scaling, n_tokens=self.n_tokens, d_model=self.d_model)

    @property
    def cost(self):
        return _per_row_cost(self.n_tokens, self.d_model, self.d_k)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        rngs = [block_generator(sim_seed, block, s) for s in range(3)]
        out = {k: np.empty(rows) for k in self.statistics}
        for i0, i1 in _chunks(rows, self.cost):
            X, WQ, WK, WV, dO = draw_head(rngs, i1 - i0, self.n_tokens, self.d_model, self.d_k)
            Q, K, V = X @ WQ, X @ WK, X @ WV
            scaling = SCALINGS[self.scaling]
            if scaling.normalises:
                g = qknorm_gain(self.n_tokens)
                nq = np.linalg.norm(Q, axis=2, keepdims=True)
                nk = np.linalg.norm(K, axis=2, keepdims=True)
                qh, kh = Q / nq, K / nk
                dQh, dKh, _, dS = formulas.attention_backward(g * qh, kh, V, dO, scale=1.0, return_score_grad=True)
                dQ = g * (dQh - np.sum(dQh * qh, axis=2, keepdims=True) * qh) / nq
                dK = (dKh - np.sum(dKh * kh, axis=2, keepdims=True) * kh) / nk
                logits = g * (qh @ np.swapaxes(kh, 1, 2))
            else:
                c = scaling.factor(self.d_k)
                dQ, dK, _, dS = formulas.attention_backward(Q, K, V, dO, scale=c, return_score_grad=True)
                logits = c * (Q @ np.swapaxes(K, 1, 2))
            Xt = np.swapaxes(X, 1, 2)
            row_norm = np.linalg.norm(dS, axis=2)
            e = np.exp(logits - logits.max(axis=2, keepdims=True))
            sl = slice(i0, i1)
            out["ds_norm"][sl] = np.linalg.norm(dS, axis=(1, 2))
            out["dwq_norm"][sl] = np.linalg.norm(Xt @ dQ, axis=(1, 2))
            out["dwk_norm"][sl] = np.linalg.norm(Xt @ dK, axis=(1, 2))
            out["ds_median_row"][sl] = np.median(row_norm, axis=1)
            out["grad_rows"][sl] = np.mean(row_norm > NEAR_ZERO_GRADIENT, axis=1)
            out["max_weight"][sl] = np.mean(1.0 / e.sum(axis=2), axis=1)
        return out


@dataclass(frozen=True)
class T5Sim(Simulation):
    """Divided vs T5-folded initialisation on the same draws (module docstring)."""

    d_k: int
    optimizer: str = "adam"
    n_tokens: int = 32
    d_model: int = 32

    block_rows: ClassVar[int] = 128
    statistics: ClassVar[tuple[str, ...]] = ("init_scores", "query_ratio", "key_ratio", "query_ratio_law", "key_ratio_law")
    uses: ClassVar[tuple[str, ...]] = ("attention_backward", "t5_step_ratio")

    def __post_init__(self):
        check_d_k(self.d_k)
        optimizer_named(self.optimizer, among=FIRST_STEP_OPTIMIZERS)
        check_integer(self.n_tokens, "n_tokens", minimum=2, what="an integer >= 2")
        check_integer(self.d_model, "d_model")

    @property
    def key(self):
        return stream_key("t5-folding", d_k=self.d_k, optimizer=self.optimizer, n_tokens=self.n_tokens, d_model=self.d_model)

    @property
    def cost(self):
        return _per_row_cost(self.n_tokens, self.d_model, self.d_k)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        rngs = [block_generator(sim_seed, block, s) for s in range(3)]
        d = self.d_k
        c = 1.0 / np.sqrt(d)
        gamma = lambda k: k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)  # noqa: E731
        direction = optimizer_named(self.optimizer).first_step_direction
        step = lambda g: -direction(g)  # noqa: E731
        out = {k: np.empty(rows) for k in self.statistics}
        T = lambda A: np.swapaxes(A, 1, 2)  # noqa: E731
        for i0, i1 in _chunks(rows, self.cost):
            X, WQ, WK, WV, dO = draw_head(rngs, i1 - i0, self.n_tokens, self.d_model, d)
            VQ = c * WQ  # T5: the scale folded into the initialisation
            K, V = X @ WK, X @ WV
            QA, QB = X @ WQ, X @ VQ
            SA = (c * QA) @ T(K)
            SB = QB @ T(K)
            absX = np.abs(X)
            bound = (c * (absX @ np.abs(WQ))) @ T(absX @ np.abs(WK))
            init_err = np.max(np.abs(SA - SB) / (gamma(2 * (self.d_model + d) + 4) * np.maximum(bound, 1e-300)), axis=(1, 2))
            dQA, dKA, _ = formulas.attention_backward(QA, K, V, dO, scale=c)
            dQB, dKB, _ = formulas.attention_backward(QB, K, V, dO, scale=1.0)
            Xt = T(X)
            gWQ, gWK_A = Xt @ dQA, Xt @ dKA
            gVQ, gWK_B = Xt @ dQB, Xt @ dKB
            dSq_A = c * (X @ step(gWQ)) @ T(K)
            dSq_B = (X @ step(gVQ)) @ T(K)
            dSk_A = (c * QA) @ T(X @ step(gWK_A))
            dSk_B = QB @ T(X @ step(gWK_B))
            rq = np.linalg.norm(dSq_B, axis=(1, 2)) / np.linalg.norm(dSq_A, axis=(1, 2))
            rk = np.linalg.norm(dSk_B, axis=(1, 2)) / np.linalg.norm(dSk_A, axis=(1, 2))
            sl = slice(i0, i1)
            out["init_scores"][sl] = init_err
            out["query_ratio"][sl] = rq
            out["key_ratio"][sl] = rk
            # Identities against the derived ratio; relative tolerance from the products' rounding.
            tol = 1e3 * gamma(2 * (self.d_model + d) + self.n_tokens)
            out["query_ratio_law"][sl] = np.abs(rq / formulas.t5_step_ratio(self.optimizer, "query", d) - 1.0) / tol
            out["key_ratio_law"][sl] = np.abs(rk / formulas.t5_step_ratio(self.optimizer, "key", d) - 1.0) / tol
        return out
