r"""Convenience wrappers that run a model on the engine with the default formulas.

The layers below know nothing of :mod:`stats.formulas`: a model, the engine's
:func:`stats.engine.executors.run_simulation` and everything they call take the
implementations under test as an argument.  The wrappers here, at the top, supply
:data:`~stats.formulas.FORMULAS` when none is given; ``stats`` re-exports them
(``from stats import run_simulation, saturation_stats``).
"""

from __future__ import annotations

from ._validation import check_d_k, check_integer
from .engine import executors as _executors
from .formulas import FORMULAS
from .inference.estimators import mean_estimate
from .models.laws import entry_law
from .models.saturation import SATURATION_STATISTICS, SaturationSim, check_scaling, resolve_saturation_method

__all__ = ["run_simulation", "saturation_stats"]


def run_simulation(sim, n, *, seed, formulas=None, keep=(), **kwargs):
    """One simulation (see :func:`stats.engine.executors.run_simulations`); ``formulas``
    defaults to the true ones, :data:`~stats.formulas.FORMULAS`."""
    if formulas is None:
        formulas = FORMULAS
    return _executors.run_simulation(sim, n, seed=seed, formulas=formulas, keep=keep, **kwargs)


def saturation_stats(
    d_k, n_keys=32, *, scaling="sqrt", n_rows, seed, entries="gaussian", method="auto", workers=1, formulas=None
):
    r"""Monte Carlo saturation statistics of a fresh head (section "Saturation, measured").

    Returns a pandas Series with ``max_weight``, ``trace`` (:math:`1 - \lVert a\rVert^2`),
    ``entropy``, ``frac_one_hot_90`` and ``frac_one_hot_99`` (shares of rows whose
    largest weight exceeds 0.9 and 0.99), each with ``<name>_mcse``, and ``n_rows``.
    ``method="auto"`` takes the exact chi-square shortcut for Gaussian entries and the
    direct recipe otherwise.  Memory stays below a few tens of MiB for any ``n_rows``.
    The model is :class:`stats.models.saturation.SaturationSim`; ``formulas`` defaults
    to :data:`~stats.formulas.FORMULAS`.
    """
    import pandas as pd  # here, not at import: the simulations do not need it

    law = entry_law(entries)
    d_k = check_d_k(d_k)
    n_keys = check_integer(n_keys, "n_keys", minimum=2, what="an integer >= 2")
    check_scaling(scaling)
    method = resolve_saturation_method(method, law)
    n_rows = check_integer(n_rows, "n_rows", minimum=2, what="an integer >= 2")
    sim = SaturationSim(d_k, n_keys, scaling, law, method)
    res = run_simulation(sim, n_rows, seed=seed, formulas=formulas, workers=workers)
    out = {}
    names = {"one_hot_90": "frac_one_hot_90", "one_hot_99": "frac_one_hot_99"}
    for stat in SATURATION_STATISTICS:
        s = res.summary(stat)
        e = mean_estimate(s.moments())
        out[names.get(stat, stat)] = e.value
        out[names.get(stat, stat) + "_mcse"] = e.mcse
    out["n_rows"] = n_rows
    return pd.Series(out, name=f"saturation d_k={d_k}, T={n_keys}, {scaling}, {law.label}, {method}")
