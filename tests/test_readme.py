"""The README is for users: short, no log (dates, machines, commits, issues), no number typed by
hand -- its findings table is generated from the registry and held equal to it here, and the
run's own numbers are in the files it links, which `make reports` and `make bench` write
(``reports/findings.md``, ``reports/bench.md``; tested on a small run here)."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from analyses import report
from analyses._data import DataError

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 300
#: The generated files the README may link under reports/, and what writes each.
GENERATED = {"reports/findings.md": "make reports", "reports/bench.md": "make bench"}


def _readme():
    return README.read_text()


def _prose(text):
    """The README without its generated tables, code blocks, code spans and link targets: what is typed by hand."""
    for b, e, _ in report.README_BLOCKS:
        begin, end = text.index(b), text.index(e)
        text = text[:begin] + text[end:]
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def test_the_readme_is_short():
    n = len(_readme().splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines: keep it under {MAX_LINES}, and move the rest to docs/"


@pytest.mark.parametrize("what, pattern", [
    ("a date", r"\b(19|20)\d\d-\d\d(-\d\d)?\b"),
    ("a machine", r"\b(Intel|AMD|EPYC|Xeon|Graviton)\b|\bVM\b"),
    ("a commit hash", r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
    ("an issue number", r"\b(issue|PR|pull request)s?\s*#?\d+|(?<![\w&])#\d+\b"),
    ("a path outside the repository", r"\.\./"),
])
def test_the_readme_is_not_a_log(what, pattern):
    hits = [line for line in _readme().splitlines() if re.search(pattern, line, flags=re.I if what == "an issue number" else 0)]
    assert not hits, f"README.md names {what} (history and dated measurements go to docs/): {hits[:3]}"


def test_the_readme_types_no_number_by_hand():
    # Names with digits in them are not counts or measurements: the section, T5, a scaling, the formats, Python.
    allowed = re.compile(r"§4\.3|T5|1/d_k|b?float(16|32|64)|Python 3\.\d+")
    typed = [w for w in re.findall(r"\S*\d\S*", allowed.sub("", _prose(_readme())))]
    assert not typed, (f"README.md types numbers by hand ({typed[:5]}): a count or a measured figure goes in a "
                       "generated file (reports/findings.md, reports/bench.md) that the README links")


@pytest.mark.parametrize("begin, end, make", report.README_BLOCKS, ids=["findings", "calibration"])
def test_the_readme_generated_tables_are_the_registry_s(begin, end, make):
    text = _readme()
    assert text.count(begin) == 1 and text.count(end) == 1
    table = text[text.index(begin) + len(begin):text.index(end)].strip()
    assert table == make(), "a generated table of the README is stale: run `python -m analyses.report readme`"


def test_the_readme_calibration_table_counts_every_check_once():
    from stats.claims.checks import KINDS
    from stats.claims.planning import all_checks
    from stats.claims.registry import REGISTRY

    table = report.readme_calibration()
    counts = {line.split("|")[1].strip(" `"): int(line.split("|")[2]) for line in table.splitlines()[2:]}
    assert sum(counts.values()) == len(list(all_checks(REGISTRY)))
    assert counts["exact"] == sum(1 for _, c in all_checks(REGISTRY) if c.kind == "share")
    assert all(f"`{k}`" in table for k in KINDS)


def test_the_readme_table_lists_every_recorded_finding():
    table = report.readme_findings()
    for found in report.recorded_findings():
        assert f"`{found['claim']}`" in table and found["corrected"] in table, found["check"]
    assert table.startswith(report.GRADING_RULE)  # the table names the rule it is graded by
    rows = [line for line in table.splitlines() if line.startswith("|")][2:]
    kinds = [r.split("|")[1].strip() for r in rows]
    assert kinds == sorted(kinds, key=lambda k: k != "erratum") and set(kinds) == {"erratum", "caveat"}


def test_update_readme_rewrites_only_the_tables(tmp_path):
    r = report
    stale = (f"# Title\n\nBefore.\n\n{r.README_BEGIN}\n| old | table |\n{r.README_END}\n\nBetween.\n\n"
             f"{r.README_CALIBRATION_BEGIN}\n| old |\n{r.README_CALIBRATION_END}\n\nAfter.\n")
    path = tmp_path / "README.md"
    path.write_text(stale)
    report.update_readme(path)
    assert path.read_text() == (f"# Title\n\nBefore.\n\n{r.README_BEGIN}\n{r.readme_findings()}\n{r.README_END}\n\nBetween.\n\n"
                                f"{r.README_CALIBRATION_BEGIN}\n{r.readme_calibration()}\n{r.README_CALIBRATION_END}\n\nAfter.\n")
    path.write_text(f"# Only one table\n\n{r.README_BEGIN}\n| old |\n{r.README_END}\n")
    with pytest.raises(DataError, match="no generated block"):
        report.update_readme(path)


def test_every_link_of_the_readme_leads_somewhere():
    text = _readme()
    links = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]
    assert links
    for target in links:
        if target.startswith("reports/"):
            assert target in GENERATED, f"README.md links {target}, which no command writes"
        else:
            assert (ROOT / target).exists(), f"README.md links {target}, which is not in the repository"
    # Each generated file it links is named with the command that writes it, and the command writes it.
    for target, command in GENERATED.items():
        assert target in links and command in text, target
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^\$\(OUT\)/\.built:.*\$\(OUT\)/findings\.md", makefile, flags=re.M), "make reports must build findings.md"
    assert "bench.md" in (ROOT / "benchmarks" / "__main__.py").read_text()


def test_the_readme_shows_the_two_commands():
    text = _readme()
    for command in ("make reports", "make test", "python -m stats verify --only", "python -m stats list", "python -m analyses"):
        assert command in text, command


# ------------------------------------------------------------------ findings.md, on a small run


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """claims.csv and claims.run.json of a draft run of two claims that record findings (exact checks: a few seconds)."""
    from stats import REGISTRY, evaluate, plan, simulate
    from stats.claims import select_claims

    out = tmp_path_factory.mktemp("findings")
    chosen = select_claims("saturation-table,t5-differ-slightly", REGISTRY)
    the_plan = plan(REGISTRY, select=chosen, seed=7, n_factor=0.02, workers=1)
    table = evaluate(the_plan, simulate(the_plan, seed=7, workers=1, progress=False))
    table.to_csv(out / "claims.csv", index=False)
    run = dict(seed=7, n_factor=0.02, family_size=the_plan.family_size, family_alpha=1e-3, design_level=the_plan.per_test)
    (out / "claims.run.json").write_text(json.dumps(run))
    return out, table


def test_findings_md_gives_each_finding_its_grade_and_evidence(small_run):
    out, table = small_run
    text = report.build_findings(out).read_text()
    assert text.startswith("# What the suite found about section 4.3") and "do not edit" in text
    assert "**DRAFT**" in text and "seed 7" in text
    errata = text[text.index("## Errata and caveats"):text.index("## Every claim, by heading")]
    # the table's two numbers miss the expectation but not what the measurement prints: caveats
    # (saturation-procedure-graded), each with its evidence
    assert "| caveat | Saturation, measured | 0.35 |" in errata and "| caveat | Saturation, measured | 0.96 |" in errata
    assert "unscaled max weight, d_k=4: 0.342631 (exact)" in errata
    assert "erratum, false as stated" in errata and "`t5-differ-slightly`" in errata
    # one bullet per distinct sentence: the saturation table's two errata share theirs
    assert errata.count("* `saturation-table`") == 1
    claims = text[text.index("## Every claim, by heading"):]
    assert "### Saturation, measured" in claims and "| `saturation-table` |" in claims
    assert claims.index("### Saturation, measured") < claims.index("### The assumption behind the argument")
    n = len(table)
    verdicts = ", ".join(f"{k} {v}" for k, v in table["verdict"].value_counts().items())
    assert f"| checks | {n}: {verdicts} |" in text
    assert "| claims (statements of the text under test) | 2 |" in text
    assert "not run in this build" in text  # no mutants in this run, and it says so


def test_findings_md_counts_the_mutants_and_the_calibration_when_they_ran(small_run, tmp_path):
    out, _ = small_run
    for name in ("claims.csv", "claims.run.json"):
        (tmp_path / name).write_bytes((out / name).read_bytes())
    run = json.loads((tmp_path / "claims.run.json").read_text())
    run.update(n_factor=1.0, mutants=dict(caught=5, total=5, seconds=1.0))
    (tmp_path / "claims.run.json").write_text(json.dumps(run))
    (tmp_path / "calibration.run.json").write_text(json.dumps(
        dict(seeds=20, verdicts={"calibrated": 9}, mutants_meeting_power=5, mutants=5)))
    text = report.build_findings(tmp_path).read_text()
    assert "**DRAFT**" not in text
    assert "| planted mistakes (mutants) caught | 5 of 5 |" in text
    assert "9 null checks over 20 seeds: calibrated 9; 5 of 5 mutants" in text
    (tmp_path / "calibration.run.json").write_text(json.dumps(
        dict(seeds=20, verdicts={"calibrated": 9}, mutants_meeting_power=5, mutants=5, exact_checks=3, exact_at_level=3,
             mutant_seeds=4, mutants_untested=1)))
    text = report.build_findings(tmp_path).read_text()
    assert ("9 null checks over 20 seeds: calibrated 9; 3 of 3 checks exact by construction at most their level (sizes "
            "computed); 5 of 5 mutants caught at least as often as declared over 4 seeds (1 whose rows test nothing") in text


def test_findings_md_is_written_by_the_report_command(small_run, tmp_path):
    out, _ = small_run
    for name in ("claims.csv", "claims.run.json"):
        (tmp_path / name).write_bytes((out / name).read_bytes())
    assert report.main(["findings", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "findings.md").read_text() == report.build_findings(out).read_text()
    assert report.main(["findings", "--out", str(tmp_path / "nowhere")]) == 2  # no claims.csv: an error, one line


def test_a_markdown_table_keeps_every_value_in_its_cell():
    from stats.io import markdown_table

    lines = markdown_table(("x", "y"), [("1", "p | q\n r")])
    assert lines == ["| x | y |", "|---|---|", "| 1 | p \\| q r |"]
    assert pd.Series(lines).str.count(r"(?<!\\)\|").nunique() == 1


def test_a_regraded_finding_says_why_in_the_readme_and_findings_md(small_run, monkeypatch):
    """Every verdict the grading rule changes says why in one line: Erratum.regraded, shown in the
    README's table and in findings.md (the registry's own regraded findings are the colleagues' modules')."""
    from dataclasses import replace

    from stats import REGISTRY

    why = "was an erratum: true under its premise (a test's own line); now a caveat"
    patched = []
    for c in REGISTRY:
        if c.id == "t5-differ-slightly":
            c = replace(c, checks=tuple(replace(ch, erratum=replace(ch.erratum, regraded=why)) if ch.erratum else ch
                                        for ch in c.checks))
        patched.append(c)
    monkeypatch.setattr(report, "REGISTRY", tuple(patched))
    row = next(line for line in report.readme_findings().splitlines() if "`t5-differ-slightly`" in line)
    assert row.rstrip(" |").endswith(why)
    out, _ = small_run
    text = report.build_findings(out).read_text()
    assert why in next(line for line in text.splitlines() if "`t5-differ-slightly`" in line and line.startswith("|"))


def test_the_page_shows_the_calibration_and_says_when_it_is_older_than_the_claims(small_run, tmp_path):
    """What `make calibrate` wrote reaches the page: how each kind's level is known, the three
    results with what their seed counts detect, the three tables; and a calibration run at another
    commit than the claims is marked as older."""
    out, _ = small_run
    (tmp_path / "claims.csv").write_bytes((out / "claims.csv").read_bytes())
    run = json.loads((out / "claims.run.json").read_text())
    (tmp_path / "claims.run.json").write_text(json.dumps({**run, "git_commit": "feedbee"}))
    pd.DataFrame([dict(claim="c", check="k", test="mean", calibration="monte-carlo", seeds=20, rejection_rate=0.05,
                       calibrated=True, verdict="calibrated")]).to_csv(tmp_path / "calibration.csv", index=False)
    pd.DataFrame([dict(mutant="m", seeds=4, catch_rate=1.0, declared_power=1.0, meets=True,
                       detectable_shortfall=0.438)]).to_csv(tmp_path / "calibration-mutants.csv", index=False)
    pd.DataFrame([dict(claim="s", check="share", test="share", level=2e-6, n=8, size=1e-6, n_design=30,
                       size_at_design=1.5e-6, size_over_level=0.75, holds=True)]).to_csv(tmp_path / "calibration-exact.csv",
                                                                                           index=False)
    cal = dict(seed=7, n_factor=0.02, seeds=20, mutant_seeds=4, level=0.05, power=0.9, family_alpha=1e-3,
               verdicts={"calibrated": 1}, checks_by_calibration={"monte-carlo": 1, "exact": 1, "interval": 0, "deterministic": 3},
               detectable_rejection_rate=0.5, exact_checks=1, exact_at_level=1, exact_largest_size_over_level=0.75,
               mutants_meeting_power=1, mutants=1, mutants_untested=0, detectable_shortfall_at_power_1=0.438,
               git_commit="0ldc0de")
    (tmp_path / "calibration.run.json").write_text(json.dumps(cal))
    report.build_page(tmp_path)
    html = (tmp_path / "index.html").read_text()
    section = html[html.index('<h2 id="calibration">'):html.index('<h2 id="numbers">')]
    assert "Older than the claims" in section and "0ldc0de" in section
    assert "1 null checks over 20 seeds: 1 calibrated" in section and "rejecting at 0.5 instead of 0.05" in section
    assert "1 of 1 checks have a computed size at most their level; the largest is 0.75 times" in section
    assert "over the first 4 seeds" in section and "fewer than 56% of them" in section
    for kind in ("monte-carlo", "exact", "interval", "deterministic"):
        assert f"<td>{kind}</td>" in section
    assert "Planted mistakes at their declared power" in section and "size_at_design" in section
    (tmp_path / "calibration.run.json").write_text(json.dumps({**cal, "git_commit": "feedbee"}))
    report.build_page(tmp_path)
    assert "Older than the claims" not in (tmp_path / "index.html").read_text()
