"""Every scalar field of every shipped stack moved to another valid value (generated_edits):
the change report never lets through as a plain update an edit the update preconditions say
the cloud refuses (or carries out by deleting data). Independently of the checks' code, a
value that goes down where the table says it may only grow is always reported."""

from __future__ import annotations

import pytest

from gpu_infra.schema.problems import ConfigError
from gpu_infra_facts.update_preconditions import preconditions
from gpu_infra_tools.plan.engine import ValidatorErrors, run_plan
from gpu_infra_tools.review import review
from gpu_infra_tools.review.changes import ChangeReport, change_report
from gpu_infra_tools.review.preconditions import CHECKS, Plans, quantity
from gpu_infra_tools.review.update_policies import policies_of

from .generated_edits import (
    GeneratedEdit,
    candidates,
    clusters,
    fields,
    values_by_field,
    write_stack,
)
from .golden import golden_record

pytestmark = pytest.mark.slow  # plans one edit per field of each shipped stack

GROW_ONLY = ("never_lower", "claim_resize")
"""Checks of rows whose value may not go down."""


def _value(inputs: dict, path: str) -> object:
    for key in path.split("."):
        inputs = inputs.get(key) if isinstance(inputs, dict) else None
    return inputs


def _assert_refusals_reported(report: ChangeReport, edit: GeneratedEdit) -> int:
    """Every change failing a precondition is refused (or its data loss reported), and the
    verdict says so; returns how many resources are refused."""
    plans = Plans.of(report.changes)
    refused = {name for name, _ in report.impact.refused}
    lost = {"data": {name for name, _ in report.impact.expired},
            "nodes": {name for name, _ in report.impact.scaled_in}}
    for change in report.changes:
        if not change.custom or change.base is None or change.change not in ("update", "replace"):
            continue
        for path in change.because:
            row = preconditions(change.type).get(path)
            if row is None:
                continue
            failing = CHECKS[row.check](change, row, plans) is not None
            lower = row.check in GROW_ONLY and change.change == "update" and (
                (old := quantity(_value(change.base_inputs, path))) is not None
                and (new := quantity(_value(change.inputs, path))) is not None and new < old)
            reported = refused if row.refuses else lost[row.loses]
            assert not (failing or lower) or change.name in reported, (
                f"{edit.stack} {edit.field} {edit.before!r} -> {edit.after!r}: {change.name} "
                f"{path} reported as {change.change}, the cloud refuses it")
    if refused:
        assert policies_of(report)[0] == "refused" and report.blocked, edit
    if lost["data"]:
        assert "replaces data" in policies_of(report) and any(
            f.rule == "replaces-data" for f in report.findings), edit
    return len(refused)


@pytest.mark.parametrize("stack", sorted(clusters()))
def test_no_generated_edit_passes_as_an_update_the_cloud_refuses(stack, tmp_path):
    every = clusters()
    cluster, seen, base = every[stack], values_by_field(every), golden_record(stack)
    planned = skipped = 0
    for path, value in fields(cluster):
        for after in candidates(path, value, seen):
            edit = GeneratedEdit(stack, path, value, after)
            try:
                plan = run_plan(write_stack(stack, edit.apply(cluster), tmp_path / str(planned)))
            except (ConfigError, ValidatorErrors):
                continue
            _assert_refusals_reported(change_report(review(plan), base, "golden"), edit)
            planned += 1
            break
        else:
            skipped += 1
    assert planned >= 2 * skipped, f"{stack}: {planned} edits planned, {skipped} fields skipped"
