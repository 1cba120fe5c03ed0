"""`gpu-infra plan --against`: base from a plan JSON or a git revision, guard-rail exit codes,
acknowledgement files, bad bases."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile

import pytest
import yaml

from gpu_infra_tools.cli import main

from .conftest import PROJECT_DIR, STACKS_DIR
from .golden import golden_plan_file
from .shipped import plan_shipped_once


@pytest.fixture(autouse=True)
def plans_once(monkeypatch):
    plan_shipped_once(monkeypatch)


@pytest.fixture
def prod_stack(tmp_path):
    """training-prod copied to a stacks dir, with 6 nodes instead of 8."""
    data = yaml.safe_load((STACKS_DIR / "Pulumi.training-prod.yaml").read_text())
    data["config"]["gpu-infra:cluster"]["fleet"]["nodes"] = 6
    path = tmp_path / "Pulumi.training-prod.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_dangerous_prod_change_exits_1_and_says_so_first(prod_stack, tmp_path, capsys):
    out = tmp_path / "plan.json"
    code = main(["plan", str(prod_stack), "--against",
                 str(golden_plan_file("training-prod", tmp_path)), "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 1
    assert text.startswith("Changes against ")
    assert "GPU nodes deleted: 2" in text.splitlines()[1]
    record = json.loads(out.read_text())
    assert record["changes"]["counts"]["delete"] == 8  # nodes, roles, disks, attachments
    assert {d["name"] for d in record["changes"]["deleted"]} >= {"llm-pretrain-gpu-node-007"}
    node = next(r for r in record["resources"] if r["name"] == "llm-pretrain-gpu-node-000")
    assert (node["change"], node["restart"], node["because"]) == ("same", False, [])


def test_acknowledgement_file_next_to_the_stack_lets_it_pass_except_protection(
        prod_stack, tmp_path, capsys):
    ack = tmp_path / "acknowledged" / "training-prod.yaml"
    ack.parent.mkdir()
    ack.write_text(yaml.safe_dump({"acknowledge": [
        {"rule": "replaces-gpu-nodes", "resources": ["llm-pretrain-gpu-node-00[67]"],
         "reason": "shrink to six nodes"}]}))
    code = main(["plan", str(prod_stack), "--against",
                 str(golden_plan_file("training-prod", tmp_path))])
    text = capsys.readouterr().out
    assert "INFO replaces-gpu-nodes [acknowledged]" in text
    assert code == 1  # deletion protection still refuses the delete
    assert "ERROR blocked-by-protection" in text


def test_bad_acknowledgement_file_is_bad_input(prod_stack, tmp_path, capsys):
    ack = tmp_path / "acknowledged" / "training-prod.yaml"
    ack.parent.mkdir()
    ack.write_text("acknowledge:\n  - {rule: replaces-data}\n")
    code = main(["plan", str(prod_stack), "--against",
                 str(golden_plan_file("training-prod", tmp_path))])
    err = capsys.readouterr().err
    assert code == 2
    assert "acknowledge.0.resources: Field required" in err


@pytest.mark.slow  # asks git for the revision
def test_base_that_is_neither_file_nor_revision_is_bad_input(capsys):
    code = main(["plan", "training-dev", "--against", "no-such-revision-or-file"])
    assert code == 2
    assert "neither a plan JSON file nor a git revision" in capsys.readouterr().err


def test_base_that_is_not_a_plan_is_bad_input(tmp_path, capsys):
    bogus = tmp_path / "base.json"
    bogus.write_text('{"resources": 3}')
    assert main(["plan", "training-dev", "--against", str(bogus)]) == 2
    assert "no resources list" in capsys.readouterr().err


@pytest.mark.slow  # git worktree and two plans
@pytest.mark.skipif(shutil.which("git") is None or not (PROJECT_DIR / ".git").exists(),
                    reason="needs the project's git checkout")
def test_git_revision_base_plans_in_a_temporary_worktree(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(PROJECT_DIR)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = main(["plan", str(STACKS_DIR / "Pulumi.training-dev.yaml"), "--against", "HEAD",
                 "--format", "markdown"])
    text = capsys.readouterr().out
    worktrees = subprocess.run(["git", "worktree", "list"], capture_output=True, text=True,
                               cwd=PROJECT_DIR).stdout
    assert code == 0
    assert "**Changes against HEAD (" in text
    assert str(tmp_path) not in worktrees  # the temporary worktree is gone
    assert not list(tmp_path.iterdir())


def test_secrets_are_named_as_not_compared(tmp_path, capsys):
    text = (STACKS_DIR / "Pulumi.training-dev.yaml").read_text()
    text = text.replace("    monitoring:\n", "    monitoring:\n      webhook:\n"
                                             "        secure: v1:DDDDEEEEFFFF\n")
    stack = tmp_path / "Pulumi.training-dev.yaml"
    stack.write_text(text)
    code = main(["plan", str(stack), "--against", str(golden_plan_file("training-dev", tmp_path))])
    out = capsys.readouterr().out
    assert code == 0
    assert "Not compared: 1 secret value(s) (gpu-infra:cluster.monitoring.webhook)" in out
