"""A fresh head: the scores' moments and law, correlated queries and keys, the softmax's
Jacobian and the gradient that reaches W_Q and W_K -- the claims
(:mod:`stats.claims.statements.width`, :mod:`~stats.claims.statements.correlation`,
:mod:`~stats.claims.statements.jacobian`) and the studies (``analyses/score_moments.py``,
``analyses/jacobian_spectra.py``, ``analyses/gradient_flow.py``)."""

from __future__ import annotations

#: The entry laws, by name, in the order the claims and the study sweep them.
LAW_NAMES = ("gaussian", "rademacher", "uniform", "student_t")

# ---------------------------------------------------------------- the claims

#: The entries' scales: unequal, and sigma_q*sigma_k != sigma_q^2*sigma_k^2.
SIGMA_Q, SIGMA_K = 1.5, 0.8
#: Widths of the variance sweep and of the cosine's law.
MOMENT_WIDTHS = (1, 8, 64, 512, 4096)
COSINE_WIDTHS = (4, 64, 1024, 16384)
#: The fastest exact sampler for each law (the engine's fast paths, cross-checked in
#: "Engine fast paths"); the exact-law claim always draws directly.
FAST_METHOD = {"gaussian": "chi2", "rademacher": "bitpacked", "uniform": "direct", "student_t": "mixture"}
#: From this width on the sweep draws K keys per query and tests E[mean_j s_j^2] = Var(s):
#: the query's draws are shared by K scores, and keys sharing it are nearly independent.
SHARED_FROM, SHARED_KEYS = 512, 16
#: Correlated queries and keys: the correlations and widths of the moment claims, the
#: heavy-tailed law's degrees of freedom (the 8 moments a correlated variance test needs),
#: QK-norm's widths and correlations, T5's widths at initialisation, and the number of keys
#: that sets QK-norm's gain.
RHOS = (0.5, 0.9)
CORR_WIDTHS = (4, 64)
HEAVY_TAIL_DF = 18
QK_WIDTHS = (4, 64, 1024, 16384)
QK_RHOS = (0.5, 0.9)
T5_WIDTHS = (16, 64, 256)
GAIN_KEYS = 32
#: The Jacobian's spectrum on fresh heads, and the heads whose gradients reach W_Q and W_K.
SPECTRUM_WIDTHS = (4, 64, 1024)
SPECTRUM_KEYS = 32
HEAD_WIDTHS = (8, 256, 1024)

# ---------------------------------------------------------------- the studies

#: ``analyses/score_moments.py``: widths, the sampler per law, the histograms' (d_k, rho),
#: the correlation, rows (the moment sweep: about SCORE_NUMBERS random numbers a point, at
#: most SCORE_ROWS_CAP rows; the histograms and the correlated sweep: SCORE_ROWS, a draft's).
SCORE_WIDTHS = tuple(2**k for k in range(0, 13))
SCORE_FAST = {"gaussian": "chi2", "rademacher": "bitpacked", "uniform": "direct", "student_t": "direct"}
SCORE_HIST = ((1, 0.0), (1, 0.6), (512, 0.0), (512, 0.6))
SCORE_RHO = 0.5
SCORE_NUMBERS, SCORE_ROWS_CAP = 4e7, 100_000
SCORE_ROWS, SCORE_QUICK_ROWS = 200_000, 20_000
#: ``analyses/jacobian_spectra.py``: keys, widths, rows a point (a draft's).
SPECTRA_KEYS = 32
SPECTRA_WIDTHS = (1, 4, 16, 64, 256, 1024, 4096, 16384)
SPECTRA_ROWS, SPECTRA_QUICK_ROWS = 20_000, 2_000
#: ``analyses/gradient_flow.py``: widths, heads a point (a draft's).
FLOW_WIDTHS = (8, 16, 32, 64, 128, 256, 512, 1024)
FLOW_ROWS, FLOW_QUICK_ROWS = 256, 24
