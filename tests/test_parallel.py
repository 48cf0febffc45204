"""Scale-out changes no number: claims.csv is byte-identical for 1 or 2 local workers and on a
Dask cluster (a LocalCluster on loopback, started and stopped here)."""

import subprocess
import sys

import pytest

from stats import FORMULAS, Job, SaturationSim, ScoreSim, entry_law, run_simulations

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
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as c:
        yield c


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
