"""The simulated models: entry laws, what is simulated (scores, softmax rows, Jacobian
spectra, whole heads, random attention problems), their closed forms and
exact values."""

from types import ModuleType as _ModuleType


from .asymptotics import gap_density, saturation_asymptotic_value, saturation_asymptotics
from . import distributions as _distributions
from .distributions import score_distribution
from .dropout import DropoutSim, dropout_weights
from .fixes import cosine_mean, cosine_moments, qknorm_logit_mean, t5_step_ratio
from .heads import NEAR_ZERO_GRADIENT, HeadSim, T5Sim
from .laws import ENTRY_LAWS, EntryLaw, entry_law, law_moment
from .problems import BackwardSim, FlopSim, JacobianSim, StableSoftmaxSim, TiledSim, attention_flops
from .sampling import (
    CosineSim,
    ScoreSim,
    draw_entries,
    sample_queries_keys,
    sample_scores,
    score_chunks,
    score_summary,
)
from .saturation import (
    SaturationSim,
    SmallScoreSim,
    check_scaling,
    exact_saturation_scores,
    resolve_saturation_method,
    row_trace,
    saturation_row_statistics,
    winner_bound,
)
from .saturation_procedure import (
    KEY_READINGS,
    PROCEDURE_STATISTICS,
    central_interval,
    grade_by_readings,
    largest_consistent_n,
    printed_value_mass,
    procedure_expectation,
    procedure_sample,
    quantile_with_mcse,
    ratio_exceeds,
    statistic_draws,
)
from .saturation_quadrature import EXACT_ACCURACY, saturation_exact, saturation_given_scale, saturation_limit
from .scores import scaled_score_moments, score_central_moments, score_cumulants, score_scale, score_tail_index
from .spectra import SpectrumSim
from .torch_sdpa import (
    SDPA_DISPATCH_DTYPES,
    SDPA_DTYPES,
    SDPA_MASKS,
    SDPADispatch,
    SDPADispatchSim,
    SDPALargeScoreSim,
    TorchSDPASim,
    sdpa_cpu_backend,
    sdpa_cpu_dispatch_table,
)

# ``import stats`` imports numpy and scipy.special, not scipy.stats, scipy.integrate or pandas
# (together ~0.9 s of the 1.2 s it took): a verify run forks its workers as soon as the plan
# needs pilots, and the parent imports the rest while they simulate.  Modules import those
# three where they use them; diff_chi2, an rv_continuous subclass, is built at its first
# access (PEP 562).  tests/test_imports.py keeps it so.
LAZY_NAMES = ("diff_chi2",)

__all__ = [
    name for name, value in dict(globals()).items()
    if not name.startswith("_") and not isinstance(value, _ModuleType) and name != "LAZY_NAMES"
] + list(LAZY_NAMES)


def __getattr__(name):
    if name in LAZY_NAMES:
        return getattr(_distributions, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *LAZY_NAMES})
