"""Shared fixtures, and the two tiers (docs/testing.md).

``make test`` runs the fast tier: every test not marked ``slow`` (pyproject's addopts say
``-m "not slow"``).  ``make test-all`` runs both tiers (``-m "slow or not slow"``).  A test
that uses :func:`quick_report` (a ``make reports QUICK=1`` build) is slow by construction:
it is marked here, so no fast test can start a build by asking for the fixture.
"""

import importlib.util
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


#: Why a test marked ``torch`` is skipped where PyTorch is missing.
TORCH_MISSING = "PyTorch not installed: `make torch` adds the CPU build"


def pytest_collection_modifyitems(config, items):
    torch_missing = importlib.util.find_spec("torch") is None
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if torch_missing and item.get_closest_marker("torch") is not None:
            item.add_marker(pytest.mark.skip(reason=TORCH_MISSING))


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
def stand_in_search(monkeypatch):
    """A rate search that trains nothing (``lr_search.cached_rate_search`` replaced): a rate per head,
    interior (the unscaled d_k = 1024 cell's a bound at the top); yields the calls' arguments."""
    from stats import lr_search

    calls = []

    def fake(**kw):
        calls.append(kw)
        bound = 1 if kw["d_k"] == 1024 and kw["scaling"] == "none" else 0
        rate = {"none": 0.001, "sqrt": 0.01, "t5": 0.00316}[kw["scaling"]]  # distinct: each check's runs are its own
        return lr_search.RateSearch((kw["d_k"], kw["d_model"], kw["scaling"], kw["optimizer"], ()), kw["seed"], (), rate,
                                    bound == 0, bound, kw.get("task", "head"))

    monkeypatch.setattr(lr_search, "cached_rate_search", fake)
    # one process: profile_searches then asks profile_search, search by search, and so the stand-in
    monkeypatch.setattr(lr_search, "default_workers", lambda: 1)
    lr_search.profile_search.cache_clear()
    yield calls
    lr_search.profile_search.cache_clear()


@pytest.fixture
def rng():
    # One explicit stream per test: reruns give the same numbers.
    return np.random.default_rng(np.random.SeedSequence(20261201))


def make_command(*args, out, env=None):
    """The command line and environment of ``make ... OUT=out QUICK=1`` as a user runs it in the
    repository: ``env`` added to this process's, without the make flags a test may inherit."""
    e = dict(os.environ, **(env or {}))
    e.pop("MAKEFLAGS", None)
    e.pop("MFLAGS", None)
    return ["make", "--no-print-directory", *args, f"OUT={out}", "QUICK=1"], e


def make(*args, out, env=None):
    """Run ``make ... OUT=out QUICK=1`` (:func:`make_command`) to the end; its completed process."""
    argv, e = make_command(*args, out=out, env=env)
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=e)


@pytest.fixture(scope="session")
def quick_report(tmp_path_factory):
    """One draft build (``make reports QUICK=1``) shared by every test of the run that reads one.

    Tests that read it must not change it (copy it first, as the corrupted-data test does);
    the second-run test only re-runs make on it, which must change nothing."""
    out = tmp_path_factory.mktemp("report-a")
    r = make("reports", out=out)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out
