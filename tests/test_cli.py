"""The `gpu-infra` command: exit codes and what a user sees."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pulumi
import pytest

from gpu_infra import program
from gpu_infra_tools.cli import main

from .conftest import BASE_TRAINING, PROJECT_DIR, merged, write_stack
from .shipped import plan_shipped_once


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    monkeypatch.chdir(PROJECT_DIR)


def test_validate_valid_stack_prints_one_line_summary(capsys):
    assert main(["validate", "training-dev"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("training-dev: valid training cluster 'llm-train'")


def test_validate_invalid_stack_exits_2_with_one_line_per_problem(tmp_path, capsys):
    cluster = merged(BASE_TRAINING, colour="red",
                     fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge", "nodes": -1})
    path = write_stack(tmp_path, "broken", cluster)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"invalid stack: {path}"
    assert sorted(line.strip().split(":")[1] for line in err[1:]) == [
        "cluster.colour", "cluster.fleet.nodes"]


def test_validate_missing_stack_and_malformed_yaml_exit_2_without_traceback(tmp_path, capsys):
    assert main(["validate", "no-such-stack"]) == 2
    assert "no such stack file; stacks in" in capsys.readouterr().err
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config: [unclosed\n")
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "malformed YAML" in err and "Traceback" not in err


def test_bad_arguments_exit_2(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["plan"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit) as caught:
        main(["plan", "training-dev", "--format", "html"])
    assert caught.value.code == 2


def test_schema_is_json_schema_of_a_stack_file(capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    config = schema["properties"]["config"]
    assert config["required"] == ["alicloud:region", "gpu-infra:cluster"]
    assert "cn-hangzhou" in config["properties"]["alicloud:region"]["enum"]
    cluster = config["properties"]["gpu-infra:cluster"]
    assert {branch["if"]["properties"]["layout"]["const"] for branch in cluster["allOf"]} == {
        "training", "inference", "rendering", "image"}
    training = schema["$defs"]["TrainingConfig"]
    assert "region" not in training["properties"]
    assert training["additionalProperties"] is False
    assert "Default dev" in training["properties"]["environment"]["description"]


def test_plan_prints_a_preview_tree_and_counts(capsys, monkeypatch):
    plan_shipped_once(monkeypatch)
    assert main(["plan", "training-dev"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Previewing update (training-dev), offline under the Pulumi mock engine")
    assert "└─ gpu-infra:layouts:TrainingCluster" in out
    assert " +   " in out and "alicloud:vpc/network:Network" in out
    assert "Resources by type:" in out


def test_plan_json_and_markdown(tmp_path, capsys, monkeypatch):
    plan_shipped_once(monkeypatch)
    record = tmp_path / "plan.json"
    assert main(["plan", "training-dev", "--format", "markdown", "--json", str(record)]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("### gpu-infra plan: `training-dev`")
    assert "| `alicloud:vpc/network:Network` | 1 |" in markdown
    data = json.loads(record.read_text())
    assert data["stack"] == "training-dev" and data["layout"] == "training"
    vpc = next(r for r in data["resources"] if r["type"] == "alicloud:vpc/network:Network")
    assert vpc["inputs"]["cidrBlock"] == "10.10.0.0/16"
    assert data["summary"]["byType"]["alicloud:vpc/network:Network"] == 1


def test_plan_of_invalid_stack_exits_2(tmp_path, capsys):
    path = write_stack(tmp_path, "bad", merged(BASE_TRAINING, network={"zones": ["cn-x-a"]}))
    assert main(["plan", str(path)]) == 2
    assert "network.zones: cn-x-a is not a zone of region cn-hangzhou" in capsys.readouterr().err


class _Broken(pulumi.ComponentResource):
    def __init__(self, name: str):
        super().__init__("gpu-infra:test:Broken", name)
        raise ValueError("no capacity left")


def test_program_failure_names_the_component_and_line_and_exits_1(monkeypatch, capsys):
    monkeypatch.setattr(program, "build_layout", lambda cluster, stack: _Broken("b1"))
    line = inspect.getsourcelines(_Broken)[1] + 3
    assert main(["plan", "training-dev"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"program failed: in gpu-infra:test:Broken 'b1' (test_cli.py:{line}): "
                          "ValueError: no capacity left")
    assert "Traceback" not in err


@pytest.mark.slow  # a CLI process
def test_installed_cli_plans_a_stack_path_from_any_directory(tmp_path: Path):
    """No Pulumi.yaml or __main__.py near the working directory: the packaged program runs."""
    stack = (PROJECT_DIR / "stacks" / "Pulumi.training-dev.yaml").resolve()
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from gpu_infra_tools.cli import main; "
         "sys.exit(main())", "plan", str(stack), "--json", "-"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["stack"] == "training-dev" and record["summary"]["create"] > 10
