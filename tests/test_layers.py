"""The import layers of the suite, and no unused or undefined names.

``lint-imports`` checks the contracts in pyproject.toml (``[tool.importlinter]``): the
models, the exact half, inference and the engine know nothing of :mod:`stats.formulas`,
the claims or :mod:`stats.convenience` (the implementations under test are passed to
them; the default :data:`~stats.formulas.FORMULAS` is supplied at the top), and no
module of ``stats`` imports ``analyses``.  Imports inside functions count.  ``ruff check``
runs the Pyflakes rules of ``[tool.ruff.lint]`` over the whole tree.
"""

import inspect
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np

import stats
import stats.convenience
from stats.formulas import FORMULAS
from stats.models import saturation

ROOT = Path(__file__).resolve().parents[1]


def _run(args):
    # This checkout's packages, whatever the environment has installed.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=env)
    return r.returncode, (r.stdout + r.stderr).strip()


def test_import_contracts_hold():
    # The console script of this interpreter's environment (the test extra installs it).
    script = Path(sysconfig.get_path("scripts")) / "lint-imports"
    assert script.exists(), f"{script} is missing: pip install -e '.[test]'"
    code, out = _run([str(script), "--no-cache", "--no-logo"])
    assert code == 0, f"lint-imports found a broken contract:\n{out}"


def test_ruff_finds_nothing():
    code, out = _run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                      "stats", "analyses", "benchmarks", "tests"])
    assert code == 0, f"ruff check:\n{out}"


def test_the_lower_layers_defaults_are_the_formulas():
    # saturation_row_statistics without formulas uses its module's own functions: they must
    # be FORMULAS's fields, so that both give the same bytes.
    assert FORMULAS.row_trace is saturation.row_trace
    assert FORMULAS.winner_bound is saturation.winner_bound
    s = np.random.default_rng(3).standard_normal((64, 16)) * 4.0
    plain, given = saturation.saturation_row_statistics(s), saturation.saturation_row_statistics(s, FORMULAS)
    assert plain.keys() == given.keys()
    for name in plain:
        assert plain[name].tobytes() == given[name].tobytes(), name


def test_the_public_wrappers_supply_the_default_formulas():
    # ``from stats import run_simulation, saturation_stats`` gives the top-level wrappers,
    # whose formulas default to FORMULAS; the engine's own run_simulation requires them.
    assert stats.run_simulation is stats.convenience.run_simulation
    assert stats.saturation_stats is stats.convenience.saturation_stats
    assert {"run_simulation", "saturation_stats"} <= set(stats.__all__)
    assert inspect.signature(stats.run_simulation).parameters["formulas"].default is None
    engine_formulas = inspect.signature(stats.engine.executors.run_simulation).parameters["formulas"]
    assert engine_formulas.default is inspect.Parameter.empty and engine_formulas.kind is inspect.Parameter.KEYWORD_ONLY
