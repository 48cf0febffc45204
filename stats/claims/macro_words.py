"""Numbers spelt for LaTeX macro names, which take letters only (``numbers.tex``'s ``\\recallScaledShareOneTwentyEight``).

A width is spelt as it is said: below 100 in words (``ThirtyTwo``), from 100 as its hundreds then its
last two digits (``OneTwentyEight``, ``TenTwentyFour``; ``FiveOhFive`` for 505, ``TwoHundred`` for 200).
"""

from __future__ import annotations

import numbers

__all__ = ["number_word"]

_UNITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven", "Twelve",
          "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen")
_TENS = ("", "", "Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety")


def _below_hundred(n):
    if n < 20:
        return _UNITS[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens] + (_UNITS[unit] if unit else "")


def number_word(n):
    """``n`` (an integer, 1 <= n < 10000) spelt in capitalised words as it is said: ``number_word(128)`` is
    ``'OneTwentyEight'``.  Distinct numbers give distinct words."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"number_word: n must be an integer; got {n!r} ({type(n).__name__})")
    n = int(n)
    if not 1 <= n < 10000:
        raise ValueError(f"number_word: n must lie in [1, 9999] to be spelt in a macro name; got {n}")
    if n < 100:
        return _below_hundred(n)
    hundreds, rest = divmod(n, 100)
    if rest == 0:
        return _below_hundred(hundreds) + "Hundred"
    return _below_hundred(hundreds) + ("Oh" if rest < 10 else "") + _below_hundred(rest)
