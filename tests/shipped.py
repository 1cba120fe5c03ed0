"""The plans of the shipped stacks (stacks/Pulumi.<stack>.yaml), made once per test process
(under pytest-xdist, once per worker) for every test that reads them as they are: each call
returns a copy of its own, so a test that changes what it got cannot change what another
sees. Tests of the engine itself, and tests that patch something before planning, call
run_plan; tests of a command put planned_once in place of its run_plan."""

from __future__ import annotations

import pickle
from functools import cache
from pathlib import Path

from gpu_infra_tools.plan.engine import Plan, run_plan

from .conftest import STACKS_DIR


@cache
def _pickled(stack: str) -> bytes:
    return pickle.dumps(run_plan(STACKS_DIR / f"Pulumi.{stack}.yaml"))


def shipped_plan(stack: str) -> Plan:
    """A fresh copy of the plan of shipped stack `stack` (e.g. "training-prod")."""
    plan: Plan = pickle.loads(_pickled(stack))
    return plan


def planned_once(stack_path: Path) -> Plan:
    """run_plan(stack_path), but a shipped stack file's plan is shipped_plan's: for the tests
    of a command (cost, plan) that plan the shipped stacks again and again."""
    path = Path(stack_path).resolve()
    if path.parent == STACKS_DIR.resolve() and path.name.startswith("Pulumi.") \
            and path.suffix == ".yaml":
        return shipped_plan(path.name.removeprefix("Pulumi.").removesuffix(".yaml"))
    return run_plan(stack_path)
