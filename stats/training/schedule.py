r"""The learning rate's linear warm-up: step t of a warm-up of w steps trains at :math:`\eta\,t/w`.

A warm-up of w >= 1 steps starts at :math:`\eta/w` and reaches :math:`\eta` at step w, then
stays there; w = 0 is none.  Practice rarely starts Adam cold at a large rate (its first
step moves every entry by the whole rate, whatever the gradient's size), so the training
issues compare runs with and without one.  It applies to every optimiser (a factor on
:math:`\eta`: SGD's step, Adam's step and Adafactor's relative step).
"""

from __future__ import annotations

import numbers

from .._validation import check_integer
from .arrays import positive_lr
from .optimizers import MAX_STEPS

__all__ = ["check_warmup", "warmed_lr"]


def check_warmup(warmup, steps):
    """``warmup`` as an int in [0, steps), else a TypeError (not an integer) or a ValueError naming it.

    A warm-up as long as the budget never trains at the rate asked for, so it is refused."""
    steps = check_integer(steps, "steps", maximum=MAX_STEPS)
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral):
        raise TypeError(f"warmup must be an integer number of steps >= 0 (0: none); got {warmup!r}")
    if warmup < 0 or warmup >= steps:
        raise ValueError(f"warmup must be an integer in [0, steps) = [0, {steps}) (0: none); got {warmup}")
    return int(warmup)


def warmed_lr(lr, t, warmup):
    r"""The rate at step ``t`` (1, 2, ...): ``lr * t / warmup`` while ``t < warmup``, else ``lr`` itself.

    ``lr`` is returned unchanged (the same object, the same bits) outside the warm-up; at
    step 1 the factor is exactly :math:`\eta/w` (``lr * 1`` is ``lr``)."""
    lr = positive_lr(lr, 1)
    t = check_integer(t, "t", maximum=MAX_STEPS)
    warmup = check_integer(warmup, "warmup", minimum=0, maximum=MAX_STEPS, what="an integer >= 0 (0: none)")
    if warmup == 0 or t >= warmup:
        return lr
    return lr * t / warmup
