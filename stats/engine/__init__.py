"""The engine: seeded block streams, mergeable block summaries, and the executors that
run simulations in this process, on a process pool or on a Dask cluster."""

from .executors import Job, SimFailure, default_workers, local_dask_cluster, pool_context, run_simulation, run_simulations
from .malloc import MALLOC_ENVIRON, tune_malloc
from .simulation import SimResult, Simulation
from .streams import BIT_GENERATOR, BLOCK_ROWS, as_seed_sequence, block_generator, simulation_seed, stream_key
from .summaries import RowSummary, merge_row_summaries, summarize_rows

__all__ = [
    "BIT_GENERATOR",
    "BLOCK_ROWS",
    "MALLOC_ENVIRON",
    "Job",
    "SimFailure",
    "RowSummary",
    "SimResult",
    "Simulation",
    "as_seed_sequence",
    "block_generator",
    "default_workers",
    "local_dask_cluster",
    "merge_row_summaries",
    "pool_context",
    "run_simulation",
    "run_simulations",
    "simulation_seed",
    "stream_key",
    "summarize_rows",
    "tune_malloc",
]
