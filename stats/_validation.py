"""Argument checks shared by the library: each names the argument and what is allowed."""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "MAX_D_K",
    "MAX_KEYS",
    "MAX_ROWS",
    "as_real_array",
    "check_generator",
    "check_seed_sequence",
    "check_alpha",
    "check_choice",
    "check_d_k",
    "check_dropout_p",
    "check_finite",
    "check_integer",
    "check_positive",
    "check_rho",
    "is_finite_real",
]


#: Limits on sizes: beyond them no run could finish (2^40 rows) or allocate one row (2^24 entries).
MAX_ROWS = 1 << 40
MAX_D_K = 1 << 24
MAX_KEYS = 1 << 20  # keys in one softmax row for the exact (quadrature) values


def check_generator(rng, name="rng"):
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator; got {type(rng).__name__}")
    return rng


def check_seed_sequence(seq, name="sim_seed"):
    if not isinstance(seq, np.random.SeedSequence):
        raise TypeError(f"{name} must be a numpy.random.SeedSequence; got {type(seq).__name__}")
    return seq


def as_real_array(x, name, *, dtype=None):
    """Return ``x`` as a floating ndarray, refusing non-numeric input.

    Integer input is promoted to float64; floating input keeps its precision
    (float16 stays float16, which the overflow study relies on).
    """
    try:
        arr = np.asarray(x)
    except OverflowError as exc:
        raise ValueError(f"{name} holds an integer too large for any numeric dtype") from exc
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be a real numeric array; got {type(x).__name__}") from exc
    if arr.dtype.name == "bfloat16":  # ml_dtypes' bfloat16 is not a numpy.floating subtype
        return arr if dtype is None else arr.astype(dtype)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be a real numeric array; got dtype {arr.dtype}")
    if dtype is not None:
        return arr.astype(dtype, copy=False)
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.float64)
    return arr


def check_finite(arr, name):
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf; every entry must be finite")
    return arr


def check_d_k(d_k, name="d_k"):
    if isinstance(d_k, bool) or not isinstance(d_k, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1; got {d_k!r}")
    if not 1 <= d_k <= MAX_D_K:
        raise ValueError(f"{name} must be an integer from 1 to 2^24; got {d_k}")
    return int(d_k)


def check_integer(x, name, *, minimum=1, maximum=MAX_ROWS, what="a positive integer"):
    """``x`` as an int, refusing bools, non-integers and values outside [minimum, maximum] (ValueError)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < minimum:
        raise ValueError(f"{name} must be {what}; got {x!r}")
    if x > maximum:
        raise ValueError(f"{name} must be at most {maximum} (no run could finish); got {x}")
    return int(x)


def check_rho(rho, name="rho"):
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real):
        raise TypeError(f"{name} must be a real number in [-1, 1]; got {rho!r}")
    if not -1.0 <= float(rho) <= 1.0:  # also rejects NaN
        raise ValueError(f"{name} must lie in [-1, 1]; got {rho}")
    return float(rho)


def is_finite_real(x):
    """Whether the real number ``x`` is finite (an integer too large for a float is not)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def check_choice(value, name, allowed):
    """``value`` if it is one of the strings ``allowed``, else a TypeError (not a string) or a
    ValueError, each naming the argument and what is allowed."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {tuple(allowed)}; got {type(value).__name__} {value!r}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}; got {value!r}")
    return value


def check_positive(x, name):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a positive real number; got {x!r}")
    if not (is_finite_real(x) and x > 0):
        raise ValueError(f"{name} must be a positive finite number; got {x}")
    return float(x)


def check_alpha(alpha, name="alpha"):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1); got {alpha!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1; got {alpha}")
    return float(alpha)


def check_dropout_p(p, name="p"):
    """``p`` as a float if it is a dropout rate in [0, 1), else an error naming ``name``."""
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1); got {p!r}")
    if not 0.0 <= float(p) < 1.0:  # also rejects NaN
        raise ValueError(f"{name} must lie in [0, 1); got {p}")
    return float(p)
