r"""The retrieval task a head is trained on.

An episode has :math:`T` key tokens :math:`x_j \sim N(0, I_{d_{model}})` and :math:`T`
queries, query i a noisy copy of the key :math:`\pi(i)` for a random permutation
:math:`\pi`, rescaled to unit variance:
:math:`\tilde x_i = (x_{\pi(i)} + \sigma n_i)/\sqrt{1 + \sigma^2}`.  The head is asked to
return the target's value :math:`v_{\pi(i)}` (:func:`retrieval_targets`); a query is
*right* when its largest weight falls on its target key.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import MAX_D_K, check_integer
from .arrays import finite_array

__all__ = ["QUERY_NOISE", "check_generators", "check_noise", "retrieval_episodes", "retrieval_targets"]

#: The noise :math:`\sigma` of a query around its key.
QUERY_NOISE = 0.5


def check_generators(rngs, name="rngs"):
    """``rngs`` if it is a non-empty list or tuple of numpy Generators (one per run), else a TypeError."""
    if not isinstance(rngs, (list, tuple)) or not rngs:
        raise TypeError(f"{name} must be a non-empty list of numpy.random.Generator, one per run")
    for r in rngs:
        if not isinstance(r, np.random.Generator):
            raise TypeError(f"{name} must hold numpy.random.Generator; got {type(r).__name__}")
    return rngs


def check_noise(noise):
    """``noise`` if it is a finite number >= 0, else a ValueError."""
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite number >= 0; got {noise!r}")
    return noise


def retrieval_targets(V, perm):
    r"""The values the head must return: query i's target is :math:`v_{\pi(i)}`, for every run.

    ``V`` has shape ``(runs, T, d_v)`` and ``perm`` ``(runs, T)``.
    """
    V = finite_array(V, "V")
    perm = np.asarray(perm)
    if V.ndim != 3 or perm.shape != V.shape[:2]:
        raise ValueError(f"V must have shape (runs, T, d_v) and perm (runs, T); got {V.shape} and {perm.shape}")
    if perm.dtype.kind not in "iu" or perm.size and (perm.min() < 0 or perm.max() >= V.shape[1]):
        raise ValueError(f"perm must hold integer key indices in [0, {V.shape[1]}); got dtype {perm.dtype}")
    return np.take_along_axis(V, perm[:, :, None], axis=1)


def retrieval_episodes(rngs, n_keys, d_model, noise=QUERY_NOISE):
    """One episode per run, each from its own stream: keys X, unit-variance noisy queries
    Xq in a random order, and the permutation, ``(X, Xq, perm)``."""
    check_generators(rngs)
    n_keys = check_integer(n_keys, "n_keys", minimum=2, maximum=4096, what="an integer >= 2")
    d_model = check_integer(d_model, "d_model", maximum=MAX_D_K)
    check_noise(noise)
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
