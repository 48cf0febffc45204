r"""Float32 training checked against float64: one seed trained at both precisions.

A float32 run draws what its float64 twin draws and rounds it (:mod:`~stats.training.model`),
so the two are one run at two precisions and their outcomes can be compared run by run:
:func:`precision_gaps` trains both on copies of the same generators and returns, per run,
whether they disagree on the outcomes the training claims read, and how far apart their
numbers end.  Rounding errors of :math:`2^{-24}` grow during training (a run is a chaotic
map), so a run whose float64 outcome sits on a threshold may fall the other way in float32;
such a run is *marginal* (:data:`MARGIN`), and disagreement elsewhere is a fault of the
float32 path.
"""

from __future__ import annotations

import numpy as np

from .diagnostics import CHECKPOINTS
from .task import QUERY_NOISE, check_generators
from .trainer import ACCURACY_TARGET, Trainer

__all__ = ["MARGIN", "PRECISION_OUTCOMES", "precision_gaps"]

#: A run is marginal when its float64 held-out probe accuracy at the end is within this of
#: :data:`~stats.training.trainer.ACCURACY_TARGET` (4 of its 128 queries either way), or its
#: float64 run reached the target in the last eighth of the budget.
MARGIN = 4 / 128

#: What :func:`precision_gaps` returns per run.
PRECISION_OUTCOMES = (
    "learned_64", "learned_32", "learned_differs", "learned_differs_clear", "marginal",
    "diverged_differs", "frozen_differs", "steps_gap", "loss_gap", "max_logit_gap",
)


def precision_gaps(rngs_64, rngs_32, *, d_k, d_model, scaling="sqrt", optimizer="adam", lr, steps, n_keys=32,
                   formulas=None):
    r"""The float64 and float32 runs of the same seeds, trained side by side; per run:

    * ``learned_64``, ``learned_32``: each precision's ``learned`` (:func:`~stats.training.trainer.train_heads`);
    * ``learned_differs``: 1 when they disagree; ``learned_differs_clear``: the same, where the run
      is not ``marginal`` (1 when its float64 run is within :data:`MARGIN` of the accuracy
      target at the end, or reached it in the last eighth of the budget);
    * ``diverged_differs``, ``frozen_differs``: disagreement on ``diverged`` and ``pattern_frozen``;
    * ``steps_gap``: :math:`|\Delta|` of ``steps_to_accuracy`` (censored at ``steps + 1``);
    * ``loss_gap``: :math:`|\Delta|` of the final probe loss; ``max_logit_gap``: :math:`|\Delta|`
      of ``max_logit_final`` over the float64 value.

    ``rngs_64`` and ``rngs_32`` must be copies of one another (the same seeds); the other
    arguments are :func:`~stats.training.trainer.train_heads`'s.
    """
    check_generators(rngs_64, "rngs_64")
    check_generators(rngs_32, "rngs_32")
    if len(rngs_64) != len(rngs_32):
        raise ValueError("rngs_64 and rngs_32 must be lists of the same length (copies of one another)")
    common = dict(d_k=d_k, d_model=d_model, scaling=scaling, optimizer=optimizer, lr=lr, steps=steps, n_keys=n_keys,
                  noise=QUERY_NOISE, formulas=formulas)
    runs = [Trainer(rngs_64, dtype="float64", **common), Trainer(rngs_32, dtype="float32", **common)]
    for trainer in runs:  # one after the other: a block holds one precision's arrays at a time
        for t in range(1, trainer.steps + 1):
            trainer.step(t)
    a, b = (trainer.outcomes() for trainer in runs)
    last = CHECKPOINTS - 1
    late = runs[0].marks[last - 1] - (runs[0].marks[last] - runs[0].marks[last - 1])
    marginal = (np.abs(a["probe_accuracy_final"] - ACCURACY_TARGET) <= MARGIN) | (
        (a["learned"] == 1) & (a["steps_to_accuracy"] > late))
    differs = a["learned"] != b["learned"]
    with np.errstate(divide="ignore", invalid="ignore"):
        logit_gap = np.abs(b["max_logit_final"] - a["max_logit_final"]) / a["max_logit_final"]
    return dict(
        learned_64=a["learned"], learned_32=b["learned"], learned_differs=differs.astype(np.float64),
        learned_differs_clear=(differs & ~marginal).astype(np.float64), marginal=marginal.astype(np.float64),
        diverged_differs=(a["diverged"] != b["diverged"]).astype(np.float64),
        frozen_differs=(a["pattern_frozen"] != b["pattern_frozen"]).astype(np.float64),
        steps_gap=np.abs(b["steps_to_accuracy"] - a["steps_to_accuracy"]),
        loss_gap=np.abs(b[f"loss_{last}"] - a[f"loss_{last}"]),
        max_logit_gap=np.nan_to_num(logit_gap, nan=0.0, posinf=1.0),
    )
