r"""The model a run trains: one attention head on the retrieval task, a batch of runs at once.

The head computes :math:`Q = \tilde X W_Q`, :math:`K = X W_K`, :math:`V = X W_V`, the
logits its :class:`~stats.training.scalings.Scaling` makes of Q and K, and
:math:`O = \operatorname{softmax}(S) V`, and is asked to return the target's value:

.. math::

    L = \frac{1}{2\,T\,d_v} \sum_i \lVert O_i - v_{\pi(i)} \rVert^2 .

The loss sits downstream of :math:`O = AV`, so every gradient passes through the softmax
Jacobian (a loss on :math:`\log A` would not saturate).

Parameters.  :math:`W_Q, W_K \in \mathbb R^{d_{model}\times d_k}` are trained, with
variance-preserving initialisation :math:`N(0, 1/d_{model})`, so Q and K have unit-variance
entries at step 0 (before the scaling's own changes).  :math:`W_V` (:math:`d_v = d_k`) is
drawn the same way and *fixed*: a trained :math:`W_V` lets the loss fall by shrinking the
values towards their mean instead of by attending, which is not the ability under test.

Precision.  A batch holds its arrays in one ``dtype`` (:data:`~stats.training.arrays.DTYPES`).
The initialisation is drawn in float64 and rounded to it, and episodes (drawn in float64
too) are rounded on entry, so a float32 run and a float64 run of one seed start from the
same weights to float32 rounding and see the same episodes: one run at two precisions.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .._validation import MAX_D_K, check_d_k, check_integer
from .arrays import check_dtype
from ..exact.attention import attention_backward, softmax, softmax_vjp
from .optimizers import adafactor_update, adam_update
from .scalings import Scaling, mup_lr_multiplier, qk_normalize, t5_fold_divisor
from .task import check_generators, retrieval_targets

__all__ = ["OWN_FORMULAS", "Heads"]

#: What a run calls when no ``formulas`` are given: the section's backward pass and this
#: package's own updates and targets (:data:`stats.FORMULAS` holds the same functions).
OWN_FORMULAS = SimpleNamespace(attention_backward=attention_backward, softmax_vjp=softmax_vjp, adam_update=adam_update,
                               adafactor_update=adafactor_update, retrieval_targets=retrieval_targets,
                               t5_fold_divisor=t5_fold_divisor, qk_normalize=qk_normalize,
                               mup_lr_multiplier=mup_lr_multiplier)


class Heads:
    """The parameters of a batch of runs (``params``: the trained ones, W_Q, W_K, then the
    scaling's), the fixed W_V, and how they make the scores, the loss and its gradients.

    ``rngs`` holds one generator per run (each draws its run's initialisation);
    ``scaling`` is a :class:`~stats.training.scalings.Scaling`; ``dtype`` the precision of
    every array (module docstring).
    """

    def __init__(self, rngs, *, d_model, d_k, scaling, n_keys, formulas=None, dtype="float64"):
        check_generators(rngs)
        d_model = check_integer(d_model, "d_model", maximum=MAX_D_K)
        d_k = check_d_k(d_k)
        if not isinstance(scaling, Scaling):
            raise TypeError(f"scaling must be a Scaling (one of stats.SCALINGS' values); got {type(scaling).__name__}")
        n_keys = check_integer(n_keys, "n_keys", minimum=2, maximum=4096, what="an integer >= 2")
        self.dtype = check_dtype(dtype)
        self.formulas = OWN_FORMULAS if formulas is None else formulas
        W = np.stack([r.standard_normal((3, d_model, d_k)) for r in rngs]) / math.sqrt(d_model)
        extra = scaling.initialise(W, rngs, d_k=d_k, n_keys=n_keys, formulas=self.formulas)
        # Drawn (and folded) in float64, then rounded: astype copies, and is the old copy in float64.
        self.params = {"WQ": W[:, 0].astype(self.dtype), "WK": W[:, 1].astype(self.dtype),
                       **{k: v.astype(self.dtype) for k, v in extra.items()}}
        self.WV = W[:, 2].astype(self.dtype)
        self.scaling = scaling
        self.scale = scaling.factor(d_k)

    def cast(self, x):
        """``x`` (an episode's array) in the batch's precision (itself when it is already)."""
        return x.astype(self.dtype, copy=False)

    def in_float64(self):
        """A float64 copy of this batch (the same parameters, exactly): the step-0 gradient check runs on it."""
        copy = object.__new__(Heads)
        copy.__dict__.update(self.__dict__)
        copy.dtype = np.dtype(np.float64)
        copy.params = {k: v.astype(np.float64) for k, v in self.params.items()}
        copy.WV = self.WV.astype(np.float64)
        return copy

    def projections(self, Xq, X):
        """:math:`(\\tilde X W_Q, X W_K)`."""
        return self.cast(Xq) @ self.params["WQ"], self.cast(X) @ self.params["WK"]

    def scores(self, Xq, X):
        """The logits S (and, for a scaling whose scores are not a product, what its backward needs)."""
        return self.scaling.scores(self.params, *self.projections(Xq, X), scale=self.scale, formulas=self.formulas)

    def loss_and_grads(self, X, Xq, perm, formulas, seen=None, logits=False):
        """Loss per run, right share per run, and the gradients of the trained parameters.

        ``seen``, a dict, receives the episode's attention weights ``A`` and, with ``logits``
        (always, for a scaling whose scores are not a product), each run's largest |logit|
        ``max_logit``."""
        n_runs, T, _ = X.shape
        d_v = self.WV.shape[2]
        X, Xq = self.cast(X), self.cast(Xq)
        V = X @ self.WV
        target = formulas.retrieval_targets(V, perm)
        loss = np.empty(n_runs)

        def d_output(O):
            err = O - target
            loss[:] = 0.5 * np.einsum("rtd,rtd->r", err, err) / (T * d_v)
            return err / (T * d_v)

        A, dQ, dK, grads, max_logit = self.scaling.attend(self.params, *self.projections(Xq, X), V, d_output, formulas,
                                                          scale=self.scale, logits=logits)
        right = np.mean(np.argmax(A, axis=2) == perm, axis=1)
        if seen is not None:
            seen["A"] = A
            if max_logit is not None:
                seen["max_logit"] = max_logit
        grads["WQ"] = np.swapaxes(Xq, 1, 2) @ dQ
        grads["WK"] = np.swapaxes(X, 1, 2) @ dK
        return loss, right, grads

    def probe_error(self, X, Xq, perm, formulas):
        """An episode's scores S, weights A, the error O - v_target, and the loss, without gradients."""
        T, d_v = X.shape[1], self.WV.shape[2]
        X, Xq = self.cast(X), self.cast(Xq)
        S, _ = self.scores(Xq, X)
        A = softmax(S)
        err = A @ (X @ self.WV) - formulas.retrieval_targets(X @ self.WV, perm)
        return S, A, err, 0.5 * np.einsum("rtd,rtd->r", err, err) / (T * d_v)
