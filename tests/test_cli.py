"""The `gpu-infra` command: exit codes and what a user sees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_infra.tools.cli import main

from .conftest import BASE_TRAINING, PROJECT_DIR, merged, write_stack


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
    assert set(cluster["discriminator"]["mapping"]) == {"training", "inference", "rendering"}
    training = schema["$defs"]["TrainingConfig"]
    assert "region" not in training["properties"]
    assert training["additionalProperties"] is False
    assert "Default dev" in training["properties"]["environment"]["description"]


def test_plan_prints_a_preview_tree_and_counts(capsys):
    assert main(["plan", "training-dev"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Previewing update (training-dev), offline under the Pulumi mock engine")
    assert "└─ gpu-infra:layouts:TrainingCluster" in out
    assert " +   " in out and "alicloud:vpc/network:Network" in out
    assert "Resources by type:" in out


def test_plan_json_and_markdown(tmp_path, capsys):
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


def test_program_failure_names_the_component_and_exits_1(tmp_path: Path, monkeypatch, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: gpu-infra\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi\n\n"
        "class Broken(pulumi.ComponentResource):\n"
        "    def __init__(self, name):\n"
        "        super().__init__('gpu-infra:test:Broken', name)\n"
        "        raise ValueError('no capacity left')\n\n"
        "Broken('b1')\n")
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    write_stack(stacks, "t", BASE_TRAINING)
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "t"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("program failed: in gpu-infra:test:Broken 'b1' (__main__.py:6): "
                          "ValueError: no capacity left")
    assert "Traceback" not in err
