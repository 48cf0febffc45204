r"""FlashAttention-style tiled attention: online softmax over key blocks.

The forward pass walks the keys block by block, keeping per query row only the running
maximum m, the running normaliser l and the unnormalised output; it returns ``O`` and the
row log-sum-exp ``lse = m + log l`` (Milakov & Gimelshein 2018; Dao et al. 2022).  The
backward pass recomputes each tile of A as ``exp(S_tile - lse)`` and uses
``D_i = dO_i . O_i``, so no ``T_q x T_k`` array ever exists: memory is
``O(T_q * block_size)`` per head.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_real_array, check_finite, check_integer
from .attention import additive_mask, check_qkv, resolve_scale, scores_shape, sum_to_shape

__all__ = ["tiled_attention_backward", "tiled_attention_forward"]

DEFAULT_BLOCK_SIZE = 128


def _mask_tile(add, j0, j1):
    """The additive mask's columns j0:j1 (a mask broadcast along the keys is kept whole)."""
    if add is None:
        return None
    return add if add.shape[-1] == 1 else add[..., j0:j1]


def _score_tile(Qc, K, add, j0, j1):
    S = Qc @ np.swapaxes(K[..., j0:j1, :], -1, -2)  # Qc = c Q: scaled before the product
    tile = _mask_tile(add, j0, j1)
    return S if tile is None else S + tile


def tiled_attention_forward(Q, K, V, mask=None, *, scale=None, block_size=DEFAULT_BLOCK_SIZE):
    """``(O, lse)``: attention output and per-row log-sum-exp of the (masked, scaled) scores.

    A fully masked row has ``O = 0`` and ``lse = -inf``.
    """
    Q, K, V = check_qkv(Q, K, V)
    block_size = check_integer(block_size, "block_size")
    c = resolve_scale(scale, Q.shape[-1])
    shape = scores_shape(Q, K)
    add = additive_mask(mask, shape, Q.dtype)
    lead = np.broadcast_shapes(shape[:-2], V.shape[:-2])
    T_q, T_k = shape[-2:]
    m = np.full((*lead, T_q, 1), -np.inf, dtype=Q.dtype)
    l = np.zeros((*lead, T_q, 1), dtype=Q.dtype)
    acc = np.zeros((*lead, T_q, V.shape[-1]), dtype=Q.dtype)
    Qc = Q * Q.dtype.type(c)
    for j0 in range(0, T_k, block_size):
        j1 = min(j0 + block_size, T_k)
        S = _score_tile(Qc, K, add, j0, j1)
        m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
        # Rows with no unmasked key yet have m_new = -inf; shift them by 0 to avoid NaN.
        shift = np.where(np.isfinite(m_new), m_new, 0)
        P = np.exp(S - shift)
        rescale = np.exp(np.where(np.isfinite(m), m, shift) - shift)
        l = l * rescale + P.sum(axis=-1, keepdims=True)
        acc = acc * rescale + P @ V[..., j0:j1, :]
        m = m_new
    with np.errstate(divide="ignore", invalid="ignore"):
        O = np.where(l > 0, acc / l, 0)
        lse = np.where(l > 0, m + np.log(l), -np.inf)
    return O.astype(Q.dtype, copy=False), lse[..., 0]


def tiled_attention_backward(Q, K, V, O, lse, dO, mask=None, *, scale=None, block_size=DEFAULT_BLOCK_SIZE):
    """``(dQ, dK, dV)`` from the forward's ``O`` and ``lse``, recomputing A tile by tile."""
    Q, K, V = check_qkv(Q, K, V)
    block_size = check_integer(block_size, "block_size")
    c = resolve_scale(scale, Q.shape[-1])
    shape = scores_shape(Q, K)
    add = additive_mask(mask, shape, Q.dtype)
    O = check_finite(as_real_array(O, "O", dtype=Q.dtype), "O")
    dO = check_finite(as_real_array(dO, "dO", dtype=Q.dtype), "dO")
    lse = as_real_array(lse, "lse", dtype=Q.dtype)
    if np.isnan(lse).any() or np.isposinf(lse).any():
        raise ValueError("lse must be finite, or -inf for a fully masked row; it contains NaN or +inf")
    out_shape = (*np.broadcast_shapes(shape[:-2], V.shape[:-2]), shape[-2], V.shape[-1])
    if O.shape != out_shape or dO.shape != out_shape:
        raise ValueError(f"O and dO must have the output's shape {out_shape}; got {O.shape} and {dO.shape}")
    if lse.shape != out_shape[:-1]:
        raise ValueError(f"lse must have shape {out_shape[:-1]}; got {lse.shape}")
    T_k = shape[-1]
    D = np.sum(dO * O, axis=-1, keepdims=True)
    live = np.isfinite(lse)[..., None]
    lse_safe = np.where(live, lse[..., None], 0)
    dQ = np.zeros(out_shape[:-1] + (Q.shape[-1],), dtype=Q.dtype)
    dK_tiles, dV_tiles = [], []
    Qc = Q * Q.dtype.type(c)
    for j0 in range(0, T_k, block_size):
        j1 = min(j0 + block_size, T_k)
        P = np.where(live, np.exp(_score_tile(Qc, K, add, j0, j1) - lse_safe), 0)
        dV_tiles.append(np.swapaxes(P, -1, -2) @ dO)
        dS = P * (dO @ np.swapaxes(V[..., j0:j1, :], -1, -2) - D)
        dQ += (dS * dS.dtype.type(c)) @ K[..., j0:j1, :]
        dK_tiles.append(np.swapaxes(dS, -1, -2) @ Qc)
    dK = np.concatenate(dK_tiles, axis=-2)
    dV = np.concatenate(dV_tiles, axis=-2)
    return sum_to_shape(dQ, Q.shape), sum_to_shape(dK, K.shape), sum_to_shape(dV, V.shape)
