r"""The implementations under test, gathered in one replaceable object.

Every closed form a check's expected value comes from, and every implementation a
simulation calls while it runs (the softmax Jacobian, the hand-derived backward pass,
the exact saturation sampler, ...), is a field of :class:`Formulas`.  The claims runner
evaluates everything against :data:`FORMULAS`; a *mutant* (:mod:`stats.claims.mutants`)
is a copy with one field replaced by a plausible mistake, run on the same draws, which
the registry must reject.  Simulations declare the fields they call (``uses``), checks
the fields their expected values call, so a mutant re-runs exactly what it affects.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Callable

from .exact.attention import attention_backward, softmax_jacobian, softmax_vjp
from .exact.equations import EQUATIONS, Equations
from .exact.formats import exp_overflow_threshold
from .models.asymptotics import saturation_asymptotics
from .models.distributions import score_distribution
from .models.dropout import dropout_weights
from .models.fixes import cosine_mean, cosine_moments, t5_step_ratio
from .models.problems import attention_flops
from .models.saturation import exact_saturation_scores, row_trace, winner_bound
from .models.saturation_quadrature import saturation_exact, saturation_given_scale
from .models.scores import scaled_score_moments
from .training.optimizers import adafactor_update, adam_update
from .training.scalings import mup_lr_multiplier, qk_normalize, t5_fold_divisor
from .training.mup_rules import mup_lr_multipliers
from .training.task import retrieval_targets
from .training.transformer import cross_entropy, embedding_backward, layer_norm_backward

__all__ = ["FORMULAS", "Formulas", "changed_fields", "small_score_trace_coefficient", "overflow_cutoff", "recorded_sentence"]


def small_score_trace_coefficient(n_keys):
    r"""The :math:`\varepsilon^2` coefficient of :math:`E[\lVert a\rVert^2] - 1/T` for scores :math:`\varepsilon z`:
    :math:`(T - 1)/T^2` (to second order :math:`\lVert a\rVert^2 = 1/T + \varepsilon^2\,\overline{(z - \bar z)^2}/T`)."""
    return (n_keys - 1) / n_keys**2


def recorded_sentence(erratum):
    """The sentence a recorded finding (an :class:`~stats.claims.measures.Erratum`) offers the text,
    as the sentence audit reads it (:mod:`stats.claims.sentences`): a grading mutant plants a word in it."""
    return erratum.sentence


def overflow_cutoff(max_value):
    """The section's cutoff for a naive exponential: :math:`\\ln(\\text{largest finite number})`."""
    import math

    return math.log(max_value)


@dataclass(frozen=True)
class Formulas:
    """Closed forms and implementations under test (module docstring); replace one to plant a mutant."""

    moments: Callable = scaled_score_moments
    distribution: Callable = score_distribution
    cosine_moments: Callable = cosine_moments
    cosine_mean: Callable = cosine_mean
    row_trace: Callable = row_trace
    winner_bound: Callable = winner_bound
    softmax_jacobian: Callable = softmax_jacobian
    softmax_vjp: Callable = softmax_vjp
    attention_backward: Callable = attention_backward
    attention_flops: Callable = attention_flops
    saturation_sampler: Callable = exact_saturation_scores
    saturation_exact: Callable = saturation_exact
    saturation_given_scale: Callable = saturation_given_scale
    saturation_asymptotics: Callable = saturation_asymptotics
    small_score_trace: Callable = small_score_trace_coefficient
    t5_step_ratio: Callable = t5_step_ratio
    dropout: Callable = dropout_weights
    overflow_cutoff: Callable = overflow_cutoff
    overflow_threshold: Callable = exp_overflow_threshold
    adam_update: Callable = adam_update
    adafactor_update: Callable = adafactor_update
    retrieval_targets: Callable = retrieval_targets
    t5_fold_divisor: Callable = t5_fold_divisor
    layer_norm_backward: Callable = layer_norm_backward
    embedding_backward: Callable = embedding_backward
    cross_entropy: Callable = cross_entropy
    mup_lr_multipliers: Callable = mup_lr_multipliers
    qk_normalize: Callable = qk_normalize
    mup_lr_multiplier: Callable = mup_lr_multiplier
    #: The corrected sentence the audit holds to its evidence (a grading mutant changes it).
    erratum_sentence: Callable = recorded_sentence
    #: The section's displayed equations as it writes them (SymPy), which the proof claims prove.
    equations: Equations = EQUATIONS


FORMULAS = Formulas()


def changed_fields(formulas, base=FORMULAS):
    """Names of the fields in which ``formulas`` differs from ``base``."""
    return frozenset(f.name for f in fields(Formulas) if getattr(formulas, f.name) is not getattr(base, f.name))


def with_formula(**replacements):
    """:data:`FORMULAS` with the given fields replaced."""
    return replace(FORMULAS, **replacements)
