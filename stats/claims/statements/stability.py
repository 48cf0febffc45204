"""Section "A vectorized implementation, and why stability is not optional": where the
naive softmax overflows in float16, bfloat16 and float32, and why the stable one never does."""

from __future__ import annotations

import math

import numpy as np

from ...exact.attention import naive_softmax
from ...exact.formats import FORMATS, exp_overflow_threshold, float_format, format_max, unit_roundoff
from ...models.problems import StableSoftmaxSim
from ..check_builders import Measure, Stated, exact, identity, stated_exact
from ..headings import STABILITY
from ..claim import Claim

SECTION = STABILITY


def _underflow_bound_over_u(dtype, n_keys=32):
    def value(F):
        u = unit_roundoff(dtype)
        return (n_keys - 1) * float(np.finfo(float_format(dtype)).smallest_subnormal) ** (1.0 / (1.0 + u)) / u

    return value


def _cutoff(dtype):
    return lambda F: F.overflow_cutoff(float(format_max(dtype)))


def _threshold_is_next_value(dtype):
    """The first overflowing score is ln(max) rounded up to the format: 0 if so."""

    def value(F):
        dt = float_format(dtype)
        c = F.overflow_cutoff(float(format_max(dt)))
        up = np.array(c, dtype=dt)
        if float(up) < c:
            up = np.nextafter(up, np.array(np.inf, dtype=dt))
        return float(F.overflow_threshold(dtype)) - float(up)

    return value


def _naive_fails_at_12(F):

    row = np.zeros(32, dtype=np.float16)
    row[0] = 12
    return 0.0 if np.all(np.isfinite(naive_softmax(row))) else 1.0


def _torch_bf16_threshold(F):
    import torch

    x = torch.tensor(float(exp_overflow_threshold("bfloat16")), dtype=torch.bfloat16)
    below = torch.nextafter(x, torch.tensor(-math.inf, dtype=torch.bfloat16))
    ok = bool(torch.isinf(torch.exp(x))) and not bool(torch.isinf(torch.exp(below)))
    return float(x) - float(exp_overflow_threshold("bfloat16")) if ok else math.inf


def claims():
    same = Stated.between("0 (the same number)", 0.0, np.nextafter(0.0, 1.0))
    return (
        Claim(
            "overflow-cutoffs",
            SECTION,
            "The naive exp overflows float16 past ln 65504 ~ 11.09 (e^12 ~ 163,000 exceeds the largest float16, 65,504, "
            "so a score of 12 already fails), and float32 past about 88.7.",
            "cutoff = ln(largest finite number): 11.09 (float16), 88.7 (float32)",
            (
                stated_exact("largest float16", "65504", lambda F: float(format_max("float16")), uses=(), unit=1,
                             macro="floatSixteenMax"),
                stated_exact("ln 65504", "11.09", _cutoff("float16"), uses=("overflow_cutoff",), macro="expCutoffFloatSixteen"),
                stated_exact("e^12", "163,000", lambda F: math.exp(12.0), uses=(), unit=1000, macro="expTwelve"),
                exact("naive float16 softmax fails at a score of 12", Stated.between("fails (1)", 0.5, 1.5), _naive_fails_at_12,
                      uses=()),
                stated_exact("float32 cutoff", "88.7", _cutoff("float32"), uses=("overflow_cutoff",), macro="expCutoffFloatThirtyTwo"),
            )
            + tuple(
                exact(f"first overflowing {dt} score is ln(max) rounded up, {dt}", same, _threshold_is_next_value(dt),
                      uses=("overflow_cutoff", "overflow_threshold"))
                for dt in FORMATS
            )
            + (
                exact("bfloat16 threshold agrees with torch.bfloat16", same, _torch_bf16_threshold, uses=(), requires=("torch",)),
            ),
        ),
        Claim(
            "stable-softmax-never-overflows",
            SECTION,
            "Subtracting the row maximum fixes overflow completely: the largest exponent becomes e^0 = 1, the "
            "denominator is at least 1, and the weights are finite and sum to 1 in every format.",
            "sum_j exp(s_j - max s) >= 1; softmax finite; sum = 1 within 4(T + 2)u of the format",
            tuple(identity(f"{name}, {dt}", Measure(StableSoftmaxSim(dt), name))
                  for dt in FORMATS for name in ("finite", "denominator", "sums_to_one")),
        ),
        Claim(
            "underflow-harmless",
            SECTION,
            "After subtracting the maximum, small exponentials can still underflow to zero, and that is harmless: the "
            "weight mass they carry is at most (T - 1) times the format's smallest subnormal number (a bound checked on "
            "every row, of scores up to the format's largest number), which is below the format's unit roundoff u: less "
            "than the rounding error of any weight larger than bound/u (0.004 in float16, 1e-36 in bfloat16 and "
            "float32), so no weight that matters changes by more than its own rounding.",
            "sum_{j: fl(a_j) = 0} a_j <= (T - 1) lambda^(1/(1+u)) < u, lambda the smallest subnormal, u the unit roundoff",
            tuple(
                check
                for dt in FORMATS
                for check in (
                    identity(f"lost weight mass within (T - 1) lambda^(1/(1+u)), {dt}", Measure(StableSoftmaxSim(dt), "underflow_bound"),
                             note="lambda the smallest subnormal, u the unit roundoff of the format"),
                    exact(f"the bound is below the unit roundoff, {dt}", Stated.at_most("negligible: below u", 1.0),
                          _underflow_bound_over_u(dt), uses=(),
                          note="(T - 1) lambda^(1/(1+u)) / u: the most weight underflow can drop, in units of the rounding "
                               "error every weight already carries"),
                )
            ),
        ),
    )


CLAIMS = claims()
