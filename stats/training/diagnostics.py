r"""What a run measures besides its loss: the probe episode, the step-0 gradient check, the
correlation of a fresh head's entries.

Each run keeps one fixed *probe* episode, measured at step 0 and at the checkpoints
:func:`checkpoint_steps`: its loss and accuracy, the queries' chosen keys, their largest
weights, the cosine of each query and its target key, and the target logit.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_integer
from .optimizers import MAX_STEPS

__all__ = [
    "CHECKPOINTS",
    "GRADIENT_STEP",
    "GRADIENT_TOLERANCE",
    "ONE_HOT",
    "PROBE_EPISODES",
    "PROBE_EVERY",
    "PROBE_STATISTICS",
    "checkpoint_steps",
    "directional_check",
    "entry_products",
    "probe",
    "probe_accuracy",
]

#: What the probe episode records at each checkpoint.
PROBE_STATISTICS = ("loss", "accuracy", "frozen", "max_weight", "cosine", "target_logit")
#: The held-out probe that decides whether a run *learned*: this many fixed episodes (the
#: statistics' probe and 3 more, 4 x 32 = 128 queries at T = 32, so 90% is 116 right answers,
#: not a coin of 29 of 32), measured every :data:`PROBE_EVERY` steps and at every checkpoint.
PROBE_EPISODES = 4
PROBE_EVERY = 3
#: Checkpoints: after round(k * steps / 8) steps, k = 0..8.
CHECKPOINTS = 9
#: A row is nearly one-hot when its largest weight is at least this.
ONE_HOT = 0.99
#: The step-0 gradient check: Richardson-extrapolated central differences at h = 1e-6 ||W||
#: and h/2, and the relative disagreement it tolerates.
GRADIENT_STEP = 1e-6
GRADIENT_TOLERANCE = 1e-6


def checkpoint_steps(steps):
    """The steps after which the probe is measured: round(k * steps / 8), k = 0..8."""
    steps = check_integer(steps, "steps", maximum=MAX_STEPS)
    return tuple(int(round(k * steps / (CHECKPOINTS - 1))) for k in range(CHECKPOINTS))


def probe(heads, X, Xq, perm, formulas, initial_choice=None):
    """The probe episode's chosen keys, and its loss and accuracy, the share of queries on the key
    they chose at step 0 (``initial_choice``), largest weights, q-k cosines and logits."""
    S, A, _, loss = heads.probe_error(X, Xq, perm, formulas)
    choice = np.argmax(S, axis=2)
    Q, K = heads.projections(Xq, X)
    Kt = np.take_along_axis(K, perm[:, :, None], axis=1)
    cos = np.sum(Q * Kt, axis=2) / (np.linalg.norm(Q, axis=2) * np.linalg.norm(Kt, axis=2))
    initial = choice if initial_choice is None else initial_choice
    stats = dict(
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
    # A float32 run's statistics are reported in float64, as every run's are (a no-op for float64).
    return choice, {k: v if k == "scores" else v.astype(np.float64, copy=False) for k, v in stats.items()}


def probe_accuracy(heads, episodes):
    """Per run: the share of the queries of ``episodes`` (a list of ``(X, Xq, perm)``) whose
    largest logit falls on their target key (a forward pass of the scores only)."""
    right = 0.0
    for X, Xq, perm in episodes:
        S = heads.scores(Xq, X)[0]
        right = right + np.mean(np.argmax(S, axis=2) == perm, axis=1)
    return right / len(episodes)


def entry_products(Q, K):
    """Per run: the mean q_im k_jm over queries i, keys j, coordinates m, and the mean q_im q_im' over m != m'
    (accumulated in float64 whatever the precision of Q and K)."""
    Q, K = Q.astype(np.float64, copy=False), K.astype(np.float64, copy=False)
    T_q, T_k, d_k = Q.shape[1], K.shape[1], Q.shape[2]
    qk = np.einsum("rm,rm->r", Q.sum(axis=1), K.sum(axis=1)) / (T_q * T_k * d_k)
    row = Q.sum(axis=2)
    cross = (np.sum(row * row, axis=1) - np.sum(Q * Q, axis=(1, 2))) / (T_q * d_k * (d_k - 1)) if d_k > 1 else np.zeros(len(Q))
    return qk, cross


def directional_check(heads, episode, formulas):
    r"""The hand-derived gradient G of an episode's loss against a (Richardson-extrapolated) central
    difference along :math:`u = G/\lVert G\rVert`: :math:`|(L(W + hu) - L(W - hu))/2h - \lVert G\rVert|`
    over :math:`10^{-6}\max(\lVert G\rVert, |\text{difference}|)`, per run (<= 1 when they agree)."""
    _, _, grads = heads.loss_and_grads(*episode, formulas)
    names = list(heads.params)
    n = len(heads.WV)
    norm = np.sqrt(sum(np.sum(grads[k].reshape(n, -1) ** 2, axis=1) for k in names))
    size = np.sqrt(sum(np.sum(heads.params[k].reshape(n, -1) ** 2, axis=1) for k in names))
    saved = dict(heads.params)

    def central(h):
        losses = []
        for sign in (1.0, -1.0):
            heads.params = {k: saved[k] + _per_run(sign * h / np.maximum(norm, 1e-300), saved[k]) * grads[k] for k in names}
            losses.append(heads.probe_error(*episode, formulas)[3])
        return (losses[0] - losses[1]) / (2 * h)

    h = GRADIENT_STEP * size
    fd = (4 * central(h / 2) - central(h)) / 3  # Richardson: the h^2 terms cancel
    heads.params = saved
    return np.abs(fd - norm) / (GRADIENT_TOLERANCE * np.maximum(np.maximum(norm, np.abs(fd)), 1e-300))


def _per_run(x, like):
    return x.reshape((-1,) + (1,) * (like.ndim - 1))
