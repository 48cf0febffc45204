r"""Stopping a run once it has learned, giving up on one that cannot learn soon enough, and keeping
a batch to the runs still training.

A run *stops* at the first probed step t at which its held-out probe has been at the
accuracy target at every probe of a stretch that began at least :data:`HOLD_STEPS` steps
before t.  A stopped run is taken out of its batch (:func:`keep_runs`), so it costs nothing
more; each run draws from its own stream, so those left train as they would have.

With a *give-up step* c, a run still training after the stop rule at the first probed step
t >= c + HOLD_STEPS (and t < the budget) is *abandoned*: taken out of the batch, not learned.
Its steps to accuracy, had it gone on, would exceed c: a stretch that began at a probe s <= c
would have stopped it at the first probe at or after s + HOLD_STEPS <= t, and a stretch's start
only ever moves later.  So the rule loses nothing a comparison of restricted steps above c
needs (:func:`stats.lr_search.search_rate` gives up on a rate that can no longer be chosen).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_integer
from .diagnostics import PROBE_EVERY
from .optimizers import MAX_STEPS

__all__ = ["HOLD_STEPS", "check_give_up_after", "check_stop_when_learned", "keep_runs"]

#: The hold window: a run stops once its probe (4 episodes, every 3 steps) has stayed at 90%
#: for this many steps, 21 probes.  Against the budget-relative rule (the last eighth of the
#: budget at 90%) on the same seeds, 48 runs a cell at the claims' budgets
#: (``python -m benchmarks.early_stopping agree``): at d = 64 (150 steps; scaled and unscaled,
#: SGD and Adam) the rules disagree (learned, or its step) on at most 2 runs for any window of
#: 15 to 60 steps; at d = 16 under SGD (600 steps) on 25, 17, 13 and 7 runs for 15, 30, 45
#: and 60, most of them a run that held, dipped once and is dated from its return by the
#: budget rule.  A 16-wide head under Adam at 0.03 hovers at the threshold (final probe
#: 0.913 +- 0.003): the rules disagree on 36 runs at 60 steps and 25 at 150, so there
#: "sustained" depends on the window whatever its length; 60 is the shortest window with the
#: SGD cell under 1 run in 6.
HOLD_STEPS = 60


def check_stop_when_learned(stop_when_learned, steps):
    """``stop_when_learned`` when it is a bool that a budget of ``steps`` can honour, else a TypeError
    or a ValueError naming it: a run can stop no sooner than ``HOLD_STEPS + PROBE_EVERY``
    steps (its first probe at the target, then the hold window), so a shorter budget is refused."""
    steps = check_integer(steps, "steps", maximum=MAX_STEPS)
    if not isinstance(stop_when_learned, bool):
        raise TypeError(f"stop_when_learned must be True or False; got {stop_when_learned!r}")
    if stop_when_learned and steps < HOLD_STEPS + PROBE_EVERY:
        raise ValueError(f"steps must be at least {HOLD_STEPS + PROBE_EVERY} with stop_when_learned (a run stops "
                         f"after holding its accuracy for HOLD_STEPS = {HOLD_STEPS} steps); got {steps}")
    return stop_when_learned


def check_give_up_after(give_up_after, steps, stop_when_learned, *, flag="stop_when_learned"):
    """``give_up_after`` when it is None or a step from 1 to ``steps`` and ``stop_when_learned`` is
    True (only a run that stops once it has learned can be told from one to give up on), else a
    TypeError or a ValueError naming it (and ``flag``, the caller's name for ``stop_when_learned``)."""
    steps = check_integer(steps, "steps", maximum=MAX_STEPS)
    if give_up_after is None:
        return None
    give_up_after = check_integer(give_up_after, "give_up_after", maximum=MAX_STEPS)
    if give_up_after > steps:
        raise ValueError(f"give_up_after must be a step from 1 to the budget, steps = {steps}; got {give_up_after}")
    if stop_when_learned is not True:
        raise ValueError(f"give_up_after needs {flag}=True (a run is given up on when it has not stopped, "
                         f"having learned); got give_up_after={give_up_after} with {flag}={stop_when_learned!r}")
    return give_up_after


def keep_runs(state, keep):
    """``state`` with only the runs ``keep`` (a boolean mask over the batch): every array
    indexed on its first (run) axis; dicts, tuples and lists of them taken apart; a list
    of generators (one per run) filtered."""
    if not (isinstance(keep, np.ndarray) and keep.dtype == bool and keep.ndim == 1):
        raise TypeError(f"keep must be a 1-D boolean array, one entry per run; got {keep!r}")
    return _keep(state, keep)


def _keep(state, keep):
    if isinstance(state, np.ndarray):
        if state.ndim == 0 or state.shape[0] != len(keep):
            raise ValueError(f"state must hold arrays with one row per run ({len(keep)}); got shape {state.shape}")
        return state[keep]
    if isinstance(state, dict):
        return {k: _keep(v, keep) for k, v in state.items()}
    if isinstance(state, tuple):
        return tuple(_keep(v, keep) for v in state)
    if isinstance(state, list):
        if state and all(isinstance(r, np.random.Generator) for r in state):
            if len(state) != len(keep):
                raise ValueError(f"state must hold one generator per run ({len(keep)}); got {len(state)}")
            return [r for r, k in zip(state, keep) if k]
        return [_keep(v, keep) for v in state]
    raise TypeError(f"state must be an array, a dict, tuple or list of them, or a list of generators; got {type(state).__name__}")
