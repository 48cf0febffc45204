"""No private name crosses a module boundary outside the tests.

A name with a leading underscore belongs to its module: another module of stats, analyses
or benchmarks may not import it (``from .attention import _check_qkv``) nor reach it
through an imported module (``attention._forward``).  A helper two modules need is
promoted to a public, documented name.  Private *modules* (``stats._validation``) and
import circles are lint-imports' part (the contracts ``private-modules-stay-home`` and
``no-import-cycles`` in pyproject.toml, run by tests/test_layers.py).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("stats", "analyses", "benchmarks")


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _modules(root):
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            yield ".".join(parts[:-1] if is_package else parts), is_package, path


def _absolute(module, is_package, level, name):
    if not level:
        return name
    base = module.split(".")[: len(module.split(".")) - (level - 1) - (0 if is_package else 1)]
    return ".".join(base + ([name] if name else []))


def private_crossings(root):
    """``(importer, owner, name)`` for every private name a module takes from another of ``PACKAGES``."""
    modules = {m: (p, path) for m, p, path in _modules(root)}
    found = set()
    for module, (is_package, path) in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        aliases = {}  # a local name bound to one of our modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(module, is_package, node.level, node.module or "")
                if source.split(".")[0] not in PACKAGES:
                    continue
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
                    elif _private(alias.name) and source != module:
                        found.add((module, source, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in modules:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
                owner = aliases.get(node.value.id)
                if owner and owner != module:
                    found.add((module, owner, node.attr))
    return found


def test_no_private_name_crosses_a_module_boundary():
    crossings = private_crossings(ROOT)
    assert not crossings, "private names used outside their module (make them public): " + ", ".join(
        f"{importer} takes {owner}.{name}" for importer, owner, name in sorted(crossings))


def test_a_planted_crossing_is_seen(tmp_path):
    # The scan itself can fail: both spellings of a planted crossing are reported.
    (tmp_path / "stats").mkdir()
    (tmp_path / "stats" / "__init__.py").write_text("")
    (tmp_path / "stats" / "a.py").write_text("def _helper():\n    pass\n")
    (tmp_path / "stats" / "b.py").write_text("from .a import _helper\n")
    (tmp_path / "stats" / "c.py").write_text("from . import a\n\na._helper()\n")
    (tmp_path / "stats" / "d.py").write_text("import stats.a as a\n\na._helper()\n")
    assert private_crossings(tmp_path) == {("stats.b", "stats.a", "_helper"), ("stats.c", "stats.a", "_helper"),
                                            ("stats.d", "stats.a", "_helper")}
