"""The house rules, checked on the source: imports only point down, no circles, the lower
layers stay free of Pulumi, the policy rules free of gpu_infra."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE_ROOTS = {"gpu_infra": ROOT / "components", "gpu_infra_policies": ROOT / "policies"}

LAYERS = ["limits", "catalog", "schema", "knowhow", "blocks", "layouts", "program",
          "tools.interrupt", "tools.files", "tools.plan", "tools.cost", "tools.review",
          "tools.clone", "tools.metrics", "tools.cli", "tools.console"]
"""gpu_infra's layers, lowest first: a module imports only from its own layer or below."""

PULUMI_FREE = ("limits", "catalog", "schema", "knowhow")
PULUMI_MODULES = ("pulumi", "pulumi_alicloud", "pulumi_policy")


@cache
def modules() -> dict[str, Path]:
    """Every module of both packages: dotted name -> file."""
    found = {}
    for package, root in SOURCE_ROOTS.items():
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


@cache
def imports_of(module: str) -> frozenset[str]:
    """Modules `module` imports (anywhere in its body), as dotted names."""
    path = modules()[module]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path.name == "__init__.py", node)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names
                         if f"{target}.{alias.name}" in modules())
    return frozenset(found)


def internal_imports(module: str) -> set[str]:
    return {name for name in imports_of(module) if name in modules()}


def layer_of(module: str) -> int | None:
    if not module.startswith("gpu_infra."):
        return None
    rest = module.removeprefix("gpu_infra.")
    ranks = [rank for rank, layer in enumerate(LAYERS)
             if rest == layer or rest.startswith(layer + ".")]
    return ranks[-1] if ranks else None


def test_every_gpu_infra_module_belongs_to_a_layer():
    assert [m for m in modules() if m.startswith("gpu_infra.") and layer_of(m) is None] == []


def test_imports_only_point_down():
    upward = [f"{module} -> {target}" for module in modules() for target in internal_imports(module)
              if layer_of(module) is not None and layer_of(target) is not None
              and layer_of(target) > layer_of(module)]
    assert upward == []


def test_no_import_circles():
    graph = {module: internal_imports(module) - {module} for module in modules()}
    # a package's __init__ importing its own submodules is not a circle of modules
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


@pytest.mark.parametrize("layer", PULUMI_FREE)
def test_lower_layers_import_no_pulumi(layer):
    offenders = [f"{m} -> {name}" for m in modules() if layer_of(m) == LAYERS.index(layer)
                 for name in imports_of(m) if name.split(".")[0] in PULUMI_MODULES]
    assert offenders == []


def test_policy_rules_use_the_standard_library_only():
    """The rules never import gpu_infra; only the CrossGuard adapter imports pulumi_policy."""
    allowed = set(sys.stdlib_module_names) | {"gpu_infra_policies", "__future__"}
    offenders = [f"{m} -> {name}" for m in modules() if m.startswith("gpu_infra_policies")
                 for name in imports_of(m) if name.split(".")[0] not in allowed
                 and not (m == "gpu_infra_policies.crossguard"
                          and name.split(".")[0] == "pulumi_policy")]
    assert offenders == []
