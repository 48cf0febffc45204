"""The registry's run settings, in one place: the root seed, the error rates, the sizes."""

from __future__ import annotations

__all__ = ["CHUNK_NUMBERS", "DEFAULT_SEED", "FALSE_PASS", "FAMILY_ALPHA", "MIN_ROWS", "TAIL_BUDGET"]

DEFAULT_SEED = 4_3_2026
#: Family-wise false-fail rate of the whole registry (Holm).
FAMILY_ALPHA = 1e-3
#: Each check's false-pass rate against its target discrepancy, at the design level.
FALSE_PASS = 1e-3
#: The fewest rows a drawn check gets, whatever ``--n-factor`` says; in a draft (``n_factor < 1``)
#: one block where a block of its simulation holds fewer (the widest training runs, 8 a block:
#: at 16 they were 64% of a draft's simulation cost).
MIN_ROWS = 16
#: Random numbers a check may draw to bring its tail error down to TAIL_FRACTION; past it
#: the check keeps the largest affordable n with a conservative p-value (and is untestable
#: only if even that n leaves a tail error above TAIL_LIMIT).
TAIL_BUDGET = float(1 << 27)
#: Random numbers a sampler holds at once (1 MiB of float64).  The numbers do not depend on
#: it (tests/test_engine.py); every registry simulation's row fits in it (the widest,
#: d_k = 4096 with 16 keys, holds 65536).  Smaller chunks, measured, did not help (README,
#: Performance).
CHUNK_NUMBERS = 1 << 17
