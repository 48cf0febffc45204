"""The decisive training cells (stats/settings/decisive.py, stats/claims/statements/decisive.py):
the profiles say at which widths, the full profile trains at the widths the text names with the
control, and a recorded finding names a cell its profile runs.  The searches are stood in for
here (a full-profile search trains at d_k = 1024: conftest's ``stand_in_search``); the default profile's real claims run in
`make reports` and the slow tier."""

import pytest

from stats.claims.statements import decisive
from stats.settings.decisive import (CONTROL_ONLY_OPTIMIZERS, DECISIVE_OPTIMIZERS, DECISIVE_PROFILES, EVIDENCE_VARIABLE,
                                     PRACTICE_OPTIMIZERS, DecisiveProfile, decisive_profile)


def test_the_profile_is_read_from_the_environment_and_refused_by_name(monkeypatch):
    monkeypatch.delenv(EVIDENCE_VARIABLE, raising=False)
    assert decisive_profile().name == "default"
    monkeypatch.setenv(EVIDENCE_VARIABLE, "full")
    assert decisive_profile().name == "full"
    monkeypatch.setenv(EVIDENCE_VARIABLE, "fulll")
    with pytest.raises(ValueError, match=EVIDENCE_VARIABLE):
        decisive_profile()
    with pytest.raises(ValueError, match="name"):
        decisive_profile("huge")


def test_the_full_profile_trains_at_the_text_s_widths_with_the_control(stand_in_search):
    full = DECISIVE_PROFILES["full"]
    assert {(512, 512), (1024, 1024)} <= set(full.shapes)  # d_model = d_k at the opening's and the table's widths
    assert any(dm != dk for dk, dm in full.shapes)  # and one other ratio
    claims = decisive.claims(full)
    sims = [ch.measure.sim for c in claims for ch in c.checks if getattr(ch, "measure", None) is not None]
    assert {(s.d_k, s.d_model) for s in sims} == set(full.shapes)
    assert {s.scaling for s in sims} == {"none", "sqrt", "t5"}
    assert {(s.optimizer, s.warmup) for s in sims} == set(DECISIVE_OPTIMIZERS) | set(CONTROL_ONLY_OPTIMIZERS)
    assert all(s.dtype == "float32" and s.stop_when_learned and s.steps == full.budget for s in sims)
    # The control's comparison: the unscaled head at the control's searched rate, under every variant.
    control = next(c for c in claims if c.id == "decisive-control")
    assert sum("at the control's best" in ch.label for ch in control.checks) == len(full.cells())
    # The opening's width and the table's get every variant; the other ratio Adam with the warm-up, and the claims say so.
    for shape in ((512, 512), (1024, 1024)):
        assert {(s.optimizer, s.warmup) for s in sims if (s.d_k, s.d_model) == shape} == \
            set(DECISIVE_OPTIMIZERS) | set(CONTROL_ONLY_OPTIMIZERS)
    assert full.practice_only == ((512, 2048),)
    for shape in full.practice_only:
        assert {(s.optimizer, s.warmup) for s in sims if (s.d_k, s.d_model) == shape} == set(PRACTICE_OPTIMIZERS)
    assert all("Adam with the warm-up only" in c.statement for c in claims if c.id in ("decisive-unscaled-learns", "decisive-control"))
    # The frozen pattern is read off the very runs of the unscaled head's own-rate checks: no runs of its own.
    frozen = next(c for c in claims if c.id == "decisive-frozen")
    learns = next(c for c in claims if c.id == "decisive-unscaled-learns")
    own = {ch.measure.sim for ch in learns.checks if "own best" in ch.label and ch.label.startswith("unscaled")}
    assert {ch.measure.sim for ch in frozen.checks} == own and len(own) == len(full.cells())
    assert all(ch.measure.statistic == "pattern_frozen_early" and "at step 250" in ch.label for ch in frozen.checks)
    # A search that ended at an edge is labelled a bound, never passed off as an optimum.
    assert any("(search edge: a bound)" in ch.label and "d_k=1024" in ch.label for c in claims for ch in c.checks)
    # The full profile's findings, recorded after its run: the unscaled head learns at its own rate and at
    # the control's, and its pattern moves, in every cell; at the scaled head's rate nothing is recorded.
    graded = {(c.id, ch.label) for c in claims for ch in c.checks if ch.erratum}
    assert all(("own best" in label and label.startswith("unscaled")) or "at the control's best" in label
               for _, label in graded)
    assert not any("at the scaled head's best" in label for _, label in graded)
    assert len(graded) == 3 * len(full.cells())
    assert {kw["seed"] for kw in stand_in_search} == {full.seed}
    # The searches the claims ask for are the profile's list, which the widths study reads.
    asked = {((kw["d_k"], kw["d_model"]), kw["optimizer"], kw["options"]["warmup"], kw["scaling"]) for kw in stand_in_search}
    assert asked == set(full.searches()) and len(full.searches()) == len(asked)


def test_every_recorded_finding_names_a_cell_its_profile_runs():
    for name, groups in decisive.RECORDED.items():
        profile = DECISIVE_PROFILES[name]
        assert set(groups) <= {decisive.OWN, decisive.SHARED, decisive.AT_CONTROL, decisive.FROZEN}
        for cells in groups.values():
            assert cells <= set(profile.cells())


def test_the_default_registry_holds_the_default_profile_s_claims():
    ids = {c.id for c in decisive.CLAIMS}
    assert ids == {"decisive-unscaled-learns", "decisive-control", "decisive-frozen", "decisive-correlated-after"}
    labels = [ch.label for c in decisive.CLAIMS for ch in c.checks]
    assert all(f"d_k={DECISIVE_PROFILES['default'].shapes[0][0]}" in label for label in labels)


def test_a_profile_trains_its_practice_only_shapes_at_shapes_it_has():
    with pytest.raises(ValueError, match="practice_only"):
        DecisiveProfile(name="x", shapes=((32, 32),), budget=400, dtype="float32", coarse_runs=2, refine_runs=2,
                        confirm_runs=2, seed=1, practice_only=((64, 64),))


def test_a_bad_profile_is_one_line_and_exit_2_from_the_cli_and_make():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, EVIDENCE_VARIABLE: "fulll"}
    r = subprocess.run([sys.executable, "-m", "stats", "list"], cwd=root, env=env, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and EVIDENCE_VARIABLE in r.stderr
    r = subprocess.run(["make", "-n", "venv", "EVIDENCE=fulll"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 2 and "EVIDENCE must be default or full" in r.stderr


def test_the_widths_study_reads_every_search_of_the_profile_with_its_errors(quick_report):
    """analyses/decisive_widths.py: one window row per search the claims ran, every rate of every stage a
    curve point, the chosen rate among them, and each number beside its standard error."""
    from analyses._data import read_manifest, read_table
    from analyses.decisive_widths import STUDY

    profile = DECISIVE_PROFILES[read_manifest(quick_report, STUDY)["profile"]]
    windows, curves = read_table(quick_report, STUDY, "windows"), read_table(quick_report, STUDY, "curves")
    cells = {(dk, dm, o, w, h) for (dk, dm), o, w, h in profile.searches()}
    assert set(windows[["d_k", "d_model", "optimizer", "warmup", "head"]].itertuples(index=False, name=None)) == cells
    assert len(windows) == len(cells)
    for value, error in (("sensitivity", "sensitivity_mcse"), ("window_decades", "window_mcse"),
                         ("steps_rmean", "steps_rmean_se"), ("share_learned", "share_learned_se")):
        assert windows[value].notna().all() and windows[error].ge(0).all(), value
    chosen = curves[curves.chosen].groupby(["d_k", "d_model", "optimizer", "warmup", "head"]).lr.first()
    assert len(chosen) == len(cells)
    assert (curves.steps_mean <= profile.budget + 1).all() and (curves.steps_se >= 0).all()
    # a rate the search gave up on is never the one chosen, and says after which step it gave up
    assert (curves[curves.chosen].abandoned == 0).all() and curves.abandoned.between(0, curves.runs).all()
    assert curves[curves.abandoned > 0].give_up_after.between(1, profile.budget).all()
    for value, error in (("logit_mean", "logit_se"), ("cosine_mean", "cosine_se")):
        assert windows[value].notna().all() and windows[error].ge(0).all(), value
    assert windows.cosine_mean.between(-1, 1).all()
    # the pattern over time: every searched head at its chosen rate, at every checkpoint, step 0 its own choice
    frozen = read_table(quick_report, STUDY, "frozen")
    from stats.training import CHECKPOINTS, checkpoint_steps

    assert set(frozen[["d_k", "d_model", "optimizer", "warmup", "head"]].itertuples(index=False, name=None)) == cells
    assert len(frozen) == len(cells) * CHECKPOINTS
    assert sorted(set(frozen.step)) == sorted(set(checkpoint_steps(profile.budget)))
    assert (frozen[frozen.checkpoint == 0].share_mean == 1).all() and frozen.share_mean.between(0, 1).all()
    assert frozen.share_se.ge(0).all()
    rates = frozen.groupby(["d_k", "d_model", "optimizer", "warmup", "head"]).rate.first()
    assert rates.to_dict() == windows.set_index(["d_k", "d_model", "optimizer", "warmup", "head"]).rate.to_dict()
