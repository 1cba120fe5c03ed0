"""The house rules, checked on the source: imports only point down, no circles, the lower
layers stay free of Pulumi, the ground floor and the policy rules free of gpu_infra."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

from .sources import nodes

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("gpu_infra_facts", "gpu_infra", "gpu_infra_provider", "gpu_infra_policies",
            "gpu_infra_tools")
SOURCE_ROOT = ROOT / "components"

LAYERS = ["gpu_infra_facts", "gpu_infra.generated", "gpu_infra.catalog", "gpu_infra.schema",
          "gpu_infra.knowhow", "gpu_infra.blocks", "gpu_infra.nodeplan", "gpu_infra.layouts",
          "gpu_infra.program", "gpu_infra.testing",
          "gpu_infra_provider",
          "gpu_infra_policies",
          "gpu_infra_tools.interrupt", "gpu_infra_tools.files", "gpu_infra_tools.alibaba",
          "gpu_infra_tools.plan", "gpu_infra_tools.preflight", "gpu_infra_tools.cost",
          "gpu_infra_tools.review", "gpu_infra_tools.clone",
          "gpu_infra_tools.cli", "gpu_infra_tools.reference",
          "gpu_infra_tools.console"]
"""The layers, lowest first: a module imports only from its own layer or below. The policy
rules sit above the library only in this list: they import nothing of it (tested below)."""

PULUMI_FREE = ("gpu_infra_facts", "gpu_infra.catalog", "gpu_infra.schema", "gpu_infra.knowhow",
               "gpu_infra.nodeplan")
PULUMI_FREE_COMMANDS = ("gpu_infra_tools.cli.validate", "gpu_infra_tools.cli.schema",
                        "gpu_infra_tools.cli.catalog")
"""Commands that build nothing: everything they import, however indirectly, is free of Pulumi
(tests/test_cli_conventions.py runs them and looks at what got loaded)."""
PULUMI_MODULES = ("pulumi", "pulumi_alicloud", "pulumi_policy")


@cache
def modules() -> dict[str, Path]:
    """Every module of both packages: dotted name -> file."""
    found = {}
    for package in PACKAGES:
        for path in sorted((SOURCE_ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(SOURCE_ROOT).with_suffix("").parts)
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
    for node in nodes(path):
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
    ranks = [rank for rank, layer in enumerate(LAYERS)
             if module == layer or module.startswith(layer + ".")]
    return ranks[-1] if ranks else None


def test_every_module_belongs_to_a_layer():
    assert [m for m in modules() if layer_of(m) is None and m not in PACKAGES] == []


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


def reachable(module: str) -> set[str]:
    """`module` and every module of ours it imports, directly or not (a package's __init__
    counts for each of its submodules: importing one runs it)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parents = [".".join(name.split(".")[:end]) for end in range(1, name.count(".") + 1)]
        todo += [m for m in (*internal_imports(name), *parents) if m in modules()]
    return seen


@pytest.mark.parametrize("command", PULUMI_FREE_COMMANDS)
def test_commands_that_build_nothing_reach_no_pulumi(command):
    offenders = sorted(f"{m} -> {name}" for m in reachable(command) for name in imports_of(m)
                       if name.split(".")[0] in PULUMI_MODULES)
    assert offenders == []


def test_ground_floor_uses_the_standard_library_only():
    """The facts import no other package of ours, and nothing outside the standard library."""
    allowed = set(sys.stdlib_module_names) | {"gpu_infra_facts", "__future__"}
    offenders = [f"{m} -> {name}" for m in modules() if m.startswith("gpu_infra_facts")
                 for name in imports_of(m) if name.split(".")[0] not in allowed]
    assert offenders == []


def test_policy_rules_use_the_standard_library_and_the_floor_only():
    """The rules never import gpu_infra; only the CrossGuard adapter imports pulumi_policy."""
    allowed = set(sys.stdlib_module_names) | {"gpu_infra_facts", "gpu_infra_policies",
                                              "__future__"}
    offenders = [f"{m} -> {name}" for m in modules() if m.startswith("gpu_infra_policies")
                 for name in imports_of(m) if name.split(".")[0] not in allowed
                 and not (m == "gpu_infra_policies.crossguard"
                          and name.split(".")[0] == "pulumi_policy")]
    assert offenders == []


def test_the_library_never_imports_the_pack_or_the_tools():
    """gpu_infra (what other programs import) judges nothing with the pack and runs no tool."""
    offenders = [f"{m} -> {name}" for m in modules() if m.split(".")[0] == "gpu_infra"
                 for name in imports_of(m)
                 if name.split(".")[0] in ("gpu_infra_policies", "gpu_infra_tools")]
    assert offenders == []
