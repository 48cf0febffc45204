"""A fresh head's saturation: the claims (:mod:`stats.claims.statements.saturation`,
:mod:`~stats.claims.statements.asymptotics`), the text's table, and the studies
(``analyses/saturation.py``, ``analyses/asymptotics.py``)."""

from __future__ import annotations

#: Keys per row: the section's measurement.
T = 32
#: Widths at which the text states the scaled head's numbers.
SCALED_WIDTHS = (4, 16, 64, 256, 1024)

#: The section's table, the one place its numbers are typed: (statistic, scaling, d_k, the
#: text's number, the corrected number where the text's is an erratum).  The claims, the
#: saturation study's figure and the tests read it from here.
STATED_TABLE = (
    ("max_weight", "none", 4, "0.35", "0.34"),
    ("max_weight", "none", 1024, "0.96", "0.95"),
    *(("max_weight", "sqrt", d, "0.16", None) for d in SCALED_WIDTHS),
    *(("trace", "sqrt", d, "0.93", None) for d in SCALED_WIDTHS),
)

#: Widths at which the claims compare Monte Carlo with the exact values, and the two samplers.
CLAIM_MC_WIDTHS = (4, 64, 1024)
#: Score scales eps of saturation's mirror image (scores eps z, eps -> 0).
SMALL_SCORE_EPSILONS = (0.01, 0.03)

#: The study: exact curves over the widths 1 ... 65536 (a draft: every other one up to 4096) ...
STUDY_WIDTHS = tuple(2**k for k in range(0, 17))
STUDY_QUICK_WIDTHS = STUDY_WIDTHS[:13:2]
#: ... and over the numbers of keys at one width (ROW_WIDTH), with Monte Carlo markers ...
STUDY_KEYS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
STUDY_QUICK_KEYS = (2, 8, 32, 128, 1024)
ROW_WIDTH = 512
STUDY_MC_WIDTHS = (4, 16, 64, 256, 1024, 4096)
#: ... of this many rows a point (a draft's) ...
STUDY_MC_ROWS, STUDY_QUICK_MC_ROWS = 400_000, 20_000
#: ... and this many example rows at ROW_WIDTH.
EXAMPLE_ROWS = 12

#: The asymptotic laws: the numbers of keys (claims and study), the widths past Monte Carlo's
#: reach at which the claims test them against the quadrature, and the study's widths (a
#: draft: every other one).
ASYMPTOTIC_KEYS = (8, 32, 128, 1024)
ASYMPTOTIC_WIDE = (4096, 16384, 65536)
ASYMPTOTIC_STUDY_WIDTHS = tuple(2**k for k in range(2, 17))

#: The section's measurement as a procedure (stats.models.saturation_procedure): the printed
#: average over N queries graded against the central 1 - 2 alpha interval of its law ...
PROCEDURE_ALPHA = 0.025
#: ... at these numbers of queries (the grid the claims and the study report; the largest N at
#: which a printed value is still inside is searched over the powers of two up to 2^30) ...
PROCEDURE_NS = (32, 1000, 100_000)
#: ... under these readings of what was drawn: (keys, entries); non-Gaussian entries only at
#: the widths in PROCEDURE_LAW_WIDTHS, where the laws differ (beyond, the scores are normal to O(1/d_k)) ...
PROCEDURE_READINGS = tuple((keys, law) for law in ("gaussian", "rademacher", "uniform") for keys in ("fresh", "shared"))
PROCEDURE_LAW_WIDTHS = (4,)
#: ... from this many outer units (key sets) of this many queries each (a draft's).
PROCEDURE_SIZE = dict(key_sets=1600, inner=512)
PROCEDURE_QUICK_SIZE = dict(key_sets=200, inner=256)
#: The widths whose printed numbers are graded: the two ends of the table.
PROCEDURE_WIDTHS = (4, 1024)

#: "Most rows are nearly one-hot" (the opening, d_k = 512 unscaled) against the number of keys:
#: the study's grid and the claims' two sides of the T where P(max a > 0.99) falls below 1/2.
ONE_HOT_KEYS = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
ONE_HOT_ROWS, ONE_HOT_QUICK_ROWS = 20_000_000, 2_000_000  # score draws a point (rows * T)
ONE_HOT_HOLDS_AT, ONE_HOT_FAILS_AT = 128, 4096
