"""The schema checks first what a building block refuses: for every `raise` in blocks/, a
hostile stack that `validate` and `plan` both refuse with the field path (exit 2, never the
block's exit 1), or the reason no stack file can reach it.

The scan is by AST, so a new `raise` in a block fails this test until it is listed here."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from .conftest import BASE_INFERENCE, PROJECT_DIR, merged
from .hostile import Case, run_in_process
from .sources import parsed
from .test_hostile_schema import P, stack_text

BLOCKS = PROJECT_DIR / "components" / "gpu_infra" / "blocks"
ZONES = [f"cn-hangzhou-{letter}" for letter in "bcdefghijkl"]


def visit(node: ast.AST, scope: tuple[str, ...], relative: str, sites: set[str]) -> None:
    """Add `relative::scope` to `sites` for each raise below `node`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            visit(child, (*scope, child.name), relative, sites)
        else:
            if isinstance(child, ast.Raise):
                sites.add(f"{relative}::{'.'.join(scope)}")
            visit(child, scope, relative, sites)


NODE_PROGRAMS = BLOCKS / "bootstrap" / "steps"
"""Python the nodes run (shipped in user data), not checks made while planning."""
FUNCTION_PROGRAMS = BLOCKS / "functions"
"""Python Function Compute runs (shipped in the function's zip), not checks made while
planning."""


def raise_sites() -> set[str]:
    """`path::Class.function` of every function in blocks/ (node and function programs aside)
    that holds a raise statement."""
    sites: set[str] = set()
    for path in sorted(BLOCKS.rglob("*.py")):
        if path.is_relative_to(NODE_PROGRAMS) or path.is_relative_to(FUNCTION_PROGRAMS):
            continue
        relative = path.relative_to(BLOCKS).as_posix()
        visit(parsed(path), (), relative, sites)
    return sites


SCHEMA_REFUSES: dict[str, tuple[dict[str, Any], str]] = {
    "storage/disks.py::scaling_data_disk_args": (
        merged(BASE_INFERENCE, storage={"disks": [{"name": "cache", "size_gib": 40000}]}),
        f"{P}.storage.disks[0].size_gib: 40000 GiB is above the 32768 GiB an ESS scaling "
        "configuration takes"),
    "loadbalancer.py::_check": (
        merged(BASE_INFERENCE, network={"vpc_cidr": "10.2.0.0/16", "zones": ZONES,
                                        "declared_zones": ["cn-hangzhou-c", "cn-hangzhou-d",
                                                           "cn-hangzhou-l"]}),
        f"{P}.network.zones: 11 zones; the load balancer maps at most 10"),
}
"""Block check -> a stack that reaches it, and the line validate and plan print."""

SCHEMA_PASSES: dict[str, dict[str, Any]] = {
    "conventions.py::Conventions.unique_name": merged(
        BASE_INFERENCE, name="a" * 24, naming={"global_suffix": "auto"},
        monitoring={"contacts": [{"name": "b" * 12, "email": "ops@example.com"}]}),
}
"""Block check -> the stack that used to reach it (a contact name past CloudMonitor's 40
characters): derived names are now shortened (gpu_infra_facts.naming.fit_name), and the
remaining character checks hold for every name built from a valid cluster name."""

UNREACHABLE = {
    "compute/nodes.py::GpuNodes.__init__": "the caller's contract (attached disks need a zone)",
    "compute/node_tools.py::node_tools_object": "the caller's contract (a spec from "
                                                "with_node_tools: layouts pass one)",
    "loadbalancer.py::ServiceLoadBalancer.attach": "the caller's contract (attach once)",
    "identity.py::KeyPair.__init__": "layouts create a key pair only with security.public_key",
    "storage/filesystem.py::_check": "the layout passes its nodes' vSwitch (or VPC) CIDRs: at "
                                     "least one zone, private-sized (network.vpc_cidr)",
    "network.py::Network._use_existing.check": "what the cloud says of a bring-your-own VPC "
                                               "and its vSwitches, known only at `pulumi "
                                               "up` (offline the lookups answer from the "
                                               "config: tests/test_layout_judgement.py)",
    "compute/images.py::_exactly_one": "what the account holds: the images named "
                                       "fleet.image.name, known only to the cloud",
    "compute/fleet_ops.py::drain_parameters": "the shipped drain with what the schema bounds "
                                               "(drain_seconds up to 21600; service ports "
                                               "within the 200 security group rules): at "
                                               "most about 2,500 of the 4096 characters "
                                               "(tests/test_drain.py)",
    "compute/images.py::_published": "what the image stack of fleet.image.from_stack has "
                                     "published, known only at `pulumi up` (offline its file "
                                     "is read: tests/test_image_from_stack.py)",
    "ack/addons.py::checked_name": "what the cluster offers (cs.get_kubernetes_addons), known "
                                   "only to the cloud; the names are the pinned ones "
                                   "(ack.addon_versions is checked against them)",
    "workloads/install.py::KubeObjects._object": "gpu-infra's own manifests, not stack "
                                                 "values (tests/test_job_layer_install.py "
                                                 "plans every kind the stacks apply)",
    "bootstrap/__init__.py::drain_command": "the stack's own job queue name (a conventions "
                                            "name: letters, digits, hyphens), not a stack "
                                            "value taken as is",
    "compute/image_build.py::task_document": "the shipped node steps, not stack values "
                                             "(tests/test_image_build.py)",
    "compute/image_build.py::pack_components": "the shipped node steps, not stack values "
                                               "(tests/test_image_build.py)",
    **{f"bootstrap/minify.py::{function}": "the minifier refusing a shipped script it cannot "
                                            "strip safely (tests/test_bootstrap_minify.py)"
       for function in ("strip_shell", "_Scanner._heredoc", "_Scanner._in_double_quotes",
                        "_Scanner._in_commands", "_Scanner._in_braces")},
}
"""Block checks no stack file can reach, and why."""


def test_every_raise_in_blocks_is_checked_by_the_schema_first_or_says_why_not():
    listed = [*SCHEMA_REFUSES, *SCHEMA_PASSES, *UNREACHABLE]
    assert len(listed) == len(set(listed))
    assert raise_sites() == set(listed)


def test_the_scan_finds_raises_in_methods_and_functions():
    sites = raise_sites()
    assert "storage/disks.py::scaling_data_disk_args" in sites
    assert "loadbalancer.py::ServiceLoadBalancer.attach" in sites


REFUSED = [Case("schema-first", f"{site}:{command}", (command, "{d}/Pulumi.bad.yaml"),
                {"Pulumi.bad.yaml": stack_text(stack)}, expect=expect)
           for site, (stack, expect) in SCHEMA_REFUSES.items() for command in ("validate", "plan")]


@pytest.mark.parametrize("case", REFUSED, ids=[case.id for case in REFUSED])
def test_validate_and_plan_refuse_what_a_block_would_with_the_field_path(
        case: Case, tmp_path: Path, capsys, monkeypatch):
    run_in_process(case, tmp_path, capsys, monkeypatch)


PASSED = [Case("schema-first", site, ("plan", "{d}/Pulumi.ok.yaml", "--json", "-"),
               {"Pulumi.ok.yaml": stack_text(stack)}, code=0)
          for site, stack in SCHEMA_PASSES.items()]


@pytest.mark.parametrize("case", PASSED, ids=[case.id for case in PASSED])
def test_stacks_that_reached_a_shortened_check_now_plan(case: Case, tmp_path: Path, capsys,
                                                        monkeypatch):
    run_in_process(case, tmp_path, capsys, monkeypatch)
