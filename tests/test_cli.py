"""Every command-line option against bad values: exit 2, one line on stderr, nothing written.

The table lists each option of each command with values it must refuse; the help of every
command must give each option a description (checked on the ``--help`` output).
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

BAD = {
    ("stats", "verify"): {
        "--seed": ["x", "-1", "1.5", ""],
        "--only": ["", "nope", ","],
        "--n-factor": ["0", "-1", "inf", "nan", "x", "1e12"],  # 1e12: a design past 2^40 rows, refused after the plan
        "--workers": ["0", "-2", "x"],
        "--out": ["/proc/version"],
        "--scheduler": ["", "tcp://127.0.0.1:1"],  # nothing listens on port 1: refused within the 10 s connect
    },
    ("stats", "calibrate"): {
        "--seeds": ["1", "0", "x"],
        "--mutant-seeds": ["0", "x", "201"],  # 201: more than the default 200 seeds
        "--n-factor": ["0", "inf", "nan"],
        "--seed": ["x", "-1"],
        "--workers": ["0", "x"],
        "--out": ["/proc/version"],
        "--scheduler": [""],
    },
    ("analyses",): {
        "--seed": ["x", "-3"],
        "--workers": ["0", "x"],
        "--out": ["/proc/version"],
        "--scheduler": ["", "tcp://127.0.0.1:1"],
        "STUDY": ["nope"],
    },
    ("benchmarks",): {
        "--reps": ["0", "2", "x"],
        "--out": ["/proc/version"],
        "--baseline": ["", "-x"],
    },
}


def _cmd(prog):
    return [sys.executable, "-m", *prog]


#: Refusals that cost a run's worth of work before they can happen: the slow tier's.
SLOW = {
    (("stats", "verify"), "--n-factor", "1e12"),  # plans every claim (pilots included) before refusing the design
    (("stats", "verify"), "--scheduler", "tcp://127.0.0.1:1"),  # waits out the 10 s connect
    (("analyses",), "--scheduler", "tcp://127.0.0.1:1"),
}


def _cases():
    for prog, options in BAD.items():
        for opt, values in options.items():
            for v in values:
                marks = [pytest.mark.slow] if (prog, opt, v) in SLOW else []
                yield pytest.param(prog, opt, v, id=f"{' '.join(prog)} {opt}={v!r}", marks=marks)


@pytest.mark.parametrize("prog, opt, value", list(_cases()))
def test_bad_option_exits_2_with_one_line(prog, opt, value, tmp_path):
    args = [value] if opt == "STUDY" else [opt, value]
    if opt != "--out":
        args += ["--out", str(tmp_path)]
    r = subprocess.run(_cmd(prog) + args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-500:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert not list(tmp_path.iterdir()), "a refused command must write nothing"


@pytest.mark.parametrize("taken", ["claims-selection.run.json", "claims-selection.csv"])
def test_verify_refuses_an_output_name_taken_by_a_folder_before_simulating(taken, tmp_path):
    (tmp_path / taken).mkdir()
    r = subprocess.run(_cmd(("stats", "verify")) + ["--only", "winner-at-random", "--n-factor", "0.01", "--out", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and taken in r.stderr, r.stderr
    assert [p.name for p in tmp_path.iterdir()] == [taken]  # nothing written beside it


def test_render_only_refuses_partial_data(tmp_path):
    """A study whose manifest lists a table that is missing: exit 2 before drawing anything."""
    import json

    d = tmp_path / "data" / "overflow"
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"study": "overflow", "tables": {"sweep": {"rows": 1, "columns": ["a"], "sha256": "0"}}}))
    r = subprocess.run(_cmd(("analyses",)) + ["overflow", "--render-only", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "figures").exists()


def _parsers():
    import argparse

    import analyses.__main__ as analyses_cli
    import analyses.calibration as calibration_cli
    import benchmarks.__main__ as bench_cli
    import stats.__main__ as stats_cli

    top = {"python -m stats": stats_cli.build_parser(), "python -m analyses": analyses_cli.build_parser(),
           "python -m benchmarks": bench_cli.build_parser(), "python -m analyses.calibration": calibration_cli.build_parser()}
    out = dict(top)
    for name, p in top.items():
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                out.update({f"{name} {k}": v for k, v in action.choices.items()})
    return out


def test_every_option_has_a_one_line_description():
    for name, parser in _parsers().items():
        for action in parser._actions:
            if action.dest == "help" or action.__class__.__name__ == "_SubParsersAction":
                continue
            assert action.help and "\n" not in action.help, f"{name}: {action.option_strings or action.dest} has no description"


def test_every_option_is_in_the_bad_value_table():
    """Options that take a value must have bad values listed above (flags need none)."""
    for (prog, options) in BAD.items():
        name = "python -m " + " ".join(prog)
        parser = _parsers()[name]
        takes = {(a.option_strings[0] if a.option_strings else "STUDY") for a in parser._actions
                 if a.dest != "help" and a.nargs != 0 and a.__class__.__name__ != "_SubParsersAction"}
        missing = takes - set(options)
        assert not missing, f"{name}: options without bad values in the table: {sorted(missing)}"
