"""Names and paths that lie: a module constant nothing reads, a path in a comment, docstring
or data file that no longer exists."""

from __future__ import annotations

import ast
import re
from collections import Counter
from functools import cache
from pathlib import Path

from .conftest import PROJECT_DIR
from .sources import parsed

SOURCES = PROJECT_DIR / "components"
READERS = ("components", "bench", "policies", "tests")
"""Where a constant may be read: the packages, the benchmarks, the pack directory and the
tests (a provider range a test checks the planned values against is read)."""
CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*")
CATALOGUES = {"gpu_infra_facts/types.py"}
"""Modules that list every value of a kind, read or not: the type tokens of the provider
(one constant per token the project knows, tests/test_type_tokens.py)."""


def _files(*suffixes: str) -> list[Path]:
    return sorted(path for root in READERS for path in (PROJECT_DIR / root).rglob("*")
                  if path.is_file() and path.suffix in suffixes
                  and not {"golden", "__pycache__", ".venv"} & set(path.parts)
                  and not any(part.endswith(".egg-info") for part in path.parts))


@cache
def word_counts() -> Counter[str]:
    """How often each identifier appears in every file that may read a constant."""
    counts: Counter[str] = Counter()
    for path in [*_files(".py", ".sh", ".yaml", ".json"), PROJECT_DIR / "__main__.py"]:
        counts.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(encoding="utf-8")))
    return counts


def module_constants(path: Path) -> list[tuple[str, int]]:
    """(name, line) of the UPPER_CASE names a module assigns at its top level, but those it
    exports in __all__ (public API: read by users)."""
    tree = parsed(path)
    exported = {node.value for statement in tree.body if isinstance(statement, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets)
                for node in ast.walk(statement.value) if isinstance(node, ast.Constant)}
    found = []
    for statement in tree.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        for target in targets:
            names = [target] if isinstance(target, ast.Name) else \
                list(target.elts) if isinstance(target, ast.Tuple) else []
            found += [(name.id, statement.lineno) for name in names
                      if isinstance(name, ast.Name) and CONSTANT.fullmatch(name.id)
                      and name.id not in exported]
    return found


def test_every_module_constant_is_read_somewhere():
    unread = [f"{path.relative_to(PROJECT_DIR)}:{line} {name}"
              for path in sorted(SOURCES.rglob("*.py")) if "egg-info" not in str(path)
              and str(path.relative_to(SOURCES)) not in CATALOGUES
              for name, line in module_constants(path) if word_counts()[name] <= 1]
    assert unread == [], "constants nothing reads (use them or remove them)"


NAMED_PATH = re.compile(r"(?<![\w./-])(components/[\w./-]*[\w/])")


def test_paths_named_in_sources_and_docs_exist():
    """A `components/...` path in a module, a data file or a document is a real file or
    directory (the packages have moved before; a stale path sends a reader nowhere)."""
    documents = [*sorted((PROJECT_DIR / "docs").rglob("*.md")),
                 *(PROJECT_DIR / name for name in ("README.md", "CONTRIBUTING.md",
                                                   "policies/README.md")
                   if (PROJECT_DIR / name).exists())]
    stale = sorted({f"{path.relative_to(PROJECT_DIR)}: {named}"
                    for path in [*_files(".py", ".sh", ".yaml", ".json"), *documents]
                    for named in NAMED_PATH.findall(path.read_text(encoding="utf-8"))
                    if not (PROJECT_DIR / named.rstrip(".")).exists()})
    assert stale == []
