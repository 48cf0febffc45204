"""``python analyses/deps.py --out reports``: the make dependencies of every study's data.

A study's data depend on its module and on every ``stats`` module it imports, directly or
through other modules, found by reading the import statements (``ast``) -- including
imports inside functions -- rather than by importing: importing any ``stats`` module runs
``stats/__init__.py``, which imports everything, and would make every study depend on
every module.  Package ``__init__`` files are followed only for the names a module
actually imports from them.  Writes ``out/.deps/studies.d`` (with an empty rule per
prerequisite, as ``gcc -MP`` does, so a deleted module does not break make).

Run as a script, not with ``-m``: it needs neither numpy nor the package it reads, so it
starts in milliseconds.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Imported only to draw: a figure's dependency, never its data's (a restyle must not re-simulate).
_RENDER_ONLY = {"analyses._style", "analyses.report"}


def _module_path(name):
    parts = name.split(".")
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").exists():
        return base.with_suffix(".py")
    if (base / "__init__.py").exists():
        return base / "__init__.py"
    return None


def _resolve(module, level, current):
    """Absolute module name of ``from <level dots><module> import ...`` inside ``current``."""
    if level == 0:
        return module
    pkg = current.split(".")
    pkg = pkg[: len(pkg) - level] if not current.endswith("__init__") else pkg[: len(pkg) - level + 1]
    return ".".join(pkg + ([module] if module else []))


def _imports(path, name):
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, name + (".__init__" if is_pkg else ""))
            for a in node.names:
                sub = f"{base}.{a.name}"
                yield sub if _module_path(sub) is not None else base


def dependencies(study):
    """Every file under ``stats/`` and ``analyses/`` that the study's module depends on."""
    start = f"analyses.{study}"
    todo, seen = [start], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_path(name)
        if path is None:
            continue
        for dep in _imports(path, name):
            if not dep.startswith(("stats", "analyses")) or dep in _RENDER_ONLY:
                continue
            p = _module_path(dep)
            if p is not None and p.name == "__init__.py" and dep in ("stats", "analyses"):
                continue  # the top-level re-export layers: followed through what they name, below
            todo.append(dep)
    files = {_module_path(n) for n in seen} - {None}
    return sorted(str(p.relative_to(ROOT)) for p in files if p.name != "__init__.py" or p.parent.name not in ("stats", "analyses"))


def studies():
    """The study modules: every ``analyses/*.py`` that defines ``STUDY``."""
    out = []
    for path in sorted((ROOT / "analyses").glob("*.py")):
        if path.name.startswith("_") or path.stem in ("deps", "report"):
            continue
        if any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "STUDY" for t in n.targets) for n in ast.parse(path.read_text()).body):
            out.append(path.stem)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python analyses/deps.py")
    parser.add_argument("--out", default="reports")
    args = parser.parse_args(argv)
    chunks = []
    for study in studies():
        deps = dependencies(study)
        chunks.append(f"{args.out}/data/{study}/manifest.json: {' '.join(deps)}\n" + "".join(f"{d}:\n" for d in deps))
    target = Path(args.out) / ".deps" / "studies.d"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text("\n".join(chunks))
    tmp.replace(target)  # atomic, like every output of the suite
    # Never older than an input, even one dated in the future: make would regenerate
    # this file, re-read the makefile and find it out of date again, forever.
    import os
    import time

    newest = max([time.time()] + [p.stat().st_mtime for p in ROOT.glob("stats/**/*.py")] + [p.stat().st_mtime for p in ROOT.glob("analyses/*.py")])
    os.utime(target, (newest, newest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
