"""One module per study.  Each has ``simulate(out, *, seed, quick, workers, scheduler)``, writing tidy
data under ``out/data/<study>/`` (with a checksummed manifest, written last; ``scheduler``, a Dask
address or client, draws its engine simulations and rate searches on that cluster, the same bytes;
a study that times this machine or computes exact values runs here whatever it says), and
``figures(out)``, drawing its figures from that data alone; ``render`` saves them.  A
restyle therefore never re-runs a simulation.  ``FIGURES`` gives each figure's width,
caption and the claims it supports; a study that names an ``EVIDENCE`` profile is built
(and its figures shown) only under that profile (:func:`profile_studies`)."""

from . import (
    asymptotics,
    backward_cost,
    coordinate_check,
    decisive_widths,
    gradient_flow,
    jacobian_spectra,
    mup_transfer,
    overflow,
    qknorm_growth,
    recall_widths,
    saturation,
    saturation_readings,
    score_moments,
    t5_folding,
    t5_steps,
    text_transfer,
    text_widths,
    training,
)

ANALYSES = {
    m.STUDY: m
    for m in (score_moments, saturation, saturation_readings, jacobian_spectra, gradient_flow, t5_steps, training, decisive_widths, mup_transfer, qknorm_growth,
              coordinate_check, text_transfer, text_widths, recall_widths, t5_folding, overflow, backward_cost, asymptotics)
}


def profile_studies(profile=None):
    """The studies the evidence ``profile`` builds (default: the environment's,
    :func:`stats.settings.decisive.decisive_profile`): every study but those that name another profile."""
    from stats.settings.decisive import decisive_profile

    name = decisive_profile(profile).name
    return [study for study, m in ANALYSES.items() if getattr(m, "EVIDENCE", name) == name]


def all_figures(profile=None):
    """``{figure name: (study, spec)}`` over the studies of the evidence ``profile``, in page order."""
    return {name: (study, spec) for study in profile_studies(profile) for name, spec in ANALYSES[study].FIGURES.items()}


def render(out, study, *, draft=None):
    """Draw a study's figures from its data and save them (PNG and PDF, and a captioned
    one-page PDF for ``figures.pdf``); returns the paths of the figures."""
    from pathlib import Path

    from ._data import read_manifest
    from ._style import save, save_captioned

    out = Path(out)
    module = ANALYSES[study]
    manifest = read_manifest(out, study)
    draft = manifest.get("quick", False) if draft is None else draft
    paths = []
    for name, fig in module.figures(out).items():
        title = name.replace("_", " ")
        paths += save(fig, out, name, title=title, draft=draft, close=False)
        save_captioned(fig, out, name, module.FIGURES[name]["caption"], title=title, draft=draft)
    return paths


__all__ = ["ANALYSES", "all_figures", "profile_studies", "render"]
