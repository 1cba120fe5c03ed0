"""The pull-request comment, offline: which stacks are planned, one marked comment, the size
limit with the summary first, the exit code, and the workflow that posts it."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess

import pytest
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


def run_on_training_dev(monkeypatch, code: int, **options):
    """pr_comment.run when only training-dev changed, its plan answered with `code`; the
    exit code and the argument lists of the plans asked for."""
    monkeypatch.chdir(PROJECT_DIR)
    monkeypatch.setattr(pr_comment, "changed_files",
                        lambda base: ["stacks/Pulumi.training-dev.yaml"])
    calls = []

    def runner(args):
        calls.append(args)
        return code, REPORT.format(rows=""), ""

    return pr_comment.run(argparse.Namespace(**options), runner), calls


def test_run_writes_the_comment_and_fails_on_a_failed_plan(tmp_path, monkeypatch):
    out = tmp_path / "comment.md"
    code, calls = run_on_training_dev(monkeypatch, 1, base="0123456789abcdef", output=out)
    assert code == 1
    assert calls[0][:4] == ["plan", "stacks/Pulumi.training-dev.yaml", "--against",
                            "0123456789abcdef"]
    assert out.read_text().startswith(MARKER)


def test_workflow_reports_in_the_summary_then_comments_then_fails_by_the_plan():
    workflow = yaml.safe_load((PROJECT_DIR / ".github/workflows/pr.yml").read_text())
    steps = workflow["jobs"]["test-and-plan"]["steps"]
    names = [step.get("name", "") for step in steps]
    plan = steps[names.index(next(n for n in names if n.startswith("Plan the stacks")))]
    assert "gpu-infra pr-comment" in plan["run"] and plan["continue-on-error"] is True
    summary = next(step for step in steps if "GITHUB_STEP_SUMMARY" in step.get("run", ""))
    post = next(step for step in steps if "plan-comment.js" in step.get("with", {}).get(
        "script", ""))
    assert names.index(plan["name"]) < names.index(summary["name"]) < names.index(post["name"])
    assert "continue-on-error" not in post  # the script itself turns a 403 into a warning
    assert steps[-1]["if"] == "steps.plan.outcome != 'success'"


NODE = shutil.which("node")
COMMENT_SCRIPT = PROJECT_DIR / ".github" / "scripts" / "plan-comment.js"
BOT = {"login": "github-actions[bot]", "type": "Bot"}


def run_comment_script(tmp_path, **scenario):
    """plan-comment.js against a fake GitHub API (tests/js/plan_comment.cjs)."""
    comment = tmp_path / "plan-comment.md"
    comment.write_text(f"{MARKER}\n## gpu-infra plan\n", encoding="utf-8")
    done = subprocess.run([NODE, str(PROJECT_DIR / "tests" / "js" / "plan_comment.cjs"),
                           str(COMMENT_SCRIPT), str(comment), json.dumps(scenario)],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


@pytest.mark.slow  # node processes
@needs_node
def test_the_comment_is_updated_only_when_ours(tmp_path):
    someone = {"id": 1, "user": {"login": "mallory", "type": "User"},
               "body": f"{MARKER}\nfake report"}
    ours = {"id": 2, "user": BOT, "body": f"{MARKER}\nold report"}
    updated = run_comment_script(tmp_path, comments=[someone, ours])
    assert updated["result"] == "updated"
    assert [c["args"].get("comment_id") for c in updated["calls"]
            if c["name"] == "update"] == [2]
    created = run_comment_script(tmp_path, comments=[someone])
    assert created["result"] == "created"
    assert not [c for c in created["calls"] if c["name"] == "update"]


@pytest.mark.slow  # node processes
@needs_node
def test_a_read_only_token_warns_and_leaves_the_report_in_the_summary(tmp_path):
    fork = run_comment_script(tmp_path, comments=[], fail={"create": 403})
    assert fork["result"] == "summary-only" and "error" not in fork
    assert "job summary" in fork["warnings"][0]
    other = run_comment_script(tmp_path, comments=[], fail={"create": 500})
    assert "500" in other["error"]


def test_the_example_policy_config_disables_no_rule_the_stacks_rely_on():
    config = json.loads((PROJECT_DIR / pr_comment.POLICY_CONFIG).read_text())
    disabled = [rule for rule, value in config.items()
                if value == "disabled" or (isinstance(value, dict)
                                           and value.get("enforcementLevel") == "disabled")]
    assert disabled == []
    budgets = [path.name for path in (PROJECT_DIR / "stacks").glob("Pulumi.*.yaml")
               if "monthly_budget_cny" in path.read_text()]
    assert budgets and config.get("monthly-budget") == "mandatory"


@pytest.fixture(scope="module")
def huge_training_review(tmp_path_factory):
    """training-prod at 1,024 nodes, reviewed with the example policy config."""
    from gpu_infra_policies.config import load_policy_config
    from gpu_infra_tools.plan.engine import run_plan
    from gpu_infra_tools.review import review

    source = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.training-prod.yaml").read_text())
    source["config"]["gpu-infra:cluster"]["fleet"]["nodes"] = 1024
    path = tmp_path_factory.mktemp("huge") / "Pulumi.training-huge.yaml"
    path.write_text(yaml.safe_dump(source), encoding="utf-8")
    settings = load_policy_config(PROJECT_DIR / pr_comment.POLICY_CONFIG)
    return review(run_plan(path), settings)


@pytest.mark.slow  # plans a 1,024-node stack
def test_a_1024_node_comment_keeps_the_budget_verdict_cost_and_findings(huge_training_review):
    from gpu_infra_tools.review.render import render_markdown

    markdown = render_markdown(huge_training_review)
    assert len(markdown) > COMMENT_LIMIT  # the preview tree alone is too big
    comment = build_comment([StackResult("training-huge", 1, markdown)], "abc")
    assert len(comment) <= COMMENT_LIMIT
    assert "Cut to fit GitHub's comment limit" in comment
    for kept in ("**Budget: ", "over budget** (mandatory)", "**Estimated cost:",
                 "| **Total** |", "**Policy violations:", "`monthly-budget`",
                 "Validator findings:"):
        assert kept in comment, kept
    assert comment.index("**Budget: ") < comment.index("**Estimated cost:") < \
        comment.index("**Policy violations:")


def test_run_asks_each_plan_for_sarif_in_the_sarif_dir(tmp_path, monkeypatch):
    sarif_dir = tmp_path / "sarif"
    code, calls = run_on_training_dev(monkeypatch, 0, base="abc", output=tmp_path / "c.md",
                                      sarif_dir=sarif_dir)
    assert code == 0 and sarif_dir.is_dir()
    args = calls[0]
    assert args[args.index("--sarif") + 1] == str(sarif_dir / "training-dev.sarif")
