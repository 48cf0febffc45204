"""The registry's run settings, in one place: the root seed (the experiments' own,
:mod:`stats.settings`), the error rates, the sampling budgets."""

from __future__ import annotations

from ..settings import DEFAULT_SEED

__all__ = ["CALIBRATION_MUTANT_SEEDS", "CALIBRATION_SEEDS", "CHUNK_NUMBERS", "DEFAULT_SEED", "DRAFT_MIN_ROWS", "DRAFT_PILOT_MIN_ROWS", "DRAFT_ROW_NUMBERS", "FALSE_PASS",
           "FAMILY_ALPHA", "MIN_ROWS", "TAIL_BUDGET"]

#: ``make calibrate``'s seeds, and how many of them (the first) also run the mutants, which are
#: most of its time (docs/performance.md): what each count detects is in its tables.
CALIBRATION_SEEDS = 200
CALIBRATION_MUTANT_SEEDS = 10
#: Family-wise false-fail rate of the whole registry (Holm).
FAMILY_ALPHA = 1e-3
#: Each check's false-pass rate against its target discrepancy, at the design level.
FALSE_PASS = 1e-3
#: The fewest rows a drawn check gets, whatever ``--n-factor`` says; in a draft (``n_factor < 1``)
#: fewer where a row is costly: no more than one block of its simulation, nor than
#: DRAFT_ROW_NUMBERS random numbers' worth of rows, and at least DRAFT_MIN_ROWS.  The costly
#: rows are 150-step trainings with d_model = 256 (64-256 million numbers a run) and the muP
#: sweeps at d_k = 128 (55 million): at 8-16 runs they were two thirds of a draft's simulation
#: cost, and a draft's share checks cannot reject at 16 runs either (README, "What training shows").
MIN_ROWS = 16
DRAFT_ROW_NUMBERS = float(1 << 28)
DRAFT_MIN_ROWS = 4
#: A draft's pilot of a costly simulation holds DRAFT_ROW_NUMBERS random numbers' worth of rows,
#: and at least DRAFT_PILOT_MIN_ROWS (a build's pilot holds at least 200): a 200-row pilot of the
#: muP sweeps at d_k = 128 cost a draft most of its verify, to size checks the draft then drew at
#: 16-19 rows (docs/performance.md).  A smaller pilot only widens the upper bound on its sd, so
#: the draft's design asks more rows, never fewer than the check needs.
DRAFT_PILOT_MIN_ROWS = 64
#: Random numbers a check may draw to bring its tail error down to TAIL_FRACTION; past it
#: the check keeps the largest affordable n with a conservative p-value (and is untestable
#: only if even that n leaves a tail error above TAIL_LIMIT).
TAIL_BUDGET = float(1 << 27)
#: Random numbers a sampler holds at once (1 MiB of float64).  The numbers do not depend on
#: it (tests/test_engine.py); every registry simulation's row fits in it (the widest,
#: d_k = 4096 with 16 keys, holds 65536).  Smaller chunks, measured, did not help (README,
#: Performance).
CHUNK_NUMBERS = 1 << 17
