"""The plan of every shipped stack against its recorded plan (tests/golden/<stack>.json).

A deliberate change of what a stack plans updates the recordings in the same commit:
`GPU_INFRA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden_plans.py`; the diff of
tests/golden/ then shows the reviewer exactly what changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.review import review

from .conftest import PROJECT_DIR, STACKS_DIR

GOLDEN_DIR = PROJECT_DIR / "tests" / "golden"
SHIPPED = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml")
                 for path in STACKS_DIR.glob("Pulumi.*.yaml"))


RECORDED_TIME = "0001-01-01T00:00:00Z"
"""The cost's `timeGenerated` in a recording (the real one is the time of the plan)."""


def record_of(stack: str) -> str:
    """The `plan --json` record of a shipped stack, as the CLI writes it, but for the time
    and the stack file's path in the cost (recorded relative to the project)."""
    record = review(run_plan(STACKS_DIR / f"Pulumi.{stack}.yaml")).to_json()
    record["cost"]["timeGenerated"] = RECORDED_TIME
    for project in record["cost"]["projects"]:
        path = Path(project["metadata"]["path"])
        project["metadata"]["path"] = str(path.relative_to(PROJECT_DIR))
    return json.dumps(record, indent=2, default=str) + "\n"


def test_every_shipped_stack_has_a_recording():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.json")) == SHIPPED


@pytest.mark.parametrize("stack", SHIPPED)
def test_plan_matches_recording(stack):
    golden = GOLDEN_DIR / f"{stack}.json"
    actual = record_of(stack)
    if os.environ.get("GPU_INFRA_UPDATE_GOLDEN") == "1":
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8"), (
        f"{stack} plans differently from tests/golden/{stack}.json; if intended, rerun with "
        "GPU_INFRA_UPDATE_GOLDEN=1 and commit the recording")
