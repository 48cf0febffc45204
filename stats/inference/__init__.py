"""The inference engine: streaming estimators with Monte Carlo standard errors, calibrated
tests, the experiment design that sizes every check, and Kaplan--Meier survival to an event
under a budget (:mod:`~stats.inference.survival`)."""

from types import ModuleType as _ModuleType


from .estimators import (
    Estimate,
    MomentSummary,
    delta_method,
    mean_estimate,
    merge_moments,
    merge_power_sums,
    moment_summary,
    proportion_estimate,
    quantile_estimate,
    scale_moments,
    variance_estimate,
)
from .lr_window import LRWindow, lr_sensitivity, lr_window
from .significance import (
    TestResult,
    UntestableError,
    detectable_discrepancy,
    detectable_ks_distance,
    detectable_shift,
    distribution_test,
    holm_adjust,
    interval_test,
    mean_test,
    proportion_test,
    share_interval_test,
    required_ks_sample_size,
    required_sample_size,
    two_sample_test,
    variance_ratio_test,
    variance_test,
)
from .survival import Survival, survival_to_accuracy
from .tails import (
    TAIL_FRACTION,
    TAIL_LIMIT,
    conservative_pvalue,
    edgeworth_coefficients,
    tail_error,
    tail_sample_size,
)

__all__ = [name for name, value in dict(globals()).items() if not name.startswith("_") and not isinstance(value, _ModuleType)]
