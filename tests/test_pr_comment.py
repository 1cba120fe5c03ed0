"""The pull-request comment, offline: which stacks are planned, one marked comment, the size
limit with the summary first, the exit code, and the workflow that posts it."""

from __future__ import annotations

import argparse

import yaml

from gpu_infra_tools.cli import pr_comment
from gpu_infra_tools.cli.pr_comment import (
    COMMENT_LIMIT,
    MARKER,
    StackResult,
    build_comment,
    stacks_to_plan,
)

from .conftest import PROJECT_DIR

SHIPPED = ["inference-prod", "training-dev", "training-prod"]
REPORT = """### gpu-infra plan: `training-prod`

**Changes against abc (abc)**

- GPU nodes replaced: 8 because dataDisks.size changed (a, b).
- Monthly cost: 1 -> 2 CNY (+1).
- Resources: 0 create, 0 update, 8 replace, 0 delete, 52 same.

<details><summary>Changed resources (8)</summary>

{rows}
</details>
"""


def test_code_changes_plan_every_stack():
    assert stacks_to_plan(["components/gpu_infra/blocks/compute/nodes.py"], SHIPPED) == SHIPPED
    assert stacks_to_plan(["pyproject.toml", "stacks/Pulumi.training-dev.yaml"],
                          SHIPPED) == SHIPPED


def test_stack_file_changes_plan_only_those_stacks():
    changed = ["stacks/Pulumi.training-prod.yaml", "README.md", "docs/update-policies.md"]
    assert stacks_to_plan(changed, SHIPPED) == ["training-prod"]
    assert stacks_to_plan(["stacks/acknowledged/training-dev.yaml"], SHIPPED) == [
        "training-dev"]
    assert stacks_to_plan(["stacks/Pulumi.retired.yaml"], SHIPPED) == []
    assert stacks_to_plan(["README.md"], SHIPPED) == []


def test_comment_starts_with_the_marker_and_the_summary():
    results = [StackResult("training-prod", 1, REPORT.format(rows="| r |")),
               StackResult("training-dev", 2, "", "invalid stack: x\n  fleet.nodes: bad")]
    comment = build_comment(results, "abc")
    lines = comment.splitlines()
    assert lines[0] == MARKER
    assert "| `training-prod` | **fails** | GPU nodes replaced: 8" in comment
    assert "| `training-dev` | **bad input** | invalid stack: x |" in comment
    assert comment.index("| Stack |") < comment.index("<details open>")


def test_huge_reports_are_cut_under_the_limit_with_a_note():
    rows = "\n".join(f"| replace | `node-{i:05d}` | dataDisks.size |" for i in range(5000))
    results = [StackResult(name, 1, REPORT.format(rows=rows)) for name in SHIPPED]
    comment = build_comment(results, "abc")
    assert len(comment) <= COMMENT_LIMIT
    assert comment.count("Cut to fit GitHub's comment limit") >= 1
    assert comment.count("<details") == comment.count("</details>")
    for name in SHIPPED:  # every stack is in the summary even when its details are cut
        assert f"| `{name}` | **fails** |" in comment


def test_no_affected_stack_says_so():
    assert "No stack is affected" in build_comment([], "abc")


def test_run_writes_the_comment_and_fails_on_a_failed_plan(tmp_path, monkeypatch):
    monkeypatch.chdir(PROJECT_DIR)
    monkeypatch.setattr(pr_comment, "changed_files",
                        lambda base: ["stacks/Pulumi.training-dev.yaml"])
    calls = []

    def runner(args):
        calls.append(args)
        return 1, REPORT.format(rows=""), ""

    out = tmp_path / "comment.md"
    code = pr_comment.run(argparse.Namespace(base="0123456789abcdef", out=out), runner)
    assert code == 1
    assert calls[0][:4] == ["plan", "stacks/Pulumi.training-dev.yaml", "--against",
                            "0123456789abcdef"]
    assert out.read_text().startswith(MARKER)


def test_workflow_updates_one_comment_and_fails_after_posting():
    workflow = yaml.safe_load((PROJECT_DIR / ".github/workflows/pr.yml").read_text())
    steps = workflow["jobs"]["test-and-plan"]["steps"]
    names = [step.get("name", "") for step in steps]
    plan = steps[names.index(next(n for n in names if n.startswith("Plan the stacks")))]
    assert "gpu-infra pr-comment" in plan["run"] and plan["continue-on-error"] is True
    post = next(step for step in steps if "updateComment" in step.get("with", {}).get(
        "script", ""))
    assert "startsWith(marker)" in post["with"]["script"]
    assert names.index(post["name"]) < len(names) - 1
    assert steps[-1]["if"] == "steps.plan.outcome != 'success'"
