"""Section "What large scores do to the softmax": the winner's weight bound."""

from __future__ import annotations

from ...models.saturation import SaturationSim
from ..check_builders import Measure, identity, stated_exact
from ..headings import LARGE
from ..claim import Claim

SECTION = LARGE


def claims():
    sims = [SaturationSim(d, 32, sc) for d in (4, 64, 1024) for sc in ("none", "sqrt")]
    return (
        Claim(
            "winner-bound",
            SECTION,
            "If the largest score beats the runner-up by a gap g, the winner's weight is at least e^g/(e^g + T - 1), "
            "whatever the other scores are.",
            "max_j a_j >= e^g / (e^g + T - 1), g = s_(1) - s_(2)",
            tuple(
                identity(f"d_k={s.d_k}, {s.scaling}, T=32", Measure(s, "winner_bound"),
                         note="tolerance 4(T + 4)u, u the float64 unit roundoff")
                for s in sims
            ),
        ),
        Claim(
            "winner-bound-value",
            SECTION,
            "For a gap of 10 and T = 32 keys the bound is 0.9986.",
            "e^10 / (e^10 + 31) = 0.9986",
            (stated_exact("gap 10, T=32", "0.9986", lambda F: float(F.winner_bound(10.0, 32)), uses=("winner_bound",),
                          macro="winnerBoundGapTen"),),
        ),
    )


CLAIMS = claims()
