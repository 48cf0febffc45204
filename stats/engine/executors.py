r"""Running simulations: in this process, on a local process pool, or on a Dask cluster.

Work is cut along the fixed blocks of each simulation.  Consecutive blocks are grouped
into tasks of about :data:`TASK_NUMBERS` random numbers (so scheduling overhead stays
small next to the work), tasks are handed out largest first, and the block summaries
that come back are merged **in block order**, whichever worker computed them and
whenever they arrived.  The numbers are therefore identical -- the same bytes -- for any
number of workers, any scheduler and any chunk size.

Inside a task, BLAS is limited to one thread: per-row results must not depend on how a
library splits a product across threads, and processes, not threads, are the unit of
parallelism here.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import check_integer
from .malloc import MALLOC_ENVIRON, malloc_choice, tune_malloc
from .simulation import SimResult, block_count, block_rows_of
from .streams import simulation_seed
from .summaries import merge_row_summaries, summarize_block

__all__ = ["Job", "SimFailure", "TASK_NUMBERS", "default_workers", "local_dask_cluster", "pool_context", "run_simulation", "run_simulations"]

TASK_NUMBERS = 1 << 24  # random numbers per task: about 0.1-0.4 s of work
DEFAULT_CHUNK_SIZE = 1 << 20  # random numbers held at once inside a block (8 MiB of float64)


@dataclass(frozen=True)
class Job:
    """``n`` rows of ``sim``; ``keep`` names the statistics whose rows are returned whole.

    ``stream`` is the key that seeds the job (default: the simulation's own key); a
    pilot run uses another, so that it never shares draws with the run it sizes.
    """

    sim: object
    n: int
    keep: frozenset = frozenset()
    stream: str | None = None

    @property
    def key(self):
        return self.stream or self.sim.key


@dataclass(frozen=True)
class SimFailure:
    """A simulation that raised: the runner reports its checks as ``ERROR``, with this message."""

    key: str
    message: str


def default_workers():
    """All the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_CONTROLLER = []


def _thread_limit():
    """BLAS limited to one thread (a controller cached per process: building one scans /proc, ~5 ms)."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency
            return contextlib.nullcontext()
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)


@dataclass(frozen=True)
class _Work:
    """What one worker call runs (pickled to the worker): blocks ``b0 .. b1 - 1`` of ``sim``,
    whose job has ``n`` rows, seeded by ``sim_seed``; ``keep`` names the statistics whose
    rows come back whole."""

    sim: object
    sim_seed: np.random.SeedSequence
    b0: int
    b1: int
    n: int
    keep: frozenset
    formulas: object
    chunk_size: int


@dataclass(frozen=True)
class _Task:
    """One scheduled task: ``work`` for job number ``job`` from block ``b0`` on.  ``cost``
    (rows times the simulation's ``effort`` per row) orders the queue, largest first, and
    advances the progress bar; results are keyed by ``(job, b0)`` and merged in that order."""

    job: int
    b0: int
    cost: float
    work: _Work


def _run_task(work):
    """Summaries (and kept rows) of the blocks of one :class:`_Work`, or the text of the
    exception it raised (which the caller re-raises or records)."""
    # The thread's CPU time, not the wall clock: a worker sharing its core with another
    # process (a build runs verify beside the studies) would otherwise report its waits as cost.
    t0 = time.thread_time()
    try:
        return _blocks(work), time.thread_time() - t0
    except Exception as exc:  # noqa: BLE001 - reported to the caller, never swallowed
        return _Failed(f"{type(exc).__name__}: {exc}"), time.thread_time() - t0


@dataclass(frozen=True)
class _Failed:
    message: str


def _blocks(work):
    sim = work.sim
    out = []
    with _thread_limit():
        for b in range(work.b0, work.b1):
            rows = block_rows_of(sim, work.n, b)
            stats = sim.run_block(work.sim_seed, b, rows, work.formulas, work.chunk_size)
            missing = set(sim.statistics) - set(stats)
            if missing:
                raise RuntimeError(f"{sim.key} block {b} did not yield {sorted(missing)}")
            summaries = summarize_block(stats, sim.statistics)
            kept = {name: stats[name] for name in work.keep}
            out.append((summaries, kept))
    return out


def _tasks(jobs, seed, formulas, chunk_size, task_numbers):
    tasks = []
    for j, job in enumerate(jobs):
        sim = job.sim
        sim_seed = simulation_seed(seed, job.key)
        nb = block_count(sim, job.n)
        per_block = max(1.0, sim.block_rows * float(sim.cost))
        step = max(1, int(task_numbers // per_block))
        for b0 in range(0, nb, step):
            b1 = min(nb, b0 + step)
            cost = sum(block_rows_of(sim, job.n, b) for b in range(b0, b1)) * float(sim.effort)
            work = _Work(sim, sim_seed, b0, b1, job.n, frozenset(job.keep), formulas, chunk_size)
            tasks.append(_Task(j, b0, cost, work))
    return tasks


def _progress(total, progress, desc):
    from tqdm.auto import tqdm

    # disable=None: a bar on a terminal, silence in pipes, logs and CI.
    return tqdm(total=total, unit="draw", unit_scale=True, disable=None if progress else True, desc=desc, leave=False)


def pool_context():
    """``fork`` where available (workers start in milliseconds and need no ``__main__`` guard
    in a user's script); ``spawn`` elsewhere.  With ``fork`` the executor creates every worker
    at the first submit, before it starts its own thread, so the only rule is the one
    :func:`run_simulations` keeps: this process starts threads only in ``after_submit``."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _execute_local(tasks, workers, bar, after_submit=None):
    from concurrent.futures import ProcessPoolExecutor, as_completed

    results = {}
    if workers <= 1 or len(tasks) <= 1:
        if after_submit is not None:
            after_submit()
        for t in tasks:
            results[(t.job, t.b0)] = _run_task(t.work)
            bar.update(t.cost)
        return results
    malloc_choice()  # a bad SDPA_MALLOC is a ValueError here, not a broken pool
    # The workers are this engine's own processes: their malloc is set for block
    # simulations (a no-op when they were forked from a process that set it already).
    with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(), initializer=tune_malloc) as pool:
        futures = {}
        try:
            for t in sorted(tasks, key=lambda t: -t.cost):  # largest first: the pool drains evenly
                futures[pool.submit(_run_task, t.work)] = t
            # With "fork", every worker exists once the first task is submitted: only now is
            # it safe for the caller to start threads in this process (a fork copies no thread
            # but every lock one holds).
            if after_submit is not None:
                after_submit()
            for f in as_completed(futures):
                t = futures[f]
                results[(t.job, t.b0)] = f.result()
                bar.update(t.cost)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return results


# Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536 (the
# ``distributed.nanny.pre-spawn-environ`` default).  Fixing a glibc threshold switches off
# glibc's adaptive mmap threshold, which then stays at 128 KiB: every larger array is
# mapped and faulted in afresh, 1.55x the time of these simulations (see .malloc).
_WARNED_CLUSTERS = set()


def _malloc_setting():
    """This process's glibc threshold variables, ``(trim, mmap)`` (run on each Dask worker)."""
    return os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("MALLOC_MMAP_THRESHOLD_")


def _small_mmap_threshold(setting):
    """Whether ``(trim, mmap)`` leaves glibc's mmap threshold fixed at 128 KiB or near it."""
    trim, mmap = setting
    if trim is None:
        return False  # glibc's adaptive default, or only the mmap threshold fixed
    try:
        return mmap is None or int(mmap) < (1 << 20)
    except ValueError:
        return True


def _warn_about_worker_malloc(client):
    """Warn once per scheduler if its workers' mmap threshold is stuck at 128 KiB."""
    address = client.scheduler.address
    if address in _WARNED_CLUSTERS:
        return
    _WARNED_CLUSTERS.add(address)
    bad = sorted({s for s in client.run(_malloc_setting).values() if _small_mmap_threshold(s)}, key=str)
    if bad:
        names = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
        found = " ".join(f"{k}={v}" for k, v in zip(names, bad[0]) if v is not None)
        wanted = " and ".join(f"{k}={v}" for k, v in MALLOC_ENVIRON.items())
        warnings.warn(
            f"the Dask workers run with {found}: glibc then maps every array over 128 KiB afresh, and this "
            f"suite's simulations take about 1.5x as long; give the workers {wanted} through the Dask setting "
            "distributed.nanny.pre-spawn-environ (see docs/dask.md)",
            RuntimeWarning,
            stacklevel=4,
        )


def _execute_dask(tasks, scheduler, bar):
    """The same tasks on a dask.distributed cluster: ``scheduler`` is an address or a Client."""
    try:
        from distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise RuntimeError("the Dask backend needs the 'dask' extra: pip install -e '.[dask]'") from exc
    ordered = sorted(tasks, key=lambda t: -t.cost)
    results = {}
    owns = isinstance(scheduler, str)
    client = Client(scheduler) if owns else scheduler
    try:
        _warn_about_worker_malloc(client)
        # One submit each, with a priority: the scheduler then starts the largest task first,
        # as the local pool does (a single map's tasks run in an order of its own choosing,
        # which can leave one worker idle while the other finishes a big task last).
        futures = [client.submit(_run_task, t.work, pure=False, priority=len(ordered) - i) for i, t in enumerate(ordered)]
        index = {f.key: t for f, t in zip(futures, ordered)}
        for future, value in as_completed(futures, with_results=True):
            t = index[future.key]
            results[(t.job, t.b0)] = value
            bar.update(t.cost)
    finally:
        if owns:
            client.close()
    return results


@contextlib.contextmanager
def _preserved_environ():
    """Restore ``os.environ`` on exit: a Dask nanny writes its workers' variables into the
    environment of the process that starts it, and leaves them there (dask/distributed#6749),
    where every later subprocess would inherit them."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _loopback_cluster_options(n_workers):
    """``distributed.LocalCluster`` keyword arguments for a cluster of this machine alone:
    single-threaded worker processes, every port on loopback, quiet logs.  (The bench and a
    test build such a cluster with Dask's default worker environment, to compare.)"""
    return dict(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address="127.0.0.1:0", silence_logs=40)  # a free port: no fixed one to clash on


@contextlib.contextmanager
def local_dask_cluster(*, n_workers=2, worker_malloc="suite"):
    r"""A ``distributed.LocalCluster`` on loopback, set up as this suite wants its workers.

    ``n_workers`` single-threaded worker processes, quiet logs, every port on loopback (the
    dashboard on a free one), and the suite's glibc thresholds in the workers
    (:data:`~stats.engine.malloc.MALLOC_ENVIRON`; Dask's default
    ``MALLOC_TRIM_THRESHOLD_=65536`` costs these simulations 1.5x).  The environment of
    this process is left as it was found.  Yields the cluster; pass
    ``cluster.scheduler_address`` as ``scheduler=`` (or to ``verify --scheduler``).
    ``worker_malloc="dask"`` leaves the workers Dask's default environment instead (to
    measure or test what it costs).
    """
    n_workers = check_integer(n_workers, "n_workers", minimum=1)
    if worker_malloc not in ("suite", "dask"):
        raise ValueError(f"worker_malloc must be 'suite' or 'dask'; got {worker_malloc!r}")
    try:
        import dask
        from distributed import LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise RuntimeError("a Dask cluster needs the 'dask' extra: pip install -e '.[dask]'") from exc
    # The nannies read their configuration when they are built: the setting is scoped to
    # that, so clusters the caller builds meanwhile keep Dask's defaults.
    ours = worker_malloc == "suite"
    settings = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in MALLOC_ENVIRON.items()} if ours else {}
    written = {*dask.config.get("distributed.nanny.pre-spawn-environ"), *MALLOC_ENVIRON, "PYTHONHASHSEED", "__DASK_PARENT_PID"}
    before = {k: os.environ.get(k) for k in written}
    try:
        with _preserved_environ(), dask.config.set(settings):
            for k in MALLOC_ENVIRON if ours else ():
                os.environ.pop(k, None)  # an inherited setting would win over the config
            cluster = LocalCluster(**_loopback_cluster_options(n_workers))
        try:
            yield cluster
        finally:
            cluster.close()
    finally:
        # A nanny that restarted a worker meanwhile wrote its variables again: put them back.
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_simulations(
    jobs,
    *,
    seed,
    formulas,
    workers=1,
    scheduler=None,
    progress=False,
    chunk_size=DEFAULT_CHUNK_SIZE,
    desc="simulating",
    record_errors=False,
    after_submit=None,
    task_numbers=TASK_NUMBERS,
):
    """Run every :class:`Job`; returns ``{job.key: SimResult}``.

    ``workers`` processes on this machine (1: in this process), or the Dask cluster at
    ``scheduler`` (an address such as ``"tcp://10.0.0.5:8786"``, or a
    ``distributed.Client``) when given.  The result does not depend on either.  A
    simulation that raises re-raises here, or with ``record_errors=True`` comes back as
    a :class:`SimFailure`.  ``after_submit`` is called once every task has been handed out
    (workers running), for work this process can do meanwhile.  ``task_numbers`` is about
    how many random numbers a task draws (default :data:`TASK_NUMBERS`; 1: one block per
    task, as the bench measures the scheduler's overhead by); it changes how the blocks are
    grouped, never the numbers.
    """
    task_numbers = check_integer(task_numbers, "task_numbers")
    jobs = list(jobs)
    keys = [job.key for job in jobs]
    if len(set(keys)) != len(keys):
        raise ValueError("each simulation may appear in one job only")
    tasks = _tasks(jobs, seed, formulas, chunk_size, task_numbers)
    total = sum(t.cost for t in tasks)
    with _progress(total, progress, desc) as bar:
        if scheduler is not None:
            if after_submit is not None:
                after_submit()  # the cluster's workers are other processes: no fork here
            results = _execute_dask(tasks, scheduler, bar)
        else:
            results = _execute_local(tasks, workers, bar, after_submit)
    out = {}
    for j, job in enumerate(jobs):
        parts = [results[k][0] for k in sorted(results) if k[0] == j]
        seconds = sum(results[k][1] for k in results if k[0] == j)
        failed = [p for p in parts if isinstance(p, _Failed)]
        if failed:
            if not record_errors:
                raise RuntimeError(f"simulation {job.key} failed: {failed[0].message}")
            out[job.key] = SimFailure(job.key, failed[0].message)
            continue
        blocks = [b for p in parts for b in p]
        if len(blocks) != block_count(job.sim, job.n):
            raise RuntimeError(f"{job.sim.key}: {len(blocks)} blocks came back, expected {block_count(job.sim, job.n)}")
        merged = dict(blocks[0][0])
        for summaries, _ in blocks[1:]:
            for name in merged:
                merged[name] = merge_row_summaries(merged[name], summaries[name])
        samples = {}
        if job.keep:
            samples = {name: np.concatenate([kept[name] for _, kept in blocks]) for name in job.keep}
        out[job.key] = SimResult(job.sim, int(job.n), merged, samples, seconds)
    return out


def run_simulation(sim, n, *, seed, formulas, keep=(), **kwargs):
    """One simulation (see :func:`run_simulations`) with the implementations ``formulas``
    (``stats.run_simulation`` defaults them to :data:`stats.formulas.FORMULAS`)."""
    n = check_integer(n, "n", minimum=1)
    result = run_simulations([Job(sim, n, frozenset(keep))], seed=seed, formulas=formulas, **kwargs)[sim.key]
    return result
