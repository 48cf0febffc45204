"""``python -m stats``: run the claims registry (``verify``), list it (``list``).

Usage errors exit 2 with one line on stderr, before any simulation; Ctrl-C exits 130
with one line.  ``verify`` exits 0 when every claim holds (or is a confirmed, recorded
erratum), 1 when a check is rejected or errs, an erratum has gone stale, or (with
``--mutants``) a mutant survives.
"""

from __future__ import annotations

import os
import sys
import time

from . import cli


def _cmd_verify(args, parser):
    scheduler = cli.dask_client(args.scheduler, parser)
    try:
        return _cmd_verify_on(args, parser, scheduler)
    finally:
        if scheduler is not None:
            scheduler.close()


def _cmd_verify_on(args, parser, scheduler):
    if scheduler is not None:
        # Building the registry draws the evidence profile's rate searches: on the cluster, before it.
        from .lr_search import profile_searches
        from .settings.decisive import decisive_profile

        profile = decisive_profile()
        profile_searches(profile, scheduler=scheduler)
        if profile.name == "full":
            from .claims.statements.model import recall_searches

            recall_searches(scheduler=scheduler)
    from .claims.registry import REGISTRY
    from .claims import plan, select_claims

    try:
        chosen = select_claims(args.only, REGISTRY) if args.only is not None else REGISTRY
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        parser.error("--only" + msg[len("patterns"):] if msg.startswith("patterns") else msg)
    out = cli.writable_dir(args.out, parser)
    whole = tuple(chosen) == tuple(REGISTRY)
    name, mname = ("claims", "mutants") if whole else ("claims-selection", "mutants-selection")
    cli.output_files(out, [f"{name}.csv", f"{name}.run.json"] + ([f"{mname}.csv"] if args.mutants else []), parser)
    start = time.perf_counter()
    try:
        the_plan = plan(REGISTRY, select=chosen, seed=args.seed, n_factor=args.n_factor, workers=args.workers)
    except ValueError as exc:
        if not str(exc).startswith("n_factor"):
            raise  # a claim whose design fails is a mistake in the registry, not a usage error
        parser.error("--n-factor" + str(exc)[len("n_factor"):])
    return _verify(args, chosen, the_plan, out, name, mname, scheduler, start)


def _verify(args, chosen, the_plan, out, name, mname, scheduler, start):
    from .io import write_csv, write_text
    from .claims.mutants import MUTANTS
    from .claims.console import print_report, provenance, provenance_json
    from .claims import FAMILY_ALPHA, OK_VERDICTS, evaluate, evaluate_mutants, passed, simulate
    from .claims.findings import UNSETTLED
    from .claims.verdicts import UNTESTABLE

    t_plan = time.perf_counter()
    results = simulate(the_plan, seed=args.seed, workers=args.workers, scheduler=scheduler, progress=not args.no_progress)
    t_sim = time.perf_counter()
    table = evaluate(the_plan, results)
    t_eval = time.perf_counter()
    write_csv(table, out / f"{name}.csv")
    print_report(table, full=args.full)
    n_bad = int((~table["verdict"].isin(OK_VERDICTS)).sum())
    n_unsettled = int((table["finding"] == UNSETTLED).sum())
    outcome = (f"{n_bad} FAILED" if n_bad else "all hold" if not n_unsettled else
               f"none failed, {n_unsettled} unsettled (not refuted, measured outside what the text states)")
    tested = int((table["verdict"] != UNTESTABLE).sum())
    stat = int(table["p_holm"].notna().sum())
    ok = passed(table)
    record = dict(
        command="verify",
        seed=args.seed,
        n_factor=args.n_factor,
        selection=the_plan.selection,
        workers=args.workers,
        scheduler=args.scheduler,
        family_size=the_plan.family_size,
        family_alpha=FAMILY_ALPHA,
        design_level=the_plan.per_test,
        checks=len(table),
        verdicts=table["verdict"].value_counts().to_dict(),
        seconds=dict(plan=round(t_plan - start, 2), simulate=round(t_sim - t_plan, 2), evaluate=round(t_eval - t_sim, 2)),
        # Per simulation: rows drawn and CPU seconds summed over its blocks (wherever they ran).
        simulations={
            key: dict(rows=job.n, cpu_seconds=round(getattr(results.get(key), "seconds", float("nan")), 3))
            for key, job in sorted(the_plan.jobs.items())
        },
    )
    print(
        f"\n{tested} checks ({stat} statistical, family of {the_plan.family_size} Holm-corrected to false-fail "
        f"{FAMILY_ALPHA:g}, design level {the_plan.per_test:.2g}) in {len(chosen)} claims, seed {args.seed}, "
        f"{t_eval - start:.1f} s: {outcome}; wrote {out / (name + '.csv')}"
    )
    if the_plan.selection is not None:
        print("  (a selection: written beside the full table as claims-selection.csv; claims.csv is left as it was)")
    if args.mutants:
        t0 = time.perf_counter()
        mutants = evaluate_mutants(the_plan, results, MUTANTS, seed=args.seed, workers=args.workers, scheduler=scheduler)
        write_csv(mutants, out / f"{mname}.csv")
        print("\nMutants (planted mistakes; each must make some check fail):")
        for _, r in mutants.iterrows():
            print(f"  {'caught  ' if r['caught'] else 'SURVIVED'} {r['mutant']:<32} by {r['claim'] or '-'} ({r['checks_failing']} checks)")
        survivors = int((~mutants["caught"]).sum())
        print(f"{len(mutants) - survivors}/{len(mutants)} mutants caught; wrote {out / (mname + '.csv')}")
        record["mutants"] = dict(caught=int(mutants["caught"].sum()), total=len(mutants), seconds=round(time.perf_counter() - t0, 2))
        ok = ok and survivors == 0
    write_text(provenance_json(provenance(**record)), out / f"{name}.run.json")
    return 0 if ok else 1


def _cmd_calibrate(args, parser):
    from .io import write_csv, write_text
    from .claims.calibration import CALIBRATION_ALPHA, CALIBRATION_LEVEL, CALIBRATION_POWER, calibrate, calibration_passed
    from .claims.console import provenance, provenance_json

    out = cli.writable_dir(args.out, parser)
    cli.output_files(out, ["calibration-pvalues.csv", "calibration-mutants.csv", "calibration.csv", "calibration-exact.csv",
                           "calibration.run.json"], parser)
    if args.mutant_seeds is not None and args.mutant_seeds > args.seeds:
        parser.error(f"--mutant-seeds must be at most --seeds ({args.seeds}); got {args.mutant_seeds}")
    scheduler = cli.dask_client(args.scheduler, parser)
    t0 = time.perf_counter()
    try:
        from .tuning import cache_dir

        # Each finished seed is kept, so a run stopped part-way resumes from the seeds it finished.
        result = calibrate(
            seeds=args.seeds, mutant_seeds=args.mutant_seeds, n_factor=args.n_factor, seed=args.seed, workers=args.workers,
            scheduler=scheduler, progress=not args.no_progress, resume=cache_dir() / "calibration",
        )
    finally:
        if scheduler is not None:
            scheduler.close()
    seconds = time.perf_counter() - t0
    checks, mutants, pvalues, exact = result.checks, result.mutants, result.pvalues, result.exact
    mutant_seeds = int(mutants["seeds"].iloc[0])
    write_csv(pvalues, out / "calibration-pvalues.csv")
    write_csv(mutants, out / "calibration-mutants.csv")
    write_csv(checks, out / "calibration.csv")
    write_csv(exact, out / "calibration-exact.csv")
    ok = calibration_passed(result)
    counts = checks["verdict"].value_counts().to_dict()
    # Rows no outcome at this seed count can flag: a declared power too low (no check they move shifts a
    # mean or fails deterministically at these sizes), so they test nothing.
    untested = mutants["detectable_shortfall"].isna()
    write_text(provenance_json(provenance(
        command="calibrate", seed=args.seed, seeds=args.seeds, mutant_seeds=mutant_seeds, n_factor=args.n_factor,
        workers=args.workers, level=CALIBRATION_LEVEL, family_alpha=CALIBRATION_ALPHA, power=CALIBRATION_POWER,
        verdicts=counts, checks_by_calibration=result.levels,
        detectable_rejection_rate=float(checks["detectable_rejection_rate"].iloc[0]) if len(checks) else None,
        exact_checks=len(exact), exact_at_level=int(exact["holds"].sum()),
        exact_largest_size_over_level=float(exact["size_over_level"].max()) if len(exact) else None,
        mutants_meeting_power=int(mutants["meets"].sum()), mutants=len(mutants), mutants_untested=int(untested.sum()),
        # A mutant declared caught on every seed is flagged when caught in fewer than 1 - this of them.
        detectable_shortfall_at_power_1=float(mutants.loc[mutants["declared_power"] == 1, "detectable_shortfall"].iloc[0])
        if (mutants["declared_power"] == 1).any() else None,
        seconds=round(seconds, 1),
    )), out / "calibration.run.json")
    bad = checks[checks["verdict"] == "MISCALIBRATED"]
    for _, r in bad.iterrows():
        print(f"  MISCALIBRATED {r['claim']} [{r['check']}]: rate {r['rejection_rate']:.3f} at {CALIBRATION_LEVEL}, KS p {r['ks_p']:.2g}")
    for _, r in mutants[~mutants["meets"]].iterrows():
        print(f"  UNDERPOWERED  {r['mutant']}: caught in {r['catch_rate']:.2f} of seeds, declared {r['declared_power']:.2f}")
    for _, r in exact[~exact["holds"]].iterrows():
        print(f"  OVER LEVEL    {r['claim']} [{r['check']}]: size {r['size']:.3g} with {r['n']} rows, "
              f"{r['size_at_design']:.3g} with {r['n_design']}, at level {r['level']:.3g}")
    print(
        f"{len(checks)} null checks over {args.seeds} seeds at n-factor {args.n_factor:g}: "
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f"; {int(exact['holds'].sum())}/{len(exact)} exact checks at most their level (computed); "
        f"{int(mutants['meets'].sum())}/{len(mutants)} mutants caught at least as often as declared over {mutant_seeds} "
        f"seeds ({int(untested.sum())} whose rows test nothing at these sizes); {seconds:.0f} s; wrote {out / 'calibration.csv'}"
    )
    return 0 if ok else 1


def _cmd_list(args):
    import shutil
    import textwrap

    from .claims.registry import REGISTRY
    from .claims.unchecked import NOT_CHECKABLE

    width = max(72, min(shutil.get_terminal_size((100, 24)).columns, 120))

    def wrapped(text, lead="    "):
        return textwrap.fill(text, width=width, initial_indent=lead, subsequent_indent="    ", break_on_hyphens=False)

    lines = []
    for c in REGISTRY:
        n = len(c.checks)
        lines += [f"{c.id} ({n} check{'s' if n != 1 else ''}) [{c.section}]", wrapped(c.statement)]
    lines.append(f"\nNot checkable here ({len(NOT_CHECKABLE)}; docs/statements.md places every statement of the section):")
    for u in NOT_CHECKABLE:
        lines += [f"{u.id} [{u.section}]", wrapped(u.statement), wrapped(u.reason, lead="    why: ")]
    try:
        print("\n".join(lines))
    except BrokenPipeError:  # `python -m stats list | head`: the reader stopped; not an error
        sys.stdout = open(os.devnull, "w")
    return 0


def build_parser():
    from .claims.defaults import CALIBRATION_MUTANT_SEEDS, CALIBRATION_SEEDS, DEFAULT_SEED
    from .engine.executors import default_workers

    parser = cli.Parser(prog="python -m stats", description="Verification suite for section 4.3 (scaled dot-product attention).")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=cli.Parser)
    v = sub.add_parser("verify", help="run the claims registry and write reports/claims.csv")
    v.add_argument("--seed", type=cli.seed, default=DEFAULT_SEED, help=f"root seed of every stream (default {DEFAULT_SEED})")
    v.add_argument("--only", metavar="PATTERN", help="comma-separated claim ids (each that claim only) or globs (every match), e.g. 'exact-law,mup-*'; "
                   "one that matches no claim is an error")
    v.add_argument(
        "--n-factor", type=cli.positive_float, default=1.0,
        help="multiply every designed sample size (0.1: a quick run whose detectable discrepancies are ~3x larger)",
    )
    v.add_argument("--mutants", action="store_true", help="also run the planted mistakes and write mutants.csv")
    v.add_argument("--out", default="reports", help="output folder (default: reports)")
    v.add_argument("--workers", type=cli.count, default=default_workers(), help="processes on this machine (default: all cores)")
    v.add_argument("--scheduler", metavar="ADDRESS", help="run the blocks on the Dask cluster at ADDRESS (needs the dask extra)")
    v.add_argument("--full", action="store_true", help="print every check, not one line per claim")
    v.add_argument("--no-progress", action="store_true", help="no progress bar")
    c = sub.add_parser("calibrate", help="re-run every claim over many seeds; check the tests' own error rates")
    c.add_argument("--seeds", type=cli.count, default=CALIBRATION_SEEDS,
                   help=f"independent root seeds (default {CALIBRATION_SEEDS}, at least 2); each finished seed is kept, "
                        "and a run stopped part-way resumes from the seeds it finished")
    c.add_argument("--mutant-seeds", type=cli.count, default=None,
                   help="how many of the seeds (the first) also run the planted mistakes, which are most of the time "
                        f"(default: {CALIBRATION_MUTANT_SEEDS}, or --seeds if fewer); each mutant's detectable_shortfall "
                        "says what they can see")
    c.add_argument("--n-factor", type=cli.positive_float, default=0.02,
                   help="sample sizes as a share of the design (default 0.02)")
    c.add_argument("--seed", type=cli.seed, default=DEFAULT_SEED, help="root of the spawned seeds and of the pilot runs")
    c.add_argument("--out", default="reports", help="output folder (default: reports)")
    c.add_argument("--workers", type=cli.count, default=default_workers(), help="processes on this machine (default: all cores)")
    c.add_argument("--scheduler", metavar="ADDRESS", help="run the blocks on the Dask cluster at ADDRESS")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    sub.add_parser("list", help="list the claims with their sections, then the statements not checkable here")
    parser.verify = v
    parser.calibrate = c
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    cli.tune_malloc_or_exit(parser)
    from .settings.decisive import decisive_profile

    try:
        decisive_profile()  # the environment's evidence profile, refused in one line before the registry is built
    except ValueError as exc:
        parser.error(str(exc))
    try:
        if args.command == "list":
            return _cmd_list(args)
        if args.command == "calibrate":
            if args.seeds < 2:
                parser.calibrate.error(f"--seeds must be at least 2; got {args.seeds}")
            return _cmd_calibrate(args, parser.calibrate)
        return _cmd_verify(args, parser.verify)
    except KeyboardInterrupt:
        sys.stderr.write("python -m stats: interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
