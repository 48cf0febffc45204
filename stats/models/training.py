r"""Training a single attention head on a retrieval task, many seeded runs at once.

The task (for the section opening's sentence that an unscaled head "cannot learn").  An episode has :math:`T` key tokens :math:`x_j \sim N(0, I_{d_{model}})`
and :math:`T` queries, query i a noisy copy of the key :math:`\pi(i)` for a random
permutation :math:`\pi`, rescaled to unit variance:
:math:`\tilde x_i = (x_{\pi(i)} + \sigma n_i)/\sqrt{1 + \sigma^2}`.  The head computes
:math:`Q = \tilde X W_Q`, :math:`K = X W_K`, :math:`V = X W_V`, :math:`O = \operatorname{softmax}(S) V`
and is asked to return the target's value:

.. math::

    L = \frac{1}{2\,T\,d_v} \sum_i \lVert O_i - v_{\pi(i)} \rVert^2 .

The loss sits downstream of :math:`O = AV`, so every gradient passes through the softmax
Jacobian (a loss on :math:`\log A` would not saturate).  A query is *right* when its
largest weight falls on its target key.

Parameters.  :math:`W_Q, W_K \in \mathbb R^{d_{model}\times d_k}` are trained, with
variance-preserving initialisation :math:`N(0, 1/d_{model})`, so Q and K have unit-variance
entries at step 0.  :math:`W_V` (:math:`d_v = d_k`) is drawn the same way and *fixed*: a
trained :math:`W_V` lets the loss fall by shrinking the values towards their mean instead of
by attending, which is not the ability under test.

Scalings of the scores (:data:`TRAIN_SCALINGS`): ``"none"`` (:math:`S = QK^\top`),
``"sqrt"`` (:math:`1/\sqrt{d_k}`), ``"mup"`` (:math:`1/d_k`), ``"qknorm"`` (Henry et al.
2020: :math:`S = g\,\hat Q\hat K^\top` with unit rows; the gain g starts at
:math:`\log_2(T^2 - T)` and is *learned*, as in Henry et al., with the same optimiser),
``"t5"`` (no division; :math:`W_Q` initialised with variance :math:`1/(d_{model} d_k)`,
T5's folding of :math:`1/\sqrt{d_k}` into the initialisation), and ``"additive"``
(Bahdanau et al. 2015's score :math:`s_{ij} = v^\top\tanh(W_Q^\top\tilde x_i + W_K^\top x_j)`,
:math:`v \sim N(0, I/d_k)`, trained too, with its backward written by hand and passed
through the section's softmax vector-Jacobian product).

Optimisers (:data:`TRAIN_OPTIMIZERS`), at learning rate :math:`\eta`:

* ``"sgd"``: :math:`W \leftarrow W - \eta g`;
* ``"adam"`` (Kingma & Ba 2015): :math:`\beta_1 = 0.9`, :math:`\beta_2 = 0.999`,
  :math:`\varepsilon = 10^{-8}`, bias-corrected moments;
* ``"adafactor"`` (Shazeer & Stern 2018, Algorithm 4 with :math:`\beta_1 = 0`): factored
  second moments for matrices (row and column means of :math:`g^2 + \varepsilon_1`,
  :math:`\varepsilon_1 = 10^{-30}`), decay :math:`\hat\beta_{2t} = 1 - t^{-0.8}`, update
  clipping at d = 1, and the *relative* step :math:`\alpha_t = \eta\,\max(\varepsilon_2,
  \mathrm{RMS}(W_{t-1}))`, :math:`\varepsilon_2 = 10^{-3}`: the step is a fraction
  :math:`\eta` of the parameter's own scale (T5's optimiser).

Each run draws its initialisation, its training episodes (a fresh episode every step) and a
fixed *probe* episode from its own stream, so a run's outcome does not depend on the other
runs it is batched with.  A run *diverges* when a parameter leaves :math:`[-10^8, 10^8]` or
stops being finite: it is frozen at its last finite state and the step is recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import ClassVar

import numpy as np

from .._validation import MAX_D_K, as_real_array, check_d_k, check_finite, check_integer, check_positive
from ..exact.attention import attention_backward, softmax, softmax_vjp
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key
from .fixes import mup_lr_multiplier, qk_normalize, qknorm_gain, t5_fold_divisor

__all__ = [
    "ADAM_BETAS",
    "ADAM_EPS",
    "FOLDING_OUTCOMES",
    "FoldingSim",
    "LRSweepSim",
    "TRAIN_OPTIMIZERS",
    "TRAIN_SCALINGS",
    "TrainingSim",
    "adafactor_update",
    "adam_update",
    "checkpoint_steps",
    "fold_gaps",
    "retrieval_targets",
    "train_heads",
]

TRAIN_SCALINGS = ("none", "sqrt", "mup", "qknorm", "t5", "additive")
#: The parameters a scaling trains besides W_Q and W_K.
TRAINED_EXTRA = {"qknorm": ("gain",), "additive": ("v",)}
TRAIN_OPTIMIZERS = ("sgd", "adam", "adafactor")
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
ADAFACTOR_EPS = (1e-30, 1e-3)
DIVERGENCE_BOUND = 1e8
ACCURACY_TARGET = 0.9
FROZEN_SHARE = 0.9
QUERY_NOISE = 0.5
MAX_STEPS = 10**7
BLOCK_BYTES = 32 << 20
_U = np.finfo(np.float64).eps / 2
#: Rounding allowance of an optimiser identity, in units of the step (64 roundings).
STEP_TOLERANCE = 64 * _U


# ----------------------------------------------------------------- optimisers


def adam_update(g, state, t, lr, *, betas=ADAM_BETAS, eps=ADAM_EPS):
    r"""Adam's step :math:`-\eta\,\hat m_t/(\sqrt{\hat v_t} + \varepsilon)` for gradient ``g`` at step ``t >= 1``.

    ``state`` is a dict holding ``m`` and ``v`` (created on the first call) and is updated
    in place; ``lr`` broadcasts against ``g`` (one learning rate per run).  The returned
    step lives in ``state`` and is overwritten by the next call.
    """
    g = _finite_array(g, "g")
    _check_state(state)
    t = check_integer(t, "t", maximum=MAX_STEPS)
    lr = _positive_lr(lr, g.ndim)
    if not (isinstance(betas, tuple) and len(betas) == 2 and all(isinstance(b, float) and 0 <= b < 1 for b in betas)):
        raise ValueError(f"betas must be two floats in [0, 1); got {betas!r}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be a finite number >= 0; got {eps!r}")
    b1, b2 = betas
    if "m" not in state:
        state["m"], state["v"] = np.zeros_like(g), np.zeros_like(g)
        state["step"] = np.empty_like(g)
    elif state["m"].shape != g.shape:
        raise ValueError(f"g has shape {g.shape}; the state holds moments of shape {state['m'].shape}")
    n = g.shape[0] if g.ndim else 1
    m, v, step, g2 = (a.reshape(n, -1) for a in (state["m"], state["v"], state["step"], g))
    lr = _per_row(_broadcasts(lr, g.shape), g.shape, n)
    c2, c1 = 1.0 / math.sqrt(1 - b2**t), -lr / (1 - b1**t)
    # Block by block, so that the twelve operations run on blocks that stay in cache: the
    # arrays are read and written once each, not once an operation (the same arithmetic).
    scratch = np.empty((n, min(_block_width(n), m.shape[1])))
    for cols in _column_blocks(m):
        mb, vb, gb, sb, c1b = (_block(a, cols) for a in (m, v, g2, step, c1))
        xb = scratch[:, : mb.shape[1]]
        mb *= b1
        np.multiply(gb, 1 - b1, out=xb)
        mb += xb
        vb *= b2
        np.multiply(gb, gb, out=xb)
        xb *= 1 - b2
        vb += xb
        np.sqrt(vb, out=sb)
        sb *= c2
        sb += eps
        np.divide(mb, sb, out=sb)
        sb *= c1b
    return state["step"]


#: Entries of one cache block of :func:`adam_update` and :func:`_apply_step` (1 MiB of float64).
_BLOCK_ENTRIES = 1 << 17


def _block_width(n):
    return max(1, _BLOCK_ENTRIES // n)


def _column_blocks(a):
    """Slices of the columns of an ``(n, entries)`` array, about :data:`_BLOCK_ENTRIES` entries a block."""
    width = _block_width(a.shape[0])
    return (slice(lo, lo + width) for lo in range(0, a.shape[1], width))


def _block(a, cols):
    """Columns ``cols`` of ``a``; all of it when ``a`` is one column (a per-run factor)."""
    return a if a.shape[1] == 1 else a[:, cols]


def _broadcasts(lr, shape):
    """``lr`` when it broadcasts to ``shape`` without enlarging it; else a ValueError naming it."""
    try:
        fits = np.broadcast_shapes(np.shape(lr), shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"lr must be one number or broadcast against g's shape {tuple(shape)}; got shape {np.shape(lr)}")
    return lr


def _per_row(lr, shape, n):
    """``lr`` (broadcastable to ``shape``) as an ``(n, 1)`` column, or as ``(n, entries)`` when it varies within a run."""
    lr = np.asarray(lr, dtype=np.float64)
    if lr.ndim == 0 or lr.size == 1:
        return lr.reshape(1, 1)
    if lr.ndim == len(shape) and lr.shape[0] == n and all(k == 1 for k in lr.shape[1:]):
        return lr.reshape(-1, 1)
    return np.broadcast_to(lr, shape).reshape(n, -1)


def adafactor_update(g, w, state, t, lr, *, eps=ADAFACTOR_EPS, clip=1.0, decay=0.8):
    r"""Adafactor's step (Shazeer & Stern 2018, Algorithm 4, :math:`\beta_1 = 0`) for a batch of parameters.

    ``g`` and ``w`` have shape ``(runs, rows, cols)`` (factored second moment) or
    ``(runs,)``/``(runs, n)`` (unfactored); ``lr`` is the relative step size, shape
    ``(runs,)``.  ``state`` holds the running moments and is updated in place.
    """
    g, w = _finite_array(g, "g"), _finite_array(w, "w")
    if g.shape != w.shape or not 1 <= g.ndim <= 3:
        raise ValueError(f"g and w must share a shape (runs,), (runs, n) or (runs, rows, cols); got {g.shape} and {w.shape}")
    _check_state(state)
    t = check_integer(t, "t", maximum=MAX_STEPS)
    lr = np.asarray(_positive_lr(lr, 1), dtype=np.float64)
    if lr.shape != (g.shape[0],):
        raise ValueError(f"lr must hold one relative step per run, shape ({g.shape[0]},); got shape {lr.shape}")
    eps1, eps2 = eps
    beta = 1.0 - t ** (-decay)
    g2 = g * g + eps1
    lr = np.reshape(lr, (-1,) + (1,) * (g.ndim - 1))
    if g.ndim == 3:
        if "r" not in state:
            state["r"], state["c"] = np.zeros(g.shape[:2]), np.zeros((g.shape[0], g.shape[2]))
        state["r"] = beta * state["r"] + (1 - beta) * g2.mean(axis=2)
        state["c"] = beta * state["c"] + (1 - beta) * g2.mean(axis=1)
        v = state["r"][:, :, None] * state["c"][:, None, :] / state["r"].mean(axis=1)[:, None, None]
    else:
        if "v" not in state:
            state["v"] = np.zeros_like(g)
        state["v"] = beta * state["v"] + (1 - beta) * g2
        v = state["v"]
    u = g / np.sqrt(v)
    axes = tuple(range(1, g.ndim))
    rms_u = np.sqrt(np.mean(u * u, axis=axes, keepdims=True)) if axes else np.abs(u)
    u = u / np.maximum(1.0, rms_u / clip)
    rms_w = np.sqrt(np.mean(w * w, axis=axes, keepdims=True)) if axes else np.abs(w)
    return -lr * np.maximum(eps2, rms_w) * u


def _apply_step(w, step, out, *, scale=None):
    """``out = w + step`` (``w + scale * step`` when ``scale`` is given), block by block, and
    each run's smallest and largest new entry (NaN when one is NaN)."""
    n = w.shape[0]
    w2, s2, o2 = (a.reshape(n, -1) for a in (w, step, out))
    scale = None if scale is None else _per_row(scale, w.shape, n)
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    for cols in _column_blocks(w2):
        ob = o2[:, cols]
        if scale is None:
            np.add(w2[:, cols], s2[:, cols], out=ob)
        else:
            np.multiply(s2[:, cols], _block(scale, cols), out=ob)
            np.add(w2[:, cols], ob, out=ob)
        np.minimum(lo, ob.min(axis=1), out=lo)
        np.maximum(hi, ob.max(axis=1), out=hi)
    return out, lo, hi


def _finite_array(x, name):
    return check_finite(as_real_array(x, name, dtype=np.float64), name)


def _check_state(state):
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict (the optimiser's moments, empty before the first step); got {type(state).__name__}")


def _positive_lr(lr, ndim):
    if isinstance(lr, (bool, str, bytes)):
        raise TypeError(f"lr must be a positive number or an array of them; got {lr!r}")
    try:
        arr = np.asarray(lr, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"lr must be a positive number or an array of them; got {lr!r}") from None
    if arr.ndim > ndim or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"lr must be finite and > 0 (a number, or one per run); got {lr!r}")
    return arr


# ----------------------------------------------------------------- the task


def retrieval_targets(V, perm):
    r"""The values the head must return: query i's target is :math:`v_{\pi(i)}`, for every run.

    ``V`` has shape ``(runs, T, d_v)`` and ``perm`` ``(runs, T)``.
    """
    V = _finite_array(V, "V")
    perm = np.asarray(perm)
    if V.ndim != 3 or perm.shape != V.shape[:2]:
        raise ValueError(f"V must have shape (runs, T, d_v) and perm (runs, T); got {V.shape} and {perm.shape}")
    if perm.dtype.kind not in "iu" or perm.size and (perm.min() < 0 or perm.max() >= V.shape[1]):
        raise ValueError(f"perm must hold integer key indices in [0, {V.shape[1]}); got dtype {perm.dtype}")
    return np.take_along_axis(V, perm[:, :, None], axis=1)


def _episodes(rngs, n_keys, d_model, noise):
    """One episode per run, each from its own stream: keys X, unit-variance noisy queries
    in a random order, and the permutation, written in place."""
    X = np.empty((len(rngs), n_keys, d_model))
    Xq = np.empty_like(X)
    perm = np.empty((len(rngs), n_keys), dtype=np.int64)
    scale = math.sqrt(1.0 + noise * noise)
    for r, rng in enumerate(rngs):
        rng.standard_normal(out=X[r])
        perm[r] = rng.permutation(n_keys)
        rng.standard_normal(out=Xq[r])
        Xq[r] *= noise
        Xq[r] += X[r][perm[r]]
        Xq[r] /= scale
    return X, Xq, perm


class _Heads:
    """The parameters of a batch of runs (``params``: the trained ones), and how they make the scores."""

    def __init__(self, rngs, d_model, d_k, scaling, n_keys, formulas=None):
        self.formulas = _OWN_FORMULAS if formulas is None else formulas
        W = np.stack([r.standard_normal((3, d_model, d_k)) for r in rngs]) / math.sqrt(d_model)
        if scaling == "t5":
            W[:, 0] /= self.formulas.t5_fold_divisor(d_k)
        self.params = {"WQ": W[:, 0].copy(), "WK": W[:, 1].copy()}  # then TRAINED_EXTRA's, in that order
        if scaling == "qknorm":
            self.params["gain"] = np.full(len(rngs), qknorm_gain(n_keys))
        if scaling == "additive":
            self.params["v"] = np.stack([r.standard_normal(d_k) for r in rngs]) / math.sqrt(d_k)
        self.WV = W[:, 2].copy()
        self.scaling = scaling
        self.scale = {"none": 1.0, "t5": 1.0, "sqrt": 1.0 / math.sqrt(d_k), "mup": 1.0 / d_k, "qknorm": 1.0, "additive": 1.0}[scaling]

    def scores(self, Xq, X):
        """The logits S (and, for additive attention, tanh of the pre-activations)."""
        if self.scaling == "additive":
            Qp, Kp = self.projections(Xq, X)
            H = np.tanh(Qp[:, :, None, :] + Kp[:, None, :, :])
            return np.einsum("rijd,rd->rij", H, self.params["v"]), H
        Qa, Ka, _ = self.qk(Xq, X)
        return self.scale * (Qa @ np.swapaxes(Ka, 1, 2)), None

    def projections(self, Xq, X):
        return Xq @ self.params["WQ"], X @ self.params["WK"]

    def qk(self, Xq, X):
        """The query and key arrays the attention sees (unit rows times the gain under QK-norm)."""
        Q, K = self.projections(Xq, X)
        if self.scaling != "qknorm":
            return Q, K, None
        qh, kh, nq, nk = self.formulas.qk_normalize(Q, K)
        return self.params["gain"][:, None, None] * qh, kh, (qh, kh, nq, nk)


def _loss_and_grads(heads, X, Xq, perm, formulas, seen=None, logits=False):
    """Loss per run, right share per run, and the gradients of the trained parameters.

    ``seen``, a dict, receives the episode's attention weights ``A`` and, with ``logits``,
    each run's largest |logit| ``max_logit`` (the scores recomputed: one product more)."""
    n_runs, T, _ = X.shape
    d_v = heads.WV.shape[2]
    V = X @ heads.WV
    target = formulas.retrieval_targets(V, perm)
    if heads.scaling == "additive":
        return _additive_loss_and_grads(heads, X, Xq, perm, V, target, formulas, seen)
    Qa, Ka, norm = heads.qk(Xq, X)
    if logits:
        seen["max_logit"] = np.abs(heads.scale * (Qa @ np.swapaxes(Ka, 1, 2))).max(axis=(1, 2))
    loss = np.empty(n_runs)

    def d_output(O):
        err = O - target
        loss[:] = 0.5 * np.einsum("rtd,rtd->r", err, err) / (T * d_v)
        return err / (T * d_v)

    dQa, dKa, _, _, A = formulas.attention_backward(Qa, Ka, V, d_output, scale=heads.scale, return_forward=True)
    right = np.mean(np.argmax(A, axis=2) == perm, axis=1)
    if seen is not None:
        seen["A"] = A
    grads = {}
    if norm is None:
        dQ, dK = dQa, dKa
    else:
        qh, kh, nq, nk = norm
        g = heads.params["gain"][:, None, None]
        grads["gain"] = np.einsum("rtd,rtd->r", dQa, qh)
        dqh = g * dQa
        dQ = (dqh - np.sum(dqh * qh, axis=2, keepdims=True) * qh) / nq
        dK = (dKa - np.sum(dKa * kh, axis=2, keepdims=True) * kh) / nk
    grads["WQ"] = np.swapaxes(Xq, 1, 2) @ dQ
    grads["WK"] = np.swapaxes(X, 1, 2) @ dK
    return loss, right, grads


def _additive_loss_and_grads(heads, X, Xq, perm, V, target, formulas, seen=None):
    r"""Additive attention, :math:`s_{ij} = v^\top\tanh(W_1^\top\tilde x_i + W_2^\top x_j)`, and its backward by hand:
    :math:`dS = J^\top dA` (the section's vector-Jacobian product, :math:`dA = dO\,V^\top`),
    :math:`dv = \sum_{ij} dS_{ij} h_{ij}`, :math:`dU_{ij} = dS_{ij}\,v \odot (1 - h_{ij}^2)`,
    :math:`d\tilde q_i = \sum_j dU_{ij}`, :math:`d\tilde k_j = \sum_i dU_{ij}`."""
    T, d_v = X.shape[1], heads.WV.shape[2]
    S, H = heads.scores(Xq, X)
    A = softmax(S)
    if seen is not None:
        seen["A"], seen["max_logit"] = A, np.abs(S).max(axis=(1, 2))
    err = A @ V - target
    loss = 0.5 * np.einsum("rtd,rtd->r", err, err) / (T * d_v)
    dA = (err / (T * d_v)) @ np.swapaxes(V, 1, 2)
    dS = formulas.softmax_vjp(A, dA)
    v = heads.params["v"]
    dU = dS[..., None] * v[:, None, None, :] * (1.0 - H * H)
    grads = {"WQ": np.swapaxes(Xq, 1, 2) @ dU.sum(axis=2), "WK": np.swapaxes(X, 1, 2) @ dU.sum(axis=1),
             "v": np.einsum("rij,rijd->rd", dS, H)}
    return loss, np.mean(np.argmax(A, axis=2) == perm, axis=1), grads


#: What the probe episode records at each checkpoint (:func:`train_heads`).
PROBE_STATISTICS = ("loss", "accuracy", "frozen", "max_weight", "cosine", "target_logit")
#: Checkpoints: after round(k * steps / 8) steps, k = 0..8.
CHECKPOINTS = 9
#: The per-run outcomes :func:`train_heads` returns (``TrainingSim.statistics``).
OUTCOMES = (
    ("learned", "steps_to_accuracy", "diverged", "divergence_step", "q_square_init", "k_square_init", "qk_product_init",
     "q_cross_init", "max_logit_final",
     "q_square_final", "k_square_final", "gradient_error", "adam_first_step", "adafactor_step")
    + ("pattern_frozen", "aligned", "sharpened")
    + tuple(f"learned_by_{k}" for k in range(CHECKPOINTS))
    + tuple(f"{name}_{k}" for name in PROBE_STATISTICS for k in range(CHECKPOINTS))
    + ("unstable", "unstable_step", "onehot_before_unstable", "onehot_at_unstable", "onehot_before_majority", "onehot_final",
       "max_logit_train", "large_logit", "logit_over_gain",
       "first_step_logit_change")
)


def checkpoint_steps(steps):
    """The steps after which the probe is measured: round(k * steps / 8), k = 0..8."""
    steps = check_integer(steps, "steps", maximum=MAX_STEPS)
    return tuple(int(round(k * steps / (CHECKPOINTS - 1))) for k in range(CHECKPOINTS))


def _probe_error(heads, X, Xq, perm, formulas):
    """The probe episode's scores S, weights A, the error O - v_target, and the loss."""
    T, d_v = X.shape[1], heads.WV.shape[2]
    S, _ = heads.scores(Xq, X)
    A = softmax(S)
    err = A @ (X @ heads.WV) - formulas.retrieval_targets(X @ heads.WV, perm)
    return S, A, err, 0.5 * np.einsum("rtd,rtd->r", err, err) / (T * d_v)


def _probe(heads, X, Xq, perm, formulas, initial_choice=None):
    """The probe episode's loss and accuracy, the queries' chosen keys, largest weights, q-k cosines and logits."""
    S, A, _, loss = _probe_error(heads, X, Xq, perm, formulas)
    choice = np.argmax(S, axis=2)
    Q, K = heads.projections(Xq, X)
    Kt = np.take_along_axis(K, perm[:, :, None], axis=1)
    cos = np.sum(Q * Kt, axis=2) / (np.linalg.norm(Q, axis=2) * np.linalg.norm(Kt, axis=2))
    initial = choice if initial_choice is None else initial_choice
    return choice, dict(
        loss=loss,
        accuracy=np.mean(choice == perm, axis=1),
        frozen=np.mean(choice == initial, axis=1),
        max_weight=np.mean(A.max(axis=2), axis=1),
        cosine=cos.mean(axis=1),
        target_logit=np.take_along_axis(S, perm[:, :, None], axis=2)[:, :, 0].mean(axis=1),
        max_logit=np.abs(S).max(axis=(1, 2)),
        onehot=np.mean(A.max(axis=2) >= ONE_HOT, axis=1),
        scores=S,
        q_square=np.mean(Q * Q, axis=(1, 2)),
        k_square=np.mean(K * K, axis=(1, 2)),
    )


def _entry_products(Q, K):
    """Per run: the mean q_im k_jm over queries i, keys j, coordinates m, and the mean q_im q_im' over m != m'."""
    T_q, T_k, d_k = Q.shape[1], K.shape[1], Q.shape[2]
    qk = np.einsum("rm,rm->r", Q.sum(axis=1), K.sum(axis=1)) / (T_q * T_k * d_k)
    row = Q.sum(axis=2)
    cross = (np.sum(row * row, axis=1) - np.sum(Q * Q, axis=(1, 2))) / (T_q * d_k * (d_k - 1)) if d_k > 1 else np.zeros(len(Q))
    return qk, cross


#: The step-0 gradient check: Richardson-extrapolated central differences at h = 1e-6 ||W||
#: and h/2, and the relative disagreement it tolerates.
GRADIENT_STEP = 1e-6
GRADIENT_TOLERANCE = 1e-6


def _directional_check(heads, probe, formulas):
    r"""The hand-derived gradient G of the probe loss against a (Richardson-extrapolated) central
    difference along :math:`u = G/\lVert G\rVert`: :math:`|(L(W + hu) - L(W - hu))/2h - \lVert G\rVert|`
    over :math:`10^{-6}\max(\lVert G\rVert, |\text{difference}|)`, per run (<= 1 when they agree)."""
    _, _, grads = _loss_and_grads(heads, *probe, formulas)
    names = list(heads.params)
    n = len(heads.WV)
    norm = np.sqrt(sum(np.sum(grads[k].reshape(n, -1) ** 2, axis=1) for k in names))
    size = np.sqrt(sum(np.sum(heads.params[k].reshape(n, -1) ** 2, axis=1) for k in names))
    saved = dict(heads.params)

    def central(h):
        losses = []
        for sign in (1.0, -1.0):
            heads.params = {k: saved[k] + _per_run(sign * h / np.maximum(norm, 1e-300), saved[k]) * grads[k] for k in names}
            losses.append(_probe_error(heads, *probe, formulas)[3])
        return (losses[0] - losses[1]) / (2 * h)

    h = GRADIENT_STEP * size
    fd = (4 * central(h / 2) - central(h)) / 3  # Richardson: the h^2 terms cancel
    heads.params = saved
    return np.abs(fd - norm) / (GRADIENT_TOLERANCE * np.maximum(np.maximum(norm, np.abs(fd)), 1e-300))


def _per_run(x, like):
    return x.reshape((-1,) + (1,) * (like.ndim - 1))


#: What a run calls when no ``formulas`` are given: the section's backward pass and this
#: module's own updates and targets (:data:`stats.FORMULAS` holds the same functions).
_OWN_FORMULAS = SimpleNamespace(attention_backward=attention_backward, softmax_vjp=softmax_vjp, adam_update=adam_update,
                                adafactor_update=adafactor_update, retrieval_targets=retrieval_targets,
                                t5_fold_divisor=t5_fold_divisor, qk_normalize=qk_normalize,
                                mup_lr_multiplier=mup_lr_multiplier)


def _check_lr(lr, n_runs):
    lr = _positive_lr(lr, 1)
    if lr.ndim == 1 and lr.shape[0] != n_runs:
        raise ValueError(f"lr must be one number or one per run ({n_runs}); got shape {lr.shape}")
    return np.broadcast_to(lr, (n_runs,)).copy()


def _check_per_parameter(values, name, names, *, positive):
    """``values`` (None, one number, or a dict over ``names``) as a dict of floats for every name."""
    allowed = "> 0" if positive else ">= 0"
    default = 1.0 if positive else ADAM_EPS
    if values is None:
        return dict.fromkeys(names, default)
    if not isinstance(values, dict):
        values = dict.fromkeys(names, values)
    unknown = set(values) - set(names)
    if unknown:
        raise ValueError(f"{name} names parameters {sorted(unknown)}; this head trains {list(names)}")
    out = {}
    for key in names:
        v = values.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{name} must hold finite numbers {allowed}; got {v!r} for {key}")
        if not math.isfinite(v) or (v <= 0 if positive else v < 0):
            raise ValueError(f"{name} must hold finite numbers {allowed}; got {v!r} for {key}")
        out[key] = float(v)
    return out


#: A run is *unstable* from the first step whose training-episode loss exceeds this and its own
#: step-0 probe loss by :data:`UNSTABLE_RISE` (or is not finite), or whose parameters diverge:
#: uniform attention loses about 1/2, a confident wrong choice about 1 (the values have
#: unit-variance entries), so 3/4 is worse than not attending; the rise keeps a head that
#: starts sharp (unscaled, or QK-norm's gain at a small d_k) from counting as diverged at step 1.
UNSTABLE_LOSS = 0.75
UNSTABLE_RISE = 0.25
#: A logit this large makes a weight e^100 times its row's others: far past one-hot.
LARGE_LOGIT = 100.0
#: A row is nearly one-hot when its largest weight is at least this.
ONE_HOT = 0.99
#: Rounding allowance of ``|g q.k|/|g| <= 1`` for unit q and k (the dot product's d_k u, for d_k <= 4096).
LOGIT_TOLERANCE = 1e-12


class _Trainer:
    """A batch of runs advanced one step at a time (:func:`train_heads` is its loop; :func:`_trainer`
    validates its arguments, ``lr_factors`` and ``adam_eps`` as a dict over every trained parameter)."""

    def __init__(self, rngs, *, d_k, d_model, scaling, optimizer, lr, steps, n_keys, noise, formulas, lr_factors,
                 adam_eps, track_logits):
        self.rngs, self.n_keys, self.d_model, self.noise, self.formulas = rngs, n_keys, d_model, noise, formulas
        self.optimizer, self.steps, self.track = optimizer, steps, track_logits
        self.n = n = len(rngs)
        self.heads = heads = _Heads(rngs, d_model, d_k, scaling, n_keys, formulas)
        self.eps = adam_eps
        # A factor of exactly 1 leaves the learning rate's array as it was (the same bits).
        self.rates = {k: lr if f == 1.0 else lr * f for k, f in lr_factors.items()}
        self.probe = probe = _episodes(rngs, n_keys, d_model, noise)
        self.initial, start = _probe(heads, *probe, formulas)
        self.start_scores = start["scores"]
        qk_product, q_cross = _entry_products(*heads.projections(probe[1], probe[0]))
        out = {"q_square_init": start["q_square"], "k_square_init": start["k_square"],
               "qk_product_init": qk_product, "q_cross_init": q_cross,
               "gradient_error": _directional_check(heads, probe, formulas),
               "adam_first_step": np.zeros(n), "adafactor_step": np.zeros(n),
               "max_logit_train": np.zeros(n), "logit_over_gain": np.zeros(n), "first_step_logit_change": np.zeros(n),
               "onehot_before_unstable": np.zeros(n), "onehot_at_unstable": np.zeros(n), "onehot_final": start["onehot"]}
        self.marks = checkpoint_steps(steps)
        for k in (k for k, m in enumerate(self.marks) if m == 0):
            for name in PROBE_STATISTICS:
                out[f"{name}_{k}"] = start[name]
        out["max_logit_final"] = start["max_logit"]
        out["q_square_final"], out["k_square_final"] = start["q_square"], start["k_square"]
        self.out = out
        self.previous_onehot = start["onehot"]
        self.unstable_loss = np.maximum(UNSTABLE_LOSS, start["loss"] + UNSTABLE_RISE)
        self.states = {name: {} for name in heads.params}
        self.spare = {}
        self.first = np.full(n, steps + 1, dtype=np.int64)
        self.diverged_at = np.full(n, steps + 1, dtype=np.int64)
        self.unstable_at = np.full(n, steps + 1, dtype=np.int64)
        self.live = np.ones(n, dtype=bool)

    def step(self, t):
        """Step ``t`` (1, 2, ...): a fresh episode, its gradient, and each parameter's update."""
        heads, out, n, steps, live = self.heads, self.out, self.n, self.steps, self.live
        seen = {}
        loss, right, grads = _loss_and_grads(heads, *_episodes(self.rngs, self.n_keys, self.d_model, self.noise),
                                             self.formulas, seen, logits=self.track)
        self.first[(self.first > steps) & (right >= ACCURACY_TARGET) & live] = t
        onehot = np.mean(seen["A"].max(axis=2) >= ONE_HOT, axis=1)
        with np.errstate(invalid="ignore"):
            bad = ~(loss <= self.unstable_loss)
        self._mark_unstable(bad & live, t, self.previous_onehot, onehot)
        self.previous_onehot = onehot
        if self.track:
            out["max_logit_train"] = np.where(live, np.fmax(out["max_logit_train"], seen["max_logit"]), out["max_logit_train"])
            if "gain" in heads.params:
                rel = seen["max_logit"] / (np.abs(heads.params["gain"]) * (1 + LOGIT_TOLERANCE))
                out["logit_over_gain"] = np.where(live, np.fmax(out["logit_over_gain"], rel), out["logit_over_gain"])
        new = {}
        ok = live.copy()
        for name, w in heads.params.items():
            g = grads[name]
            lr = self.rates[name]
            lr_w = lr.reshape((-1,) + (1,) * (g.ndim - 1))
            buffer = self.spare.setdefault(name, np.empty_like(w))
            with np.errstate(over="ignore", invalid="ignore"):
                if self.optimizer == "sgd":
                    new[name], lo, hi = _apply_step(w, g, buffer, scale=-lr_w)
                elif self.optimizer == "adam":
                    eps = self.eps[name]
                    step = self.formulas.adam_update(g, self.states[name], t, lr_w, eps=eps)
                    if t == 1:  # bias-corrected: m_hat = g, v_hat = g^2, so the step is -lr g / (|g| + eps)
                        err = np.abs(step + lr_w * g / (np.abs(g) + eps)) / (STEP_TOLERANCE * lr_w)
                        out["adam_first_step"] = np.maximum(out["adam_first_step"], err.reshape(n, -1).max(axis=1))
                    new[name], lo, hi = _apply_step(w, step, buffer)
                else:
                    step = self.formulas.adafactor_update(g, w, self.states[name], t, lr)
                    # Clipped at d = 1, the step's RMS is at most lr * max(eps2, RMS(w)).
                    axes = tuple(range(1, g.ndim))
                    size = np.sqrt(np.mean(step * step, axis=axes)) if axes else np.abs(step)
                    rms_w = np.sqrt(np.mean(w * w, axis=axes)) if axes else np.abs(w)
                    rel = size / (lr * np.maximum(ADAFACTOR_EPS[1], rms_w) * (1 + STEP_TOLERANCE))
                    out["adafactor_step"] = np.maximum(out["adafactor_step"], np.where(live, rel, 0.0))
                    new[name], lo, hi = _apply_step(w, step, buffer)
            # NaN fails the comparisons (and survives the block-wise min and max), so a
            # non-finite parameter counts as diverged too.
            ok &= (hi <= DIVERGENCE_BOUND) & (lo >= -DIVERGENCE_BOUND)
        self.diverged_at[live & ~ok] = t
        self._mark_unstable(live & ~ok, t, onehot, onehot)
        if ok.all():
            for name in new:  # the old arrays become next step's buffers
                self.spare[name] = heads.params[name]
            heads.params = new
        else:
            live &= ok
            for name, w in heads.params.items():
                w[live] = new[name][live]
        if t == 1:
            change = heads.scores(self.probe[1], self.probe[0])[0] - self.start_scores
            out["first_step_logit_change"] = np.sqrt(np.mean(change * change, axis=(1, 2)))
        # A short run has several checkpoints at one step: probe once.
        marked = [k for k, m in enumerate(self.marks) if m == t and k > 0]
        now = _probe(heads, *self.probe, self.formulas, self.initial)[1] if marked else None
        for k in marked:
            for name in PROBE_STATISTICS:
                out[f"{name}_{k}"] = now[name]
            if k == CHECKPOINTS - 1:
                out["max_logit_final"] = now["max_logit"]
                out["q_square_final"], out["k_square_final"] = now["q_square"], now["k_square"]
                out["onehot_final"] = now["onehot"]

    def _mark_unstable(self, which, t, before, at):
        newly = which & (self.unstable_at > self.steps)
        self.unstable_at[newly] = t
        for name, share in (("onehot_before_unstable", before), ("onehot_at_unstable", at)):
            self.out[name] = np.where(newly, share, self.out[name])

    def outcomes(self):
        """The per-run outcomes (:data:`OUTCOMES`) after the last step."""
        out, marks, steps, first = self.out, self.marks, self.steps, self.first
        last = CHECKPOINTS - 1
        out.update(
            {f"learned_by_{k}": (first <= m).astype(np.float64) for k, m in enumerate(marks)},
            pattern_frozen=(out[f"frozen_{last}"] >= FROZEN_SHARE).astype(np.float64),
            aligned=(out[f"cosine_{last}"] > 0).astype(np.float64),
            sharpened=(out[f"max_weight_{last}"] > out["max_weight_0"]).astype(np.float64),
            learned=(first <= steps).astype(np.float64),
            steps_to_accuracy=first.astype(np.float64),
            diverged=(self.diverged_at <= steps).astype(np.float64),
            divergence_step=self.diverged_at.astype(np.float64),
            unstable=(self.unstable_at <= steps).astype(np.float64),
            unstable_step=self.unstable_at.astype(np.float64),
        )
        out["large_logit"] = (out["max_logit_train"] > LARGE_LOGIT).astype(np.float64)
        out["onehot_before_majority"] = (out["onehot_before_unstable"] > 0.5).astype(np.float64)
        return {name: out[name] for name in OUTCOMES}


def _check_generators(rngs):
    if not isinstance(rngs, (list, tuple)) or not rngs:
        raise TypeError("rngs must be a non-empty list of numpy.random.Generator, one per run")
    for r in rngs:
        if not isinstance(r, np.random.Generator):
            raise TypeError(f"rngs must hold numpy.random.Generator; got {type(r).__name__}")


def _trainer(rngs, *, d_k, d_model, scaling, optimizer, lr, steps, n_keys, noise, formulas, lr_factors=None,
             adam_eps=None, track_logits=False):
    """A validated :class:`_Trainer` (the arguments of :func:`train_heads`)."""
    formulas = _OWN_FORMULAS if formulas is None else formulas
    _check_generators(rngs)
    d_k = check_d_k(d_k)
    d_model = check_integer(d_model, "d_model", maximum=MAX_D_K)
    if scaling not in TRAIN_SCALINGS:
        raise ValueError(f"scaling must be one of {TRAIN_SCALINGS}; got {scaling!r}")
    if optimizer not in TRAIN_OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {TRAIN_OPTIMIZERS}; got {optimizer!r}")
    steps = check_integer(steps, "steps", maximum=MAX_STEPS)
    n_keys = check_integer(n_keys, "n_keys", minimum=2, maximum=4096, what="an integer >= 2")
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite number >= 0; got {noise!r}")
    if not isinstance(track_logits, bool):
        raise TypeError(f"track_logits must be True or False; got {track_logits!r}")
    names = ("WQ", "WK") + TRAINED_EXTRA.get(scaling, ())
    lr_factors = _check_per_parameter(lr_factors, "lr_factors", names, positive=True)
    adam_eps = _check_per_parameter(adam_eps, "adam_eps", names, positive=False)
    lr = _check_lr(lr, len(rngs))
    return _Trainer(rngs, d_k=d_k, d_model=d_model, scaling=scaling, optimizer=optimizer, lr=lr, steps=steps,
                    n_keys=n_keys, noise=noise, formulas=formulas, lr_factors=lr_factors, adam_eps=adam_eps,
                    track_logits=track_logits)


def train_heads(rngs, *, d_k, d_model, scaling="sqrt", optimizer="adam", lr, steps, n_keys=32, noise=QUERY_NOISE,
                formulas=None, lr_factors=None, adam_eps=None, track_logits=False):
    r"""Train ``len(rngs)`` heads on the retrieval task, one run per generator (module docstring).

    ``formulas`` (a :class:`stats.Formulas`, or None for the true ones) supplies the
    backward pass, the optimisers' updates and the targets, so a mutant replaces them.

    ``lr`` is one learning rate or one per run; ``steps`` the step budget.  ``lr_factors``
    multiplies the learning rate of the parameters it names (``{"WQ": 8.0}``; a number
    applies to all: ``"WQ"``, ``"WK"``, and ``"gain"`` or ``"v"`` where the scaling has
    one); ``adam_eps`` is Adam's :math:`\varepsilon` (default :data:`ADAM_EPS`), one number
    or per parameter; ``track_logits`` records the largest logit of every step's episode
    (one product more a step).  Returns a dict of 1-D arrays, one entry per run, named in
    :data:`OUTCOMES`:

    * ``learned``: 1 when some step's fresh episode was answered with accuracy >= 0.9;
      ``steps_to_accuracy``: the first such step, censored at ``steps + 1`` (so its mean is
      the restricted mean time to accuracy);
    * ``diverged`` and ``divergence_step`` (``steps + 1`` when it did not): a parameter left
      :math:`[-10^8, 10^8]` or stopped being finite;
    * ``unstable`` and ``unstable_step``: the first step whose episode loss exceeded
      :data:`UNSTABLE_LOSS` and the run's step-0 probe loss plus :data:`UNSTABLE_RISE` (or
      was not finite), or whose update diverged;
      ``onehot_before_unstable``: the share of nearly one-hot rows (largest weight >=
      :data:`ONE_HOT`) in the episode of the step before (0 for a stable run),
      ``onehot_at_unstable`` in the episode of that step itself (where its update diverged:
      the same episode), ``onehot_before_majority`` 1 when more than half the rows were
      nearly one-hot the step before, and ``onehot_final`` that share on the probe at the end;
    * ``q_square_init``, ``k_square_init``: the mean squared entry of Q and K on the probe
      episode at step 0 (``..._final``: at the end); ``qk_product_init``: the mean product
      :math:`q_{im}k_{jm}` over the probe's queries i, keys j and coordinates m at step 0, and
      ``q_cross_init`` the mean :math:`q_{im}q_{im'}` over queries and coordinates
      :math:`m \ne m'` (both 0 in expectation when the entries are uncorrelated); ``max_logit_final``: the largest |logit|
      on the probe at the end; ``gradient_error``: the step-0 check of the hand-derived
      gradient against central differences (:data:`GRADIENT_TOLERANCE`, <= 1 when they agree);
    * ``max_logit_train`` (with ``track_logits``; else 0): the largest |logit| of any step's
      episode, and ``large_logit`` 1 when it exceeded :data:`LARGE_LOGIT`; ``logit_over_gain``: under QK-norm, the largest of |logit| / |gain| over every
      step, within :data:`LOGIT_TOLERANCE` (an identity, <= 1; 0 otherwise);
      ``first_step_logit_change``: the RMS change of the probe's logits made by step 1;
    * ``adam_first_step``: under Adam, the largest entry of
      :math:`|\Delta_1 + \eta\,g/(|g| + \varepsilon)|` in units of 64 roundings of
      :math:`\eta` (bias correction makes the first step exactly that; an identity, <= 1);
      ``adafactor_step``: under Adafactor, the largest step RMS over
      :math:`\eta\max(\varepsilon_2, \mathrm{RMS}(W))` (<= 1 by the update clipping);
      both 0 under the other optimisers;
    * 0/1 per run: ``learned_by_{k}`` (reached the accuracy by checkpoint k),
      ``pattern_frozen`` (at least 90% of the probe's queries choose at the end the key they
      chose at step 0), ``aligned`` (the final mean query-target cosine is positive),
      ``sharpened`` (the final mean largest weight exceeds the initial one);
    * ``{s}_{k}`` for s in :data:`PROBE_STATISTICS` at the checkpoints
      :func:`checkpoint_steps`: the probe episode's loss, accuracy, ``frozen`` (the share of
      its queries choosing the key they chose at step 0), mean largest weight, mean cosine
      of a query and its target key, and mean target logit.
    """
    trainer = _trainer(rngs, d_k=d_k, d_model=d_model, scaling=scaling, optimizer=optimizer, lr=lr, steps=steps,
                       n_keys=n_keys, noise=noise, formulas=formulas, lr_factors=lr_factors, adam_eps=adam_eps,
                       track_logits=track_logits)
    for t in range(1, trainer.steps + 1):
        trainer.step(t)
    return trainer.outcomes()


#: What :func:`fold_gaps` returns per run.
FOLDING_OUTCOMES = ("fold_gap_query", "fold_gap_key", "fold_relative_query", "loss_folded", "loss_divided")


def fold_gaps(rngs_folded, rngs_divided, *, d_k, d_model, optimizer, lr, steps, n_keys=32, match_eps=True, formulas=None):
    r"""T5's folded run and the divided run that should equal it, trained side by side on the same draws.

    The folded run (``scaling="t5"``) and a divided run (``"sqrt"``) whose :math:`W_Q` learning
    rate is multiplied by :func:`~stats.models.fixes.folded_query_lr_factor` (and, under
    Adam with ``match_eps``, whose :math:`W_Q` has :math:`\varepsilon/\sqrt{d_k}`) draw the
    same numbers when the two generator lists are copies.  After every step,
    ``fold_gap_query`` is :math:`\max|\sqrt{d_k}V_Q - W_Q|` and ``fold_gap_key``
    :math:`\max|V_K - W_K|`, each over :math:`64\,u\,t` times the largest entry of the divided
    weight (64 roundings a step); each run's largest over the steps (<= 1: the same run).
    ``fold_relative_query`` is the query gap over the largest entry, unscaled; ``loss_*``
    the probe losses at the end.
    """
    from .fixes import folded_query_lr_factor

    formulas = _OWN_FORMULAS if formulas is None else formulas
    _check_generators(rngs_folded)
    _check_generators(rngs_divided)
    if len(rngs_divided) != len(rngs_folded):
        raise ValueError("rngs_folded and rngs_divided must be lists of the same length (copies of one another)")
    if not isinstance(match_eps, bool):
        raise TypeError(f"match_eps must be True or False; got {match_eps!r}")
    d_k = check_d_k(d_k)
    factor = folded_query_lr_factor(optimizer, d_k)
    root = math.sqrt(d_k)
    common = dict(d_k=d_k, d_model=d_model, optimizer=optimizer, lr=lr, steps=steps, n_keys=n_keys, noise=QUERY_NOISE,
                  formulas=formulas)
    folded = _trainer(rngs_folded, scaling="t5", **common)
    eps = {"WQ": ADAM_EPS / root, "WK": ADAM_EPS} if optimizer == "adam" and match_eps else None
    divided = _trainer(rngs_divided, scaling="sqrt", lr_factors={"WQ": factor}, adam_eps=eps, **common)
    n = folded.n
    gap_q, gap_k, rel_q = np.zeros(n), np.zeros(n), np.zeros(n)
    for t in range(1, folded.steps + 1):
        folded.step(t)
        divided.step(t)
        Wq, Wk = divided.heads.params["WQ"], divided.heads.params["WK"]
        dq = np.abs(root * folded.heads.params["WQ"] - Wq).reshape(n, -1).max(axis=1)
        dk = np.abs(folded.heads.params["WK"] - Wk).reshape(n, -1).max(axis=1)
        size_q = np.abs(Wq).reshape(n, -1).max(axis=1)
        size_k = np.abs(Wk).reshape(n, -1).max(axis=1)
        gap_q = np.fmax(gap_q, dq / (STEP_TOLERANCE * t * size_q))
        gap_k = np.fmax(gap_k, dk / (STEP_TOLERANCE * t * size_k))
        rel_q = np.fmax(rel_q, dq / size_q)
    a, b = folded.outcomes(), divided.outcomes()
    last = CHECKPOINTS - 1
    return dict(fold_gap_query=gap_q, fold_gap_key=gap_k, fold_relative_query=rel_q, loss_folded=a[f"loss_{last}"],
                loss_divided=b[f"loss_{last}"])


#: A training step's fixed work (Python calls, small arrays), in units of ``cost``, and a
#: run's fixed work (the probes, the step-0 gradient check) in steps: measured on one
#: thread at T = 8 and 32, d_k = d_model = 8 to 256 (0.1-4 ms a step; fixed work 2.6-6.2
#: steps).  Without them a one-step run of 16-wide heads reads 50-100 times cheaper than a
#: 150-step one, where it costs a fifth as much.
STEP_OVERHEAD, RUN_OVERHEAD_STEPS = 60_000.0, 4


def _run_effort(cost_per_step, steps):
    """A training run's work in units of ``cost``: (steps + fixed steps) x (a step's cost + its overhead)."""
    return (steps + RUN_OVERHEAD_STEPS) * (cost_per_step + STEP_OVERHEAD)


def _check_run_fields(sim, optimizers):
    """The fields every training simulation has: d_k, d_model (default d_k), the optimiser, lr, steps, n_keys."""
    check_d_k(sim.d_k)
    if sim.d_model is None:
        object.__setattr__(sim, "d_model", sim.d_k)
    check_integer(sim.d_model, "d_model", maximum=MAX_D_K)
    if sim.optimizer not in optimizers:
        raise ValueError(f"optimizer must be one of {optimizers}; got {sim.optimizer!r}")
    if isinstance(sim.lr, bool) or not isinstance(sim.lr, (int, float)):
        raise TypeError(f"lr must be a positive number; got {sim.lr!r}")
    check_positive(sim.lr, "lr")
    check_integer(sim.steps, "steps", maximum=MAX_STEPS)
    check_integer(sim.n_keys, "n_keys", minimum=2, maximum=4096, what="an integer >= 2")


@dataclass(frozen=True)
class TrainingSim(Simulation):
    r"""One training run per row (module docstring): a block is a batch of runs trained together.

    ``mup_base`` (a base width :math:`d_0`) gives :math:`W_Q` and :math:`W_K` muP's learning
    rate :math:`\eta\,d_0/d_{model}` (:func:`~stats.models.fixes.mup_lr_multiplier`);
    ``gain_lr`` is QK-norm's gain's own learning rate (None: ``lr``); ``track_logits``
    records every step's largest logit (:func:`train_heads`).
    """

    d_k: int
    scaling: str = "sqrt"
    optimizer: str = "adam"
    lr: float = 1e-2
    steps: int = 200
    d_model: int | None = None
    n_keys: int = 32
    mup_base: int | None = None
    gain_lr: float | None = None
    track_logits: bool = False

    statistics: ClassVar[tuple[str, ...]] = OUTCOMES

    @property
    def block_rows(self):
        """Runs trained together: 16, fewer for wide heads, so that a block's parameters,
        gradients and optimiser state (about eight d_model x d_k arrays a run) stay within 32 MiB."""
        per_run = 8 * 8 * self.d_model * self.d_k + (4 * 8 * self.n_keys**2 * self.d_k if self.scaling == "additive" else 0)
        return int(min(16, max(1, BLOCK_BYTES // per_run)))

    @property
    def uses(self):
        """The formulas a run calls: the backward pass, the task's targets, its optimiser's update, and the fix's own."""
        step = {"adam": ("adam_update",), "adafactor": ("adafactor_update",)}.get(self.optimizer, ())
        backward = ("softmax_vjp",) if self.scaling == "additive" else ("attention_backward",)
        fix = {"t5": ("t5_fold_divisor",), "qknorm": ("qk_normalize",)}.get(self.scaling, ())
        return (*backward, "retrieval_targets", *step, *fix, *(("mup_lr_multiplier",) if self.mup_base is not None else ()))

    def __post_init__(self):
        _check_run_fields(self, TRAIN_OPTIMIZERS)
        if self.scaling not in TRAIN_SCALINGS:
            raise ValueError(f"scaling must be one of {TRAIN_SCALINGS}; got {self.scaling!r}")
        if self.mup_base is not None:
            check_integer(self.mup_base, "mup_base", maximum=MAX_D_K)
        if self.gain_lr is not None:
            if self.scaling != "qknorm":
                raise ValueError(f"gain_lr applies to QK-norm's gain only; scaling is {self.scaling!r}")
            check_positive(self.gain_lr, "gain_lr")
        if not isinstance(self.track_logits, bool):
            raise TypeError(f"track_logits must be True or False; got {self.track_logits!r}")

    @property
    def key(self):
        extra = {name: getattr(self, name) for name in ("mup_base", "gain_lr") if getattr(self, name) is not None}
        if self.track_logits:
            extra["track_logits"] = 1
        return stream_key("training", d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                          lr=float(self.lr), steps=self.steps, n_keys=self.n_keys, **extra)

    @property
    def cost(self):
        T, m, d = self.n_keys, self.d_model, self.d_k
        return self.steps * (2 * T * m + 6 * T * m * d + 4 * T * T * d) / 8

    @property
    def effort(self):
        """:func:`_run_effort`: ``cost`` plus each step's fixed overhead and a run's fixed work."""
        return _run_effort(self.cost / self.steps, self.steps)

    def lr_factors(self, formulas):
        """The per-parameter factors on ``lr`` this run trains with (None: all 1)."""
        formulas = _OWN_FORMULAS if formulas is None else formulas
        factors = {}
        if self.mup_base is not None:
            factors["WQ"] = factors["WK"] = formulas.mup_lr_multiplier(self.d_model, self.mup_base)
        if self.gain_lr is not None:
            factors["gain"] = self.gain_lr / self.lr
        return factors or None

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        rngs = [block_generator(sim_seed, block, i) for i in range(rows)]
        return train_heads(rngs, d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                           lr=self.lr, steps=self.steps, n_keys=self.n_keys, formulas=formulas,
                           lr_factors=self.lr_factors(formulas), track_logits=self.track_logits)


@dataclass(frozen=True)
class FoldingSim(Simulation):
    """T5's folded run beside the divided run that equals it, per row (:func:`fold_gaps`): both from one stream."""

    d_k: int
    optimizer: str = "adam"
    lr: float = 1e-2
    steps: int = 20
    d_model: int | None = None
    n_keys: int = 32
    match_eps: bool = True

    statistics: ClassVar[tuple[str, ...]] = FOLDING_OUTCOMES

    @property
    def block_rows(self):
        """Runs trained together: two heads a run, so half of :class:`TrainingSim`'s."""
        return int(min(16, max(1, BLOCK_BYTES // (2 * 8 * 8 * self.d_model * self.d_k))))

    @property
    def uses(self):
        step = {"adam": ("adam_update",), "adafactor": ("adafactor_update",)}.get(self.optimizer, ())
        return ("attention_backward", "retrieval_targets", "t5_fold_divisor", *step)

    def __post_init__(self):
        from .fixes import FOLDING_OPTIMIZERS

        _check_run_fields(self, FOLDING_OPTIMIZERS)
        if not isinstance(self.match_eps, bool):
            raise TypeError(f"match_eps must be True or False; got {self.match_eps!r}")

    @property
    def key(self):
        return stream_key("folding", d_k=self.d_k, d_model=self.d_model, optimizer=self.optimizer, lr=float(self.lr),
                          steps=self.steps, n_keys=self.n_keys, match_eps=int(self.match_eps))

    @property
    def cost(self):
        T, m, d = self.n_keys, self.d_model, self.d_k
        return self.steps * (2 * T * m + 6 * T * m * d + 4 * T * T * d) / 4

    @property
    def effort(self):
        """Two runs' :func:`_run_effort`."""
        return 2 * _run_effort(self.cost / (2 * self.steps), self.steps)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        copies = [[block_generator(sim_seed, block, i) for i in range(rows)] for _ in range(2)]
        return fold_gaps(*copies, d_k=self.d_k, d_model=self.d_model, optimizer=self.optimizer, lr=self.lr,
                         steps=self.steps, n_keys=self.n_keys, match_eps=self.match_eps, formulas=formulas)


def _check_lr_grid(lrs, name="lrs"):
    """A learning-rate grid: a non-empty, strictly increasing tuple of positive finite numbers."""
    if not isinstance(lrs, (tuple, list)) or not lrs:
        raise ValueError(f"{name} must be a non-empty tuple of learning rates; got {lrs!r}")
    for v in lrs:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{name} must hold positive numbers; got {v!r}")
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must hold positive finite numbers; got {v!r}")
    if any(b <= a for a, b in zip(lrs, lrs[1:])):
        raise ValueError(f"{name} must be strictly increasing; got {tuple(lrs)!r}")
    return tuple(float(v) for v in lrs)


#: The largest learning-rate grid of one :class:`LRSweepSim` (its statistics name each point).
MAX_GRID = 12


@dataclass(frozen=True)
class LRSweepSim(Simulation):
    """One seed trained at every learning rate of a grid, per row: common random numbers across the grid.

    Every grid point of a row draws the same initialisation and episodes, so the row's own
    best rate -- ``best_log_lr``, :math:`\\log_{10}` of the grid rate with the smallest final
    probe loss, and ``best_is_{i}``, 1 when it is point i -- is a per-seed outcome whose mean
    carries an MCSE like any other (the location of the loss-vs-rate minimum with an
    uncertainty from the replicates).  ``loss_at_{i}`` is point i's final probe loss and
    ``logit_at_{i}`` its final mean target logit.  The head is :class:`TrainingSim`'s.
    """

    d_k: int
    lrs: tuple = (1e-2,)
    scaling: str = "sqrt"
    optimizer: str = "adam"
    steps: int = 40
    d_model: int | None = None
    n_keys: int = 32
    mup_base: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "lrs", _check_lr_grid(self.lrs))
        if len(self.lrs) > MAX_GRID:
            raise ValueError(f"lrs must hold at most {MAX_GRID} learning rates; got {len(self.lrs)}")
        if self.d_model is None:
            object.__setattr__(self, "d_model", check_d_k(self.d_k))
        self.point(0)  # validates the rest through TrainingSim

    def point(self, i):
        """Grid point ``i`` as a :class:`TrainingSim`."""
        return TrainingSim(self.d_k, self.scaling, self.optimizer, self.lrs[i], self.steps, self.d_model, self.n_keys,
                           mup_base=self.mup_base)

    @property
    def statistics(self):
        k = len(self.lrs)
        return (("best_log_lr",) + tuple(f"best_is_{i}" for i in range(k)) + tuple(f"loss_at_{i}" for i in range(k))
                + tuple(f"logit_at_{i}" for i in range(k)))

    @property
    def block_rows(self):
        return self.point(0).block_rows

    @property
    def uses(self):
        return self.point(0).uses

    @property
    def key(self):
        extra = {"mup_base": self.mup_base} if self.mup_base is not None else {}
        return stream_key("lr-sweep", d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                          lrs=",".join(f"{v:.6g}" for v in self.lrs), steps=self.steps, n_keys=self.n_keys, **extra)

    @property
    def cost(self):
        return len(self.lrs) * self.point(0).cost

    @property
    def effort(self):
        return len(self.lrs) * self.point(0).effort

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        last = CHECKPOINTS - 1
        losses, logits = [], []
        for i in range(len(self.lrs)):
            r = self.point(i).run_block(sim_seed, block, rows, formulas, chunk_size)
            losses.append(r[f"loss_{last}"])
            logits.append(r[f"target_logit_{last}"])
        losses = np.stack(losses, axis=1)
        best = np.argmin(losses, axis=1)
        out = {"best_log_lr": np.log10(np.asarray(self.lrs))[best]}
        out.update({f"best_is_{i}": (best == i).astype(np.float64) for i in range(len(self.lrs))})
        out.update({f"loss_at_{i}": losses[:, i] for i in range(len(self.lrs))})
        out.update({f"logit_at_{i}": logits[i] for i in range(len(self.lrs))})
        return out
