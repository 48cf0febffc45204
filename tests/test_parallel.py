"""Scale-out changes no number: claims.csv is byte-identical for 1 or 2 local workers and on a
Dask cluster (a LocalCluster on loopback, started and stopped here)."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from stats import FORMULAS, Job, SaturationSim, ScoreSim, entry_law, local_dask_cluster, run_simulations

ROOT = Path(__file__).resolve().parents[1]
SELECTION = "product-mean,winner-bound,saturation-samplers-agree,fast-path-bitpacked"


def _verify(tmp_path, *extra):
    r = subprocess.run(
        [sys.executable, "-m", "stats", "verify", "--only", SELECTION, "--n-factor", "0.05", "--no-progress", "--out", str(tmp_path), *extra],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return (tmp_path / "claims-selection.csv").read_bytes()


def test_claims_are_byte_identical_for_any_worker_count(tmp_path):
    one = _verify(tmp_path / "one", "--workers", "1")
    two = _verify(tmp_path / "two", "--workers", "2")
    assert one == two


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    import dask

    # A nanny writes its workers' variables into this process's environment; the helper
    # must take them out again, or every later subprocess of the test run inherits them.
    written = [*dask.config.get("distributed.nanny.pre-spawn-environ"), "PYTHONHASHSEED", "__DASK_PARENT_PID"]
    before = {k: os.environ.get(k) for k in written}
    with local_dask_cluster(n_workers=2) as c:
        assert {k: os.environ.get(k) for k in written} == before
        yield c
    assert {k: os.environ.get(k) for k in written} == before


def _summaries(results):
    return {k: {s: (v.n, v.mean, v.m2, v.m3, v.m4) for s, v in r.summaries.items()} for k, r in results.items()}


def test_a_dask_cluster_gives_the_local_numbers(cluster):
    jobs = [Job(ScoreSim(64, 0.5, entries=entry_law("uniform")), 30_000), Job(SaturationSim(16, 8, "none", method="direct"), 20_000)]
    local = run_simulations(jobs, seed=3, formulas=FORMULAS, workers=1)
    remote = run_simulations(jobs, seed=3, formulas=FORMULAS, scheduler=cluster.scheduler_address)
    assert _summaries(local) == _summaries(remote)


def test_verify_on_a_dask_cluster_writes_the_same_table(cluster, tmp_path):
    local = _verify(tmp_path / "local", "--workers", "1")
    dask = _verify(tmp_path / "dask", "--scheduler", cluster.scheduler_address)
    assert local == dask


def test_the_suites_cluster_gives_its_workers_the_suites_malloc(cluster):
    from distributed import Client

    from stats.engine.executors import _malloc_setting
    from stats.engine.malloc import MALLOC_ENVIRON

    with Client(cluster.scheduler_address) as client:
        settings = set(client.run(_malloc_setting).values())
    assert settings == {(MALLOC_ENVIRON["MALLOC_TRIM_THRESHOLD_"], MALLOC_ENVIRON["MALLOC_MMAP_THRESHOLD_"])}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning about its workers
        run_simulations([Job(ScoreSim(8), 10_000)], seed=1, formulas=FORMULAS, scheduler=cluster.scheduler_address)


def test_workers_with_a_fixed_trim_threshold_are_warned_about():
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    with local_dask_cluster(n_workers=1, worker_malloc="dask") as c:
        # Dask's default: its nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536.
        with pytest.warns(RuntimeWarning, match="MALLOC_TRIM_THRESHOLD_=65536"):
            run_simulations([Job(ScoreSim(8), 10_000)], seed=1, formulas=FORMULAS, scheduler=c.scheduler_address)


def test_local_dask_cluster_rejects_a_bad_worker_count_or_malloc():
    with pytest.raises(ValueError, match="n_workers"):
        with local_dask_cluster(n_workers=0):
            pass
    with pytest.raises(ValueError, match="worker_malloc"):
        with local_dask_cluster(n_workers=1, worker_malloc="glibc"):
            pass


def test_variables_a_nanny_writes_while_the_cluster_runs_are_put_back():
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    before = os.environ.get("OMP_NUM_THREADS")
    with local_dask_cluster(n_workers=1):
        os.environ["OMP_NUM_THREADS"] = "1"  # what a nanny restarting a worker does
    assert os.environ.get("OMP_NUM_THREADS") == before


def test_a_calibration_on_a_dask_cluster_gives_the_local_tables(cluster, monkeypatch):
    """``calibrate(scheduler=...)`` draws each seed's blocks on the cluster; its tables are the
    local run's, byte for byte."""
    from stats import MUTANTS, plan
    from stats.claims import calibration

    the_plan = plan(select="raw-variance-width,mostly-one-hot", n_factor=0.02)
    monkeypatch.setattr(calibration, "plan", lambda **_: the_plan)
    kw = dict(seeds=3, mutant_seeds=2, n_factor=0.02,
              mutants=tuple(m for m in MUTANTS if m.name in ("variance-off-2pct", "trace-one-minus-max")))
    local = calibration.calibrate(**kw)
    remote = calibration.calibrate(**kw, scheduler=cluster.scheduler_address)
    for a, b in zip(local[:4], remote[:4]):
        assert a.to_csv() == b.to_csv()


def _tasks_run(address):
    """How many tasks the cluster's scheduler has seen run (every task prefix's count, by state)."""
    from distributed import Client

    with Client(address) as client:
        return client.run_on_scheduler(lambda dask_scheduler: sum(
            sum(tp.state_counts.get(state, 0) for state in ("memory", "released", "forgotten"))
            for tp in dask_scheduler.task_prefixes.values()))


def test_a_study_on_a_dask_cluster_writes_the_local_data(cluster, tmp_path):
    """`python -m analyses --scheduler` draws a study's simulations on the cluster (its scheduler runs
    tasks it did not before): the same tables, byte for byte."""
    def data(out, *extra):
        subprocess.run([sys.executable, "-m", "analyses", "t5_steps", "--quick", "--simulate-only", "--out", str(out), *extra],
                       cwd=ROOT, check=True, capture_output=True)
        folder = out / "data" / "t5_steps"
        return {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix == ".csv"}

    local = data(tmp_path / "local", "--workers", "1")
    before = _tasks_run(cluster.scheduler_address)
    assert local and local == data(tmp_path / "dask", "--scheduler", cluster.scheduler_address)
    assert _tasks_run(cluster.scheduler_address) > before


def test_the_rate_searches_on_a_dask_cluster_are_the_local_ones(cluster, tmp_path, monkeypatch):
    """An evidence profile's searches drawn one a task on the cluster, then kept in this machine's cache,
    are the searches drawn here in turn; a second call reads the cache."""
    from test_lr_search import _clear, _tiny_profile

    from stats import lr_search

    profile = _tiny_profile()
    _clear()
    try:
        monkeypatch.setenv("SDPA_CACHE", str(tmp_path / "dask"))
        before = _tasks_run(cluster.scheduler_address)
        remote = lr_search.profile_searches(profile, scheduler=cluster.scheduler_address)
        assert len(list((tmp_path / "dask" / "lr-search").glob("*.json"))) == len(remote) == 13
        assert _tasks_run(cluster.scheduler_address) >= before + 13
        _clear()
        monkeypatch.setenv("SDPA_CACHE", str(tmp_path / "here"))
        assert lr_search.profile_searches(profile, workers=1) == remote
        _clear()
        monkeypatch.setenv("SDPA_CACHE", str(tmp_path / "dask"))
        monkeypatch.setattr(lr_search, "search_rate", lambda **kw: (_ for _ in ()).throw(AssertionError("drawn again")))
        assert lr_search.profile_searches(profile, scheduler=cluster.scheduler_address) == remote
    finally:
        _clear()
