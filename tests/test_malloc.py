"""The suite's glibc malloc settings: freed memory is reused instead of faulted in afresh,
whoever chose otherwise is left alone, and a bad switch is a clear error."""

import os
import platform
import subprocess
import sys

import pytest

from stats.engine.executors import _small_mmap_threshold
from stats.engine.malloc import MALLOC_ENVIRON, malloc_choice, tune_malloc

glibc = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")

# Four 8 MiB arrays alive at once, freed, twenty times over: with glibc's adaptive
# thresholds the freed top of the heap (32 MiB) exceeds the trim threshold (16 MiB) and
# is given back each time, so each round faults its pages in again.
CHURN = """
import resource
import numpy as np
from stats.engine.malloc import tune_malloc
tuned = tune_malloc()
def churn():
    for _ in range(20):
        a = [np.ones(1 << 20) for _ in range(4)]
        del a
churn()
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
churn()
print(tuned, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0)
"""


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "SDPA_MALLOC"}
    return {**env, **extra}


def _churn(**extra):
    r = subprocess.run([sys.executable, "-c", CHURN], capture_output=True, text=True, env=_clean_env(**extra), check=True)
    tuned, faults = r.stdout.split()
    return tuned == "True", int(faults)


@glibc
def test_tuned_malloc_reuses_freed_memory():
    tuned, faults = _churn()
    untuned, glibc_faults = _churn(SDPA_MALLOC="glibc")
    assert tuned and not untuned
    assert glibc_faults > 10_000  # the pattern does fault under glibc's defaults ...
    assert faults < glibc_faults / 100  # ... and not with the suite's settings


@glibc
def test_a_malloc_variable_already_set_is_left_alone():
    tuned, faults = _churn(MALLOC_TRIM_THRESHOLD_="65536")
    assert not tuned and faults > 10_000


def test_a_bad_switch_names_the_variable(monkeypatch):
    monkeypatch.setenv("SDPA_MALLOC", "fast")
    with pytest.raises(ValueError, match="SDPA_MALLOC must be one of tuned, glibc"):
        malloc_choice()
    with pytest.raises(ValueError, match="SDPA_MALLOC"):
        tune_malloc()


def test_the_command_line_rejects_a_bad_switch_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "stats", "verify", "--only", "product-mean", "--out", str(tmp_path)],
                       capture_output=True, text=True, env=_clean_env(SDPA_MALLOC="fast"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "SDPA_MALLOC" in r.stderr


def test_which_worker_settings_are_warned_about():
    assert not _small_mmap_threshold((None, None))  # glibc's adaptive default
    assert _small_mmap_threshold(("65536", None))  # Dask's default: mmap threshold stuck at 128 KiB
    assert _small_mmap_threshold(("65536", "131072"))
    assert not _small_mmap_threshold((MALLOC_ENVIRON["MALLOC_TRIM_THRESHOLD_"], MALLOC_ENVIRON["MALLOC_MMAP_THRESHOLD_"]))
