r"""T5's folding as a reparameterisation, checked in training.

T5 folds :math:`1/\sqrt{d_k}` into :math:`W_Q`'s initialisation instead of dividing the
scores, so a folded run *is* a divided run whose query weights get another learning rate
(:func:`folded_query_lr_factor`, derived in :mod:`stats.models.fixes`): :func:`fold_gaps`
trains the two side by side on the same draws and measures how far they drift apart.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_d_k
from .diagnostics import CHECKPOINTS
from .model import OWN_FORMULAS
from .optimizers import ADAM_EPS, STEP_TOLERANCE, optimizer_named
from .task import QUERY_NOISE, check_generators
from .trainer import Trainer

__all__ = ["FOLDING_OUTCOMES", "fold_gaps", "folded_query_lr_factor"]

#: What :func:`fold_gaps` returns per run.
FOLDING_OUTCOMES = ("fold_gap_query", "fold_gap_key", "fold_relative_query", "loss_folded", "loss_divided")


def folded_query_lr_factor(optimizer, d_k):
    """The factor on :math:`W_Q`'s learning rate that makes a divided run the folded one
    (:mod:`stats.models.fixes`): SGD :math:`d_k`, Adam :math:`\\sqrt{d_k}` (with
    :math:`\\varepsilon/\\sqrt{d_k}`), Adafactor 1."""
    return optimizer_named(optimizer).folded_query_lr_factor(d_k)


def fold_gaps(rngs_folded, rngs_divided, *, d_k, d_model, optimizer, lr, steps, n_keys=32, match_eps=True, formulas=None):
    r"""T5's folded run and the divided run that should equal it, trained side by side on the same draws.

    The folded run (``scaling="t5"``) and a divided run (``"sqrt"``) whose :math:`W_Q` learning
    rate is multiplied by :func:`folded_query_lr_factor` (and, with ``match_eps``, whose
    :math:`W_Q` has the epsilon the optimiser needs, :math:`\varepsilon/\sqrt{d_k}` under
    Adam) draw the same numbers when the two generator lists are copies.  After every step,
    ``fold_gap_query`` is :math:`\max|\sqrt{d_k}V_Q - W_Q|` and ``fold_gap_key``
    :math:`\max|V_K - W_K|`, each over :math:`64\,u\,t` times the largest entry of the divided
    weight (64 roundings a step); each run's largest over the steps (<= 1: the same run).
    ``fold_relative_query`` is the query gap over the largest entry, unscaled; ``loss_*``
    the probe losses at the end.
    """
    formulas = OWN_FORMULAS if formulas is None else formulas
    check_generators(rngs_folded, "rngs_folded")
    check_generators(rngs_divided, "rngs_divided")
    if len(rngs_divided) != len(rngs_folded):
        raise ValueError("rngs_folded and rngs_divided must be lists of the same length (copies of one another)")
    if not isinstance(match_eps, bool):
        raise TypeError(f"match_eps must be True or False; got {match_eps!r}")
    d_k = check_d_k(d_k)
    opt = optimizer_named(optimizer)
    factor = opt.folded_query_lr_factor(d_k)
    root = math.sqrt(d_k)
    common = dict(d_k=d_k, d_model=d_model, optimizer=optimizer, lr=lr, steps=steps, n_keys=n_keys, noise=QUERY_NOISE,
                  formulas=formulas)
    folded = Trainer(rngs_folded, scaling="t5", **common)
    query_eps = opt.folded_query_eps(ADAM_EPS, d_k)
    eps = {"WQ": query_eps, "WK": ADAM_EPS} if match_eps and query_eps != ADAM_EPS else None
    divided = Trainer(rngs_divided, scaling="sqrt", lr_factors={"WQ": factor}, adam_eps=eps, **common)
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
