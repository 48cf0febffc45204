"""``python -m analyses [STUDY ...]``: run studies (simulate, then render) into ``reports/``.

``--render-only`` redraws from the data on disk (a usage error, exit 2, if it is missing,
partial or corrupted); ``--simulate-only`` writes the data without drawing; ``--scheduler``
draws the studies' simulations (and the evidence profile's rate searches) on a Dask cluster,
the same bytes as here.
"""

from __future__ import annotations

import os
import sys

from stats.cli import Parser, count, dask_client, seed, tune_malloc_or_exit, writable_dir

from . import ANALYSES, profile_studies, render


def build_parser():
    from stats.engine.executors import default_workers
    from stats.settings import DEFAULT_SEED

    parser = Parser(prog="python -m analyses", description="Run the studies behind the book's figures.")
    parser.add_argument("names", nargs="*", metavar="STUDY", help=f"studies to run (default: those of the evidence profile): {', '.join(ANALYSES)}")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--render-only", action="store_true", help="redraw figures from the data on disk, no simulation")
    mode.add_argument("--simulate-only", action="store_true", help="write the data, draw nothing")
    parser.add_argument("--out", default="reports", help="output folder (default: reports)")
    parser.add_argument("--seed", type=seed, default=int(os.environ.get("SEED", DEFAULT_SEED)), help="root seed (default: $SEED or the suite's)")
    parser.add_argument("--quick", action="store_true", help="a draft: about a tenth of the draws, marked as such")
    parser.add_argument("--workers", type=count, default=default_workers(), help="processes on this machine (default: all cores)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="draw on the Dask cluster at ADDRESS (needs the dask extra)")
    return parser


def main(argv=None):
    from ._data import DataError, read_manifest, read_table

    parser = build_parser()
    args = parser.parse_args(argv)
    tune_malloc_or_exit(parser)
    unknown = [n for n in args.names if n not in ANALYSES]
    if unknown:
        parser.error(f"unknown study {unknown[0]!r}; choose from {', '.join(ANALYSES)}")
    out = writable_dir(args.out, parser)
    names = args.names or profile_studies()
    if args.render_only:
        for name in names:
            try:
                module = ANALYSES[name]
                read_manifest(out, name)
                for table in read_manifest(out, name)["tables"]:
                    read_table(out, name, table)
            except DataError as exc:
                parser.error(str(exc))
            del module
    if args.render_only and args.scheduler is not None:
        parser.error("--scheduler draws simulations; --render-only draws none")
    scheduler = dask_client(args.scheduler, parser)
    try:
        for name in names:
            module = ANALYSES[name]
            if not args.render_only:
                module.simulate(out, seed=args.seed, quick=args.quick, workers=args.workers, scheduler=scheduler)
                print(f"{name}: wrote {out / 'data' / name}")
            if not args.simulate_only:
                for path in render(out, name):
                    print(f"{name}: wrote {path}")
    except KeyboardInterrupt:
        sys.stderr.write("python -m analyses: interrupted\n")
        return 130
    except DataError as exc:
        sys.stderr.write(f"python -m analyses: error: {exc}\n")
        return 2
    finally:
        if scheduler is not None:
            scheduler.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
