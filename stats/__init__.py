"""Verification library for section 4.3, scaled dot-product attention.

Five wings, each re-exported here (``from stats import NAME`` works for every public name):

* :mod:`stats.exact` -- the exact half: forward and hand-derived backward pass, the
  softmax Jacobian, tiled (FlashAttention-style) attention, float formats, FLOP counts;
* :mod:`stats.models` -- what is simulated (scores, softmax rows, Jacobian spectra, whole
  heads, random attention problems) with its closed forms and exact values;
* :mod:`stats.training` -- single heads trained over many seeded runs: the scalings and the
  optimisers (one object each), the task, the trainer and its simulations;
* :mod:`stats.inference` -- estimators with Monte Carlo standard errors, calibrated
  tests and experiment design;
* :mod:`stats.claims` -- the section's statements as claims, the mutants and the runner
  (``python -m stats verify``).

:mod:`stats.engine` runs simulations (seeded block streams, process pools, Dask) and
:mod:`stats.formulas` gathers the implementations under test.
"""

from . import claims as _claims
from .claims import __all__ as _claims_all
from .engine import *  # noqa: F401,F403
from .engine import __all__ as _engine_all
from . import exact as _exact
from .exact import __all__ as _exact_all
from .formulas import FORMULAS, Formulas
from .inference import *  # noqa: F401,F403
from .inference import __all__ as _inference_all
from . import models as _models
from .models import __all__ as _models_all
from .training import *  # noqa: F401,F403
from .training import __all__ as _training_all

# ``from .models import *`` would build the lazy names (diff_chi2 needs scipy.stats, ~0.5 s
# of every command's start-up); they are served on first access instead (PEP 562).
globals().update({_name: getattr(_exact, _name) for _name in _exact_all if _name not in _exact.LAZY_NAMES})
globals().update({_name: getattr(_models, _name) for _name in _models_all if _name not in _models.LAZY_NAMES})
globals().update({_name: getattr(_claims, _name) for _name in _claims_all if _name not in _claims.LAZY_NAMES})
# The public run_simulation supplies the default formulas (the engine's takes them explicitly).
from .convenience import run_simulation, saturation_stats  # noqa: E402

__all__ = sorted(set(_claims_all) | set(_engine_all) | set(_exact_all) | set(_inference_all) | set(_models_all) | set(_training_all) | {"FORMULAS", "Formulas", "run_simulation", "saturation_stats"})


def __getattr__(name):
    if name in _exact.LAZY_NAMES:  # SymPy's, imported on first use
        return getattr(_exact, name)
    if name in _models.LAZY_NAMES:
        return getattr(_models, name)
    if name in _claims.LAZY_NAMES:  # the registry and the mutants, built on first access
        return getattr(_claims, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_exact.LAZY_NAMES, *_models.LAZY_NAMES, *_claims.LAZY_NAMES})
