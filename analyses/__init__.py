"""One module per study.  Each has ``simulate(out)``, writing tidy data under
``out/data``, and ``render(out)``, drawing its figures under ``out/figures`` from that
data alone, so a restyle never re-runs a simulation."""

from . import overflow

ANALYSES = {"overflow": overflow}

__all__ = ["ANALYSES", "overflow"]
