"""Section "In PyTorch": attention dropout as dropout_p applies it."""

from __future__ import annotations

import math

from ...models.dropout import DropoutSim
from ..build import Measure, identity, mean
from ..schema import Claim

SECTION = "In PyTorch"
P = 0.1


def claims():
    sd = math.sqrt(P / (1 - P))  # a bound for the row sum, exact for one weight's ratio
    checks = []
    for backend in ("numpy", "torch"):
        sim = DropoutSim(P, 32, backend)
        req = ("torch",) if backend == "torch" else ()
        name = "stats.dropout_weights" if backend == "numpy" else "torch.nn.functional.dropout"
        checks += [
            mean(f"row sum, {name}", Measure(sim, "row_sum"), lambda F: 1.0, uses=(), target=0.005, relative=False,
                 sd=sd, tail_index=math.inf, requires=req),
            mean(f"one weight's expectation, {name}", Measure(sim, "first_ratio"), lambda F: 1.0, uses=(), target=0.01,
                 relative=False, sd=sd, tail_index=math.inf, requires=req),
            identity(f"values are 0 or a/(1 - p), {name}", Measure(sim, "values"), requires=req),
        ]
    return (
        Claim(
            "dropout-unbiased",
            SECTION,
            "dropout_p zeroes attention weights at random and rescales the rest by 1/(1 - p), so every weight keeps its "
            "expectation and each row's expected sum stays 1 (p = 0.1, as GPT-2 and BERT use).",
            "E[dropout(a)_j] = a_j; E[sum_j dropout(a)_j] = 1",
            tuple(checks),
        ),
    )


CLAIMS = claims()
