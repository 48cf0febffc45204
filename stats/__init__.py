"""Verification library for section 4.3, scaled dot-product attention.

Exact half: the forward pass, its hand-derived backward pass, the softmax Jacobian,
tiled (FlashAttention-style) attention and floating-point facts.  Statistical half:
entry laws, closed forms, the exact score law, samplers, streaming estimators,
calibrated tests and the claims registry (``python -m stats verify``).
"""

from .attention import (
    attention_backward,
    naive_softmax,
    scaled_dot_product_attention,
    softmax,
    softmax_jacobian,
    softmax_vjp,
)
from .claims import REGISTRY, Check, Claim, Erratum, Formulas, SimSpec
from .closed_forms import SCALES, scaled_score_moments, score_cumulants, score_scale, score_tail_index
from .distributions import diff_chi2, score_distribution
from .estimators import (
    Estimate,
    MomentSummary,
    mean_estimate,
    merge_moments,
    moment_summary,
    proportion_estimate,
    quantile_estimate,
    scale_moments,
    variance_estimate,
)
from .gradcheck import GradientCheck, gradient_check, numerical_gradient
from .inference import (
    TestResult,
    UntestableError,
    detectable_discrepancy,
    detectable_ks_distance,
    distribution_test,
    holm_adjust,
    mean_test,
    proportion_test,
    required_ks_sample_size,
    required_sample_size,
    variance_ratio_test,
    variance_test,
)
from .laws import ENTRY_LAWS, EntryLaw, entry_law, law_moment
from .mutants import MUTANTS, Mutant
from .numerics import exp_overflow_threshold
from .sampling import draw_entries, sample_queries_keys, sample_scores, score_chunks, score_summary
from .tiled import tiled_attention_backward, tiled_attention_forward
from .verify import evaluate, plan, simulate, verify_claims

__all__ = [name for name in dir() if not name.startswith("_")]
