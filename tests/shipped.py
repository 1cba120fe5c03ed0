"""Plans made once per test process (under pytest-xdist, once per worker) for every test that
reads them as they are: the shipped stacks (stacks/Pulumi.<stack>.yaml), the clusters the
plan_cluster fixture writes, and the stack files the tests of a command plan (with the ESC
environment values given, if any). A plan is made again only for a stack file of other
content, name or neighbours (the stack files beside it, which stack references read) or other
environment values; each call returns a fresh copy of its own (unpickled), so a
test that changes what it got cannot change what another sees. Tests of the engine itself,
and tests that patch something before planning, call run_plan; tests of a command put
planned_once in place of its run_plan (plan_shipped_once)."""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Mapping
from pathlib import Path

import pytest

from gpu_infra_tools.plan.engine import Plan, run_plan

from .conftest import STACKS_DIR

_PLANS: dict[str, bytes] = {}
"""Pickled plans, by what they were planned from (_planned_from)."""

PLANNING_COMMANDS = ("gpu_infra_tools.cli.planned", "gpu_infra_tools.cli.cost")
"""The CLI modules that call run_plan (plan, policy, cost)."""


def _planned_from(stack_path: Path, environment: Mapping | None) -> str:
    """A digest of what a plan of `stack_path` reads: the file's name and content, the
    resolved ESC `environment` and the stack files beside it."""
    path = Path(stack_path).resolve()
    digest = hashlib.sha256(path.name.encode() + b"\0" + path.read_bytes() + b"\0"
                            + json.dumps(environment or {}, sort_keys=True).encode())
    for neighbour in sorted(path.parent.glob("Pulumi.*.yaml")):
        if neighbour != path and neighbour.is_file():
            digest.update(b"\0" + neighbour.name.encode() + b"\0" + neighbour.read_bytes())
    return digest.hexdigest()


def planned_once(stack_path: Path, environment: Mapping | None = None) -> Plan:
    """run_plan(stack_path, environment=environment), made once per process for a stack file
    of this content beside these stack files with these ESC environment values; a fresh copy
    each call, its source `stack_path`. ConfigError, ValidatorErrors and ProgramError are
    raised as run_plan raises them (nothing is kept)."""
    if not Path(stack_path).is_file():  # run_plan says what is wrong with the path
        return run_plan(stack_path, environment=environment)
    key = _planned_from(stack_path, environment)
    if key not in _PLANS:
        _PLANS[key] = pickle.dumps(run_plan(stack_path, environment=environment))
    plan: Plan = pickle.loads(_PLANS[key])
    plan.source = str(stack_path)  # as run_plan(stack_path) has it (SARIF reads the file)
    return plan


def shipped_plan(stack: str) -> Plan:
    """A fresh copy of the plan of shipped stack `stack` (e.g. "training-prod")."""
    return planned_once(STACKS_DIR / f"Pulumi.{stack}.yaml")


def plan_shipped_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands that plan (plan, policy, cost) take their plans from planned_once."""
    for module in PLANNING_COMMANDS:
        monkeypatch.setattr(f"{module}.run_plan", planned_once)
