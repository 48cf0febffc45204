r"""The optimisers, one object each, and their updates for a batch of runs.

At learning rate :math:`\eta`:

* ``"sgd"``: :math:`W \leftarrow W - \eta g`;
* ``"adam"`` (Kingma & Ba 2015): :math:`\beta_1 = 0.9`, :math:`\beta_2 = 0.999`,
  :math:`\varepsilon = 10^{-8}`, bias-corrected moments (:func:`adam_update`);
* ``"adafactor"`` (Shazeer & Stern 2018, Algorithm 4 with :math:`\beta_1 = 0`): factored
  second moments for matrices (row and column means of :math:`g^2 + \varepsilon_1`,
  :math:`\varepsilon_1 = 10^{-30}`), decay :math:`\hat\beta_{2t} = 1 - t^{-0.8}`, update
  clipping at d = 1, and the *relative* step :math:`\alpha_t = \eta\,\max(\varepsilon_2,
  \mathrm{RMS}(W_{t-1}))`, :math:`\varepsilon_2 = 10^{-3}`: the step is a fraction
  :math:`\eta` of the parameter's own scale (T5's optimiser; :func:`adafactor_update`).

Each :class:`Optimizer` owns its state and its update of one parameter, the identity its
steps satisfy (checked on every run), and what T5's folding of :math:`1/\sqrt{d_k}` into
:math:`W_Q` does under it (:meth:`Optimizer.folded_query_lr_factor`).  :data:`OPTIMIZERS`
is the registry: adding an optimiser is one class and one line there
(``docs/adding-a-scaling.md`` shows the same for a scaling).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .._validation import check_d_k, check_integer
from ..exact.formats import UNIT_ROUNDOFF
from .arrays import apply_step, block, block_width, broadcasts, column_blocks, finite_array, per_row, positive_lr

__all__ = [
    "ADAFACTOR_EPS",
    "ADAM_BETAS",
    "ADAM_EPS",
    "FIRST_STEP_OPTIMIZERS",
    "MAX_STEPS",
    "OPTIMIZERS",
    "STEP_TOLERANCE",
    "step_tolerance",
    "Adafactor",
    "Adam",
    "Optimizer",
    "SGD",
    "adafactor_update",
    "adam_update",
    "optimizer_named",
]

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
ADAFACTOR_EPS = (1e-30, 1e-3)
MAX_STEPS = 10**7
#: Rounding allowance of an optimiser identity, in units of the step (64 roundings).
STEP_TOLERANCE = 64 * UNIT_ROUNDOFF


def step_tolerance(dtype):
    """:data:`STEP_TOLERANCE` in the unit roundoff of ``dtype`` (a float32 run's steps round 2^29 times coarser)."""
    return STEP_TOLERANCE if np.dtype(dtype) == np.float64 else 64 * float(np.finfo(dtype).eps) / 2


def adam_update(g, state, t, lr, *, betas=ADAM_BETAS, eps=ADAM_EPS):
    r"""Adam's step :math:`-\eta\,\hat m_t/(\sqrt{\hat v_t} + \varepsilon)` for gradient ``g`` at step ``t >= 1``.

    ``state`` is a dict holding ``m`` and ``v`` (created on the first call) and is updated
    in place; ``lr`` broadcasts against ``g`` (one learning rate per run).  The returned
    step lives in ``state`` and is overwritten by the next call.  A float32 ``g`` keeps its
    moments and its step in float32.
    """
    g = finite_array(g, "g")
    _check_state(state)
    t = check_integer(t, "t", maximum=MAX_STEPS)
    lr = positive_lr(lr, g.ndim)
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
    lr = per_row(broadcasts(lr, g.shape), g.shape, n)
    c2, c1 = 1.0 / math.sqrt(1 - b2**t), (-lr / (1 - b1**t)).astype(g.dtype, copy=False)
    # Block by block, so that the twelve operations run on blocks that stay in cache: the
    # arrays are read and written once each, not once an operation (the same arithmetic).
    scratch = np.empty((n, min(block_width(n), m.shape[1])), dtype=g.dtype)
    for cols in column_blocks(m):
        mb, vb, gb, sb, c1b = (block(a, cols) for a in (m, v, g2, step, c1))
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


def adafactor_update(g, w, state, t, lr, *, eps=ADAFACTOR_EPS, clip=1.0, decay=0.8):
    r"""Adafactor's step (Shazeer & Stern 2018, Algorithm 4, :math:`\beta_1 = 0`) for a batch of parameters.

    ``g`` and ``w`` have shape ``(runs, rows, cols)`` (factored second moment) or
    ``(runs,)``/``(runs, n)`` (unfactored); ``lr`` is the relative step size, shape
    ``(runs,)``.  ``state`` holds the running moments and is updated in place.
    """
    g, w = finite_array(g, "g"), finite_array(w, "w")
    if g.shape != w.shape or not 1 <= g.ndim <= 3:
        raise ValueError(f"g and w must share a shape (runs,), (runs, n) or (runs, rows, cols); got {g.shape} and {w.shape}")
    _check_state(state)
    t = check_integer(t, "t", maximum=MAX_STEPS)
    lr = np.asarray(positive_lr(lr, 1), dtype=g.dtype)
    if lr.shape != (g.shape[0],):
        raise ValueError(f"lr must hold one relative step per run, shape ({g.shape[0]},); got shape {lr.shape}")
    eps1, eps2 = eps
    beta = 1.0 - t ** (-decay)
    g2 = g * g + eps1
    lr = np.reshape(lr, (-1,) + (1,) * (g.ndim - 1))
    if g.ndim == 3:
        if "r" not in state:
            state["r"], state["c"] = np.zeros(g.shape[:2], dtype=g.dtype), np.zeros((g.shape[0], g.shape[2]), dtype=g.dtype)
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


def _check_state(state):
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict (the optimiser's moments, empty before the first step); got {type(state).__name__}")


class Optimizer:
    """One optimiser: its update of a parameter, its identity, and what folding does under it.

    ``name`` is its registry name; ``uses`` the fields of :class:`stats.Formulas` its update
    calls (so a mutant of them re-runs its runs); ``identity`` the outcome that records how
    far its steps stray from the identity they satisfy (None when it has none).
    """

    name: ClassVar[str]
    uses: ClassVar[tuple[str, ...]] = ()
    identity: ClassVar[str | None] = None

    def update(self, w, g, state, t, *, lr, lr_w, eps, buffer, formulas, live, out):
        """Parameter ``w``'s new value (written into ``buffer``) after gradient ``g`` at step ``t``,
        with each run's smallest and largest new entry (:func:`~stats.training.arrays.apply_step`).

        ``lr`` holds one rate per run and ``lr_w`` the same broadcastable against ``w``;
        ``eps`` is this parameter's Adam epsilon; ``state`` this parameter's (a dict, kept
        between steps); ``out`` the run's outcomes, where :attr:`identity` is recorded
        for the ``live`` runs.
        """
        raise NotImplementedError

    def folded_query_lr_factor(self, d_k):
        r"""The factor on :math:`W_Q`'s learning rate that makes a divided run the T5-folded one
        (:mod:`stats.models.fixes`)."""
        raise NotImplementedError

    def folded_query_eps(self, eps, d_k):
        """The epsilon a divided run's :math:`W_Q` needs to equal the folded run (``eps`` where it has none)."""
        return eps

    #: ``first_step_direction(g)``: the direction of the first step from gradient ``g`` (the
    #: step is its negative times the rate) where it has a closed form without epsilon; None
    #: where it has none.
    first_step_direction = None

    def __repr__(self):
        return f"{type(self).__name__}()"


class SGD(Optimizer):
    r""":math:`W \leftarrow W - \eta g`."""

    name = "sgd"

    def update(self, w, g, state, t, *, lr, lr_w, eps, buffer, formulas, live, out):
        return apply_step(w, g, buffer, scale=-lr_w)

    def folded_query_lr_factor(self, d_k):
        # The folded gradient is sqrt(d_k) larger and acts without the 1/sqrt(d_k).
        return float(check_d_k(d_k))

    def first_step_direction(self, g):
        return g


class Adam(Optimizer):
    """Adam with bias-corrected moments (:func:`adam_update`); its first step is exactly
    :math:`-\\eta\\,g/(|g| + \\varepsilon)` (``adam_first_step``)."""

    name = "adam"
    uses = ("adam_update",)
    identity = "adam_first_step"

    def update(self, w, g, state, t, *, lr, lr_w, eps, buffer, formulas, live, out):
        step = formulas.adam_update(g, state, t, lr_w, eps=eps)
        if t == 1:  # bias-corrected: m_hat = g, v_hat = g^2, so the step is -lr g / (|g| + eps)
            err = np.abs(step + lr_w * g / (np.abs(g) + eps)) / (step_tolerance(g.dtype) * lr_w)
            n = len(lr)
            out["adam_first_step"] = np.maximum(out["adam_first_step"], err.reshape(n, -1).max(axis=1))
        return apply_step(w, step, buffer)

    def folded_query_lr_factor(self, d_k):
        # The step ignores the gradient's scale but for epsilon (folded_query_eps).
        return math.sqrt(check_d_k(d_k))

    def folded_query_eps(self, eps, d_k):
        return eps / math.sqrt(check_d_k(d_k))

    def first_step_direction(self, g):
        # With eps = 0: m_hat = g, v_hat = g^2, the step is g / |g|.
        return np.sign(g)


class Adafactor(Optimizer):
    """Adafactor's relative step (:func:`adafactor_update`); clipped at d = 1, a step's RMS is at
    most :math:`\\eta\\max(\\varepsilon_2, \\mathrm{RMS}(W))` (``adafactor_step``)."""

    name = "adafactor"
    uses = ("adafactor_update",)
    identity = "adafactor_step"

    def update(self, w, g, state, t, *, lr, lr_w, eps, buffer, formulas, live, out):
        step = formulas.adafactor_update(g, w, state, t, lr)
        axes = tuple(range(1, g.ndim))
        size = np.sqrt(np.mean(step * step, axis=axes)) if axes else np.abs(step)
        rms_w = np.sqrt(np.mean(w * w, axis=axes)) if axes else np.abs(w)
        rel = size / (lr * np.maximum(ADAFACTOR_EPS[1], rms_w) * (1 + step_tolerance(g.dtype)))
        out["adafactor_step"] = np.maximum(out["adafactor_step"], np.where(live, rel, 0.0))
        return apply_step(w, step, buffer)

    def folded_query_lr_factor(self, d_k):
        # The relative step scales with the weight and its normalised update does not.
        check_d_k(d_k)
        return 1.0


#: The optimisers by name: one line an optimiser.
OPTIMIZERS = {opt.name: opt for opt in (SGD(), Adam(), Adafactor())}
#: The optimisers whose first step has a closed form (T5's one-step ratio, :mod:`stats.models.fixes`).
FIRST_STEP_OPTIMIZERS = tuple(name for name, opt in OPTIMIZERS.items() if opt.first_step_direction is not None)


def optimizer_named(name, *, among=None):
    """The :class:`Optimizer` called ``name`` (one of ``among``, default every registered one),
    else a ValueError naming the allowed ones."""
    allowed = tuple(OPTIMIZERS) if among is None else tuple(among)
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(f"optimizer must be one of {allowed}; got {name!r}")
    return OPTIMIZERS[name]
