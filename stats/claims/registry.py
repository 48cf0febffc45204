"""The registry: every claim, in the order of the section's headings, then the engine's
cross-checks.  ``python -m stats list`` prints it; ``python -m stats verify`` runs it."""

from __future__ import annotations

from .statements import (asymptotics, backward, correlation, decisive, derivations, fast_paths, jacobian, large_scores, model, pytorch,
                         saturation, saturation_procedure, sources, stability, training, training_fixes, width)

SECTIONS = (derivations, width, large_scores, jacobian, saturation, saturation_procedure, correlation, stability, backward, pytorch, sources, training, training_fixes, decisive, model, asymptotics, fast_paths)
REGISTRY = tuple(claim for module in SECTIONS for claim in module.CLAIMS)

__all__ = ["REGISTRY", "SECTIONS"]


def _check_ids():
    ids = [c.id for c in REGISTRY]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise RuntimeError(f"duplicate claim ids: {sorted(dupes)}")


_check_ids()
