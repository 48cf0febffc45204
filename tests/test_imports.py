"""What ``import stats`` and the simulations import.

A verify run forks its workers once the plan needs pilots; whatever the parent imported
before is start-up the workers wait for.  scipy.stats, scipy.integrate and pandas (about
0.9 s of the 1.2 s ``import stats`` took) are needed only by the design and the tests, so
the parent imports them while the workers simulate (stats/models/__init__.py).  These tests
keep it so: a module-level ``import pandas`` or ``from scipy.stats import ...`` anywhere
on the path fails them.
"""

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

import stats

HEAVY = ("scipy.stats", "scipy.integrate", "scipy.optimize", "pandas", "sympy")


def _imported_after(code):
    """Which of HEAVY a fresh interpreter holds after running ``code``."""
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ["stats", "stats.__main__", "stats.claims.registry", "stats.claims.mutants"])
def test_import_leaves_out_scipy_stats_and_pandas(module):
    assert _imported_after(f"import {module}") == []


def test_no_registry_simulation_needs_them():
    # Every simulation the registry's checks measure, a few rows each, in this process (as
    # a forked worker runs them): none may import scipy.stats or pandas on the way.  A check
    # whose optional part is not installed here (PyTorch) is not run here, so neither is its simulation;
    # where PyTorch is installed its checks are left out too: PyTorch's own autograd imports SymPy (its
    # symbolic shapes) in the backward pass of a masked fused SDPA call, a cost of the optional part.
    code = """
from stats.claims.registry import REGISTRY
from stats.claims.planning import all_checks as _all_checks
from stats.engine.executors import Job, run_simulations
from stats.formulas import FORMULAS
sims = {}
for claim, check in _all_checks(REGISTRY):
    if check.missing_requirement() or check.requires:
        continue
    for ms in check.measures:
        sims[ms.sim.key] = ms.sim
run_simulations([Job(s, 2) for s in sims.values()], seed=7, formulas=FORMULAS, workers=1)
print(len(sims), file=sys.stderr)
"""
    assert _imported_after(code) == []


def test_a_planted_module_level_import_is_seen(tmp_path):
    # The probe itself can fail: a module that imports pandas at the top is reported.
    (tmp_path / "eager_mod.py").write_text("import pandas\n")
    assert _imported_after(f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import eager_mod") == ["pandas"]


def test_the_lazy_law_is_public_and_the_same_object():
    from scipy import stats as sps

    assert "diff_chi2" in stats.__all__ and "diff_chi2" in stats.models.__all__
    assert "diff_chi2" in dir(stats) and "diff_chi2" in dir(stats.models)
    law = stats.diff_chi2
    assert law is stats.models.diff_chi2 is stats.models.distributions.diff_chi2
    assert isinstance(law, sps.rv_continuous)
    frozen = stats.score_distribution(8, 0.3)
    assert type(frozen.dist) is type(law)  # scipy freezes a copy of the instance
    assert frozen.mean() == pytest.approx(0.3 * np.sqrt(8), rel=1e-12)
    assert frozen.var() == pytest.approx(1 + 0.3**2, rel=1e-12)


def test_the_lazy_law_pickles_as_a_worker_needs():
    frozen = stats.score_distribution(4, -0.2)
    back = pickle.loads(pickle.dumps(frozen))
    x = np.linspace(-3, 3, 7)
    np.testing.assert_array_equal(back.cdf(x), frozen.cdf(x))
    assert type(pickle.loads(pickle.dumps(stats.diff_chi2))) is type(stats.diff_chi2)


@pytest.mark.parametrize("module", [stats, stats.models, stats.models.distributions])
def test_unknown_names_are_attribute_errors(module):
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name



@pytest.mark.parametrize("reach", ["stats.diff_chi2", "stats.score_distribution(4, 0.3).dist"])
def test_two_threads_first_access_builds_one_law(reach):
    # In a fresh process two threads reach for the unbuilt law at the same moment: both
    # must get the one class (a second one would fail isinstance and pickle).
    code = f"""
import pickle, threading, stats
barrier, got = threading.Barrier(2), []
def reach():
    barrier.wait()
    got.append({reach})
threads = [threading.Thread(target=reach) for _ in range(2)]
[t.start() for t in threads]
[t.join() for t in threads]
assert type(got[0]) is type(got[1]) is stats.models.distributions.diff_chi2_gen, got
for g in got:
    pickle.dumps(g)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-1500:]


def test_import_stats_does_not_build_the_registry():
    # The registry imports every statement module and builds ~450 checks: a user of the
    # library who never asks for it should not pay for it.  It is built on first access.
    probe = (
        "import sys, stats\n"
        "built = [m for m in ('stats.claims.registry', 'stats.claims.mutants', 'stats.claims.statements') if m in sys.modules]\n"
        "print(built); print(len(stats.REGISTRY), len(stats.MUTANTS), 'stats.claims.registry' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, after = r.stdout.strip().splitlines()
    assert before == "[]"
    n_claims, n_mutants, built = after.split()
    assert int(n_claims) >= 48 and int(n_mutants) >= 31 and built == "True"
    assert "REGISTRY" in dir(stats) and stats.REGISTRY is stats.claims.registry.REGISTRY
