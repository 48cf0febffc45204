"""docs/statements.md places every statement of the section: on claims of the registry or on
one entry of ``NOT_CHECKABLE``.  These tests parse the table and hold it to both, and plant
mistakes in copies of its rows to see the checker find them."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from stats.claims.registry import REGISTRY as DEFAULT_REGISTRY
from stats.claims.statements import model as _model
from stats.lr_search import RateSearch
from stats.settings.model import RECALL_OWN_BEST, RECALL_WIDTHS

#: The table places the statements of every profile's registry: the default one, and the claims
#: only ``EVIDENCE=full`` registers (stats/claims/statements/model.py's EVIDENCE_ONLY), the recall
#: claim's rate searches stood in for (its statements, not its rates, are what the table places).
_SEARCHES = {w: {s: RateSearch((w, w, s, "adam", ()), 0, (), 1e-3, True, 0, "recall") for s in RECALL_OWN_BEST}
             for w in RECALL_WIDTHS}
REGISTRY = DEFAULT_REGISTRY + (_model.recall_claim(_SEARCHES), _model.trained_logit_claim())
from stats.claims.headings import BEYOND, JACOBIAN, OPENING, READ_MORE, SECTION_HEADINGS, SUITE_HEADINGS
from stats.claims.unchecked import NOT_CHECKABLE, Unchecked

TABLE = Path(__file__).resolve().parents[1] / "docs" / "statements.md"
HEADER = "| # | heading | statement | placed |"

_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_CLAIMS = re.compile(rf"`{_ID}`(?:, `{_ID}`)*")
_NOT_CHECKABLE = re.compile(rf"not checkable: `({_ID})`")


class Row(NamedTuple):
    number: str
    heading: str
    statement: str
    placed: str


def parse_table(text):
    """The table's rows, after checking its header; a row must have exactly four cells."""
    lines = [line.strip() for line in text.splitlines()]
    start = lines.index(HEADER)
    assert re.fullmatch(r"\|(\s*-+\s*\|){4}", lines[start + 1]), "the header's separator line"
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 4, f"a row with {len(cells)} cells (a stray '|'?): {line}"
        rows.append(Row(*cells))
    return rows


def placement(placed):
    """``("claims", ids)`` or ``("unchecked", (id,))``, or ``None`` for a cell that is neither."""
    m = _NOT_CHECKABLE.fullmatch(placed)
    if m:
        return "unchecked", (m.group(1),)
    if _CLAIMS.fullmatch(placed):
        return "claims", tuple(re.findall(rf"`({_ID})`", placed))
    return None


def table_problems(rows, registry, unchecked):
    """Everything wrong with ``rows`` against the registry's claims and the not-checkable
    entries, one message each; an empty list when the table places every statement."""
    problems = []
    claims = {c.id: c for c in registry}
    entries = {u.id: u for u in unchecked}
    cited_claims, cited_entries, headings_seen = set(), set(), set()
    last = 0
    for i, row in enumerate(rows):
        where = f"row {row.number}"
        if row.number != f"s{i + 1:02d}":
            problems.append(f"{where}: numbered out of sequence (expected s{i + 1:02d})")
        if not row.statement:
            problems.append(f"{where}: no statement")
        if row.heading not in SECTION_HEADINGS:
            problems.append(f"{where}: heading {row.heading!r} is not one of SECTION_HEADINGS")
        else:
            index = SECTION_HEADINGS.index(row.heading)
            if index < last:
                problems.append(f"{where}: heading {row.heading!r} out of the section's order")
            last = max(last, index)
            headings_seen.add(row.heading)
        placed = placement(row.placed)
        if placed is None:
            problems.append(f"{where}: placed {row.placed!r} is neither claim ids nor one 'not checkable' id")
            continue
        how, ids = placed
        if how == "claims":
            if len(set(ids)) != len(ids):
                problems.append(f"{where}: cites a claim twice")
            for cid in ids:
                if cid not in claims:
                    problems.append(f"{where}: cites claim {cid!r}, which is not in the registry")
                cited_claims.add(cid)
        else:
            (uid,) = ids
            entry = entries.get(uid)
            if entry is None:
                problems.append(f"{where}: cites not-checkable {uid!r}, which is not in NOT_CHECKABLE")
            elif entry.section != row.heading:
                problems.append(f"{where}: not-checkable {uid!r} belongs to {entry.section!r}, not {row.heading!r}")
            cited_entries.add(uid)
    for claim in registry:
        if claim.section in SECTION_HEADINGS:
            if claim.id not in cited_claims:
                problems.append(f"claim {claim.id!r} ({claim.section}) is cited by no row")
        elif claim.section not in SUITE_HEADINGS:
            problems.append(f"claim {claim.id!r} has a heading that is neither the section's nor the suite's: {claim.section!r}")
    for entry in unchecked:
        if entry.id not in cited_entries:
            problems.append(f"not-checkable {entry.id!r} is cited by no row")
    for heading in SECTION_HEADINGS:
        if heading not in headings_seen:
            problems.append(f"heading {heading!r} has no row")
    return problems


ROWS = parse_table(TABLE.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the table as written


def test_evidence_only_claims_are_the_full_profiles_alone(stand_in_search):
    """An evidence-only claim is absent from the default registry and present in the full profile's,
    as the claims the table is held to here."""
    assert set(_model.EVIDENCE_ONLY).isdisjoint(c.id for c in DEFAULT_REGISTRY)
    full = [c for c in _model.claims("full") if c.id in _model.EVIDENCE_ONLY]
    assert [c.id for c in full] == [c.id for c in REGISTRY[len(DEFAULT_REGISTRY):]] == list(_model.EVIDENCE_ONLY)
    assert {kw["task"] for kw in stand_in_search} == {"recall"}


def test_the_table_places_every_statement():
    assert table_problems(ROWS, REGISTRY, NOT_CHECKABLE) == []


def test_every_cell_parses_and_the_numbers_are_unique():
    assert ROWS, "no rows parsed"
    assert [placement(r.placed) for r in ROWS if placement(r.placed) is None] == []
    numbers = [r.number for r in ROWS]
    assert len(numbers) == len(set(numbers))


def test_claims_of_the_suite_headings_need_no_row():
    suite_only = [c for c in REGISTRY if c.section in SUITE_HEADINGS]
    assert suite_only, "the registry has claims under the suite's own headings"
    other = [c for c in REGISTRY if c.section not in SUITE_HEADINGS]
    assert table_problems(ROWS, other, NOT_CHECKABLE) == table_problems(ROWS, REGISTRY, NOT_CHECKABLE)


def test_not_checkable_ids_are_unique_and_distinct_from_claim_ids():
    ids = [u.id for u in NOT_CHECKABLE]
    assert len(ids) == len(set(ids))
    assert set(ids).isdisjoint(c.id for c in REGISTRY)
    assert all(u.section in SECTION_HEADINGS for u in NOT_CHECKABLE)


# ------------------------------------------------------------------ planted mistakes


def _with(rows, i, **change):
    rows = list(rows)
    rows[i] = rows[i]._replace(**change)
    return rows


def _claim_row(rows):
    return next(i for i, r in enumerate(rows) if placement(r.placed)[0] == "claims")


def _renumber(rows):
    return [r._replace(number=f"s{i + 1:02d}") for i, r in enumerate(rows)]


def _only(problems, *words):
    hits = [p for p in problems if all(w in p for w in words)]
    assert hits, f"no problem mentions {words}: {problems}"
    return hits


def test_a_row_citing_a_nonexistent_claim_is_a_problem():
    i = _claim_row(ROWS)
    rows = _with(ROWS, i, placed=ROWS[i].placed + ", `no-such-claim`")
    _only(table_problems(rows, REGISTRY, NOT_CHECKABLE), ROWS[i].number, "'no-such-claim'", "not in the registry")


def test_a_registry_claim_cited_by_no_row_is_a_problem():
    cid = "winner-bound-value"  # cited by one row only: drop that row
    rows = _renumber([r for r in ROWS if cid not in placement(r.placed)[1]])
    assert len(rows) == len(ROWS) - 1
    _only(table_problems(rows, REGISTRY, NOT_CHECKABLE), f"claim {cid!r}", "cited by no row")


def test_a_new_claim_nobody_placed_is_a_problem():
    new = dataclasses.replace(REGISTRY[0], id="a-new-claim")
    _only(table_problems(ROWS, REGISTRY + (new,), NOT_CHECKABLE), "'a-new-claim'", "cited by no row")
    beyond = dataclasses.replace(new, section=BEYOND)
    assert table_problems(ROWS, REGISTRY + (beyond,), NOT_CHECKABLE) == []


def test_an_unchecked_entry_cited_by_no_row_is_a_problem():
    extra = Unchecked("an-orphan", READ_MORE, "A statement nobody placed.", "None needed: planted.")
    _only(table_problems(ROWS, REGISTRY, NOT_CHECKABLE + (extra,)), "'an-orphan'", "cited by no row")


def test_a_nonexistent_or_misfiled_unchecked_entry_is_a_problem():
    i = _claim_row(ROWS)
    rows = _with(ROWS, i, placed="not checkable: `no-such-entry`")
    _only(table_problems(rows, REGISTRY, NOT_CHECKABLE), "'no-such-entry'", "not in NOT_CHECKABLE")
    j = next(k for k, r in enumerate(ROWS) if r.heading == JACOBIAN)
    uid = next(u.id for u in NOT_CHECKABLE if u.section == READ_MORE)  # an entry of another heading than row j's
    rows = _with(ROWS, j, placed=f"not checkable: `{uid}`")
    _only(table_problems(rows, REGISTRY, NOT_CHECKABLE), f"'{uid}'", "belongs to")


@pytest.mark.parametrize("placed", ["`winner-bound`, not checkable: `read-milakov-gimelshein`", "winner-bound", "", "not checkable: `a`, `b`"])
def test_a_row_must_place_its_statement_exactly_one_way(placed):
    rows = _with(ROWS, 0, placed=placed)
    _only(table_problems(rows, REGISTRY, NOT_CHECKABLE), ROWS[0].number, "neither claim ids nor")


def test_order_numbering_and_headings_are_checked():
    swapped = _renumber([ROWS[-1]] + ROWS[:-1])
    _only(table_problems(swapped, REGISTRY, NOT_CHECKABLE), "out of the section's order")
    gap = _with(ROWS, 3, number="s99")
    _only(table_problems(gap, REGISTRY, NOT_CHECKABLE), "out of sequence")
    unknown = _with(ROWS, 0, heading="Some other heading")
    _only(table_problems(unknown, REGISTRY, NOT_CHECKABLE), "not one of SECTION_HEADINGS")
    no_opening = _renumber([r for r in ROWS if r.heading != OPENING])
    _only(table_problems(no_opening, REGISTRY, NOT_CHECKABLE), f"heading {OPENING!r} has no row")


def test_a_row_with_a_stray_pipe_does_not_parse():
    text = f"{HEADER}\n|---|---|---|---|\n| s01 | {OPENING} | a norm ||a|| | `winner-bound` |\n"
    with pytest.raises(AssertionError, match="cells"):
        parse_table(text)


# ------------------------------------------------------------------ Unchecked itself


def test_a_bad_section_names_the_field():
    with pytest.raises(ValueError, match="section"):
        Unchecked("an-id", "Not a heading", "A statement.", "A reason.")


@pytest.mark.parametrize("field", ["id", "section", "statement", "reason"])
def test_an_empty_field_is_named(field):
    good = dict(id="an-id", section=READ_MORE, statement="A statement.", reason="A reason.")
    with pytest.raises(ValueError, match=field):
        Unchecked(**{**good, field: "  "})


def test_an_id_must_be_kebab_case():
    with pytest.raises(ValueError, match="id"):
        Unchecked("Not_Kebab", READ_MORE, "A statement.", "A reason.")


def test_an_unchecked_entry_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        NOT_CHECKABLE[0].reason = "changed"


def test_the_claims_a_reason_names_exist():
    """A reason that points to the claims checking what can be checked names real claim ids (a
    renamed claim would otherwise leave a stale pointer on the page)."""
    ids = {c.id for c in REGISTRY}
    prefixes = "|".join(sorted({i.split("-")[0] for i in ids}, key=len, reverse=True))
    pattern = re.compile(rf"\b(?:{prefixes})-[a-z0-9-]*[a-z0-9]\b")
    named = {m for u in NOT_CHECKABLE for m in pattern.findall(u.reason)}
    assert named, "the pattern finds the reasons' claim ids"
    assert named <= ids, sorted(named - ids)


def test_stats_list_shows_every_claim_and_what_is_not_checkable():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "stats", "list"], capture_output=True, text=True, check=True)
    heads = {line.split(" ")[0] for line in r.stdout.splitlines() if line and not line.startswith(" ")}
    assert {c.id for c in DEFAULT_REGISTRY} <= heads and {u.id for u in NOT_CHECKABLE} <= heads
    assert f"Not checkable here ({len(NOT_CHECKABLE)};" in r.stdout and "(1 checks)" not in r.stdout
