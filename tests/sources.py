"""The project's Python sources, each read and parsed once per test process (under
pytest-xdist, once per worker) for the tests that scan them (imports, constants, type tokens,
environment names, raise statements): parsing the whole tree costs about a second of CPU,
and walking every node of it again for each scan half as much. The trees are shared, so a
scan only reads them, never changes a node."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path


@cache
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def parsed(path: Path) -> ast.Module:
    """The syntax tree of the Python file at `path` (shared: do not change it)."""
    return _parsed(path.resolve())


@cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(_parsed(path)))


def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of parsed(path), in ast.walk's order (shared: do not change them)."""
    return _nodes(path.resolve())
