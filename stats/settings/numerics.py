"""Floating point and cost: the claims (:mod:`stats.claims.statements.backward`,
:mod:`~stats.claims.statements.pytorch`) and the studies (``analyses/overflow.py``,
``analyses/backward_cost.py``)."""

from __future__ import annotations

#: The memory measurement: one head of width 16 (d_k = d_v), tiles of 32 keys, T_q = T_k = T.
MEMORY_SIDES, MEMORY_WIDTH, MEMORY_BLOCK = (256, 1024), 16, 32
#: Attention dropout's probability in the PyTorch claims.
DROPOUT_P = 0.1
#: Keys the CPU's fused kernel takes one block at a time (it splits them into blocks of
#: min(512, T_k)): the long problems run its running maximum and normaliser across three blocks.
LONG_T_K = 1030

#: ``analyses/overflow.py``: scores a row, and points of its grid of largest scores (a draft's).
OVERFLOW_KEYS = 32
OVERFLOW_POINTS, OVERFLOW_QUICK_POINTS = 2000, 500
#: ``analyses/backward_cost.py``: sequence lengths (a draft: the first three), head width, tile,
#: and timing repeats (fewer from COST_WIDE_FROM on, and in a draft).
COST_LENGTHS = (256, 384, 512, 768, 1024, 2048, 4096)
COST_QUICK_LENGTHS = COST_LENGTHS[:3]
COST_WIDTH, COST_BLOCK = 64, 256
COST_REPEATS, COST_WIDE_REPEATS, COST_QUICK_REPEATS, COST_WIDE_FROM = 9, 5, 3, 2048
