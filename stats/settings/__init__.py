"""The experiments' settings, in one place: what is simulated, and how much of it.

Both the claims (:mod:`stats.claims.statements`) and the studies (``analyses``) read their
settings from here, and nothing here imports either (``[tool.importlinter]`` in
pyproject.toml holds it): these modules are declarative tables, with no import beyond the
standard library, so reading a setting costs nothing.

**A setting** says what an experiment runs: its sizes (shapes, widths, numbers of keys),
the values it sweeps (learning-rate grids, the rates it trains at), its step budgets, a
study's run counts (a fixed number of runs whose precision the study reports as an MCSE),
the root seed, the numbers the text states where a study draws them beside the checks
(the saturation table), and the definition of a *pilot* that chooses a setting (its grid,
runs, steps, seed and rule: :data:`training.RATE_PILOT`, run by :mod:`stats.tuning`).

**Not a setting:** a check's statistical design, which says how a check decides, not what
is run: its target discrepancy (e.g. the share checks' ``SHARE_TARGET``), its stated bound,
its sd and tail index, the registry's error rates and sampling budgets
(:mod:`stats.claims.defaults`), and the pilots that size a check
(:mod:`stats.claims.pilots`).  A check's number of rows follows from its design and stays
with it.  A size that a claim names in its sentence and that nothing else reads (``d_k = 8``
of one identity check) stays inline in that statement, next to its label.

Modules: :mod:`.training` (training a head: the training claims and study, and the pilot of
their best learning rates), :mod:`.fixes` (muP, QK-norm and T5's folding in training, and
T5's first step), :mod:`.saturation` (a fresh head's saturation, the text's table, the
asymptotics), :mod:`.fresh` (a fresh head's scores, Jacobian spectra and gradients) and
:mod:`.numerics` (overflow, and the backward pass's measured cost).
"""

__all__ = ["DEFAULT_SEED"]

#: The root seed of every stream of a build (``--seed`` and ``SEED=`` override it).  A pilot
#: that chooses a setting draws on a seed of its own, which ``--seed`` does not move.
DEFAULT_SEED = 4_3_2026
