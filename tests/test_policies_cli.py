"""`gpu-infra plan` with the policy rules: verdicts, exit codes, --policy-config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_infra_tools.cli import main

from .conftest import BASE_TRAINING, PROJECT_DIR, merged, write_stack
from .shipped import plan_shipped_once

SSH_MESSAGE = ("ingress to port 22 (tcp) from 0.0.0.0/0, which covers all public IPv4 "
               "space; allow known CIDRs only")
SSH_LINE = ("MANDATORY no-world-ingress (critical): alicloud:ecs/securityGroupRule:"
            f"SecurityGroupRule t01-sec-rule-ssh-0.0.0.0-0: {SSH_MESSAGE}")


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)


@pytest.fixture
def open_stack(tmp_path: Path) -> Path:
    return write_stack(tmp_path, "open", merged(BASE_TRAINING,
                                                security={"admin_cidrs": ["0.0.0.0/0"]}))


def test_mandatory_violation_exits_1_and_is_printed(open_stack, capsys):
    assert main(["plan", str(open_stack)]) == 1
    out = capsys.readouterr().out
    assert "Policy violations (" in out
    mandatory = [line.strip() for line in out.splitlines()
                 if line.startswith("    MANDATORY ")]
    assert mandatory == [SSH_LINE]


def test_policy_config_can_lower_the_level(open_stack, tmp_path, capsys):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"no-world-ingress": "advisory"}))
    assert main(["plan", str(open_stack), "--policy-config", str(config)]) == 0
    assert SSH_LINE.replace("MANDATORY", "ADVISORY") in capsys.readouterr().out
    config.write_text(json.dumps({"no-world-ingress": "disabled"}))
    assert main(["plan", str(open_stack), "--policy-config", str(config)]) == 0
    assert "no-world-ingress" not in capsys.readouterr().out


def test_bad_policy_config_exits_2_with_one_line_per_problem(open_stack, tmp_path, capsys):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"no-such-rule": "advisory",
                                  "required-tags": {"requiredTags": "Owner"}}))
    assert main(["plan", str(open_stack), "--policy-config", str(config)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"invalid policy config: {config}"
    assert err[1].startswith("  no-such-rule: unknown rule; known: no-world-ingress, ")
    assert err[2] == '  required-tags.requiredTags: must be an array, got "Owner"'
    assert len(err) == 3


def test_missing_policy_config_exits_2(open_stack, tmp_path, capsys):
    with pytest.raises(SystemExit) as refused:  # refused while parsing, before the plan
        main(["plan", str(open_stack), "--policy-config", str(tmp_path / "nope.json")])
    assert refused.value.code == 2
    assert "cannot read: No such file or directory" in capsys.readouterr().err


def test_json_carries_the_verdicts_and_exit_code(open_stack, capsys):
    assert main(["plan", str(open_stack), "--json", "-"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert {"rule": "no-world-ingress", "level": "mandatory", "severity": "critical",
            "category": "security",
            "resourceType": "alicloud:ecs/securityGroupRule:SecurityGroupRule",
            "resourceName": "t01-sec-rule-ssh-0.0.0.0-0",
            "message": SSH_MESSAGE
            } in record["policy"]


def test_markdown_shows_a_verdict_table(open_stack, capsys):
    assert main(["plan", str(open_stack), "--format", "markdown"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "| Level | Rule | Severity | Resource | Message |" in out
    assert ("| mandatory | `no-world-ingress` | critical | `t01-sec-rule-ssh-0.0.0.0-0` | "
            f"{SSH_MESSAGE} |") in out


def test_clean_stack_exits_0_without_mandatory(tmp_path, capsys):
    path = write_stack(tmp_path, "clean", BASE_TRAINING)
    assert main(["plan", str(path), "--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [v for v in record["policy"] if v["level"] == "mandatory"] == []
