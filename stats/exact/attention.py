r"""Scaled dot-product attention, its softmax, and the hand-derived backward pass.

Forward (section "The formula, piece by piece")::

    S = c Q K^T  (+ additive mask),   A = softmax(S) row-wise,   O = A V,   c = 1/sqrt(d_k)

Backward (section "The backward pass of attention")::

    dV = A^T dO,   dA = dO V^T,   D_i = dO_i . O_i,   dS = A * (dA - D 1^T),
    dQ = c dS K,   dK = c dS^T Q

Shapes: Q ``(..., T_q, d_k)``, K ``(..., T_k, d_k)``, V ``(..., T_k, d_v)``; leading
(batch, head) dimensions broadcast.  Masks follow PyTorch: a boolean mask is True where a
query may attend, a float mask is added to the scores; either broadcasts to
``(..., T_q, T_k)``.  A fully masked row has no keys to average: its weights, output and
gradients are zero (PyTorch 2.x returns zeros too), never NaN.

Precision.  The scale is applied to Q before the product, ``S = (c Q) K^T``, so a score
that fits the format is never lost to an unscaled intermediate that does not: in float16
with ``Q = K = 100`` and ``d_k = 8`` the raw ``Q K^T`` is 80000 (past 65504) while the
scaled score is 28284.  Every matrix product goes through :func:`stats.exact.cost.matmul`,
so the FLOP claim counts exactly the products made here.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_real_array, check_finite, check_positive
from .cost import matmul, phase

__all__ = [
    "additive_mask",
    "attention_backward",
    "check_qkv",
    "check_scores",
    "forward_pass",
    "naive_softmax",
    "output_gradient",
    "resolve_scale",
    "scaled_dot_product_attention",
    "scores_shape",
    "softmax",
    "softmax_jacobian",
    "softmax_vjp",
    "sum_to_shape",
]


def softmax(s, axis=-1):
    r"""Numerically stable softmax, :math:`a_j = e^{s_j - m} / \sum_l e^{s_l - m}`, m = max s.

    Subtracting the maximum makes the largest exponent :math:`e^0 = 1` and the denominator
    at least 1, so nothing overflows in any precision; the input dtype is kept.  A slice
    whose entries are all ``-inf`` (a fully masked row) gives zeros.
    """
    s = check_scores(s, axis)
    m = np.max(s, axis=axis, keepdims=True)
    # A row that is all -inf would give (-inf) - (-inf) = NaN; shift it by 0 instead.
    m = np.where(np.isfinite(m), m, np.zeros_like(m))
    with np.errstate(over="ignore"):  # s - m may round to -inf far below the max: its weight is 0 either way
        e = np.subtract(s, m)
    np.exp(e, out=e)  # in place: the softmax is elementwise-bound, so passes and copies count
    total = np.sum(e, axis=axis, keepdims=True)
    empty = total == 0
    if empty.any():
        total = np.where(empty, np.ones_like(total), total)  # e is all 0 there: the row stays 0
    e /= total
    return e


def check_scores(s, axis, *, allow_inf=False):
    """``s`` as a real array of scores with at least one entry along ``axis``, else an error
    saying what is wrong: no NaN, and no ``+inf`` unless ``allow_inf`` (``-inf`` is a masked score)."""
    s = as_real_array(s, "s")
    if s.ndim == 0:
        raise ValueError("s must have at least one dimension (the softmax axis); got a scalar")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not -s.ndim <= axis < s.ndim:
        raise ValueError(f"axis must be an integer in [-{s.ndim}, {s.ndim}); got {axis!r}")
    if s.shape[axis] == 0:
        raise ValueError(f"s must hold at least one score along axis {axis}; got shape {s.shape}")
    if np.isnan(s).any():
        raise ValueError("s contains NaN; scores must be numbers or -inf (masked)")
    if not allow_inf and np.isposinf(s).any():
        raise ValueError("s contains +inf; a score of +inf has no softmax (every other weight would be 0/0)")
    return s


def naive_softmax(s, axis=-1):
    """Softmax straight from the definition, ``exp(s) / sum(exp(s))``, with no max shift.

    Kept only to demonstrate overflow: in float16 ``exp(12)`` is already ``inf`` and the
    result is NaN.  Use :func:`softmax` for anything else.
    """
    s = check_scores(s, axis, allow_inf=True)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(s)
        return e / np.sum(e, axis=axis, keepdims=True)


def softmax_jacobian(a):
    r"""Jacobian of the softmax at weights ``a``: :math:`J = \operatorname{diag}(a) - a a^\top`.

    ``a`` has shape ``(..., n)``; the result has shape ``(..., n, n)``.
    """
    a = check_finite(as_real_array(a, "a"), "a")
    if a.ndim < 1 or a.shape[-1] == 0:
        raise ValueError(f"a must have at least one weight along its last axis; got shape {a.shape}")
    n = a.shape[-1]
    return a[..., :, None] * np.eye(n, dtype=a.dtype) - a[..., :, None] * a[..., None, :]


def softmax_vjp(a, g):
    r"""Vector-Jacobian product :math:`J^\top g = a \odot (g - (a\cdot g)\,\mathbf 1)` in O(n).

    ``a`` are softmax weights and ``g = dL/da`` the upstream gradient, both ``(..., n)``;
    returns ``dL/ds`` without building the n x n Jacobian.
    """
    a = check_finite(as_real_array(a, "a"), "a")
    g = check_finite(as_real_array(g, "g"), "g")
    if a.ndim < 1 or a.shape[-1] == 0:
        raise ValueError(f"a must have at least one weight along its last axis; got shape {a.shape}")
    try:
        np.broadcast_shapes(a.shape, g.shape)
    except ValueError:
        raise ValueError(f"g of shape {g.shape} does not broadcast against a of shape {a.shape}") from None
    return a * (g - np.sum(a * g, axis=-1, keepdims=True))


# --------------------------------------------------------------------------- helpers


def check_qkv(Q, K, V):
    """``Q``, ``K``, ``V`` as finite real arrays of compatible shapes ``(..., T_q, d_k)``,
    ``(..., T_k, d_k)``, ``(..., T_k, d_v)``, cast to their common dtype; else an error naming the culprit."""
    Q = check_finite(as_real_array(Q, "Q"), "Q")
    K = check_finite(as_real_array(K, "K"), "K")
    V = check_finite(as_real_array(V, "V"), "V")
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        if x.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., T, d); got shape {x.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k (last axis); got Q {Q.shape} and K {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must share T_k (second-to-last axis); got K {K.shape} and V {V.shape}")
    for name, x, what in (("Q", Q, "T_q and d_k"), ("K", K, "T_k and d_k"), ("V", V, "T_k and d_v")):
        if 0 in x.shape:
            raise ValueError(f"{name} is empty (shape {x.shape}); {what} must be at least 1")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch/head) dimensions of Q {Q.shape}, K {K.shape}, V {V.shape} do not broadcast"
        ) from None
    dtype = np.result_type(Q, K, V)
    return Q.astype(dtype, copy=False), K.astype(dtype, copy=False), V.astype(dtype, copy=False)


def resolve_scale(scale, d_k):
    """``1/sqrt(d_k)`` when ``scale`` is None, else ``scale`` checked to be positive."""
    if scale is None:
        return 1.0 / np.sqrt(d_k)
    return check_positive(scale, "scale")


def additive_mask(mask, score_shape, dtype):
    """Turn a boolean or float mask into an additive one broadcastable to ``score_shape``.

    The result keeps the mask's own (broadcastable) shape; it is never expanded.
    """
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype != bool and not np.issubdtype(m.dtype, np.floating):
        raise TypeError(
            f"mask must be boolean (True = may attend) or floating (added to the scores); got dtype {m.dtype}. "
            "Convert a 0/1 mask with mask.astype(bool), or an additive one with mask.astype(float)"
        )
    try:
        full = np.broadcast_shapes(m.shape, score_shape)
    except ValueError:
        full = None
    if full != tuple(score_shape):
        raise ValueError(f"mask of shape {m.shape} does not broadcast to the scores' shape {tuple(score_shape)}")
    if m.dtype == bool:
        return np.where(m, dtype.type(0), dtype.type(-np.inf))
    m = as_real_array(m, "mask", dtype=dtype)
    if np.isnan(m).any() or np.isposinf(m).any():
        raise ValueError("a float mask may hold finite numbers and -inf only; it contains NaN or +inf")
    return m


def scores_shape(Q, K):
    """The shape ``(..., T_q, T_k)`` of the scores of queries ``Q`` and keys ``K`` (leading dimensions broadcast)."""
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    return (*lead, Q.shape[-2], K.shape[-2])


def sum_to_shape(g, shape):
    """Sum a broadcast gradient back down to an operand's ``shape``."""
    extra = g.ndim - len(shape)
    if extra:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def forward_pass(Q, K, V, mask, scale):
    """The forward pass on inputs :func:`check_qkv` has checked: ``(O, A, c, cQ)``, the output, the
    weights, the scale and the scaled queries, which the backward pass reuses."""
    c = resolve_scale(scale, Q.shape[-1])
    add = additive_mask(mask, scores_shape(Q, K), Q.dtype)
    Qc = Q * Q.dtype.type(c)  # scale first: c Q K^T fits whenever the scores do
    with phase("forward"):
        S = matmul(Qc, np.swapaxes(K, -1, -2))
        if add is not None:
            S = S + add
        A = softmax(S)
        O = matmul(A, V)
    return O, A, c, Qc


# --------------------------------------------------------------------------- public


def scaled_dot_product_attention(Q, K, V, mask=None, *, scale=None, return_weights=False):
    r"""``O = softmax(c Q K^T + mask) V`` with ``c = scale`` or ``1/sqrt(d_k)``.

    Returns ``O`` of shape ``(..., T_q, d_v)``, or ``(O, A)`` with ``return_weights=True``.
    """
    Q, K, V = check_qkv(Q, K, V)
    O, A, _, _ = forward_pass(Q, K, V, mask, scale)
    return (O, A) if return_weights else O


def attention_backward(Q, K, V, dO, mask=None, *, scale=None, return_score_grad=False, return_forward=False):
    r"""Gradients ``(dQ, dK, dV)`` of a loss L given ``dO = dL/dO``, by the section's derivation.

    Uses :math:`D_i = dO_i \cdot O_i` for the softmax row sum; masked entries have
    :math:`A_{ij} = 0` and so get exactly zero score gradient.  Gradients of broadcast
    operands are summed back to the operand's shape.  With ``return_score_grad=True`` the
    score gradient ``dS`` (shape ``(..., T_q, T_k)``) is returned as a fourth array.

    ``dO`` may also be a function of the output, ``O -> dL/dO``, for a loss downstream of
    O (training: :math:`dO = O - V_{target}`), so one forward pass serves the loss and the
    backward; ``return_forward=True`` then appends ``O`` and ``A`` to the result.
    """
    Q, K, V = check_qkv(Q, K, V)
    O, A, c, Qc = forward_pass(Q, K, V, mask, scale)
    dO = output_gradient(dO, O)
    with phase("backward"):
        dV = matmul(np.swapaxes(A, -1, -2), dO)
        dA = matmul(dO, np.swapaxes(V, -1, -2))
        D = np.sum(dO * O, axis=-1, keepdims=True)
        dS = A * (dA - D)
        dQ = matmul(dS * dS.dtype.type(c), K)
        dK = matmul(np.swapaxes(dS, -1, -2), Qc)
    grads = sum_to_shape(dQ, Q.shape), sum_to_shape(dK, K.shape), sum_to_shape(dV, V.shape)
    return (*grads, *((dS,) if return_score_grad else ()), *((O, A) if return_forward else ()))


def output_gradient(dO, O):
    """``dO`` (an array, or a function of the output ``O``) checked and cast to ``O``'s shape and dtype."""
    if callable(dO):
        dO = dO(O)
    dO = check_finite(as_real_array(dO, "dO"), "dO")
    if dO.shape != O.shape:
        raise ValueError(f"dO must have the output's shape {O.shape}; got {dO.shape}")
    return dO.astype(O.dtype, copy=False)
