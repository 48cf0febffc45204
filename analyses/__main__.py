"""``python -m analyses [NAME ...]``: run studies (simulate, then render) into ``reports/``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import ANALYSES


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def main(argv=None):
    parser = _Parser(prog="python -m analyses", description="Run the studies behind the book's figures.")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"studies to run (default all): {', '.join(ANALYSES)}")
    parser.add_argument("--render-only", action="store_true", help="redraw figures from existing data, no simulation")
    parser.add_argument("--out", default="reports", help="output folder (default reports)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in ANALYSES]
    if unknown:
        parser.error(f"unknown analysis {unknown[0]!r}; choose from {', '.join(ANALYSES)}")
    out = Path(args.out)
    for name in args.names or list(ANALYSES):
        module = ANALYSES[name]
        if not args.render_only:
            module.simulate(out)
        elif not (out / "data").exists():
            parser.error(f"no data under {out / 'data'}; run without --render-only first")
        for path in module.render(out):
            print(f"{name}: wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
