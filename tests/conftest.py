"""Shared fixtures, and the two tiers (docs/testing.md).

``make test`` runs the fast tier: every test not marked ``slow`` (pyproject's addopts say
``-m "not slow"``).  ``make test-all`` runs both tiers (``-m "slow or not slow"``).  A test
that uses :func:`quick_report` (a ``make reports QUICK=1`` build) is slow by construction:
it is marked here, so no fast test can start a build by asking for the fixture.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]

settings.register_profile("suite", max_examples=60, deadline=None)
settings.load_profile("suite")

#: Fixtures whose users are in the slow tier whatever their own marks say.
SLOW_FIXTURES = {"quick_report"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # CI's second lane runs `-m "slow or torch"` only (docs/testing.md): a fast test that skips
    # for want of PyTorch and is not marked `torch` would never run anywhere, so it fails here.
    # (A slow test runs in that lane whatever its marks, so it may skip without PyTorch.)
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and "torch" in str(report.longrepr).lower() and item.get_closest_marker("torch") is None
            and item.get_closest_marker("slow") is None):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} skips for want of PyTorch but is not marked @pytest.mark.torch, "
                           "so CI's second lane (`make test-slow`) would never run it")


@pytest.fixture
def rng():
    # One explicit stream per test: reruns give the same numbers.
    return np.random.default_rng(np.random.SeedSequence(20261201))


def make(*args, out, env=None):
    """``make ... OUT=out QUICK=1`` in the repository, as a user runs it (no inherited make flags)."""
    e = dict(os.environ, **(env or {}))
    e.pop("MAKEFLAGS", None)
    e.pop("MFLAGS", None)
    return subprocess.run(["make", "--no-print-directory", *args, f"OUT={out}", "QUICK=1"], cwd=ROOT, capture_output=True, text=True, env=e)


@pytest.fixture(scope="session")
def quick_report(tmp_path_factory):
    """One draft build (``make reports QUICK=1``) shared by every test of the run that reads one.

    Tests that read it must not change it (copy it first, as the corrupted-data test does);
    the second-run test only re-runs make on it, which must change nothing."""
    out = tmp_path_factory.mktemp("report-a")
    r = make("reports", out=out)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out
