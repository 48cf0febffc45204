"""``python -m stats verify``: run the claims registry (see ``--help``)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr, exit 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def _seed(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return v


def _fmt(x, digits=4):
    return "" if pd.isna(x) else f"{x:.{digits}g}"


def _table(rows):
    shown = pd.DataFrame(
        {
            "claim": rows["claim"],
            "check": rows["check"],
            "expected": rows["expected"].map(_fmt),
            "estimate ± mcse": [
                _fmt(e) if pd.isna(s) else f"{_fmt(e)} ± {_fmt(s, 2)}" for e, s in zip(rows["estimate"], rows["mcse"])
            ],
            "p_value": rows["p_value"].map(lambda p: _fmt(p, 3)),
            "detectable": rows["detectable"].map(lambda d: _fmt(d, 3)),
            "n": rows["n"],
            "verdict": rows["verdict"],
        }
    )
    return shown.to_string(index=False)


def _report(table):
    main = table[~table["verdict"].isin(["untestable", "erratum confirmed", "erratum stale"])]
    print(_table(main))
    errata = table[table["verdict"].str.startswith("erratum")]
    if len(errata):
        print("\nKnown errata of the text (a refuted claim recorded as such):")
        print(_table(errata))
        for _, r in errata.iterrows():
            print(f"  {r['claim']} [{r['check']}]: {r['note']}")
    untestable = table[table["verdict"] == "untestable"]
    if len(untestable):
        print("\nUntestable (no calibrated test exists for this law):")
        for _, r in untestable.iterrows():
            print(f"  {r['claim']} [{r['check']}]: {r['note']}")


def _cmd_verify(args):
    from ._io import write_csv
    from .claims import REGISTRY
    from .mutants import MUTANTS
    from .verify import OK_VERDICTS, evaluate, passed, plan, select_claims, simulate

    try:
        claims = select_claims(args.only, REGISTRY)
    except ValueError as exc:
        sys.stderr.write(f"python -m stats verify: error: {exc}\n")
        return 2
    start = time.perf_counter()
    planned, per_test = plan(claims, n_factor=args.n_factor)
    sims = simulate(planned, seed=args.seed, progress=not args.no_progress)
    table = evaluate(planned, sims)
    out = Path(args.out)
    write_csv(table, out / "claims.csv")
    _report(table)
    n_bad = int((~table["verdict"].isin(OK_VERDICTS)).sum())
    tested = int((table["verdict"] != "untestable").sum())
    print(
        f"\n{tested} checks in {len(claims)} claims, family-wise false-fail rate 1e-3 (Holm; design level "
        f"{per_test:.2g} per check), seed {args.seed}, {time.perf_counter() - start:.1f} s: "
        f"{'all hold' if n_bad == 0 else f'{n_bad} FAILED'}; wrote {out / 'claims.csv'}"
    )
    ok = passed(table)
    if args.mutants:
        ok = _mutants(planned, sims, MUTANTS, out) and ok
    return 0 if ok else 1


def _mutants(planned, sims, mutants, out):
    from ._io import write_csv
    from .verify import evaluate

    rows, cache = [], {}
    for m in mutants:
        table = evaluate(planned, sims, formulas=m.formulas, cache=cache)
        caught = table[table["verdict"] == "REJECTED"]
        claims = sorted(set(caught["claim"]))
        rows.append(
            dict(
                mutant=m.name,
                description=m.description,
                claim=";".join(claims),
                checks_rejecting=len(caught),
                min_p_holm=float(table["p_holm"].min()) if len(table) else float("nan"),
                caught=bool(len(caught)),
            )
        )
    frame = pd.DataFrame(rows)
    write_csv(frame, out / "mutants.csv")
    print("\nMutants (planted wrong closed forms):")
    for r in rows:
        print(f"  {'caught  ' if r['caught'] else 'SURVIVED'} {r['mutant']:<34} by {r['claim'] or '-'} ({r['checks_rejecting']} checks)")
    survivors = [r["mutant"] for r in rows if not r["caught"]]
    print(f"{len(rows) - len(survivors)}/{len(rows)} mutants caught; wrote {out / 'mutants.csv'}")
    return not survivors


def main(argv=None):
    from .verify import DEFAULT_SEED

    parser = _Parser(prog="python -m stats", description="Verification suite for section 4.3 (scaled dot-product attention).")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    v = sub.add_parser("verify", help="run every claim of the registry and write reports/claims.csv")
    v.add_argument("--seed", type=_seed, default=DEFAULT_SEED, help=f"root seed (default {DEFAULT_SEED})")
    v.add_argument("--only", metavar="PATTERN", help="comma-separated claim ids or globs, e.g. 'exact-law,mup-*'")
    v.add_argument("--n-factor", type=_positive_float, default=1.0, help="multiply every designed sample size (e.g. 0.1 for a quick run; the detectable discrepancies grow accordingly)")
    v.add_argument("--mutants", action="store_true", help="also run the planted wrong formulas and write reports/mutants.csv")
    v.add_argument("--out", default="reports", help="output folder (default reports)")
    v.add_argument("--no-progress", action="store_true", help="no progress bar")
    sub.add_parser("list", help="list the claims")
    args = parser.parse_args(argv)
    if args.command == "list":
        from .claims import REGISTRY

        for c in REGISTRY:
            print(f"{c.id:<24} {len(c.checks):>3} checks  [{c.section}] {c.statement}")
        return 0
    return _cmd_verify(args)


if __name__ == "__main__":
    raise SystemExit(main())
