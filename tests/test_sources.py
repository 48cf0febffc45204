"""The documentary kind of check and its records: facts the text states about its sources,
read at those sources (``stats/claims/statements/sources.py``).

Every record names a source of a recognised shape; a record without one, or whose verdict
contradicts what it records, is refused; every recorded erratum's corrected statement holds
by the same record; and the evaluation reproduces each recorded verdict with the network
switched off."""

from __future__ import annotations

import dataclasses
import math
import re
import socket

import pytest

from stats.claims.check_builders import Erratum, Stated, documentary, no, yes
from stats.claims.checks import KINDS, DocumentaryCheck, EvaluationContext, PaperSource, RepoSource
from stats.claims.evaluation import evaluate
from stats.claims.planning import plan
from stats.claims.registry import REGISTRY
from stats.claims.simulating import simulate
from stats.claims.statements import sources
from stats.claims.unchecked import NOT_CHECKABLE
from stats.formulas import FORMULAS

DOCUMENTARY = [(c.id, ch) for c in REGISTRY for ch in c.checks if isinstance(ch, DocumentaryCheck)]
PAPER = PaperSource("Vaswani et al. (2017)", "Attention Is All You Need", "1706.03762", "section 3.2.1, footnote 4")
REPO = RepoSource("huggingface/transformers", "src/transformers/models/bert/configuration_bert.py",
                  "BertConfig defaults", commit="6294b787a53ad369e4f372983188d5bd31a45e8d")


def _entry(**kw):
    base = dict(fact="BERT applies attention dropout at 0.1.", stated=Stated.parse("0.1"), found=0.1, source=REPO,
                source_says="the default is 0.1")
    return documentary("an entry", **{**base, **kw})


def _ctx():
    # No results at all: a documentary check reads none.
    return EvaluationContext(results={}, formulas=FORMULAS, per_test=1e-3, beta=1e-3)


@pytest.fixture
def offline(monkeypatch):
    """Every attempt to open a socket fails: the evaluation must run from the record alone."""
    def refuse(*args, **kwargs):
        raise OSError("network use during a documentary evaluation")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_the_kind_is_registered_and_decided_outright():
    assert KINDS["documentary"] is DocumentaryCheck
    assert DocumentaryCheck.statistical is False and DocumentaryCheck.draws is False
    assert DocumentaryCheck.calibration == "deterministic" and DocumentaryCheck.tail_test is None
    n, sd, how = _entry().power_design(None, 1e-3)
    assert n == 0 and math.isnan(sd) and how == "documentary"
    assert len(DOCUMENTARY) >= 20


@pytest.mark.parametrize("cid, check", DOCUMENTARY, ids=[f"{c}: {ch.label}" for c, ch in DOCUMENTARY])
def test_every_record_names_a_source_of_a_recognised_shape(cid, check):
    s = check.source
    if isinstance(s, PaperSource):
        assert re.fullmatch(r"\d{4}\.\d{4,5}(v\d+)?", s.arxiv)
        assert re.search(r"(section|footnote|table|algorithm|appendix|figure|equation) \S+|abstract", s.locator, re.I)
    else:
        assert isinstance(s, RepoSource)
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", s.repo) and s.path and s.locator
        assert re.fullmatch(r"[0-9a-f]{40}", s.commit) or s.version.strip()
    assert check.fact.strip() and check.source_says.strip()
    assert s.cite() in _ctx_notes(check)


def _ctx_notes(check):
    return check.evaluate(_ctx(), math.nan).notes


@pytest.mark.parametrize("cid, check", DOCUMENTARY, ids=[f"{c}: {ch.label}" for c, ch in DOCUMENTARY])
def test_the_evaluation_gives_the_recorded_verdict_offline(offline, cid, check):
    out = check.evaluate(_ctx(), math.nan)
    assert out.state == ("holds" if check.verdict == "holds" else "refuted"), out.notes
    assert out.numbers["estimate"] == check.found and out.numbers["mcse"] == 0.0
    if check.erratum is not None:
        fixed = check.corrected()
        assert fixed.erratum is None and fixed.verdict == "holds" and fixed.stated is check.erratum.corrected
        assert fixed.evaluate(_ctx(), math.nan).state == "holds"


def test_every_recorded_erratum_has_a_corrected_statement_and_a_sentence():
    recorded = [(cid, ch) for cid, ch in DOCUMENTARY if ch.erratum is not None]
    assert {ch.verdict for _, ch in recorded} == {"erratum", "caveat"}
    for cid, ch in recorded:
        e = ch.erratum
        assert e.kind == ch.verdict and isinstance(e.corrected, Stated) and e.corrected.text.strip()
        assert e.corrected.contains(ch.found) and not ch.stated.contains(ch.found)
        assert e.sentence.strip().endswith(".")


def test_the_run_confirms_the_records():
    ids = [c.id for c in sources.CLAIMS]
    the_plan = plan([c for c in REGISTRY if c.id in ids], seed=3)
    table = evaluate(the_plan, simulate(the_plan, seed=3))
    # Each recorded sentence has its own row, held to the records it rests on (stats.claims.sentences).
    assert set(table["test"]) == {"documentary", "sentence"}
    assert (table.loc[table["test"] == "sentence", "verdict"] == "pass").all()
    table = table[table["test"] == "documentary"]
    assert set(table["verdict"]) == {"pass", "erratum confirmed", "caveat confirmed"}
    rows = table.set_index(["claim", "check"])
    assert rows.loc[("real-model-head-width", "per-head d_k of GPT-3 175B"), "estimate"] == 128
    assert rows.loc[("real-model-head-width", "per-head d_k of GPT-3 175B"), "grade"] == "wrong number"
    assert rows.loc[("vaswani-additive-footnote", "the additive-attention remark is in footnote 4"), "grade"] == "false as stated"
    assert rows.loc[("mixed-precision-softmax-cpu", "CPU autocast: softmax in float32"), "finding"] == "caveat"
    corrected = table[table["check"].str.endswith("[corrected]")]
    assert len(corrected) == sum(ch.erratum is not None for _, ch in DOCUMENTARY)
    assert (corrected["verdict"] == "pass").all()


def test_moved_statements_left_not_checkable():
    moved = {c.id for c in sources.CLAIMS}
    assert moved.isdisjoint({u.id for u in NOT_CHECKABLE})
    assert {"vaswani-footnote-attribution", "vaswani-additive-footnote", "t5-initialisation-code",
            "mixed-precision-softmax", "gpt2-bert-dropout-rate", "recent-llms-no-dropout", "read-vaswani"} <= moved


# ------------------------------------------------------------------ refusals


def test_an_entry_without_a_source_is_refused():
    with pytest.raises(ValueError, match="source="):
        _entry(source=None)
    with pytest.raises(TypeError, match="source must be a PaperSource or a RepoSource"):
        _entry(source="arXiv 1706.03762")


@pytest.mark.parametrize("change, error, match", [
    (dict(stated=0.1), ValueError, "stated="),
    (dict(found=math.nan), ValueError, "found"),
    (dict(found=True), ValueError, "found"),
    (dict(found="0.1"), ValueError, "found"),
    (dict(fact=""), ValueError, "fact"),
    (dict(source_says=" "), ValueError, "source_says"),
    (dict(verdict="true"), ValueError, "verdict"),
])
def test_a_malformed_entry_is_refused_naming_the_field(change, error, match):
    with pytest.raises(error, match=match):
        _entry(**change)


def test_an_entry_whose_verdict_contradicts_its_record_is_refused():
    # The break-it check: take a real record and make its verdict disagree with it.
    cid, holding = next((c, ch) for c, ch in DOCUMENTARY if ch.verdict == "holds")
    with pytest.raises(ValueError, match="contradicts the record"):
        dataclasses.replace(holding, found=holding.found + 1000.0)
    cid, refuted = next((c, ch) for c, ch in DOCUMENTARY if ch.verdict == "erratum")
    with pytest.raises(ValueError, match="verdict 'holds'"):
        dataclasses.replace(refuted, verdict="holds")
    with pytest.raises(ValueError, match="contradicts the record"):
        dataclasses.replace(refuted, found=512.0)
    with pytest.raises(ValueError, match="recorded Erratum of kind 'caveat'"):
        dataclasses.replace(refuted, verdict="caveat")
    with pytest.raises(ValueError, match="needs a recorded Erratum"):
        _entry(found=0.3, verdict="erratum")
    with pytest.raises(ValueError, match="does not contain"):
        _entry(found=0.3, verdict="erratum", erratum=Erratum(Stated.parse("0.5"), "The rate is 0.5."))


@pytest.mark.parametrize("kw, match", [
    (dict(arxiv="1706.376"), "arxiv"),
    (dict(arxiv=1706.03762), "arxiv"),
    (dict(locator="the footnote"), "locator"),
    (dict(locator="the abstracts"), "locator"),
    (dict(locator=""), "locator"),
    (dict(citation=""), "citation"),
    (dict(title=None), "title"),
])
def test_a_paper_source_needs_an_arxiv_id_and_a_locator(kw, match):
    good = dict(citation="A (2020)", title="T", arxiv="2005.14165", locator="table 2.1")
    with pytest.raises((ValueError, TypeError), match=match):
        PaperSource(**{**good, **kw})
    with pytest.raises(TypeError, match="read_via"):
        PaperSource(**good, read_via=None)


@pytest.mark.parametrize("kw, match", [
    (dict(repo="transformers"), "repo"),
    (dict(path="/src/x.py"), "path"),
    (dict(path=""), "path"),
    (dict(locator=""), "locator"),
    (dict(commit="6294b78"), "commit"),
    (dict(commit=""), "commit or the version"),
    (dict(commit=None), "commit"),
])
def test_a_repo_source_needs_a_path_and_a_commit_or_version(kw, match):
    good = dict(repo="pytorch/pytorch", path="aten/src/ATen/autocast_mode.cpp", locator="the CPU list",
                commit="cfed411fae0c18aa3d20351bc8dc8e1218db77ff")
    with pytest.raises((ValueError, TypeError), match=match):
        RepoSource(**{**good, **kw})
    assert RepoSource(**{**good, "commit": "", "version": "v2.1.0"}).cite().endswith("the CPU list")


def test_yes_and_no_are_the_intervals_around_one_and_zero():
    assert yes("so").contains(1.0) and not yes("so").contains(0.0)
    assert no("not so").contains(0.0) and not no("not so").contains(1.0)
