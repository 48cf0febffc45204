"""The section's claims on a real model: a small transformer (:mod:`stats.training.transformer`).

The single heads of :mod:`~stats.claims.statements.training` have no embeddings, LayerNorm,
residual stream or read-out; these claims hold the section's backward pass and muP's rule to a
decoder-only transformer that has them.  The gradient check is an identity on every row; the
coordinate check compares each seed's move at two widths, and tests the share of seeds where
it keeps within a factor 2 (muP) or grows past it (the standard parameterisation) exactly
(binomial): a ratio of means by the delta method needed tails its pilot's skewness could not
bound at the registry's level.
The sizes are :mod:`stats.settings.model`'s.
"""

from __future__ import annotations

from ...settings.decisive import decisive_profile
from ...settings.model import (COORDINATE_LR, COORDINATE_NARROW, COORDINATE_STEPS, COORDINATE_WIDE, GRADIENT_ROWS,
                               GRADIENT_WIDTH, MODEL_MUP_BASE, MODEL_PARAMETERISATIONS, RECALL_BATCH, RECALL_LENGTH, RECALL_LR,
                               RECALL_PAIRS, RECALL_STEPS, RECALL_VOCAB, RECALL_WARMUP, RECALL_WIDTH)
from ...training.transformer_simulations import CoordinateCheckSim, RecallSim
from ..check_builders import Measure, Stated, identity, share
from ..claim import Claim
from ..findings import SHARED_RATE
from ..headings import ASSUMPTION, BACKWARD, OPENING

SECTION = BACKWARD
#: The share checks' detectable discrepancy (as the single heads' costly runs: their shares are 0 or 1).
RECALL_SHARE_TARGET = 0.45


def _gradient_sims():
    return tuple(CoordinateCheckSim(GRADIENT_WIDTH, scaling, base, steps=1, check_gradient=True)
                 for scaling, base in (("none", None), ("sqrt", None), ("qknorm", None), ("t5", None), ("mup", MODEL_MUP_BASE)))


def coordinate_sim(scaling, mup_base):
    """The coordinate check at the wide width, each seed's model at the narrow width beside it."""
    return CoordinateCheckSim(COORDINATE_WIDE, scaling, mup_base, COORDINATE_LR, COORDINATE_STEPS, narrow=COORDINATE_NARROW)


def _coordinate_checks():
    checks = []
    for label, scaling, base in MODEL_PARAMETERISATIONS:
        sim = coordinate_sim(scaling, base)
        flat = base is not None
        for what in ("residual", "logits"):
            checks.append(share(
                f"{label}: {what} move after {COORDINATE_STEPS} Adam steps at lr={COORDINATE_LR:g}, "
                f"d_model={COORDINATE_WIDE} over d_model={COORDINATE_NARROW} (the same seed), "
                f"{'within a factor 2' if flat else 'more than 2 times'}",
                Stated.at_least(f"{'the same at both widths' if flat else 'grows with the width'}: most seeds, share > 1/2",
                                0.5),
                Measure(sim, f"{what}_{'flat' if flat else 'grows'}"), target=0.45))
    return tuple(checks)


def recall_sim(scaling):
    """A recall run of :mod:`stats.settings.model`'s task, width, rate and budget."""
    return RecallSim(RECALL_WIDTH, scaling, RECALL_LR, RECALL_STEPS, warmup=RECALL_WARMUP, vocab=RECALL_VOCAB,
                     length=RECALL_LENGTH, pairs=RECALL_PAIRS, batch=RECALL_BATCH)


def _recall_label(scaling):
    head = "1/sqrt(d_k)" if scaling == "sqrt" else "unscaled"
    return f"{head}, Adam lr={RECALL_LR:g} (the scaled model's), d_k={RECALL_WIDTH}, {RECALL_STEPS} steps"


BASE_CLAIMS = (
    Claim(
        "model-gradient-check",
        BACKWARD,
        "The section's backward pass inside a transformer: with token and position embeddings, pre-LayerNorm causal "
        "attention (the section's forward and backward, each head), GELU MLPs, a final LayerNorm, a read-out and a "
        "cross-entropy that counts only the scored positions, the hand-derived gradient of every parameter is the "
        "derivative of the loss, for every scaling of the scores (none, 1/sqrt(d_k), 1/d_k with muP's read-out, "
        "QK-norm, T5's folding).",
        "|FD_u L - ||G||| <= 1e-6 max(||G||, |FD_u L|), u = G/||G|| over all parameters, float64, at step 0",
        tuple(identity(f"{sim.scaling}{', muP base ' + str(sim.mup_base) if sim.mup_base else ''}, d_model={sim.d_model}, "
                       f"{sim.d_model // 32} heads, 2 layers", Measure(sim, "gradient_error"), rows=GRADIENT_ROWS)
              for sim in _gradient_sims()),
    ),
    Claim(
        "model-mup-coordinates",
        ASSUMPTION,
        "muP's 1/d_k is one of Yang et al. (2022)'s rules, which together keep what a step does to a model's activations "
        "the same at every width -- what makes the learning rate transfer.  Their coordinate check on a transformer of "
        f"widths {COORDINATE_NARROW} and {COORDINATE_WIDE} (heads of 32): after a few Adam steps at one rate, how far the "
        "residual stream and the logits have moved.  Under muP's rules (1/d_k, read-out variance d_0/d^2, hidden and "
        "read-out rates times d_0/d) both moves are the same at both widths, within a factor 2; under the standard "
        "parameterisation (1/sqrt(d_k), one rate) both grow with the width, by more than a factor 2.",
        "a seed's move (RMS over coordinates) at d_model = 256 over its move at d_model = 32: muP within [1/2, 2], "
        "standard > 2, in most seeds (residual stream and logits)",
        _coordinate_checks(),
    ),
)

#: Claims only the full evidence profile registers (``make reports EVIDENCE=full``): the recall
#: runs cost about 30 CPU-minutes (docs/performance.md), beyond the default build's budget.
EVIDENCE_ONLY = ("model-recall-unscaled",)


def recall_claim():
    """The synthetic-task claim (:data:`EVIDENCE_ONLY`)."""
    return (
        Claim(
            "model-recall-unscaled",
            OPENING,
            "The text: without the division a large head 'cannot learn'.  Tested on the field's synthetic task for what "
            "attention learns, Zoology's multi-query associative recall (Arora et al. 2023: 8 key-value pairs, then each key "
            f"asked once; vocabulary {RECALL_VOCAB}, sequences of {RECALL_LENGTH}), with a two-layer attention-only "
            f"transformer, one head of d_k = {RECALL_WIDTH}: a run solves the task when its held-out accuracy reaches 0.99 "
            f"within {RECALL_STEPS} Adam steps.  Both heads train at the scaled model's rate (the shared-rate protocol: no "
            "grid is searched for the unscaled model here, so a refutation would say only that it learns at that rate).",
            "share of runs that solve the task: scaled > 1/2; unscaled <= 0.1 (shared rate)",
            (
                share(_recall_label("sqrt"), Stated.at_least("the scaled model learns: share > 1/2", 0.5),
                      Measure(recall_sim("sqrt"), "solved"), target=RECALL_SHARE_TARGET),
                share(_recall_label("none"), Stated.at_most("cannot learn: share <= 0.1", 0.1),
                      Measure(recall_sim("none"), "solved"), target=RECALL_SHARE_TARGET, protocol=SHARED_RATE),
            ),
        )
    )


def claims(profile=None):
    """The registry's claims of this module under the evidence ``profile`` (default: the environment's)."""
    profile = decisive_profile(profile)
    return BASE_CLAIMS + ((recall_claim(),) if profile.name == "full" else ())


CLAIMS = claims()
#: The section's headings these claims cite (the gradient check under the backward pass, muP under
#: its assumption, the synthetic task under the opening).
HEADINGS = tuple(dict.fromkeys(c.section for c in CLAIMS))
