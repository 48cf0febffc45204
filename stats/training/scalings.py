r"""The scalings of attention scores, one object each: the suite's one vocabulary for them.

A head projects queries and keys, :math:`Q = \tilde X W_Q` and :math:`K = X W_K`, and a
scaling turns them into logits:

* ``"none"``: :math:`S = QK^\top`;
* ``"sqrt"``: :math:`S = QK^\top/\sqrt{d_k}` (the section's scaling);
* ``"mup"``: :math:`S = QK^\top/d_k` (muP, Yang et al. 2022);
* ``"qknorm"`` (Henry et al. 2020): :math:`S = g\,\hat Q\hat K^\top` with unit rows; the gain
  g starts at :math:`\log_2(T^2 - T)` (:func:`qknorm_gain`) and is trained;
* ``"t5"``: no division; :math:`W_Q` initialised with variance :math:`1/(d_{model} d_k)`
  (:func:`t5_fold_divisor`), T5's folding of :math:`1/\sqrt{d_k}` into the initialisation;
* ``"additive"`` (Bahdanau et al. 2015): :math:`s_{ij} = v^\top\tanh(q_i + k_j)` with
  :math:`v \sim N(0, I/d_k)` trained too, its backward written by hand and passed through
  the section's softmax vector-Jacobian product.

Each :class:`Scaling` owns its initialisation (what it changes of the standard
:math:`N(0, 1/d_{model})` draw and the parameters it adds), its scores, its part of the
backward pass (from :math:`dQ_a, dK_a`, the gradients of the arrays the attention saw, to
:math:`dQ, dK`), the parameters it trains and its cost.  It works on the projected Q and K
of a batch of runs, so a layer of a larger model uses it as a single head does.
:data:`SCALINGS` is the registry (one line a scaling); the subsets other modules accept
(:data:`SCORE_SCALINGS`, :data:`HEAD_SCALINGS`) are read off its objects' attributes.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .._validation import as_real_array, check_d_k, check_finite, check_integer
from ..exact.attention import softmax

__all__ = [
    "HEAD_SCALINGS",
    "SCALINGS",
    "SCORE_SCALINGS",
    "Additive",
    "MuP",
    "QKNorm",
    "Scaling",
    "Sqrt",
    "T5Folded",
    "Unscaled",
    "mup_lr_multiplier",
    "qk_normalize",
    "qknorm_gain",
    "scaling_named",
    "t5_fold_divisor",
]


def qknorm_gain(n_tokens=32):
    """QK-norm's initial gain, Henry et al. (2020): :math:`g_0 = \\log_2(T^2 - T)`."""
    T = check_integer(n_tokens, "n_tokens", minimum=2, what="an integer >= 2")
    return math.log2(T * T - T)


def qk_normalize(Q, K):
    """QK-norm's unit rows: ``(Q/|Q|, K/|K|, |Q|, |K|)``, the norms over the last axis (kept); float32 stays float32."""
    out = []
    for x, name in ((Q, "Q"), (K, "K")):
        x = as_real_array(x, name)
        x = check_finite(x if x.dtype == np.float32 else x.astype(np.float64, copy=False), name)
        if x.ndim < 1 or x.size == 0:
            raise ValueError(f"{name} must hold at least one row vector; got shape {x.shape}")
        norm = np.linalg.norm(x, axis=-1, keepdims=True)
        if not np.all(norm > 0):
            raise ValueError(f"{name} has a zero row, which has no direction to normalise")
        out.append((x / norm, norm))
    (qh, nq), (kh, nk) = out
    return qh, kh, nq, nk


def t5_fold_divisor(d_k):
    """What T5 divides :math:`W_Q`'s initial standard deviation by instead of dividing the scores: :math:`\\sqrt{d_k}`."""
    return math.sqrt(check_d_k(d_k))


def mup_lr_multiplier(d_model, base_width):
    """muP's factor on a hidden weight's Adam learning rate: :math:`d_0/d_{model}` (fan-in :math:`d_{model}`)."""
    d_model = check_integer(d_model, "d_model")
    base = check_integer(base_width, "base_width")
    return base / d_model


class Scaling:
    """One scaling of the scores (module docstring).

    Class attributes: ``name`` (its registry name); ``trains``, the parameters it adds to
    :math:`W_Q, W_K` (trained with them, in this order); ``dot_product`` (the logits are
    :math:`c\\,Q_aK_a^\\top` for some arrays :math:`Q_a, K_a` the attention sees, so the
    section's ``attention_backward`` applies); ``normalises`` (:math:`Q_a, K_a` are unit rows);
    ``folds`` (it changes the standard initialisation); ``backward_uses`` and ``uses``, the
    fields of :class:`stats.Formulas` its backward pass and its own steps call.
    """

    name: ClassVar[str]
    trains: ClassVar[tuple[str, ...]] = ()
    dot_product: ClassVar[bool] = True
    normalises: ClassVar[bool] = False
    folds: ClassVar[bool] = False
    backward_uses: ClassVar[tuple[str, ...]] = ("attention_backward",)
    uses: ClassVar[tuple[str, ...]] = ()

    def factor(self, d_k):
        """The factor c on :math:`Q_aK_a^\\top`."""
        return 1.0

    def initialise(self, W, rngs, *, d_k, n_keys, formulas):
        """Change the standard draw ``W`` (shape ``(runs, 3, d_model, d_k)``: W_Q, W_K, W_V) in
        place where this scaling does, and return the parameters it adds (drawn after W, per run)."""
        return {}

    def attention_inputs(self, params, Q, K, formulas):
        """The arrays :math:`Q_a, K_a` the attention sees, and what :meth:`input_grads` needs."""
        return Q, K, None

    def input_grads(self, params, dQa, dKa, cache):
        """``(dQ, dK, grads)``: the chain rule from :math:`Q_a, K_a` back to Q and K, and the
        gradients of the parameters in :attr:`trains`."""
        return dQa, dKa, {}

    def scores(self, params, Q, K, *, scale, formulas):
        """The logits S (and what the backward pass needs of them, or None); ``scale`` is :meth:`factor`."""
        Qa, Ka, _ = self.attention_inputs(params, Q, K, formulas)
        return scale * (Qa @ np.swapaxes(Ka, 1, 2)), None

    def attend(self, params, Q, K, V, d_output, formulas, *, scale, logits=False):
        """The forward and backward pass of the attention from the projections.

        ``d_output(O)`` returns the loss's gradient at the output O (recording the loss).
        Returns ``(A, dQ, dK, grads, max_logit)``: the weights, the gradients of Q and K and
        of :attr:`trains`, and each run's largest |logit| (None unless ``logits``; a
        scaling whose scores are not a product always returns it).
        """
        Qa, Ka, cache = self.attention_inputs(params, Q, K, formulas)
        max_logit = np.abs(scale * (Qa @ np.swapaxes(Ka, 1, 2))).max(axis=(1, 2)) if logits else None
        dQa, dKa, _, _, A = formulas.attention_backward(Qa, Ka, V, d_output, scale=scale, return_forward=True)
        dQ, dK, grads = self.input_grads(params, dQa, dKa, cache)
        return A, dQ, dK, grads, max_logit

    def score_grads(self, params, dS, cache):
        """For logits that are not a product: ``(dQ, dK, grads)`` from the score gradient ``dS`` and what
        :meth:`scores` returned beside the logits (a transformer's causal layer calls it)."""
        raise NotImplementedError(f"{type(self).__name__}'s logits are not a product: it must define score_grads "
                                  "to run in a transformer")

    def flops(self, n_keys, d_model, d_k):
        """Multiply-adds of one training step of one run: projections, scores, output and their gradients."""
        T, m, d = n_keys, d_model, d_k
        return 2 * T * m + 6 * T * m * d + 4 * T * T * d

    def extra_bytes(self, n_keys, d_k):
        """Bytes a run holds beyond its parameters, gradients and optimiser state."""
        return 0

    def __repr__(self):
        return f"{type(self).__name__}()"


class Unscaled(Scaling):
    """:math:`S = QK^\\top`."""

    name = "none"


class Sqrt(Scaling):
    """:math:`S = QK^\\top/\\sqrt{d_k}`."""

    name = "sqrt"

    def factor(self, d_k):
        return 1.0 / math.sqrt(d_k)


class MuP(Scaling):
    """:math:`S = QK^\\top/d_k`."""

    name = "mup"

    def factor(self, d_k):
        return 1.0 / d_k


class QKNorm(Scaling):
    r""":math:`S = g\,\hat Q\hat K^\top`, unit rows and a trained gain; the chain rule through the
    normalisation is :math:`dq = (I - \hat q\hat q^\top)\,g\,d\hat q/\lVert q\rVert`."""

    name = "qknorm"
    trains = ("gain",)
    normalises = True
    uses = ("qk_normalize",)

    def initialise(self, W, rngs, *, d_k, n_keys, formulas):
        return {"gain": np.full(len(rngs), qknorm_gain(n_keys))}

    def attention_inputs(self, params, Q, K, formulas):
        qh, kh, nq, nk = formulas.qk_normalize(Q, K)
        return params["gain"][:, None, None] * qh, kh, (qh, kh, nq, nk)

    def input_grads(self, params, dQa, dKa, cache):
        qh, kh, nq, nk = cache
        g = params["gain"][:, None, None]
        gain = np.einsum("rtd,rtd->r", dQa, qh)
        dqh = g * dQa
        dQ = (dqh - np.sum(dqh * qh, axis=2, keepdims=True) * qh) / nq
        dK = (dKa - np.sum(dKa * kh, axis=2, keepdims=True) * kh) / nk
        return dQ, dK, {"gain": gain}


class T5Folded(Scaling):
    """No division; :math:`W_Q`'s initial draw divided by :func:`t5_fold_divisor`."""

    name = "t5"
    folds = True
    uses = ("t5_fold_divisor",)

    def initialise(self, W, rngs, *, d_k, n_keys, formulas):
        W[:, 0] /= formulas.t5_fold_divisor(d_k)
        return {}


class Additive(Scaling):
    r"""Additive attention, :math:`s_{ij} = v^\top\tanh(q_i + k_j)`, and its backward by hand:
    :math:`dS = J^\top dA` (the section's vector-Jacobian product, :math:`dA = dO\,V^\top`),
    :math:`dv = \sum_{ij} dS_{ij} h_{ij}`, :math:`dU_{ij} = dS_{ij}\,v \odot (1 - h_{ij}^2)`,
    :math:`dq_i = \sum_j dU_{ij}`, :math:`dk_j = \sum_i dU_{ij}`."""

    name = "additive"
    trains = ("v",)
    dot_product = False
    backward_uses = ("softmax_vjp",)

    def initialise(self, W, rngs, *, d_k, n_keys, formulas):
        return {"v": np.stack([r.standard_normal(d_k) for r in rngs]) / math.sqrt(d_k)}

    def scores(self, params, Q, K, *, scale, formulas):
        H = np.tanh(Q[:, :, None, :] + K[:, None, :, :])
        return np.einsum("rijd,rd->rij", H, params["v"]), H

    def attend(self, params, Q, K, V, d_output, formulas, *, scale, logits=False):
        S, H = self.scores(params, Q, K, scale=scale, formulas=formulas)
        A = softmax(S)
        dA = d_output(A @ V) @ np.swapaxes(V, 1, 2)
        dQ, dK, grads = self.score_grads(params, formulas.softmax_vjp(A, dA), H)
        return A, dQ, dK, grads, np.abs(S).max(axis=(1, 2))

    def score_grads(self, params, dS, H):
        """``(dQ, dK, {"v": dv})`` from the score gradient ``dS`` and the pre-activations ``H`` that
        :meth:`scores` returned (a masked score has :math:`dS_{ij} = 0`, so it adds nothing)."""
        dU = dS[..., None] * params["v"][:, None, None, :] * (1.0 - H * H)
        return dU.sum(axis=2), dU.sum(axis=1), {"v": np.einsum("rij,rijd->rd", dS, H)}

    def extra_bytes(self, n_keys, d_k):
        return 4 * 8 * n_keys**2 * d_k  # the (T, T, d_k) pre-activations and their gradient


#: The scalings by name: one line a scaling.
SCALINGS = {s.name: s for s in (Unscaled(), Sqrt(), MuP(), QKNorm(), T5Folded(), Additive())}
#: The scalings whose score is :math:`c\,q\cdot k` for the head's own q and k at the standard
#: initialisation, c a power of :math:`d_k`: the closed forms' (scores, saturation).
SCORE_SCALINGS = tuple(n for n, s in SCALINGS.items() if s.dot_product and not s.normalises and not s.folds)
#: The scalings of a fresh head at the standard initialisation (gradient flow).
HEAD_SCALINGS = tuple(n for n, s in SCALINGS.items() if s.dot_product and not s.folds)


def scaling_named(name, *, among=None, argument="scaling"):
    """The :class:`Scaling` called ``name`` (one of ``among``, default every registered one), else a
    ValueError naming ``argument`` and the allowed names."""
    allowed = tuple(SCALINGS) if among is None else tuple(among)
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(f"{argument} must be one of {allowed}; got {name!r}")
    return SCALINGS[name]
