"""Type tokens are written once, in gpu_infra_facts.types, and each is one the SDK declares."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pulumi_alicloud
import pytest

from gpu_infra_facts import types

from .conftest import PROJECT_DIR
from .sources import nodes

TOKEN = re.compile(r"^alicloud:[a-zA-Z0-9]+/[a-zA-Z0-9]+:[a-zA-Z0-9]+$")
SDK_DIR = Path(pulumi_alicloud.__file__).parent
TOKENS = {name: value for name, value in vars(types).items()
          if name.isupper() and isinstance(value, str) and value.startswith("alicloud:")}


def _docstrings(path: Path) -> set[int]:
    """ids of the string constants that are docstrings (a bare string statement)."""
    return {id(node.value) for node in nodes(path)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def token_literals(path: Path) -> list[str]:
    """`line: token` for every string literal in `path` that is a whole type token."""
    skip = _docstrings(path)
    return [f"{node.lineno}: {node.value}" for node in nodes(path)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skip and TOKEN.match(node.value)]


def test_no_module_but_types_spells_a_type_token():
    spelled = {str(path.relative_to(PROJECT_DIR)): found
               for path in sorted((PROJECT_DIR / "components").rglob("*.py"))
               if path != Path(types.__file__) and (found := token_literals(path))}
    assert spelled == {}


def test_the_scan_finds_a_token_literal(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Docstring alicloud:ecs/instance:Instance is fine."""\n'
                      'X = "alicloud:ecs/instance:Instance"\n')
    assert token_literals(module) == ["2: alicloud:ecs/instance:Instance"]


def test_each_token_is_written_once():
    by_value: dict[str, list[str]] = {}
    for name, value in TOKENS.items():
        by_value.setdefault(value, []).append(name)
    assert {value: names for value, names in by_value.items() if len(names) > 1} == {}


def sdk_file(token: str) -> Path:
    """alicloud:ecs/ecsDisk:EcsDisk -> pulumi_alicloud/ecs/ecs_disk.py (index: the root)."""
    _, module_path, _ = token.split(":")
    module, member = module_path.split("/")
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", member).lower()
    return (SDK_DIR if module == "index" else SDK_DIR / module) / f"{snake}.py"


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_each_token_is_declared_by_the_sdk(name):
    token = TOKENS[name]
    assert TOKEN.match(token), token
    path = sdk_file(token)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    assert (f'@pulumi.type_token("{token}")' in text
            or f"pulumi.runtime.invoke('{token}'" in text), f"{token} not declared in {path}"
