"""Which folder may import which (docs/design.md, Layers): every import of every module,
at the top or inside a function, read from its source and checked against the table."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
# The top-level folders, installed as sascheck.<folder> (pyproject.toml's package-dir); the
# command line's folder is the package itself.
FOLDERS = ("rules", "scanner", "content", "remediations", "reports", "iotest", "sascheck")
# What each folder may import beyond itself: a whole folder, or named modules of one. Any
# folder may read the package's own __init__ (its version).
ALLOWED: dict[str, tuple[str, ...]] = {
    "rules": (),
    "scanner": ("rules",),
    "content": ("rules",),
    # the verdict model and its order, the I/O targets, a process pool: not the scan itself
    "reports": ("rules", "scanner.results", "scanner.fix_order", "scanner.checks.measured",
                "scanner.batch_pool"),
    # what a results file says, read as the reports read it
    "remediations": ("rules", "scanner.fix_order", "reports.resultfile", "reports.failing",
                     "reports.identity", "reports.escaping"),
    "iotest": ("rules", "scanner", "reports.escaping"),  # a command of its own: scans, measures
    "sascheck": FOLDERS,  # the command line wires them all
}


def _module_name(path: Path) -> list[str]:
    """A source file's dotted name as installed: rules/x.py is sascheck.rules.x."""
    parts = list(path.relative_to(PROJECT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return parts if parts[0] == "sascheck" else ["sascheck", *parts]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every sascheck name `path` imports (a module, or a name in
    one: prefixes decide)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):  # each name, for it may be a module
            base = package[:len(package) - node.level + 1] if node.level else []
            target = [*base, *(node.module.split(".") if node.module else [])]
            found += [(node.lineno, ".".join([*target, alias.name])) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, target) for line, target in found if target.split(".")[0] == "sascheck"]


def _folder(dotted: str) -> tuple[str, str]:
    """sascheck.reports.model -> ("reports", "reports.model"); sascheck.cli -> ("sascheck",)."""
    parts = dotted.split(".")[1:]
    if not parts:
        return "", ""
    if parts[0] in FOLDERS[:-1]:
        return parts[0], ".".join(parts)
    return "sascheck", ".".join(["sascheck", *parts])


def _allowed(source: str, target: str) -> bool:
    folder, module = _folder(target)
    if folder in ("", source) or target == "sascheck.__version__":
        return True
    return any(module == rule or module.startswith(rule + ".") or folder == rule
               for rule in ALLOWED[source])


def violations() -> list[str]:
    found = []
    for folder in FOLDERS:
        for path in sorted((PROJECT / folder).rglob("*.py")):
            for line, target in _imports(path):
                if not _allowed(folder, target):
                    found.append(f"{path.relative_to(PROJECT)}:{line} imports {target}")
    return found


def test_every_import_follows_the_layers():
    assert violations() == []


def test_the_table_catches_an_arrow_it_does_not_allow(tmp_path, monkeypatch):
    """The reader sees top-level and lazy imports, relative at any depth, and absolute ones."""
    fake = tmp_path / "project"
    for folder in FOLDERS:
        (fake / folder).mkdir(parents=True)
    (fake / "scanner/sources").mkdir()
    (fake / "scanner/sources/deep.py").write_text(
        "def f():\n    from ...reports.html import render\n")
    (fake / "content/x.py").write_text("import sascheck.scanner.scan\n")
    (fake / "reports/y.py").write_text("from ..scanner.results import JUDGED\n"
                                       "from ..scanner import engine\n")
    (fake / "rules/z.py").write_text("from .. import __version__\nfrom .model import Rule\n")
    monkeypatch.setattr(sys.modules[__name__], "PROJECT", fake)
    assert violations() == ["scanner/sources/deep.py:2 imports sascheck.reports.html.render",
                            "content/x.py:1 imports sascheck.scanner.scan",
                            "reports/y.py:2 imports sascheck.scanner.engine"]
